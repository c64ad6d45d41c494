// OOMScope snapshot worker: runs snapworker.wasm (wasm/snapworker, Go) in a
// Web Worker so that decoding a large snapshot.pickle never blocks the page.
// Messages that arrive before the Go program is running are queued. The
// messages are those of package oomscope/snapshot/load (messages.go):
// {json, file} in, {json, buffers} out.
//
// The same script, started by the worker with the name readerName, is its
// file reader (see readSlice); started with the name partName, it is its
// part worker (see startPart), which runs the same Go program.
const readerName = "oomscope-reader";
const partName = "oomscope-part";
// sharedName: a worker of the page's pool of ranks (app/snapshot_ranks.go)
// whose compiled snapworker.wasm comes from another worker, as the part
// worker's does: the module it compiled (and the browser optimised while it
// ran), not a download and a compile of its own. Its first message,
// {moduleFrom: port}, is the port the module comes by; the other worker
// gets the other end, {moduleTo: port} (sendModule). The page never holds
// the module: holding it, its thread took part in the module's code
// collections (V8.WasmCodeGC), and waited in them for 200-1350 ms.
const sharedName = "oomscope-shared";

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
        if (e.data.sid !== undefined) {
          streamed(e.data);
          return;
        }
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
        for (const [, st] of streams) {
          st.fail("the file reader stopped");
        }
        streams.clear();
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

// byobOK says whether a Blob's stream can be read into buffers of our own
// (a BYOB reader); checked once.
let byob = null;
function byobOK() {
  if (byob === null) {
    try {
      new Blob([]).stream().getReader({ mode: "byob" }).releaseLock();
      byob = true;
    } catch (err) {
      byob = false;
    }
  }
  return byob;
}

// openStream reads bytes [off, end) of a Blob through the reader worker
// as a stream into a few buffers that go back and forth between the two
// workers (the first of first bytes, each next one twice the one before up
// to max, count of them at most being filled or read): next() resolves to
// the next bytes, a Uint8Array, or to null at the end; giveBack(u8) hands
// its buffer back to be filled again; close() stops reading (a next() still
// waiting resolves to null). A slice read with Blob.arrayBuffer() is a new
// buffer each time, and the browser's first writes into fresh memory cost:
// reading a 200 MB file alone took 1.3-1.8 s in slices of 16 MiB and
// 0.3-0.8 s into buffers used again. openStream returns null where there is
// no reader or no BYOB stream (the caller reads slices: readSlice); after
// a failure of the reader, next() rejects.
const streams = new Map();
let streamID = 0;
self.openStream = (file, off, end, first, max, count) => {
  startReader();
  if (!reader || !byobOK()) {
    return null;
  }
  const sid = ++streamID;
  const st = { ready: [], waiting: [], done: false, error: null };
  const settle = () => {
    while (st.waiting.length && (st.ready.length || st.done || st.error !== null)) {
      const w = st.waiting.shift();
      if (st.ready.length) {
        w.resolve(st.ready.shift());
      } else if (st.error !== null) {
        w.reject(new Error(st.error));
      } else {
        w.resolve(null);
      }
    }
  };
  st.add = (u8) => {
    st.ready.push(u8);
    settle();
  };
  st.end = () => {
    st.done = true;
    settle();
  };
  st.fail = (msg) => {
    st.error = msg;
    settle();
  };
  streams.set(sid, st);
  reader.postMessage({ open: sid, file, off, end, first, max, count });
  return {
    next: () => new Promise((resolve, reject) => {
      st.waiting.push({ resolve, reject });
      settle();
    }),
    giveBack: (u8) => {
      if (streams.has(sid) && reader) {
        reader.postMessage({ back: sid, buf: u8.buffer }, [u8.buffer]);
      }
    },
    close: () => {
      if (streams.delete(sid) && reader) {
        reader.postMessage({ close: sid });
      }
      st.end();
    },
  };
};

// streamed routes the reader's message of a stream ({sid, buf, n},
// {sid, done} or {sid, error}) to it.
function streamed(m) {
  const st = streams.get(m.sid);
  if (!st) {
    return; // closed
  }
  if (m.buf) {
    st.add(new Uint8Array(m.buf, 0, m.n));
  } else if (m.done) {
    streams.delete(m.sid);
    st.end();
  } else {
    streams.delete(m.sid);
    st.fail(m.error);
  }
}

