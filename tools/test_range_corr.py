#!/usr/bin/env python3
"""report --by range joins a call and its GPU record by correlation id (report_ranges.c,
its own reader, no time bound): the ids a trace can hold, planted (tracewrite.py).

The preload draws corr from one 64-bit counter per process (preload/core/buffer.c:
ctp_next_corr), so within a file no two calls share one (a fork child, whose counter
goes on from its parent's, writes its own file); the tools read each file apart. Two
processes of one directory use the same ids here: pid 51's thread 10 launches corr 1
inside range "step" (GPU 2 ms), its thread 11 corr 2^32 + 1 outside any range (GPU
8 ms, its record read first); pid 52 the other way round (thread 10 corr 2^32 + 1, 3 ms;
thread 11 corr 1, 10 ms). Each GPU record comes after its call. "step": 2 ms and 3 ms
of GPU work, each file alone and the directory (5 ms, 2 kernels); ids past 32 bits are
not cut (a join on 32 bits would give "step" thread 11's kernel). Ids near 2^64 too.

usage: test_range_corr.py CUTRACE"""
import json
import os
import subprocess
import sys

import tooltest  # noqa: F401 (puts tests/lib on the path)
from tooltest import check, finish, scratch
from tracewrite import TraceWriter

cutrace = sys.argv[1]
T0, MS = 10**9, 10**6
TIMED = 0x4


def process_file(path, pid, range_corr, range_ms, other_corr, other_ms):
    w = TraceWriter()
    w.add("process", pid=pid, start_ns=T0)
    w.add("device", device=0, name=w.string("GPU"), cc_major=9, sm_count=132)
    launch, step, k = w.string("cudaLaunchKernel"), w.string("step"), w.string("_Z1kv")

    def call(tid, corr, at_ms):
        w.add("launch", corr=corr, kernel=k, grid_x=1, grid_y=1, grid_z=1, block_x=32,
              block_y=1, block_z=1)
        w.add("api", tid=tid, name=launch, begin_ns=T0 + int(at_ms * MS),
              end_ns=T0 + int(at_ms * MS) + 5000,
              corr=corr, stream=tid, flags=TIMED)

    def gpu(tid, corr, start_ms, dur_ms):
        w.add("gpu", corr=corr, stream=tid, start_ns=T0 + start_ms * MS,
              end_ns=T0 + (start_ms + dur_ms) * MS, type=1, name=k)

    call(10, range_corr, 1)
    call(11, other_corr, 1.5)
    gpu(11, other_corr, 2, other_ms)  # the other thread's GPU record first
    w.add("range", tid=10, name=step, begin_ns=T0, end_ns=T0 + 20 * MS, depth=0)
    gpu(10, range_corr, 3, range_ms)
    w.add("end", records=0, end_ns=T0 + 30 * MS)
    w.save(path)


def step_row(path):
    p = subprocess.run([cutrace, "report", "--by", "range", "--format", "json", path],
                       capture_output=True, text=True, timeout=60)
    rows = json.loads(p.stdout).get("ranges", []) if p.returncode == 0 else []
    row = next((r for r in rows if r["name"] == "step"), {})
    return p.returncode, p.stderr, (row.get("kernels"), row.get("gpu_ns"))


with scratch("cutrace-range-corr-") as d:
    for label, low, high in (("32-bit", 1, (1 << 32) + 1), ("64-bit", (1 << 64) - 3, (1 << 64) - 2)):
        sub = os.path.join(d, label)
        os.mkdir(sub)
        a, b = os.path.join(sub, "a.51.ctr"), os.path.join(sub, "b.52.ctr")
        process_file(a, 51, low, 2, high, 8)
        process_file(b, 52, high, 3, low, 10)
        for name, path, want in (("pid 51", a, (1, 2 * MS)), ("pid 52", b, (1, 3 * MS)),
                                 ("both", sub, (2, 5 * MS))):
            rc, err, got = step_row(path)
            check(rc == 0 and not err and got == want,
                  f"{label} ids, {name}: step's kernels and GPU work {got} (want {want}): "
                  f"status {rc}, {err!r}")
finish()
