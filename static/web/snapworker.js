// OOMScope snapshot worker: runs snapworker.wasm (wasm/snapworker, Go) in a
// Web Worker so that decoding a large snapshot.pickle never blocks the page.
// Messages that arrive before the Go program is running are queued. The
// messages are those of package oomscope/snapshot/load (messages.go):
// {json, file} in, {json, buffers} out.
importScripts("../wasm_exec.js");

const queue = [];
let handler = null;

self.onmessage = (e) => {
  if (handler) {
    handler(e.data);
  } else {
    queue.push(e.data);
  }
};

// Called by the Go program once it listens.
self.snapworkerReady = (h) => {
  handler = h;
  for (const m of queue.splice(0)) {
    h(m);
  }
  self.postMessage({ json: JSON.stringify({ type: "ready", id: 0 }) });
};

const go = new Go();
WebAssembly.instantiateStreaming(fetch("snapworker.wasm"), go.importObject)
  .then((r) => go.run(r.instance))
  .then(() => fail("the analysis worker stopped; reload the page"))
  .catch((err) => fail("could not start the analysis worker: " + err));

function fail(msg) {
  self.postMessage({ json: JSON.stringify({ type: "error", id: 0, error: msg }) });
}
