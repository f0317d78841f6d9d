#!/usr/bin/env python3
"""Batch copies, managed-memory prefetches and 3-D peer copies, end to end on the simulated
GPU (programs/batch.cu: twelve planted calls on one non-blocking stream, listed there,
then two in a capture).

Built twice: with the simulated libcudart.so (the runtime's calls are the spans, the
driver calls they make only forward) and with the simulated runtime linked in
statically (only the driver-level hooks see its calls: cuMemcpyBatchAsync_v2,
cuMemPrefetchAsync_v2, cuMemPrefetchBatchAsync, as cuGetProcAddress gives them at
13000; cudaMemcpy3DPeerAsync's cuMemcpy3DPeerAsync). Both builds also call the
driver's older ABIs themselves (cuMemcpyBatchAsync and cuMemcpy3DBatchAsync at 12080,
cuMemPrefetchAsync at 8000) and cuMemcpy3DPeerAsync. Asserted exactly, for each call: one outermost
API record of its entry point (DRIVER flag at the driver level), one MEMOP record
(bytes, kind, memory types, count, destination, async) and one GPU memcpy record on
the same stream, which covers the simulator's operations of that call (truth log: one
line per copy or range) and ends no later than the call's own end or its last
operation's end (the end event is recorded when the call returns), and, for a call of
one operation, starts no later than its operation or the call's return (docs/preload.md:
a start that completed before the return is dated at it; a batch's is not); no other record of
these entry points. `cutrace report --format json`: the memory operations table's
prefetch and mixed rows (count, bytes, GPU time the sum of the GPU records); `dump
--chrome`: the slices' names.

usage: test_batch.py SIM_DIR CUTRACE LIBTRACE BATCH BATCH_STATIC
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cttest import check, finish, require_built, scratch_dir  # noqa: E402
from harness import chrome_events, read_truth, record_one_file  # noqa: E402
from rawdump import raw_records  # noqa: E402

sim_dir, cutrace, libtrace, shared_prog, static_prog = sys.argv[1:6]
require_built(os.path.join(sim_dir, "libcuda.so.1"), libtrace, cutrace, shared_prog, static_prog)
tmp = scratch_dir("cutrace-batch-")
API_CAPTURED, API_DRIVER = 0x2, 0x10
CAPTURE_UNSUPPORTED = (900, 900)  # cudaErrorStreamCaptureUnsupported, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
KB, MB = 1024, 1024 * 1024
H2D, D2H, D2D, P2P, PREFETCH, MIXED, DISCARD = 1, 2, 3, 6, 7, 8, 9
UNKNOWN, DEVICE, PINNED, MANAGED = 0, 1, 2, 4
EDGE_NS = 200000  # clock conversion and a loaded machine (as test_workloads' worst case)

# (runtime name, driver name in the static build, bytes, kind, src, dst, count, value, ops)
PLANTED = [
    ("cudaMemcpyBatchAsync", "cuMemcpyBatchAsync_v2", MB + 512 * KB + 256 * KB, H2D, PINNED,
     DEVICE, 3, 0, 3),
    ("cudaMemcpyBatchAsync", "cuMemcpyBatchAsync_v2", 128 * KB, MIXED, UNKNOWN, UNKNOWN, 2, 0, 2),
    ("cudaMemPrefetchAsync", "cuMemPrefetchAsync_v2", 4 * MB, PREFETCH, MANAGED, MANAGED, 0, 1, 1),
    ("cudaMemPrefetchBatchAsync", "cuMemPrefetchBatchAsync", 3 * MB, PREFETCH, MANAGED, MANAGED,
     2, 0, 2),
    ("cuMemcpyBatchAsync", "cuMemcpyBatchAsync", 256 * KB, D2D, DEVICE, DEVICE, 2, 0, 2),
    ("cuMemPrefetchAsync", "cuMemPrefetchAsync", 2 * MB, PREFETCH, MANAGED, MANAGED, 0, 1, 1),
    ("cudaMemcpy3DPeerAsync", "cuMemcpy3DPeerAsync", 128 * KB, P2P, DEVICE, DEVICE, 0, 0, 1),
    ("cuMemcpy3DPeerAsync", "cuMemcpy3DPeerAsync", 128 * KB, P2P, DEVICE, DEVICE, 0, 0, 1),
    ("cudaMemDiscardBatchAsync", "cuMemDiscardBatchAsync", 2 * MB, DISCARD, MANAGED, MANAGED, 2,
     0, 2),
    ("cudaMemDiscardAndPrefetchBatchAsync", "cuMemDiscardAndPrefetchBatchAsync", 512 * KB,
     PREFETCH, MANAGED, MANAGED, 1, 1, 1),
    ("cudaMemcpy3DBatchAsync", "cuMemcpy3DBatchAsync_v2", 16 * KB, H2D, PINNED, DEVICE, 2, 0, 2),
    ("cuMemcpy3DBatchAsync", "cuMemcpy3DBatchAsync", 8 * KB, D2D, DEVICE, DEVICE, 1, 0, 1),
]
ENTRY_POINTS = {"cudaMemcpyBatchAsync", "cudaMemPrefetchAsync", "cudaMemPrefetchBatchAsync",
                "cuMemcpyBatchAsync", "cuMemcpyBatchAsync_v2", "cuMemPrefetchAsync",
                "cuMemPrefetchAsync_v2", "cuMemPrefetchBatchAsync", "cudaMemcpy3DPeerAsync",
                "cuMemcpy3DPeerAsync", "cudaMemDiscardBatchAsync", "cuMemDiscardBatchAsync",
                "cudaMemDiscardAndPrefetchBatchAsync", "cuMemDiscardAndPrefetchBatchAsync",
                "cudaMemcpy3DBatchAsync", "cuMemcpy3DBatchAsync", "cuMemcpy3DBatchAsync_v2"}


def memops_of(recs):
    return {r["corr"]: r for r in recs if r["kind"] == "memop"}


def check_captured(label, calls, names, memops, gpu_corrs, static):
    """Calls 13 and 14, on the capturing stream: the batch recorded with CT_API_CAPTURED,
    its MEMOP and no GPU record; the refused prefetch with its error, no GPU record."""
    want = ["cuMemcpyBatchAsync_v2", "cuMemPrefetchAsync_v2"] if static else \
        ["cudaMemcpyBatchAsync", "cudaMemPrefetchAsync"]
    got = [names.get(c["name"]) for c in calls]
    if not check(got == want, f"{label}: calls in the capture {got}, want {want}"):
        return
    batch, prefetch = calls
    check(batch["result"] == 0 and batch["flags"] & API_CAPTURED and batch["corr"] not in gpu_corrs,
          f"{label}: captured batch: result {batch['result']}, flags {batch['flags']:#x}, "
          f"GPU record {batch['corr'] in gpu_corrs}")
    m = memops.get(batch["corr"], {})
    check((m.get("bytes"), m.get("field_kind"), m.get("count")) == (8 * KB, D2D, 2),
          f"{label}: captured batch's MEMOP {m}")
    check(prefetch["result"] == CAPTURE_UNSUPPORTED[static] and prefetch["corr"] not in gpu_corrs,
          f"{label}: refused prefetch: result {prefetch['result']}, GPU record "
          f"{prefetch['corr'] in gpu_corrs}")


def run(label, program):
    data = os.path.join(tmp, label)
    truth_path = os.path.join(tmp, label + ".truth")
    path = record_one_file(cutrace, libtrace, sim_dir, data, [program], "batch: ok",
                           {"SIMCUDA_TRUTH_FILE": truth_path})
    if not path:
        return
    p = subprocess.run([program], env=dict(os.environ, LD_LIBRARY_PATH=sim_dir),
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 0 and "batch: ok" in p.stdout, f"{label}: untraced run: {p.stderr}")
    truth = read_truth(truth_path)
    # the program prints its stream's handle, which the truth log names it by
    recs, names = raw_records(cutrace, path)
    static = label == "static"
    apis = [r for r in recs if r["kind"] == "api" and names.get(r["name"]) in ENTRY_POINTS]
    apis.sort(key=lambda a: a["begin_ns"])
    captured, apis = apis[len(PLANTED):], apis[:len(PLANTED)]
    check_captured(label, captured, names, memops_of(recs), {r["corr"] for r in recs if r["kind"] == "gpu"},
                   static)
    memops = {r["corr"]: r for r in recs if r["kind"] == "memop"}
    gpus = {r["corr"]: r for r in recs if r["kind"] == "gpu"}
    check(len(apis) == len(PLANTED),
          f"{label}: {len(apis)} calls of the batch entry points, planted {len(PLANTED)}: "
          f"{[names.get(a['name']) for a in apis]}")
    stream_ops = [t for t in truth if t["kind"] in ("memcpy", "prefetch") and t["stream"] != "0x0"]
    check(len(stream_ops) == sum(p[8] for p in PLANTED),
          f"{label}: the simulator ran {len(stream_ops)} operations on the stream")
    streams = set()
    for i, (api, planted) in enumerate(zip(apis, PLANTED)):
        rt_name, drv_name, nbytes, kind, src, dst, count, value, ops = planted
        want = drv_name if static or rt_name.startswith("cu") and not rt_name.startswith("cuda") \
            else rt_name
        tag = f"{label}: call {i + 1} ({want})"
        name = names.get(api["name"])
        driver = want.startswith("cu") and not want.startswith("cuda")
        check(name == want, f"{tag}: entry point {name}")
        check(api["depth"] == 0 and api["result"] == 0, f"{tag}: depth {api['depth']}, "
              f"result {api['result']}")
        check(bool(api["flags"] & API_DRIVER) == driver, f"{tag}: flags {api['flags']:#x}")
        m = memops.get(api["corr"])
        if check(m is not None, f"{tag}: no MEMOP record"):
            got = (m["bytes"], m["field_kind"], m["src_mem"], m["dst_mem"], m["count"],
                   m["value"], m["async"])
            check(got == (nbytes, kind, src, dst, count, value, 1),
                  f"{tag}: MEMOP (bytes, kind, src, dst, count, value, async) {got}, planted "
                  f"{(nbytes, kind, src, dst, count, value, 1)}")
        g = gpus.get(api["corr"])
        mine, stream_ops = stream_ops[:ops], stream_ops[ops:]
        if not check(g is not None and g["type"] == 2, f"{tag}: no GPU memcpy record {g}"):
            continue
        streams.add(g["stream"])
        check(g["stream"] == api["stream"], f"{tag}: GPU stream {g['stream']}, call's {api['stream']}")
        want_kinds = ["prefetch" if kind in (PREFETCH, DISCARD) else "memcpy"] * ops
        if not check(len(mine) == ops and [t["kind"] for t in mine] == want_kinds,
                     f"{tag}: simulator operations {mine}"):
            continue
        first, last = mine[0]["start_ns"], max(t["end_ns"] for t in mine)
        # a call of one operation that returned after it started is dated at the return
        # (under TSan, a 3-D peer copy's call took 305 us: its start 285 us after the truth)
        latest = max(first, api["end_ns"]) if count == 0 else first
        check(api["begin_ns"] - EDGE_NS <= g["start_ns"] <= latest + EDGE_NS,
              f"{tag}: GPU start {g['start_ns'] - first} ns from the first operation's, "
              f"{g['start_ns'] - api['begin_ns']} ns after the call began, "
              f"{g['start_ns'] - api['end_ns']} ns from its end")
        check(last - EDGE_NS <= g["end_ns"] <= max(last, api["end_ns"]) + EDGE_NS,
              f"{tag}: GPU end {g['end_ns'] - last} ns from the last operation's, "
              f"{g['end_ns'] - api['end_ns']} ns from the call's end")
    check(len(streams) == 1, f"{label}: GPU records on streams {streams}, all on one planted")

    p = subprocess.run([cutrace, "report", "--format", "json", path], capture_output=True,
                       text=True, timeout=60)
    rows = {r["kind"]: r for r in json.loads(p.stdout)["memcpy"]} if p.returncode == 0 else {}
    prefetch_ns = sum(gpus[a["corr"]]["end_ns"] - gpus[a["corr"]]["start_ns"]
                      for a, pl in zip(apis, PLANTED) if pl[3] == PREFETCH and a["corr"] in gpus)
    pf = rows.get("prefetch", {})
    check((pf.get("count"), pf.get("bytes"), pf.get("src"), pf.get("dst"), pf.get("total_ns"))
          == (4, 9 * MB + 512 * KB, "managed", "managed", prefetch_ns),
          f"{label}: report's prefetch row {pf}, GPU time {prefetch_ns}")
    dc = rows.get("discard", {})
    check((dc.get("count"), dc.get("bytes"), dc.get("src")) == (1, 2 * MB, "managed"),
          f"{label}: report's discard row {dc}")
    mx = rows.get("mixed", {})
    check((mx.get("count"), mx.get("bytes"), mx.get("src")) == (1, 128 * KB, "unknown"),
          f"{label}: report's mixed row {mx}")
    events = chrome_events(cutrace, path, os.path.join(tmp, label + ".json"), label) or []
    slices = [e["name"] for e in events if e.get("cat") == "gpu_memcpy" and e.get("ph") == "X"]
    check(sum("prefetch" in s for s in slices) == 4 and sum("mixed" in s for s in slices) == 1
          and sum("discard" in s for s in slices) == 1,
          f"{label}: chrome memcpy slices {slices}")


run("shared", shared_prog)
run("static", static_prog)
sys.exit(finish())
