// OOMScope service worker. Generated from static/worker.js by the site
// generator: go-app substitutes the version and the list of files to cache.
//
// What it does, and why (see ../shared/docs/go-app-notes.md §1.6):
// - install precaches every file of the site, bypassing the HTTP cache
//   ({cache: "reload"}) so a new deploy never caches the old files, and
//   waits for it (waitUntil) before the new version takes over;
// - the scope URL itself is precached and serves as the app shell for any
//   navigation that the cache does not hold, so every route works offline,
//   also under a sub-path;
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
      await cache.addAll(precacheURLs().map((u) => new Request(u, { cache: "reload" })));
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
      const shell = await cache.match(self.registration.scope);
      if (shell) {
        return shell;
      }
    }
    throw err;
  }
}
