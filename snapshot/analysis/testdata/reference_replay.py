#!/usr/bin/env python3
"""Independent reference replay of a CUDA memory snapshot (stdlib only).

Prints, per device, the numbers realfiles_test.go expects, computed with the
simplest possible Python so they do not come from the Go code under test:
  - live = alloc ... free_completed, matched by address in trace order;
  - unmatched free_completed = allocation from before the trace;
  - active blocks in segments with no open alloc = alive the whole trace;
  - peak over the states before the first entry and after every entry;
  - reserved = final segment total minus net segment events, replayed.
Usage: python3 reference_replay.py FILE.pickle
"""
import pickle
import sys

s = pickle.load(open(sys.argv[1], "rb"))
segs = s["segments"] if isinstance(s, dict) else s
for dev, t in enumerate(s.get("device_traces", [])):
    dsegs = [g for g in segs if g["device"] == dev]
    if not t and not dsegs:
        continue
    open_, initial, pre = {}, 0, 0
    for e in t:
        a = e["action"]
        if a == "alloc":
            open_[e["addr"]] = e["size"]
        elif a in ("free_completed", "free"):
            if e["addr"] in open_:
                del open_[e["addr"]]
            else:
                initial += e["size"]
                pre += 1
    for g in dsegs:
        addr = g["address"]
        for b in g["blocks"]:
            ba = b.get("address", addr)
            if b["state"] in ("active_allocated", "active_pending_free") and ba not in open_:
                initial += b["requested_size"]
                pre += 1
            addr += b["size"]
    cur, peak, pidx = initial, initial, -1
    for i, e in enumerate(t):
        a = e["action"]
        if a == "alloc":
            cur += e["size"]
        elif a in ("free_completed", "free"):
            cur -= e["size"]
        if cur > peak:
            peak, pidx = cur, i
    res = sum(g["total_size"] for g in dsegs)
    req = sum(b["requested_size"] for g in dsegs for b in g["blocks"] if b["state"] == "active_allocated")
    net, best, ridx = 0, 0, -1
    for i, e in enumerate(t):
        a = e["action"]
        if a in ("segment_alloc", "segment_map"):
            net += e["size"]
        elif a in ("segment_free", "segment_unmap"):
            net -= e["size"]
        if net > best:
            best, ridx = net, i
    print(dict(device=dev, entries=len(t), initial=initial, pre_trace=pre, peak=peak, peak_index=pidx,
               peak_time=(t[pidx].get("time_us", 0) if pidx >= 0 else (t[0].get("time_us", 0) if t else 0)),
               final_requested=req, reserved=res, initial_reserved=res - net,
               peak_reserved=res - net + best, peak_reserved_index=ridx))
