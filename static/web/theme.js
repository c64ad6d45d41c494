// Runs in <head>, before the page is drawn (static/site.go links it without
// defer), so that nothing flashes: the colour theme chosen on this device,
// embed mode (?embed=1) and whether the URL carries page state that the
// prerendered HTML does not show yet. Everything else is in site.js.
(function () {
  var root = document.documentElement;
  var choice = "auto";
  try {
    choice = localStorage.getItem("oomscope-theme") || "auto";
  } catch (e) {
    // Storage can be blocked (some iframes): follow the system.
  }
  if (choice !== "light" && choice !== "dark") {
    choice = "auto";
  }
  root.setAttribute("data-theme-choice", choice);
  if (choice !== "auto") {
    root.setAttribute("data-theme", choice);
  }
  var q = new URLSearchParams(location.search);
  if (q.get("embed") === "1") {
    root.classList.add("embedded");
  }
  // Parameters that are not page state (app/href.go, IgnoredParam).
  var ignored = /^(embed|wasm|fbclid|gclid|dclid|msclkid|mc_cid|mc_eid|ref|ref_src|igshid|_ga|_gl|utm_.*)$/i;
  var state = false;
  q.forEach(function (v, k) {
    state = state || !ignored.test(k);
  });
  if (state) {
    // The prerendered results are for the default settings: they are shown
    // dimmed until the app has computed the URL's (app/layout.go).
    root.classList.add("state-pending");
  }
})();
