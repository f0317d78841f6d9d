#!/usr/bin/env python3
"""`cutrace record` with programs that fork, crash and fail: the exit status is the
program's, every process gets its own readable trace, a fork child does not time (or
count as lost) its parent's GPU work still in flight at the fork, and a program killed
by abort() leaves a trace readable up to its last frame.

usage: test_processes.py SIM_DIR CUTRACE LIBTRACE WORKLOAD_DIR
"""
import os
import subprocess
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

# fork while the parent's memset is still running (300 ms on the simulated GPU): the
# child inherits the queue of timed operations, but they are the parent's, timed by
# the parent's poller. The child's file holds its own memset (untimed: a context does
# not survive fork) and no GPU record and no "gpu_lost" (it used to time the parent's
# memset at exit, a duplicate under the child's pid; on a real GPU it would have
# queried the parent's context from the child).
FORK_PENDING = """import ctypes, os
rt = ctypes.CDLL("libcudart.so.13")
p = ctypes.c_void_p()
assert rt.cudaMalloc(ctypes.byref(p), 4096) == 0
assert rt.cudaMemsetAsync(p, 7, 4096, None) == 0
pid = os.fork()
if pid == 0:
    raise SystemExit(rt.cudaMemsetAsync(p, 3, 4096, None))
os.waitpid(pid, 0)
print("synchronize", rt.cudaDeviceSynchronize())
"""
script = os.path.join(h.tmp, "fork_pending.py")
with open(script, "w") as f:
    f.write(FORK_PENDING)
data = os.path.join(h.tmp, "fork_pending.data")
p = subprocess.run([h.cutrace, "record", "-q", "-o", data, "--", sys.executable, script],
                   env=h.env(extra={"SIMCUDA_COPY_LATENCY_US": "300000"}), capture_output=True,
                   text=True, timeout=120)
h.check(p.returncode == 0 and p.stdout == "synchronize 0\n", f"fork_pending: {p.returncode} {p.stdout!r} {p.stderr[-300:]}")
files = sorted(f for f in os.listdir(data) if f.endswith(".ctr")) if os.path.isdir(data) else []
h.check(len(files) == 2, f"fork_pending: {len(files)} trace files, want 2: {files}")
traces = []
for f in files:
    recs, strings = raw_records(h.cutrace, os.path.join(data, f))
    procs = [r for r in recs if r["kind"] == "process"]
    traces.append((procs[0] if procs else {}, recs, strings))
pids = {pr.get("pid") for pr, _, _ in traces}
for pr, recs, strings in traces:
    gpu = [r for r in recs if r["kind"] == "gpu"]
    lost = [r for r in recs if r["kind"] == "tracer" and strings.get(r["what"]) == "gpu_lost"]
    memsets = [r for r in recs if r["kind"] == "api" and strings.get(r["name"]) == "cudaMemsetAsync"]
    if pr.get("ppid") in pids:  # the child
        h.check(not gpu and not lost and len(memsets) == 1 and memsets[0]["flags"] & 8,
                f"fork_pending child: {len(gpu)} GPU records, {len(lost)} gpu_lost, want none; "
                f"its own memset untimed: {memsets}")
    else:
        h.check(len(memsets) == 1 and [g["corr"] for g in gpu] == [memsets[0]["corr"]] and not lost,
                f"fork_pending parent: GPU records {gpu}, memsets {memsets}")
h.check(sum(1 for pr, _, _ in traces if pr.get("ppid") in pids) == 1, "fork_pending: one child file")

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
