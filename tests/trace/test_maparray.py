#!/usr/bin/env python3
"""Stream-ordered sparse array mapping (programs/maparray.cu) on the simulated GPU, with
each mapping taking 2 ms of its stream (SIMCUDA_COPY_LATENCY_US) and event chaining on
(CUTRACE_EVENT_CHAIN=1): on stream S the 5 ms ma_before, a map (cuMemMapArrayAsync), then
ma_after, queued while ma_before still runs; an unmap with cuMemMapArrayAsync_ptsz on the
per-thread default stream; a call with an empty list that fails (CUDA_ERROR_INVALID_VALUE).
Before 2026-12-07 these calls were not seen.

Asserted: the three calls are outermost API records flagged DRIVER, in order, with their
results (0, 0, 1); the two on S carry S's stream (ma_before's GPU record's), the _ptsz one
the calling thread's per-thread default stream (its STREAM record: per-thread flag, owner
the thread); ma_after starts at least 1.5 ms after ma_before ends (the map held S: its
start is measured, not chained to ma_before's end); `cutrace report --format json`:
cuMemMapArrayAsync 2 calls 1 error, cuMemMapArrayAsync_ptsz 1 call.

usage: test_maparray.py SIM_DIR CUTRACE LIBTRACE MAPARRAY
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cttest import check, finish, require_built, scratch_dir  # noqa: E402
from harness import record_one_file  # noqa: E402
from rawdump import kernel_identifier, raw_records  # noqa: E402

sim_dir, cutrace, libtrace, program = sys.argv[1:5]
require_built(os.path.join(sim_dir, "libcuda.so.1"), libtrace, cutrace, program)
tmp = scratch_dir("cutrace-maparray-")
API_DRIVER, GPU_KERNEL, INVALID_VALUE, STREAM_PER_THREAD = 0x10, 1, 1, 2
CALLS = [("cuMemMapArrayAsync", 0), ("cuMemMapArrayAsync_ptsz", 0),
         ("cuMemMapArrayAsync", INVALID_VALUE)]

env = {"SIMCUDA_COPY_LATENCY_US": "2000", "SIMCUDA_KERNEL_US": "default=5,ma_before=5000",
       "CUTRACE_EVENT_CHAIN": "1"}
path = record_one_file(cutrace, libtrace, sim_dir, os.path.join(tmp, "maparray"), [program],
                       "maparray: ok", env)
if path:
    recs, names = raw_records(cutrace, path)
    calls = sorted((r for r in recs if r["kind"] == "api"
                    and names.get(r["name"], "").startswith("cuMemMapArrayAsync")),
                   key=lambda a: a["begin_ns"])
    got = [(names.get(a["name"]), a["result"]) for a in calls]
    check(got == CALLS, f"mapping calls {got}, want {CALLS}")
    kernels = {kernel_identifier(names.get(g["name"], "")): g for g in recs
               if g["kind"] == "gpu" and g["type"] == GPU_KERNEL}
    before, after = kernels.get("ma_before"), kernels.get("ma_after")
    check(before is not None and after is not None, f"kernels {sorted(kernels)}")
    streams = {r["stream"]: r for r in recs if r["kind"] == "stream"}
    for a in calls:
        name = names.get(a["name"])
        check(a["depth"] == 0 and a["flags"] & API_DRIVER,
              f"{name}: depth {a['depth']} flags {a['flags']:#x}")
        if name.endswith("_ptsz"):
            st = streams.get(a["stream"], {})
            check(st.get("flags") == STREAM_PER_THREAD and st.get("owner_tid") == a["tid"],
                  f"{name}: stream {a['stream']} {st}, want the thread's per-thread stream")
        elif before:
            check(a["stream"] == before["stream"] != 0,
                  f"{name}: stream {a['stream']}, ma_before's {before['stream']}")
    if before and after:
        check(after["start_ns"] >= before["end_ns"] + 1_500_000,
              f"ma_after starts {after['start_ns'] - before['end_ns']} ns after ma_before's end, "
              f"want >= 1.5 ms (the map between them)")
    p = subprocess.run([cutrace, "report", "--format", "json", path], capture_output=True,
                       text=True, timeout=60)
    rows = {r["name"]: r for r in json.loads(p.stdout).get("apis", [])} if p.returncode == 0 else {}
    for name, n, errors in (("cuMemMapArrayAsync", 2, 1), ("cuMemMapArrayAsync_ptsz", 1, 0)):
        r = rows.get(name, {})
        check(r.get("calls") == n and r.get("errors") == errors,
              f"report json {name}: {r}, want {n} calls, {errors} errors")
sys.exit(finish())
