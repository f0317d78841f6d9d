#!/usr/bin/env python3
"""cutrace gaps: GPU work that ends long after its call is busy, never idle, and calls
whose GPU work a selection left out wait for nothing (tools/gaps_launches.c). Planted.

1. Long work. Thread 77, device 0. Stream 1: 100 us kernels every 300 us (200 us gaps),
   20 of them, then one every 300 us while the long work runs, then 10 after it. Stream
   2: one piece of work of 3 s (longer than any before it, and longer than the 2 s a
   call used to wait for its GPU record), launched 1 us before it starts right after
   the first 20: an NCCL all-reduce kernel, a cuBLAS call timed as one (GEMM record), or
   a graph launch timed as one (its second, long kernel inside the graph's record).
   Device idle: 19 gaps before it (3.8 ms), 200 us up to it, 0 under it, 200 us after
   it and 9 gaps after (1.8 ms): 6.0 ms in 30 gaps, no late activity, no call cut off.
   The all-reduce overlapped compute exactly as long as the 10,000 kernels under it ran
   (1 s; before: only the last 256 kernels delivered before it counted, 25.6 ms).
   Before: the call stopped waiting after 2 s (and after 4096 later launches), the
   stream-1 gaps under the work were final before it came: about 2 s idle, late 1.
2. The same all-reduce in a file that lost records (a DROP record; or a "gpu_lost"
   tracer span, GPU timings the tracer could not read): a call waits 2 s at most there
   (its record may never come): late 1, one call cut off.
3. The memory bound: a call whose record never comes (no DROP record), then 40,000
   kernels: once the device holds 65,536 open busy intervals the call stops waiting
   (launch_waits_cut 1), and the idle time is exactly the planted one.
4. Selection: cutrace-gentrace --mixed --two-devices (stream 8 on device 1): `gaps
   --device 1` gives device 1's row of the unfiltered run exactly, and no call waits for
   the device-0 work it left out (launch_waits_cut 0; before: every one of device 0's
   calls waited, the list of 4096 waiting calls cut the oldest off, 2 s each).

usage: test_gaps_longwork.py CUTRACE GENTRACE
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib"))
from cttest import check, finish, scratch_dir  # noqa: E402
from long_plant import B, GPU_GEMM, GPU_GRAPH, GPU_KERNEL, MS, US, Plant  # noqa: E402

cutrace, gentrace = sys.argv[1], sys.argv[2]
LONG = 3000 * MS


def plant_long(path, pid, api, gtype, name, lossy=None):
    p = Plant(pid)
    if lossy == "drop":
        p.records.append((B - 100 * US, 0, "drop", dict(tid=77, count=1, first_ns=B - 200 * US,
                                                         last_ns=B - 100 * US)))
    elif lossy == "gpu_lost":  # the tracer's count of GPU timings it could not read
        p.records.append((B - 100 * US, 0, "tracer", dict(tid=78, what=p.w.string("gpu_lost"), begin_ns=B - 200 * US,
                                                           end_ns=B - 100 * US, amount=1)))
    for i in range(20):
        p.work(B + i * 300 * US, 100 * US)
    L = B + 6 * MS
    p.work(L, LONG, stream=2, api=api, gtype=gtype, name=name)
    j = 0
    while 50 * US + j * 300 * US + 100 * US <= LONG:
        p.work(L + 50 * US + j * 300 * US, 100 * US)
        j += 1
    for k in range(10):
        p.work(L + LONG + 200 * US + k * 300 * US, 100 * US)
    p.save(path, end_ns=10**11)
    return j


def gaps(*args):
    r = subprocess.run([cutrace, "gaps", "--format", "json", *args], capture_output=True, text=True,
                       timeout=120)
    check(r.returncode == 0, f"gaps {args}: {r.returncode} {r.stderr}")
    if r.returncode:
        return None
    return json.loads(r.stdout)


tmp = scratch_dir("cutrace-longwork-")
# 1. long work of each kind, in a whole file: busy, never idle
for pid, (api, gtype, name) in enumerate((("cudaLaunchKernel", GPU_KERNEL, "ncclDevKernel_AllReduce_Sum_f32_RING_LL"),
                                          ("cublasSgemm_v2", GPU_GEMM, None),
                                          ("cudaGraphLaunch", GPU_GRAPH, None)), start=101):
    path = os.path.join(tmp, f"long.{pid}.ctr")
    under = plant_long(path, pid, api, gtype, name)
    doc = gaps(path)
    if not doc:
        continue
    dev = doc["devices"][0]
    what = f"{api} ({under} kernels under it)"
    check((dev["idle_ns"], dev["gaps"], doc["late_activities"], doc["launch_waits_cut"]) == (6 * MS, 30, 0, 0),
          f"{what}: device idle {dev['idle_ns']} ns in {dev['gaps']} gaps, late {doc['late_activities']}, "
          f"cut {doc['launch_waits_cut']}; want {6 * MS} in 30, 0, 0")
    check(dev["busy_ns"] == 30 * 100 * US + LONG, f"{what}: busy {dev['busy_ns']}")
    if gtype == GPU_KERNEL:  # the all-reduce is communication, overlapped by every kernel under it
        c = dev["comm"]
        check((c["comm_ns"], c["overlap_ns"], c["exposed_ns"]) == (LONG, under * 100 * US, LONG - under * 100 * US),
              f"{what}: comm {c}; want {LONG} of which {under * 100 * US} overlapped with compute")

# 2. in a file that lost records (a DROP record, or GPU timings the tracer could not
# read) a call waits 2 s at most: the all-reduce comes late
for pid, lossy in ((111, "drop"), (112, "gpu_lost")):
    path = os.path.join(tmp, f"{lossy}.ctr")
    plant_long(path, pid, "cudaLaunchKernel", GPU_KERNEL, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", lossy=lossy)
    doc = gaps(path)
    if not doc:
        continue
    dev = doc["devices"][0]
    check(doc["late_activities"] == 1 and doc["launch_waits_cut"] == 1 and dev["idle_ns"] > 500 * MS,
          f"{lossy}: idle {dev['idle_ns']}, late {doc['late_activities']}, cut {doc['launch_waits_cut']}; "
          f"want > 500 ms, 1, 1")
    r = subprocess.run([cutrace, "gaps", path], capture_output=True, text=True, timeout=120)
    check("finalisation went past 1 calls still waiting" in r.stdout, f"{lossy}: the text note is missing")

# 3. the memory bound: a record that never comes stops being waited for
p = Plant(121)
p.work(B - 50 * US, 100 * US, gpu=False)
N = 40000
for i in range(N):
    p.work(B + i * 300 * US, 100 * US)
path = os.path.join(tmp, "bound.ctr")
p.save(path, end_ns=10**11)
doc = gaps(path)
if doc:
    dev = doc["devices"][0]
    check((dev["idle_ns"], dev["gaps"], doc["late_activities"], doc["launch_waits_cut"]) ==
          ((N - 1) * 200 * US, N - 1, 0, 1),
          f"bound: idle {dev['idle_ns']} in {dev['gaps']} gaps, late {doc['late_activities']}, "
          f"cut {doc['launch_waits_cut']}; want {(N - 1) * 200 * US} in {N - 1}, 0, 1")

# 4. a selection: the calls of the work left out wait for nothing
path = os.path.join(tmp, "two.ctr")
r = subprocess.run([gentrace, "--mixed", "--two-devices", path, "30000"], capture_output=True, text=True)
check(r.returncode == 0, f"gentrace: {r.stderr}")
whole = gaps(path)
for d in (0, 1):
    sel = gaps("--device", str(d), path)
    if not whole or not sel:
        continue
    want = [x for x in whole["devices"] if x["device"] == d]
    check(sel["devices"] == want, f"--device {d}: its row differs from the unfiltered run's")
    check((sel["launch_waits_cut"], sel["late_activities"], whole["launch_waits_cut"]) == (0, 0, 0),
          f"--device {d}: cut {sel['launch_waits_cut']}, late {sel['late_activities']} "
          f"(unfiltered cut {whole['launch_waits_cut']}); want 0, 0 (0)")
sys.exit(finish())
