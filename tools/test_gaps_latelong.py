#!/usr/bin/env python3
"""cutrace gaps: a kernel far longer than any before it, delivered when it ends (the
model delivers in end order), covers the idle time it overlaps instead of that time
being counted idle before it came (tools/gaps_launches.c). Planted.

Thread 77, device 0. Stream 1: 100 us kernels every 300 us (200 us gaps), 20 of them,
then 30 more during the long kernel, then 10 after it. Stream 2: one 10 ms kernel (100x
any before it) launched 1 us before it starts, right after the first 20. Device idle:
19 gaps before the long kernel (3.8 ms), 200 us from the 20th kernel to it, 0 under it,
200 us from its end to the next kernel and 9 gaps after (1.8 ms): 6.0 ms, 30 gaps, no
late activity. Without the fix the 30 gaps under the long kernel were final (idle)
before it came: about 12 ms and late_activities 1. A second trace plants the same long
kernel whose launch is marked captured (no GPU record promised) and without CT_API_TIMED:
those calls wait for nothing (the idle time is then counted as before, late 1), and a
promised record that never comes (dropped) holds nothing past the end of the file.

usage: test_gaps_latelong.py CUTRACE
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib"))
from cttest import check, finish, scratch_dir  # noqa: E402
from long_plant import B, CAPTURED, MS, TIMED, US, Plant  # noqa: E402

cutrace = sys.argv[1]
tmp = scratch_dir("cutrace-latelong-")


def plant(pid, long_flags, long_gpu=True, dropped=False):
    p = Plant(pid)
    for i in range(20):
        p.work(B + i * 300 * US, 100 * US)
    L = B + 6 * MS
    p.work(L, 10 * MS, stream=2, flags=long_flags, gpu=long_gpu)
    if dropped:  # a call that promised a record that never came, before everything
        p.corr += 1
        p.records.append((B - 50 * US, 0, "api", dict(tid=77, name=p.w.string("cudaLaunchKernel"),
                                                       begin_ns=B - 52 * US, end_ns=B - 50 * US, corr=p.corr,
                                                       device=0, stream=1, flags=TIMED)))
    for j in range(30):
        p.work(L + 50 * US + j * 300 * US, 100 * US)
    for k in range(10):
        p.work(L + 10 * MS + 200 * US + k * 300 * US, 100 * US)
    path = os.path.join(tmp, f"latelong.{pid}.ctr")
    p.save(path)
    return path


def gaps(path):
    r = subprocess.run([cutrace, "gaps", "--format", "json", path], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, f"gaps {path}: {r.returncode} {r.stderr}")
    if r.returncode:
        return {"gaps": 0, "idle_ns": 0, "busy_ns": 0}, -1
    doc = json.loads(r.stdout)
    return doc["devices"][0], doc["late_activities"]


# the long kernel's launch promised its record: its 10 ms cover the stream's gaps
dev, late = gaps(plant(91, TIMED))
check((dev["idle_ns"], dev["gaps"], late) == (6 * MS, 30, 0),
      f"long kernel: device idle {dev['idle_ns']} ns in {dev['gaps']} gaps, late {late}; "
      f"want {6 * MS} in 30, late 0")
check(dev["busy_ns"] == 20 * 100 * US + 10 * MS + 10 * 100 * US,
      f"long kernel: busy {dev['busy_ns']}")

# the same with a promised record that never comes, from before the first kernel: it holds
# the horizon to the end of the file (under 2 s of trace), which changes nothing
dev, late = gaps(plant(92, TIMED, dropped=True))
check((dev["idle_ns"], dev["gaps"], late) == (6 * MS, 30, 0),
      f"with a dropped record: device idle {dev['idle_ns']} in {dev['gaps']} gaps, late {late}")

# a launch that promised no record (untimed, or captured into a graph) waits for nothing:
# the long kernel, if one comes anyway, is late as before (the gaps under it stay idle)
for pid, flags in ((93, 0), (94, TIMED | CAPTURED)):
    dev, late = gaps(plant(pid, flags))
    check(late == 1 and dev["idle_ns"] > 11 * MS,
          f"flags {flags}: device idle {dev['idle_ns']} ns, late {late}; want > 11 ms, late 1")
sys.exit(finish())
