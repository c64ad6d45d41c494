// Progressive enhancement for every page, without the WebAssembly app: the
// guides and the 404 page run no wasm at all, and on tool pages this works
// before the app has loaded. Handlers are delegated to the document because
// the app replaces the page's elements when it mounts.
(function () {
  "use strict";
  var root = document.documentElement;
  var ignored = /^(embed|wasm|fbclid|gclid|dclid|msclkid|mc_cid|mc_eid|ref|ref_src|igshid|_ga|_gl|utm_.*)$/i;

  // The site's path prefix ("" at the root of a host), read from the
  // manifest link that every page has.
  function prefix() {
    var m = document.querySelector('link[rel="manifest"]');
    return m ? m.getAttribute("href").replace(/\/manifest\.webmanifest$/, "") : "";
  }

  // The current page's URL with its state but without embed=1 and
  // tracking parameters.
  function pageURL(embed) {
    var u = new URL(location.href);
    var q = new URLSearchParams();
    u.searchParams.forEach(function (v, k) {
      if (!ignored.test(k)) {
        q.append(k, v);
      }
    });
    if (embed) {
      q.set("embed", "1");
    }
    u.search = q.toString();
    u.hash = "";
    return u.href;
  }

  function copyText(text, done) {
    var fallback = function () {
      var ta = document.createElement("textarea");
      ta.value = text;
      ta.setAttribute("readonly", "");
      ta.style.position = "fixed";
      ta.style.opacity = "0";
      document.body.appendChild(ta);
      ta.select();
      var ok = false;
      try {
        ok = document.execCommand("copy");
      } catch (e) {
        ok = false;
      }
      ta.remove();
      done(ok);
    };
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(function () { done(true); }, fallback);
    } else {
      fallback();
    }
  }

  // Colour theme: follow the system, dark, light (theme.js applies it).
  var order = ["auto", "dark", "light"];
  function setTheme(choice) {
    root.setAttribute("data-theme-choice", choice);
    if (choice === "auto") {
      root.removeAttribute("data-theme");
    } else {
      root.setAttribute("data-theme", choice);
    }
    try {
      localStorage.setItem("oomscope-theme", choice);
    } catch (e) {
      // Not kept for the next visit.
    }
  }

  // The iframe snippet for the current page and state.
  function embedCode() {
    var h1 = document.querySelector("main h1");
    var title = "OOMScope" + (h1 ? ": " + h1.textContent.trim() : "");
    return '<iframe src="' + pageURL(true).replace(/&/g, "&amp;").replace(/"/g, "&quot;") +
      '" title="' + title.replace(/&/g, "&amp;").replace(/"/g, "&quot;") +
      '" width="100%" height="760" style="border:0" loading="lazy"></iframe>';
  }

  document.addEventListener("click", function (e) {
    var t = e.target instanceof Element ? e.target : null;
    if (!t) {
      return;
    }
    var btn = t.closest("#theme-toggle");
    if (btn) {
      var cur = root.getAttribute("data-theme-choice") || "auto";
      setTheme(order[(order.indexOf(cur) + 1) % order.length]);
      return;
    }
    btn = t.closest(".copy-code");
    if (btn) {
      var pre = btn.parentElement.querySelector("pre");
      copyText(pre ? pre.textContent : "", function (ok) {
        btn.textContent = ok ? "Copied" : "Select and copy";
        setTimeout(function () { btn.textContent = "Copy"; }, 2000);
      });
      return;
    }
    btn = t.closest("#embed-this");
    if (btn) {
      var panel = document.getElementById("embed-panel");
      var code = document.getElementById("embed-code");
      var status = document.getElementById("embed-status");
      code.value = embedCode();
      panel.hidden = false;
      code.focus();
      code.select();
      copyText(code.value, function (ok) {
        status.textContent = ok ? "Copied the embed code." : "Copy the code below.";
      });
      return;
    }
    var a = t.closest("a[href]");
    if (!a) {
      return;
    }
    if (a.id === "open-full") {
      a.href = pageURL(false);
      return;
    }
    // Embedded, links to pages of this site stay embedded (the app does
    // the same once it runs: app.Href).
    if (root.classList.contains("embedded") && a.origin === location.origin && !a.target &&
        !/\/web\/|\.[a-z0-9]+$/i.test(a.pathname)) {
      var u = new URL(a.href);
      if (!u.searchParams.has("embed")) {
        u.searchParams.set("embed", "1");
        a.href = u.href;
      }
    }
  }, true);

  // The "open the full page" link follows the page's state.
  function pointFull(e) {
    var a = e.target instanceof Element ? e.target.closest("#open-full") : null;
    if (a) {
      a.href = pageURL(false);
    }
  }
  document.addEventListener("focusin", pointFull);
  document.addEventListener("pointerdown", pointFull, true);

  // Before the app runs, the controls show the URL's state (the
  // prerendered page has the defaults); the app replaces them when it
  // mounts.
  function applyURLState() {
    if (document.body.hasAttribute("data-wasm-ready")) {
      return;
    }
    new URLSearchParams(location.search).forEach(function (v, k) {
      if (ignored.test(k)) {
        return;
      }
      document.querySelectorAll("main form [name]").forEach(function (el) {
        if (el.name !== k) {
          return;
        }
        if (el.type === "checkbox") {
          el.checked = v === "true";
        } else if (el.tagName === "SELECT") {
          if (Array.prototype.some.call(el.options, function (o) { return o.value === v; })) {
            el.value = v;
          }
        } else {
          el.value = v;
        }
      });
    });
  }

  // The guide search: an index written at generation (web/search.json),
  // searched here, offline once cached.
  function setupSearch() {
    var form = document.getElementById("guide-search");
    if (!form) {
      return;
    }
    var input = document.getElementById("guide-q");
    var list = document.getElementById("guide-results");
    var status = document.getElementById("guide-search-status");
    var index = null;
    form.hidden = false;
    function load() {
      if (!index) {
        index = fetch(prefix() + "/web/search.json").then(function (r) { return r.json(); });
      }
      return index;
    }
    function run() {
      var terms = input.value.toLowerCase().split(/\s+/).filter(function (w) { return w.length > 1; });
      if (!terms.length) {
        list.replaceChildren();
        status.textContent = "";
        return;
      }
      load().then(function (guides) {
        var hits = [];
        guides.forEach(function (g) {
          var title = g.title.toLowerCase(), text = g.text.toLowerCase(), score = 0, section = null;
          var all = terms.every(function (w) {
            var s = 0;
            if (title.indexOf(w) >= 0) { s += 10; }
            (g.sections || []).forEach(function (h) {
              if (h.text.toLowerCase().indexOf(w) >= 0) { s += 5; section = section || h; }
            });
            var n = text.split(w).length - 1;
            s += Math.min(n, 5);
            score += s;
            return s > 0;
          });
          if (all) {
            hits.push({ g: g, score: score, section: section });
          }
        });
        hits.sort(function (a, b) { return b.score - a.score; });
        list.replaceChildren.apply(list, hits.slice(0, 10).map(function (h) {
          var li = document.createElement("li");
          var a = document.createElement("a");
          a.href = h.g.url + (h.section ? "#" + h.section.id : "");
          a.textContent = h.g.title + (h.section ? " › " + h.section.text : "");
          var p = document.createElement("p");
          p.textContent = snippet(h.g, terms[0]);
          li.append(a, p);
          return li;
        }));
        status.textContent = hits.length === 0 ? "No guide mentions " + input.value.trim() + "." :
          hits.length === 1 ? "1 guide matches." : hits.length + " guides match.";
      }, function () {
        status.textContent = "The search index could not be loaded.";
      });
    }
    function snippet(g, w) {
      var i = g.text.toLowerCase().indexOf(w);
      if (i < 0) {
        return g.summary;
      }
      var s = Math.max(0, g.text.lastIndexOf(" ", Math.max(0, i - 60)));
      return (s > 0 ? "…" : "") + g.text.slice(s, i + 140).trim() + "…";
    }
    input.addEventListener("input", run);
    input.addEventListener("focus", load, { once: true });
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      var first = list.querySelector("a");
      if (first) {
        location.href = first.href;
      }
    });
    var q = new URLSearchParams(location.search).get("q");
    if (q) {
      input.value = q;
      run();
    }
  }

  // The snapshot page's analysis worker starts with the page, before the
  // WebAssembly app has loaded: fetching and compiling the worker's own
  // WebAssembly then overlaps the app's, and a file dropped as soon as the
  // page is ready does not wait for it. The app adopts it on mounting
  // (app/snapshot.go preStartedWorker); one that failed before that is
  // marked, and the app starts another.
  function startSnapshotWorker() {
    if (!document.getElementById("snap-drop") || !window.Worker || window.__oomscopeSnapWorker) {
      return;
    }
    var w;
    try {
      w = new Worker(prefix() + "/web/snapworker.js");
    } catch (e) {
      return;
    }
    var failed = function () {
      if (!w.__oomscopeAdopted) {
        w.__oomscopeFailed = true;
      }
    };
    w.addEventListener("error", failed);
    w.addEventListener("message", function (e) {
      if (w.__oomscopeAdopted || !e.data || typeof e.data.json !== "string") {
        return;
      }
      try {
        if (JSON.parse(e.data.json).type === "error") {
          failed();
        }
      } catch (x) {
        failed();
      }
    });
    window.__oomscopeSnapWorker = w;
  }
  startSnapshotWorker();

  function start() {
    applyURLState();
    setupSearch();
    var nf = document.getElementById("nf-path");
    if (nf) {
      nf.textContent = location.pathname;
    }
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
