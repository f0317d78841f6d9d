#!/usr/bin/env python3
"""cutrace gaps: the launching thread's calls that reach into a gap count whatever order
their records came in (planted; seen under load in test_alloc's static run, where a
device gap of 55.9 ms, 55.8 of it in cuMemFree_v2 and cuMemAlloc_v2, came out
host_wait).

Thread 77, device 0, stream 1: a kernel; a cuMemFree_v2 that began while it ran and
returned 35 ms after it ended (a free waits for the GPU, and here its thread was slow
after), then a 25 ms cuMemAlloc_v2 and the next launch: the 60 ms gap is alloc. The
thread's TRACER "stacks" record of an earlier period (it ended before the gap) is
written after the alloc, as the tracer writes a period's record when the period ends:
more than the trace model's first 20 ms late, it reaches gaps after the free, out of
end order (before the fix the thread's calls were walked back only to the first one
ending before the gap: the free was missed and the gap was host_wait). Asserted: the gap is alloc, with the
free and the alloc in its thread breakdown.

usage: test_gaps_disorder.py CUTRACE
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib"))
from cttest import check, finish, scratch_dir  # noqa: E402
from gaps_plant import GapPlant, US  # noqa: E402

MS = 1000 * US
cutrace = sys.argv[1]
tmp = scratch_dir("cutrace-disorder-")

t = GapPlant(92, "./alloc_loop", "alloc_loop")
a = t.kernel(10**9)  # ends at a
t.api("cuMemFree_v2", a - 50 * US, a + 35 * MS)
t.api("cuMemAlloc_v2", a + 35 * MS + 10 * US, a + 60 * MS)
# the TRACER record of a period that ended before the gap, written after the alloc
t.records.append((a + 60 * MS, 1, "tracer", dict(tid=77, what=t.w.string("stacks"),
                                                   begin_ns=a - 80 * US, end_ns=a - 60 * US,
                                                   amount=3)))
t.kernel(a + 60 * MS + 10 * US)
path = os.path.join(tmp, "disorder.92.ctr")
t.save(path)

p = subprocess.run([cutrace, "gaps", "--format", "json", path], capture_output=True, text=True,
                   timeout=60)
check(p.returncode == 0, f"gaps: {p.returncode} {p.stderr}")
doc = json.loads(p.stdout) if p.returncode == 0 else {"gaps": []}
got = [(g["dur_ns"], g["cause"]) for g in doc["gaps"]]
check(got == [(60 * MS + 10 * US, "alloc")], f"the gap and its cause: {got}, want 60.01 ms alloc")
calls = sorted(c["name"] for g in doc["gaps"] for th in g["threads"] for c in th["longest_calls"]
               if not c["tracer"])
check("cuMemFree_v2" in calls and "cuMemAlloc_v2" in calls,
      f"the gap's calls {calls}: the free and the alloc")
sys.exit(finish())
