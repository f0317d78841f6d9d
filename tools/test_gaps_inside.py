#!/usr/bin/env python3
"""cutrace gaps: a host_wait gap that the launching thread spent inside one intercepted
call that launches nothing is named by that call (docs/gaps.md, rule 10: `inside_call`),
on a planted trace.

Thread 77, device 0, stream 1: kernels of 100 us. Gap 1 (3 ms): the thread spends 2.5 ms
in cudaGraphInstantiate (a call that queues no work), then launches: host_wait, inside
cudaGraphInstantiate. Gap 2 (2 ms): the thread sleeps outside CUDA, with a 400 us
cudaGraphInstantiate in it (less than half the gap): host_wait, inside nothing. Gap 3
(1 ms): a 900 us cudaMalloc (an allocation: cause alloc, not host_wait). Asserted: JSON
`inside_call` of each gap, the text's gap line, the --summary's largest-gap line, and
dump --chrome's device gap slices (label and args, through tools/gap_spill.c).

usage: test_gaps_inside.py CUTRACE
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
tmp = scratch_dir("cutrace-inside-")

t = GapPlant(91, "./train", "train")
e = t.kernel(10**9)
t.api("cudaGraphInstantiate", e + 100 * US, e + 2600 * US)  # gap 1: 3 ms, 2.5 ms inside the call
e = t.kernel(e + 3000 * US)
t.api("cudaGraphInstantiate", e + 800 * US, e + 1200 * US)  # gap 2: 2 ms, 400 us inside it
e = t.kernel(e + 2000 * US)
t.api("cudaMalloc", e + 50 * US, e + 950 * US)  # gap 3: 1 ms, 900 us allocating
t.kernel(e + 1000 * US)
path = os.path.join(tmp, "inside.91.ctr")
t.save(path)

p = subprocess.run([cutrace, "gaps", "--format", "json", path], capture_output=True, text=True, timeout=60)
check(p.returncode == 0, f"gaps: {p.returncode} {p.stderr}")
doc = json.loads(p.stdout) if p.returncode == 0 else {"gaps": []}
got = [(g["dur_ns"], g["cause"], g.get("inside_call", "missing")) for g in doc["gaps"]]
check(got == [(3000 * US, "host_wait", {"api": "cudaGraphInstantiate", "ns": 2500 * US}),
              (2000 * US, "host_wait", None), (1000 * US, "alloc", None)],
      f"the gaps and the call each was spent inside: {got}")
check(all(g.get("inside_call", "missing") is None for g in doc.get("stream_gaps", [])),
      f"stream gaps: inside_call null: {[g.get('inside_call', 'missing') for g in doc.get('stream_gaps', [])]}")
p = subprocess.run([cutrace, "gaps", path], capture_output=True, text=True, timeout=60)
lines = [x for x in p.stdout.splitlines() if " idle on device " in x]
check(p.returncode == 0 and len(lines) == 3 and lines[0].endswith(": host_wait (inside cudaGraphInstantiate: "
                                                                  "2.500 ms of the gap)")
      and lines[1].endswith(": host_wait") and lines[2].endswith(": alloc"), f"text: {lines}")
p = subprocess.run([cutrace, "gaps", "--summary", path], capture_output=True, text=True, timeout=60)
check(p.returncode == 0 and "largest gap: 3.000 ms on GPU 0 at +103.000 us (host_wait inside cudaGraphInstantiate; "
      "ended by" in p.stdout, f"--summary: {p.stdout}")
# dump --chrome's gap slices (through the gap spill) carry it too: label and args
p = subprocess.run([cutrace, "dump", "--chrome", path], capture_output=True, text=True, timeout=60)
check(p.returncode == 0, f"dump --chrome: {p.returncode} {p.stderr}")
events = json.loads(p.stdout)["traceEvents"] if p.returncode == 0 else []
slices = sorted(((e["dur"], e["name"], e["args"].get("inside_call"), e["args"].get("inside_ns"))
                 for e in events if e.get("cat") == "gap" and e["args"].get("stream") == -1), reverse=True)
check([x[1:] for x in slices] == [("GPU idle: host_wait 3.000 ms (inside cudaGraphInstantiate)",
                                   "cudaGraphInstantiate", 2500 * US),
                                  ("GPU idle: host_wait 2.000 ms", None, None),
                                  ("GPU idle: alloc 1.000 ms", None, None)],
      f"dump --chrome gap slices: {slices}")
sys.exit(finish())
