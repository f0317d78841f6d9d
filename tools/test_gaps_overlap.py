#!/usr/bin/env python3
"""cutrace gaps: a thread's calls that overlap (the records of targets it polls in turn,
each spanning its own first poll to its answer: preload/hooks/poll.c) count once in a
gap, on a planted trace.

Thread 77, device 0, stream 1: kernels of 100 us. Gap 1 (3 ms): three overlapping
cudaEventQuery records, 100..2500, 200..2600 and 300..2700 us into the gap: the thread
was in CUDA 2.602 ms of it (with the ending launch's 2 us), not 7.202 ms; cause sync.
Gap 2 (3 ms): three at 1000..2200, 1100..2300, 1200..2400 us: 1.402 ms in calls, so
the thread was mostly outside CUDA: host_wait (summed, 3.6 ms of polls outweighed the
rest: sync), 1.598 ms outside CUDA. Asserted: each gap's cause and its launching
thread's in_cuda_ns / outside_cuda_ns in the JSON, and the text's percentages.

usage: test_gaps_overlap.py CUTRACE
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib"))
from cttest import check, finish, scratch_dir  # noqa: E402
from gaps_plant import GapPlant, US  # noqa: E402

cutrace = sys.argv[1]
tmp = scratch_dir("cutrace-overlap-")

t = GapPlant(92, "./watchdog", "watchdog")
e = t.kernel(10**9)
for k in range(3):  # gap 1: polls of three targets in turn, each record its own spin
    t.api("cudaEventQuery", e + (100 + 100 * k) * US, e + (2500 + 100 * k) * US, 0)
e = t.kernel(e + 3000 * US)
for k in range(3):  # gap 2: shorter spins, the thread mostly outside CUDA
    t.api("cudaEventQuery", e + (1000 + 100 * k) * US, e + (2200 + 100 * k) * US, 0)
t.kernel(e + 3000 * US)
path = os.path.join(tmp, "overlap.92.ctr")
t.save(path)

p = subprocess.run([cutrace, "gaps", "--format", "json", path], capture_output=True, text=True, timeout=60)
check(p.returncode == 0, f"gaps: {p.returncode} {p.stderr}")
doc = json.loads(p.stdout) if p.returncode == 0 else {"gaps": []}
got = sorted((g["start_ns"], g["dur_ns"], g["cause"],
              [(t["tid"], t.get("in_cuda_ns"), t.get("outside_cuda_ns")) for t in g.get("threads", [])])
             for g in doc["gaps"])
want = [(10**9 + 100 * US, 3000 * US, "sync", [(77, 2602 * US, 398 * US)]),
        (10**9 + 3200 * US, 3000 * US, "host_wait", [(77, 1402 * US, 1598 * US)])]
check([g[1:] for g in got] == [x[1:] for x in want],
      f"gaps (dur, cause, [(tid, in_cuda_ns, outside_cuda_ns)]): {[g[1:] for g in got]}, want "
      f"{[x[1:] for x in want]}")
p = subprocess.run([cutrace, "gaps", path], capture_output=True, text=True, timeout=60)
lines = [x.strip() for x in p.stdout.splitlines() if x.strip().startswith('thread 77 "watchdog"')]
check(p.returncode == 0 and len(lines) == 2
      and lines[0].startswith('thread 77 "watchdog" (launching): outside CUDA 13.3%, in 4 calls 86.7%')
      and lines[1].startswith('thread 77 "watchdog" (launching): outside CUDA 53.3%, in 4 calls 46.7%'),
      f"text: {lines}")
sys.exit(finish())