// settled calls ok or fail with the outcome of promise p, for the Go
// program's reads (blobReader). Once the program has exited (the part
// worker's crash test), a read still in flight, such as a stream's next
// buffer, finds its callbacks gone (wasm_exec.js throws "Go program has
// already exited"), which is no error of the page.
self.settled = (p, ok, fail) => {
  p.then(ok, fail).catch((err) => {
    if (!(go && go.exited)) {
      throw err;
    }
  });
};

// go is the Go program of the analysis worker (the browser benchmark reads
// its memory as go._inst) or of the part worker; null in the reader.
let go = null;

// wasmModule is snapworker.wasm compiled, which the analysis worker hands
// to its part worker: no second download or compile, and the code the
// browser optimised in one worker serves the other.
let wasmModule = null;

// modulePorts are the ports of workers waiting for wasmModule
// ({moduleTo: port} messages), answered once it is compiled.
const modulePorts = [];

function sendModule() {
  if (wasmModule) {
    for (const port of modulePorts.splice(0)) {
      port.postMessage({ module: wasmModule });
      port.close();
    }
  }
}

// sharedWait is how long a shared worker waits for its module before it
// compiles its own (the worker that was to send it may have ended).
const sharedWait = 10000;

// __oomscopeWasmMemory returns the size of the Go program's WebAssembly
// memory (its high-water mark: it never shrinks).
self.__oomscopeWasmMemory = () => (go && go._inst ? go._inst.exports.mem.buffer.byteLength : 0);

// The part worker (issue #9): a second instance of the Go program, which
// decodes the second half of a large file's trace while the analysis
// worker decodes the first (wasm/snapworker split.go). It is started
// ahead (prestartPart, once the analysis worker is idle) so that its own
// start does not delay the file, used for one file and ended (its memory
// holds a part of it).
let partWorker = null;

// prestartPart starts a part worker to be used by the next startPart.
self.prestartPart = () => {
  if (!partWorker && wasmModule) {
    partWorker = newPart();
  }
};

function newPart() {
  try {
    const w = new Worker("snapworker.js", { name: partName });
    w.postMessage({ module: wasmModule });
    return w;
  } catch (err) {
    return null;
  }
}

// startPart hands a part request (its JSON) and the File to a part worker
// and calls onmsg with each of its answers ({type, json, buffers}; a
// failure of the worker itself is an error answer); it returns the worker
// (to terminate once done) or null if none could start.
self.startPart = (file, json, onmsg) => {
  const w = partWorker || (wasmModule && newPart());
  partWorker = null;
  if (!w) {
    return null;
  }
  const failed = (what) => onmsg({ type: "error", json: JSON.stringify({ type: "error", id: 0, error: what }) });
  w.onmessage = (e) => onmsg(e.data);
  w.onerror = (e) => {
    e.preventDefault();
    failed("the part worker failed: " + (e.message || "it did not start"));
  };
  w.onmessageerror = () => failed("a message of the part worker could not be read");
  w.postMessage({ json, file });
  return w;
};

