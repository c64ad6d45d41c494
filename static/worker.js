// OOMScope service worker. Generated from static/worker.js by the site
// generator: go-app substitutes the version and the list of files to cache.
//
// What it does, and why (see docs/site.md#service-worker):
// - install precaches every file of the site, bypassing the HTTP cache
//   ({cache: "reload"}) so a new deploy never caches the old files, and
//   waits for it (waitUntil) before the new version takes over. It skips
//   what its cache already holds: on a first visit the page registers this
//   worker only after it put the app.wasm it downloaded into this version's
//   cache (static/loader.go), so app.wasm is downloaded once, not twice;
// - every page is precached (ignoring the query string), also under a
//   sub-path; a navigation to a path the site does not have gets the 404
//   page offline, or the scope URL as app shell when there is none;
// - activate deletes the caches of older versions;
// - fetch answers from the cache first, then the network; only GETs to this
//   origin are handled, and nothing is ever sent anywhere else.
const cacheName = "app-" + "{{.Version}}";
const resourcesToCache = {{.ResourcesToCache}};

function precacheURLs() {
  const scope = self.registration.scope;
  const urls = new Set([scope]);
  for (const r of resourcesToCache) {
    const u = new URL(r, scope).href;
    // "/repo" (the root without its slash) redirects to the scope "/repo/":
    // a redirected response cannot answer a navigation, so skip it.
    if (u + "/" !== scope) {
      urls.add(u);
    }
  }
  return [...urls];
}

self.addEventListener("install", (event) => {
  console.log("installing app worker {{.Version}}");
  event.waitUntil(
    (async () => {
      const cache = await caches.open(cacheName);
      const missing = [];
      for (const u of precacheURLs()) {
        if (!(await cache.match(u))) {
          missing.push(new Request(u, { cache: "reload" }));
        }
      }
      await cache.addAll(missing);
      await self.skipWaiting();
    })()
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    (async () => {
      for (const key of await caches.keys()) {
        if (key !== cacheName) {
          await caches.delete(key);
        }
      }
      await self.clients.claim();
      console.log("app worker {{.Version}} is activated");
    })()
  );
});

self.addEventListener("fetch", (event) => {
  const req = event.request;
  if (req.method !== "GET" || new URL(req.url).origin !== self.location.origin) {
    return;
  }
  event.respondWith(respond(req));
});

async function respond(req) {
  const cache = await caches.open(cacheName);
  const navigation = req.mode === "navigate";
  const hit = await cache.match(req, { ignoreSearch: navigation });
  if (hit) {
    return hit;
  }
  try {
    return await fetch(req);
  } catch (err) {
    if (navigation) {
      const page = (await cache.match(new URL("404", self.registration.scope).href)) ||
        (await cache.match(self.registration.scope));
      if (page) {
        return page;
      }
    }
    throw err;
  }
}
