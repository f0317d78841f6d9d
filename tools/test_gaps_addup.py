#!/usr/bin/env python3
"""cutrace gaps: the findings add up (docs/gaps.md "Findings add up"): a copy call inside
a gap that allocation calls filled is counted once, by alloc_in_loop (planted trace).

Thread 77, device 0, 5 kernels of 100 us on stream 1, each launched by a 2 us call
ending 3 us before it starts. Between kernel i and i + 1 (4 gaps of 450 us): 10 us
after the kernel ends the thread makes a cudaMemcpyAsync from pageable memory (a 30 us
call; its 10 us transfer on stream 2 starts 1 us after the next kernel), then a cudaFree of
400 us, then the next launch. Each gap is alloc (400 us of allocation calls), so
alloc_in_loop claims the 4 x 450 us. Before the loop a kernel and 1 ms of host work
(one host_wait gap, no finding). The 4 pageable copies (4 x (30 - 10) us beyond their
transfers, their calls inside the gaps) claim 80 us of the alloc gaps: alloc_in_loop,
above, counts it already, so the copies add nothing and the findings together save
1.8 ms of the 2.8 ms idle (not 1.88 ms).

A second trace: 5 kernels of 100 us, and between them a synchronous cudaMemcpy from
pageable memory, its call 200 us from 10 us after the kernel's end, its 10 us transfer
at the call's end, then the next launch (a 5 us gap, launch overhead). Each copy's call
holds the thread 190 us of the 200 us gap it ends: a slow launching call (cudaMemcpy,
every call, 4 x 190 us), and the same 760 us are the copies' calls beyond their
transfers (pageable and synchronous: 4 x (200 - 10) us). Counted once: together 760 us
of the 820 us idle (not the 820 us the cap would leave).

A third: library calls that launch their kernel inside (depth 1) at their end, 200 us
each: cublasSgemm_v2 launching A, then cublasLtMatmul launching B, 12 times, each kernel
50 us. The device waits 200 us inside each call: 12 gaps before B (in the Lt calls) and
11 before A (in the Sgemm calls, after the first). The CUDA-graph candidate A > B claims
the waits inside its instances, the 12 before B (2.4 ms, all inside the launching
calls), which are the cublasLtMatmul finding's: the candidate's part inside the calls is
shared once, so the cublasSgemm_v2 finding (2.2 ms, other gaps) still adds all of its
own: together 4.6 ms, all the idle (not 2.4 ms).

usage: test_gaps_addup.py CUTRACE
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib"))
from cttest import check, finish, scratch_dir  # noqa: E402
from tracewrite import TraceWriter  # noqa: E402

US = 1000
TIMED = 0x4
HTOD, PAGEABLE, DEVICE = 1, 3, 1
cutrace = sys.argv[1]
tmp = scratch_dir("cutrace-addup-")

w = TraceWriter()
w.add("process", pid=77, ppid=1, start_ns=10**9, realtime_ns=1700000000 * 10**9,
      host=w.string("host"), cmdline=w.string("./train"))
w.add("device", device=0, name=w.string("GPU"), cc_major=9, sm_count=132, mem_bytes=80 << 30)
w.add("thread", tid=77, name=w.string("train"), start_ns=10**9)
for st in (1, 2):
    w.add("stream", stream=st, handle=0x100 + st, device=0, flags=1)
corr = 0
records = []  # (sort key: the record's end, kind, fields)


def kernel(t, name="_Z4stepPf"):
    """A 100 us kernel at t, launched by a 2 us call ending 3 us before."""
    c = api("cudaLaunchKernel", t - 5 * US, t - 3 * US)
    records.append((t - 3 * US, 1, "launch", dict(corr=c, kernel=w.string(name), grid_x=1, grid_y=1,
                                                   grid_z=1, block_x=32, block_y=1, block_z=1)))
    records.append((t + 100 * US, 2, "gpu", dict(corr=c, device=0, stream=1, start_ns=t, end_ns=t + 100 * US,
                                                 type=1, name=w.string(name))))


def api(name, begin, end, stream=1):
    global corr
    corr += 1
    records.append((end, 0, "api", dict(tid=77, name=w.string(name), begin_ns=begin, end_ns=end, corr=corr,
                                         device=0, stream=stream, flags=TIMED)))
    return corr


# first a kernel and 1 ms of host work before the loop: one host_wait gap no finding
# claims (one gap is below --repeat-min), so the device has idle left beyond the loop's
t = 10**9
kernel(t, "_Z4warmPf")
t += 1100 * US
for i in range(5):
    kernel(t)
    if i == 4:
        break
    e = t + 100 * US  # the kernel's end: the gap begins
    nxt = e + 450 * US  # the next kernel's start: the gap ends
    c = api("cudaMemcpyAsync", e + 10 * US, e + 40 * US, stream=2)
    records.append((e + 40 * US, 1, "memop", dict(corr=c, bytes=1 << 20, kind=HTOD, src_mem=PAGEABLE,
                                                  dst_mem=DEVICE, **{"async": 1})))
    records.append((nxt + 11 * US, 2, "gpu", dict(corr=c, device=0, stream=2, start_ns=nxt + US,
                                                  end_ns=nxt + 11 * US, type=2)))
    api("cudaFree", e + 42 * US, e + 442 * US)
    t = nxt
for _, _, kind, fields in sorted(records, key=lambda r: (r[0], r[1])):
    w.add(kind, **fields)
w.add("end", records=0, drops=0, end_ns=10**10)
path = os.path.join(tmp, "addup.77.ctr")
w.save(path)

p = subprocess.run([cutrace, "gaps", "--format", "json", path], capture_output=True, text=True, timeout=60)
check(p.returncode == 0, f"gaps: {p.returncode} {p.stderr}")
doc = json.loads(p.stdout) if p.returncode == 0 else {"devices": [{}], "findings": []}
dev = doc["devices"][0]
check(dev.get("idle_ns") == 1000 * US + 4 * 450 * US and dev.get("idle", {}).get("alloc_ns") == 4 * 450 * US
      and dev.get("idle", {}).get("host_wait_ns") == 1000 * US, f"4 alloc gaps of 450 us, 1 ms host_wait: {dev}")
fs = {f["kind"]: f for f in doc["findings"]}
al, pg = fs.get("alloc_in_loop", {}), fs.get("pageable_copy", {})
check(al.get("count") == 4 and al.get("saving_ns") == al.get("adds_ns") == 4 * 450 * US,
      f"alloc_in_loop adds its 1.8 ms: {al}")
check(pg.get("count") == 4 and pg.get("saving_ns") == 4 * 20 * US and pg.get("not_idle_ns") == 0
      and pg.get("overlap_ns") == 4 * 20 * US and pg.get("adds_ns") == 0,
      f"the copies' 80 us are alloc_in_loop's: {pg}")
check(sorted(fs) == ["alloc_in_loop", "pageable_copy"], f"no other finding: {sorted(fs)}")
check(doc.get("findings_total", {}).get("saving_ns") == dev.get("findings_saving_ns") == 4 * 450 * US,
      f"together 1.8 ms of 2.8 ms: {doc.get('findings_total')}")
p = subprocess.run([cutrace, "gaps", "--summary", path], capture_output=True, text=True, timeout=60)
check(p.returncode == 0 and "memory allocated and freed in the loop up to 1.800 ms, pageable copies (counted above); "
      "together up to 1.800 ms of 2.800 ms idle (64.3%)" in p.stdout, f"summary: {p.stdout}")

# The second trace: slow synchronous copies, named by two findings.
w = TraceWriter()
w.add("process", pid=78, ppid=1, start_ns=10**9, realtime_ns=1700000000 * 10**9,
      host=w.string("host"), cmdline=w.string("./train"))
w.add("device", device=0, name=w.string("GPU"), cc_major=9, sm_count=132, mem_bytes=80 << 30)
w.add("thread", tid=77, name=w.string("train"), start_ns=10**9)
w.add("stream", stream=1, handle=0x101, device=0, flags=1)
records = []
t = 10**9
for i in range(5):
    kernel(t)
    if i == 4:
        break
    e = t + 100 * US
    c = api("cudaMemcpy", e + 10 * US, e + 210 * US)
    records.append((e + 210 * US, 1, "memop", dict(corr=c, bytes=1 << 20, kind=HTOD, src_mem=PAGEABLE,
                                                   dst_mem=DEVICE, **{"async": 0})))
    records.append((e + 210 * US, 2, "gpu", dict(corr=c, device=0, stream=1, start_ns=e + 200 * US,
                                                 end_ns=e + 210 * US, type=2)))
    t = e + 215 * US
for _, _, kind, fields in sorted(records, key=lambda r: (r[0], r[1])):
    w.add(kind, **fields)
w.add("end", records=0, drops=0, end_ns=10**10)
path = os.path.join(tmp, "slowcopy.78.ctr")
w.save(path)
p = subprocess.run([cutrace, "gaps", "--format", "json", path], capture_output=True, text=True, timeout=60)
check(p.returncode == 0, f"gaps: {p.returncode} {p.stderr}")
doc = json.loads(p.stdout) if p.returncode == 0 else {"devices": [{}], "findings": []}
dev = doc["devices"][0]
check(dev.get("idle_ns") == 4 * 200 * US + 4 * 5 * US, f"4 gaps of 200 us and 4 of 5 us: {dev}")
fs = {f["kind"]: f for f in doc["findings"]}
sc, pg, sy = fs.get("slow_launch_call", {}), fs.get("pageable_copy", {}), fs.get("sync_copy", {})
check(sc.get("what") == "cudaMemcpy" and sc.get("pattern") == "every_call" and sc.get("saving_ns") == 4 * 190 * US,
      f"the slow copy calls: {sc}")
check(pg.get("saving_ns") == sy.get("saving_ns") == 4 * 190 * US and pg.get("adds_ns") == 4 * 190 * US
      and sy.get("adds_ns") == 0 and sc.get("adds_ns") == 0 and sc.get("overlap_ns") == 4 * 190 * US,
      f"counted once, by the finding found first: {[(f['kind'], f['overlap_ns'], f['adds_ns']) for f in doc['findings']]}")
check(doc.get("findings_total", {}).get("saving_ns") == 4 * 190 * US,
      f"together 760 us of 820 us: {doc.get('findings_total')}")

# The third trace: two library calls, a repeated sequence of their nested kernels.
w = TraceWriter()
w.add("process", pid=79, ppid=1, start_ns=10**9, realtime_ns=1700000000 * 10**9,
      host=w.string("host"), cmdline=w.string("./train"))
w.add("device", device=0, name=w.string("GPU"), cc_major=9, sm_count=132, mem_bytes=80 << 30)
w.add("thread", tid=77, name=w.string("train"), start_ns=10**9)
w.add("stream", stream=1, handle=0x101, device=0, flags=1)
records = []


def library_call(name, kernel_name, t):
    """name runs [t, t + 200 us] and launches kernel_name (50 us) at its end."""
    outer = api(name, t, t + 200 * US)
    inner = api("cuLaunchKernel", t + 198 * US, t + 199 * US)
    records[-1][3].update(depth=1, parent=outer)
    records.append((t + 199 * US, 1, "launch", dict(corr=inner, kernel=w.string(kernel_name), grid_x=1, grid_y=1,
                                                     grid_z=1, block_x=32, block_y=1, block_z=1)))
    records.append((t + 250 * US, 2, "gpu", dict(corr=inner, device=0, stream=1, start_ns=t + 200 * US,
                                                 end_ns=t + 250 * US, type=1, name=w.string(kernel_name))))


t = 10**9
for i in range(12):
    library_call("cublasSgemm_v2", "_Z1APf", t)
    library_call("cublasLtMatmul", "_Z1BPf", t + 250 * US)
    t += 500 * US
for _, _, kind, fields in sorted(records, key=lambda r: (r[0], r[1])):
    w.add(kind, **fields)
w.add("end", records=0, drops=0, end_ns=10**10)
path = os.path.join(tmp, "nested.79.ctr")
w.save(path)
p = subprocess.run([cutrace, "gaps", "--format", "json", path], capture_output=True, text=True, timeout=60)
check(p.returncode == 0, f"gaps: {p.returncode} {p.stderr}")
doc = json.loads(p.stdout) if p.returncode == 0 else {"devices": [{}], "findings": []}
dev = doc["devices"][0]
check(dev.get("idle_ns") == 23 * 200 * US and dev.get("gaps") == 23, f"23 gaps of 200 us: {dev}")
fs = doc["findings"]
gr = [f for f in fs if f["kind"] == "graph_candidate"]
sc = {f["what"]: f for f in fs if f["kind"] == "slow_launch_call"}
check(len(gr) == 1 and gr[0]["what"] == "A > B" and gr[0]["count"] == 12 and gr[0]["idle_ns"] == 12 * 200 * US
      and gr[0]["idle_in_calls_ns"] == 12 * 200 * US, f"the candidate A > B, its waits inside the calls: {gr}")
check(sc.get("cublasLtMatmul", {}).get("saving_ns") == 12 * 200 * US
      and sc.get("cublasSgemm_v2", {}).get("saving_ns") == 11 * 200 * US
      and sc.get("cublasSgemm_v2", {}).get("adds_ns") == 11 * 200 * US
      and gr[0]["adds_ns"] + sc["cublasLtMatmul"]["adds_ns"] == 12 * 200 * US,
      f"the Lt calls' waits counted once, the Sgemm calls' apart: {[(f['kind'], f['what'], f['overlap_ns'], f['adds_ns']) for f in fs]}")
check(doc.get("findings_total", {}).get("saving_ns") == 23 * 200 * US,
      f"together 4.6 ms of 4.6 ms: {doc.get('findings_total')}")
sys.exit(finish())
