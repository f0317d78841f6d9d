#!/usr/bin/env python3
"""`cutrace record` with programs that fork, crash and fail: the exit status is the
program's, every process gets its own readable trace, and a program killed by
abort() leaves a trace readable up to its last frame.

usage: test_processes.py SIM_DIR CUTRACE LIBTRACE WORKLOAD_DIR
"""
import os
import sys

from harness import Harness
from rawdump import kernel_identifier, raw_records

h = Harness(sys.argv)
KERNEL_US = "default=5,fork_work=10,crash_work=10"

# fork: parent and child each launch LAUNCHES kernels; two files, each with its own.
rc, out, err, data, truth = h.record("forker", ["6"], KERNEL_US)
h.check(rc == 0, f"forker exit {rc}: {err[-300:]}")
files = sorted(f for f in os.listdir(data) if f.endswith(".ctr")) if os.path.isdir(data) else []
h.check(len(files) == 2, f"forker: {len(files)} trace files, want 2 (parent and child): {files}")
pids = set()
for f in files:
    recs, strings = raw_records(h.cutrace, os.path.join(data, f))
    procs = [r for r in recs if r["kind"] == "process"]
    h.check(len(procs) == 1, f"{f}: {len(procs)} PROCESS records")
    if procs:
        pids.add(procs[0]["pid"])
    n = sum(1 for r in recs if r["kind"] == "gpu" and kernel_identifier(strings.get(r.get("name", 0), "")) == "fork_work")
    h.check(n == 6, f"{f}: {n} timed fork_work kernels, want 6 (no duplicates, none lost)")
    h.check(any(r["kind"] == "end" for r in recs), f"{f}: no END record")
h.check(len(pids) == len(files), f"forker: PROCESS pids {pids}")

# abort(): exit status 128+SIGABRT, and the trace still reads (no END record).
rc, out, err, data, truth = h.record("crasher", ["8"], KERNEL_US)
h.check(rc == 134, f"crasher: record returned {rc}, want 134 (SIGABRT)")
rc2, text, err2 = h.run("info", data)
h.check(rc2 in (0, 1), f"info on the crashed trace: exit {rc2}: {err2}")
files = sorted(f for f in os.listdir(data) if f.endswith(".ctr")) if os.path.isdir(data) else []
if files:
    recs, strings = raw_records(h.cutrace, os.path.join(data, files[0]))
    launches = [r for r in recs if r["kind"] == "launch"]
    h.check(len(launches) == 8, f"crasher: {len(launches)} launches in the trace, want 8 (synchronised before abort)")

# A program that fails: the status passes through.
rc, out, err, data, truth = h.record("matmul_add", ["0"])
h.check(rc == 2, f"matmul_add with a bad argument: record returned {rc}, want 2")
h.finish()