// startGo runs snapworker.wasm, forwarding the page's messages to it.
function startGo() {
  importScripts("../wasm_exec.js");

  const queue = [];
  let handler = null;

  self.onmessage = (e) => {
    if (e.data && e.data.moduleTo) {
      modulePorts.push(e.data.moduleTo);
      sendModule();
      return;
    }
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
  let instance;
  const compile = () =>
    WebAssembly.instantiateStreaming(fetch("snapworker.wasm"), go.importObject).then((r) => {
      wasmModule = r.module;
      sendModule();
      return r.instance;
    });
  if (self.name === partName) {
    // The part worker: the compiled module comes first, from the
    // analysis worker.
    instance = new Promise((resolve, reject) => {
      const first = self.onmessage;
      self.onmessage = (e) => {
        if (e.data && e.data.module) {
          self.onmessage = first;
          WebAssembly.instantiate(e.data.module, go.importObject).then(resolve, reject);
        } else {
          first(e);
        }
      };
    });
  } else if (self.name === sharedName) {
    // A shared worker: its first message is the port its module comes by.
    instance = new Promise((resolve, reject) => {
      const first = self.onmessage;
      self.onmessage = (e) => {
        if (!(e.data && e.data.moduleFrom)) {
          first(e);
          return;
        }
        self.onmessage = first;
        const port = e.data.moduleFrom;
        const late = setTimeout(() => {
          port.onmessage = null;
          port.close();
          compile().then(resolve, reject);
        }, sharedWait);
        port.onmessage = (m) => {
          clearTimeout(late);
          port.close();
          wasmModule = m.data.module; // for its own part workers, and others
          sendModule();
          WebAssembly.instantiate(wasmModule, go.importObject).then(resolve, reject);
        };
      };
    });
  } else {
    instance = compile();
  }
  instance
    .then((inst) => go.run(inst))
    .then(() => fail(self.name === partName ? "the part worker stopped" : "the analysis worker stopped; reload the page"))
    .catch((err) => fail("could not start the analysis worker: " + err));

  function fail(msg) {
    self.postMessage({ json: JSON.stringify({ type: "error", id: 0, error: msg }) });
  }
}

// The reader's streams (openStream), by id: {reader, free buffers, size of
// the next new buffer, max, count, out: buffers filled and not given back}.
const readerStreams = new Map();

// pump fills the buffers of stream sid and posts them, while fewer than
// count are out; one loop a stream at a time.
async function pump(sid) {
  const st = readerStreams.get(sid);
  if (!st || st.pumping) {
    return;
  }
  st.pumping = true;
  try {
    while (readerStreams.get(sid) === st && st.out < st.count) {
      let buf = st.free.pop();
      if (!buf) {
        buf = new ArrayBuffer(st.size);
        st.size = Math.min(2 * st.size, st.max);
      }
      let n = 0;
      let done = false;
      while (n < buf.byteLength) {
        const r = await st.reader.read(new Uint8Array(buf, n));
        if (r.done) {
          done = true;
          if (r.value) {
            buf = r.value.buffer;
          }
          break;
        }
        buf = r.value.buffer;
        n += r.value.byteLength;
      }
      if (readerStreams.get(sid) !== st) {
        return; // closed meanwhile
      }
      if (n > 0) {
        st.out++;
        self.postMessage({ sid, buf, n }, [buf]);
      }
      if (done) {
        readerStreams.delete(sid);
        self.postMessage({ sid, done: true });
        return;
      }
    }
  } catch (err) {
    if (readerStreams.get(sid) === st) {
      readerStreams.delete(sid);
      self.postMessage({ sid, error: String(err) });
    }
  } finally {
    st.pumping = false;
  }
}

if (self.name === readerName) {
  // The reader: {file, off, end, id} in, {id, buf} (transferred) or
  // {id, error} out; and the streams' messages (openStream): {open: sid,
  // file, off, end, first, max, count}, {back: sid, buf} and {close: sid}
  // in, {sid, buf, n}, {sid, done} or {sid, error} out.
  self.onmessage = (e) => {
    const d = e.data;
    if (d.open !== undefined) {
      try {
        const reader = d.file.slice(d.off, d.end).stream().getReader({ mode: "byob" });
        readerStreams.set(d.open, { reader, free: [], size: d.first, max: d.max, count: d.count, out: 0, pumping: false });
        pump(d.open);
      } catch (err) {
        self.postMessage({ sid: d.open, error: String(err) });
      }
      return;
    }
    if (d.back !== undefined) {
      const st = readerStreams.get(d.back);
      if (st) {
        st.out--;
        // A buffer smaller than new ones are now is dropped.
        if (d.buf.byteLength >= Math.min(st.size, st.max)) {
          st.free.push(d.buf);
        }
        pump(d.back);
      }
      return;
    }
    if (d.close !== undefined) {
      const st = readerStreams.get(d.close);
      if (st) {
        readerStreams.delete(d.close);
        st.reader.cancel().catch(() => {});
      }
      return;
    }
    const { file, off, end, id } = d;
    file.slice(off, end).arrayBuffer().then(
      (buf) => self.postMessage({ id, buf }, [buf]),
      (err) => self.postMessage({ id, error: String(err) })
    );
  };
} else {
  startGo();
}
