// OOMScope snapshot worker: runs snapworker.wasm (wasm/snapworker, Go) in a
// Web Worker so that decoding a large snapshot.pickle never blocks the page.
// Messages that arrive before the Go program is running are queued. The
// messages are those of package oomscope/snapshot/load (messages.go):
// {json, file} in, {json, buffers} out.
//
// The same script, started by the worker with the name readerName, is its
// file reader (see readSlice).
const readerName = "oomscope-reader";

// readSlice resolves to an ArrayBuffer of bytes [off, end) of a Blob; the
// Go program reads the dropped File with it. Blob.arrayBuffer() fills its
// buffer on the thread that called it, and only while that thread is idle:
// called here, the reading of the next slice waited for the decoder to block
// on it (about a fifth of the decoding time of a 200 MB file was spent idle,
// waiting for the file). A nested worker reads it instead, in parallel with
// the decoder, and transfers the buffer. Where a worker cannot start one,
// the slice is read here.
let reader = null;
let readerFailed = false;
const reads = new Map();
let readID = 0;

// startReader starts the reader worker, once. The analysis worker calls it
// as it starts: started with the first file instead, the reader's own
// start (fetching and running this script) came before the file's first
// slice, 40-50 ms of each first file.
function startReader() {
  if (!reader && !readerFailed) {
    try {
      reader = new Worker("snapworker.js", { name: readerName });
      reader.onmessage = (e) => {
        const r = reads.get(e.data.id);
        reads.delete(e.data.id);
        if (e.data.error !== undefined) {
          r.reject(new Error(e.data.error));
        } else {
          r.resolve(e.data.buf);
        }
      };
      reader.onerror = () => {
        // The reader did not start (or stopped): read here from now on,
        // and again what it was reading.
        readerFailed = true;
        reader = null;
        for (const [, r] of reads) {
          r.file.slice(r.off, r.end).arrayBuffer().then(r.resolve, r.reject);
        }
        reads.clear();
      };
    } catch (err) {
      readerFailed = true;
      reader = null;
    }
  }
}

self.readSlice = (file, off, end) => {
  startReader();
  if (!reader) {
    return file.slice(off, end).arrayBuffer();
  }
  return new Promise((resolve, reject) => {
    const id = ++readID;
    reads.set(id, { resolve, reject, file, off, end });
    reader.postMessage({ file, off, end, id });
  });
};

// go is the Go program of the analysis worker (the browser benchmark reads
// its memory as go._inst); null in the reader.
let go = null;

// startGo runs snapworker.wasm, forwarding the page's messages to it.
function startGo() {
  importScripts("../wasm_exec.js");

  const queue = [];
  let handler = null;

  self.onmessage = (e) => {
    if (e.data && e.data.file) {
      // When a file came, for the browser benchmark's marks (see
      // wasm/snapworker mark).
      self.__oomscopeMarks = { arrived: performance.timeOrigin + performance.now() };
    }
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

  startReader();
  go = new Go();
  WebAssembly.instantiateStreaming(fetch("snapworker.wasm"), go.importObject)
    .then((r) => go.run(r.instance))
    .then(() => fail("the analysis worker stopped; reload the page"))
    .catch((err) => fail("could not start the analysis worker: " + err));

  function fail(msg) {
    self.postMessage({ json: JSON.stringify({ type: "error", id: 0, error: msg }) });
  }
}

if (self.name === readerName) {
  // The reader: {file, off, end, id} in, {id, buf} (transferred) or
  // {id, error} out.
  self.onmessage = (e) => {
    const { file, off, end, id } = e.data;
    file.slice(off, end).arrayBuffer().then(
      (buf) => self.postMessage({ id, buf }, [buf]),
      (err) => self.postMessage({ id, error: String(err) })
    );
  };
} else {
  startGo();
}
