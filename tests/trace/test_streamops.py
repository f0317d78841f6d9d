#!/usr/bin/env python3
"""Stream memory-operation batches told apart, end to end on the simulated GPU
(programs/streamops.cu, SIMCUDA_HOST_FN_US=20000: a host function holds its stream
20 ms, which the tracer does not time).

Planted: stream s1 runs so_a (50 ms), a host function, a cuStreamBatchMemOp_v2 of two
writes, so_b; stream s3 runs so_c (50 ms), a cuStreamBatchMemOp_v2 of a wait (for a
value stream s2 writes after so_hold (50 ms, launched after so_c) and its own host
function) and a write, so_d. The long kernels keep what follows them queued before the
GPU reaches it, so a host preempted while it enqueues (up to 50 ms) changes nothing.
Asserted exactly: each batch is one outermost API record (DRIVER flag, result 0) on its stream
with no GPU record and a MEMOP record (format 1.9) of kind stream_ops (10), count 2,
value (its waits) 0 and 1, bytes (what its writes write) 12 and 4, async; the
simulator held s1 for the host function (so_b started 20 ms after so_a's end) and s3
until s2's write (so_d started at its end, over 10 ms after so_c's: truth log);
`cutrace gaps --format json`: s1's one gap (so_a's end to so_b's start, GPU records) is
`other` (fed, behind a host function the trace does not time: no wait), s3's one gap
(so_c's end to so_d's start) is `other_stream` (the batch waited on a value); the
text lists s3, not s1, among the largest waits of a stream on another stream;
`cutrace dump --chrome` shows the batches' operations, waits and bytes written.

usage: test_streamops.py SIM_DIR CUTRACE LIBTRACE STREAMOPS
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cttest import check, finish, require_built, scratch_dir  # noqa: E402
from harness import chrome_events, read_truth, record_one_file  # noqa: E402
from rawdump import kernel_identifier, raw_records  # noqa: E402

sim_dir, cutrace, libtrace, prog = sys.argv[1:5]
require_built(os.path.join(sim_dir, "libcuda.so.1"), libtrace, cutrace, prog)
tmp = scratch_dir("cutrace-streamops-")
API_DRIVER = 0x10
STREAM_OPS = 10  # CT_MEMOP_STREAM_OPS
HOST_FN_NS = 20000 * 1000
CAUSES = ("host_wait", "launch_overhead", "sync", "alloc", "other_stream", "tracer", "other", "external_wait")
# the batches in call order: (kernel before it on its stream, kernel after, waits,
# bytes written, the cause of the gap between the two kernels)
BATCHES = [("so_a", "so_b", 0, 12, "other"), ("so_c", "so_d", 1, 4, "other_stream")]

truth_path = os.path.join(tmp, "truth")
path = record_one_file(cutrace, libtrace, sim_dir, os.path.join(tmp, "data"), [prog],
                       "streamops: ok",
                       {"SIMCUDA_TRUTH_FILE": truth_path, "SIMCUDA_HOST_FN_US": "20000",
                        "SIMCUDA_KERNEL_US": "so_hold=50000,so_a=50000,so_c=50000,so_b=1000,so_d=1000,default=5"})
if path:
    recs, names = raw_records(cutrace, path)
    corr_gpu = {r["corr"]: r for r in recs if r["kind"] == "gpu"}
    memops = {r["corr"]: r for r in recs if r["kind"] == "memop"}
    kernels = {}
    for r in recs:
        if r["kind"] == "launch" and r["corr"] in corr_gpu:
            kernels[kernel_identifier(names.get(r["kernel"], ""))] = corr_gpu[r["corr"]]
    check(set(kernels) >= {"so_a", "so_b", "so_c", "so_d"}, f"kernels {sorted(kernels)}")
    calls = sorted((r for r in recs if r["kind"] == "api" and names.get(r["name"]) == "cuStreamBatchMemOp_v2"),
                   key=lambda r: r["begin_ns"])
    check(len(calls) == len(BATCHES), f"{len(calls)} batch calls, want {len(BATCHES)}")
    truth_ops = read_truth(truth_path)
    truth = {kernel_identifier(t["name"]): t for t in truth_ops if t["kind"] == "kernel"}
    if check({"so_a", "so_b", "so_c", "so_d"} <= set(truth), f"truth kernels {sorted(truth)}"):
        # s1 held by its host function; s3 by the value s2 wrote after its own
        check(truth["so_b"]["start_ns"] == truth["so_a"]["end_ns"] + HOST_FN_NS,
              f"simulator: so_b started {truth['so_b']['start_ns'] - truth['so_a']['end_ns']} ns "
              "after so_a's end, not the host function's 20 ms")
        s2_writes = [t for t in truth_ops if t["kind"] == "value" and
                     t["stream"] not in (truth["so_a"]["stream"], truth["so_c"]["stream"])]
        check(len(s2_writes) == 1 and s2_writes[0]["end_ns"] == truth["so_d"]["start_ns"]
              and truth["so_d"]["start_ns"] > truth["so_c"]["end_ns"] + 10 * 10**6,
              f"simulator: so_d starts at stream 2's write ({s2_writes}), over 10 ms after so_c's "
              f"end: {truth['so_d']}, {truth['so_c']}")
    for r, (before, after, waits, written, cause) in zip(calls, BATCHES):
        label = f"batch before {after}"
        check(r["depth"] == 0 and r["result"] == 0 and r["flags"] & API_DRIVER,
              f"{label}: depth {r['depth']}, result {r['result']}, flags {r['flags']:#x}")
        check(r["corr"] not in corr_gpu, f"{label}: a GPU record {corr_gpu.get(r['corr'])}")
        m = memops.get(r["corr"], {})
        got = {k: m.get(k) for k in ("field_kind", "count", "value", "bytes", "async", "src_mem", "dst_mem")}
        check(got == {"field_kind": STREAM_OPS, "count": 2, "value": waits, "bytes": written, "async": 1,
                      "src_mem": 0, "dst_mem": 0}, f"{label}: MEMOP {got}")
        if before in kernels and after in kernels:
            check(r["stream"] == kernels[after]["stream"] == kernels[before]["stream"],
                  f"{label}: stream {r['stream']}, kernels' {kernels[before]['stream']}, "
                  f"{kernels[after]['stream']}")
    if {"so_a", "so_b", "so_c", "so_d"} <= set(kernels):
        p = subprocess.run([cutrace, "gaps", "--format", "json", path], capture_output=True, text=True,
                           timeout=60)
        streams = {s["stream"]: s for s in json.loads(p.stdout).get("streams", [])} \
            if p.returncode == 0 else {}
        for before, after, _, _, cause in BATCHES:
            st = kernels[after]["stream"]
            gap = kernels[after]["start_ns"] - kernels[before]["end_ns"]
            want = {f"{c}_ns": gap if c == cause else 0 for c in CAUSES}
            got = streams.get(st, {})
            check(got.get("gaps") == 1 and got.get("idle") == want,
                  f"gaps: stream {st} ({before}, {after}): {got.get('gaps')} gaps, idle {got.get('idle')}, "
                  f"want one {cause} gap of {gap} ns")
        text = subprocess.run([cutrace, "gaps", path], capture_output=True, text=True,
                              timeout=60).stdout
        waits = text.partition("Largest waits of a stream on another stream")[2]
        for before, after, _, _, cause in BATCHES:
            st = kernels[after]["stream"]
            listed = f"on device 0 stream {st} at " in waits
            check(listed == (cause == "other_stream"),
                  f"gaps text: stream {st} among the largest waits: {listed}\n{text}")
    events = chrome_events(cutrace, path, os.path.join(tmp, "chrome.json"), "streamops") or []
    args = [e.get("args", {}) for e in sorted(events, key=lambda e: e.get("ts", 0))
            if e.get("name") == "cuStreamBatchMemOp_v2" and e.get("ph") == "X"]
    got = [(a.get("operations"), a.get("waits"), a.get("bytes written")) for a in args]
    check(got == [(2, w, b) for _, _, w, b, _ in BATCHES], f"chrome: batch slices' args {got}")
sys.exit(finish())
