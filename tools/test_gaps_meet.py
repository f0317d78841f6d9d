#!/usr/bin/env python3
"""cutrace gaps: findings that meet on the same idle time are matched gap by gap
(docs/gaps.md "Findings add up", the matrix), on three planted traces.

1. A slow launching call inside sync gaps that a sync on much work opened, and little
   syncs elsewhere (pid 81). Four 1 ms kernels, each followed by a cudaStreamSynchronize
   that returns 300 us after the kernel's end and a 200 us cudaLaunchKernel of the next
   one (4 gaps of 502 us, cause sync: 300 us blocking, 200 us issuing); then five 20 us
   kernels launched by 3 us cuLaunchKernel calls (after a 1 ms host_wait gap), each followed by a sync returning 100
   us after its kernel (little syncs: 5 gaps of 105 us that their returns opened). The
   slow call's 800 us lie in no gap the little syncs claim: both findings add all of
   their savings (before, the slow call's time in sync gaps was taken as the little
   syncs', 800 us less in the total).
2. A CUDA-graph candidate whose waits lie in alloc gaps (pid 82, --repeat-min 7). Kernels
   A and B (50 us) on one stream, 12 times A > B; in 8 instances a 300 us cudaFree between
   A and B (alloc gaps of 310 us), in 4 a 200 us host sleep (host_wait gaps of 210 us);
   after 3 of the instances a cudaFree before the next A (3 more alloc gaps, between
   instances). alloc_in_loop claims 11 x 310 us; the candidate 8 x 310 us + 4 x 210 us,
   of which the 8 x 310 us are alloc_in_loop's: it adds 840 us (before: all of it again).
3. A launch-bound run inside gaps little syncs opened (pid 83). 24 kernels of 1 us, each
   launched by an 8 us call (a launch-bound run: 24 x 7 us beyond the kernels); after 12
   of them a sync returning 40 us after the kernel (little syncs: their gaps, the next
   launch call inside each, are sync_little_work's). The run's 168 us share the 12 x 8 us
   launch calls inside those gaps: it adds 72 us (before: 168 us).
4. The order (pid 84): pageable copies that save only busy time below little syncs.
5. A graph candidate beside another stream's work (pid 85): only the device's idle.
6. A slow first call (warm-up) beside alloc gaps its later, fast calls ended (pid 86):
   the first_call finding shares only its first call's time (none in alloc gaps).
7. Little syncs beginning before their kernel starts (pid 87): the part of a sync's
   time inside the previous gap's time after a return is counted once.
8. A graph candidate beside another stream's kernel still running when the next kernel
   of the sequence starts (pid 88): only the device's idle, once that kernel is known;
9. the same in a dense loop, the other stream's kernel known 70 kernels later (pid 89).
A 5 ms host_wait gap opens each trace, so that the device's idle time never caps the sum.

usage: test_gaps_meet.py CUTRACE
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
cutrace = sys.argv[1]
tmp = scratch_dir("cutrace-meet-")


class Plant:
    """One process, device 0, stream 1, thread 77; records sorted by their end."""

    def __init__(self, pid):
        self.w = TraceWriter()
        self.pid = pid
        self.w.add("process", pid=pid, ppid=1, start_ns=10**9, realtime_ns=1700000000 * 10**9,
                   host=self.w.string("host"), cmdline=self.w.string("./train"))
        self.w.add("device", device=0, name=self.w.string("GPU"), cc_major=9, sm_count=132,
                   mem_bytes=80 << 30)
        self.w.add("thread", tid=77, name=self.w.string("train"), start_ns=10**9)
        self.w.add("stream", stream=1, handle=0x101, device=0, flags=1)
        self.w.add("stream", stream=2, handle=0x102, device=0, flags=1)
        self.corr = 0
        self.records = []

    def api(self, name, begin, end, stream=1):
        self.corr += 1
        self.records.append((end, 0, "api", dict(tid=77, name=self.w.string(name), begin_ns=begin, end_ns=end,
                                                 corr=self.corr, device=0, stream=stream, flags=TIMED)))
        return self.corr

    def kernel(self, name, call_begin, call_end, start, end, api="cudaLaunchKernel", stream=1):
        c = self.api(api, call_begin, call_end, stream)
        self.records.append((call_end, 1, "launch", dict(corr=c, kernel=self.w.string(name), grid_x=1, grid_y=1,
                                                         grid_z=1, block_x=32, block_y=1, block_z=1)))
        self.records.append((end, 2, "gpu", dict(corr=c, device=0, stream=stream, start_ns=start, end_ns=end, type=1,
                                                 name=self.w.string(name))))

    def run(self, *opts):
        for _, _, kind, fields in sorted(self.records, key=lambda r: (r[0], r[1])):
            self.w.add(kind, **fields)
        self.w.add("end", records=0, drops=0, end_ns=10**10)
        path = os.path.join(tmp, f"meet.{self.pid}.ctr")
        self.w.save(path)
        p = subprocess.run([cutrace, "gaps", "--format", "json", *opts, path], capture_output=True, text=True,
                           timeout=60)
        check(p.returncode == 0, f"gaps {self.pid}: {p.returncode} {p.stderr}")
        doc = json.loads(p.stdout) if p.returncode == 0 else {"devices": [{}], "findings": []}
        return doc, doc["devices"][0], {f["kind"]: f for f in doc["findings"]}


def brief(doc):
    return [(f["kind"], f["what"], f["saving_ns"], f["overlap_ns"], f["adds_ns"]) for f in doc["findings"]]


def warm(p, t):
    """A kernel at t, then 5 ms of host work: one host_wait gap no finding claims."""
    p.kernel("_Z4warmPf", t - 5 * US, t - 3 * US, t, t + 10 * US)
    return t + 10 * US + 5000 * US


# 1. A slow launching call in sync gaps of syncs on much work; little syncs elsewhere.
p = Plant(81)
t = warm(p, 10**9)
call_end = t - 2 * US
p.kernel("_Z3bigPf", t - 5 * US, call_end, t, t + 1000 * US)
for i in range(4):
    e = t + 1000 * US  # the kernel's end: the gap begins
    p.api("cudaStreamSynchronize", call_end + US, e + 300 * US)
    call_end = e + 500 * US
    t = e + 502 * US
    p.kernel("_Z3bigPf", e + 300 * US, call_end, t, t + 1000 * US)  # the slow launch
e = t + 1000 * US
p.api("cudaStreamSynchronize", call_end + US, e + 10 * US)  # returns at once: a host_wait gap
t = e + 1000 * US
for i in range(5):
    p.kernel("_Z5smallPf", t - 3 * US, t, t, t + 20 * US, api="cuLaunchKernel")
    p.api("cudaStreamSynchronize", t + US, t + 120 * US)  # 20 us of work, returns 100 us after it
    t += 20 * US + 105 * US
p.kernel("_Z4lastPf", t - 3 * US, t, t, t + 20 * US, api="cuLaunchKernel")
doc, dev, fs = p.run()
sc, ls = fs.get("slow_launch_call", {}), fs.get("sync_little_work", {})
check(dev.get("idle", {}).get("sync_ns") == 4 * 502 * US + 5 * 105 * US,
      f"4 sync gaps of 502 us and 5 of 105 us: {dev.get('idle')}")
check(sc.get("what") == "cudaLaunchKernel" and sc.get("saving_ns") == 4 * 200 * US + 3 * US,
      f"the slow launch, 4 x 200 us (and the first big kernel's 3 us in the host_wait gap): {sc}")
check(ls.get("count") == 5 and ls.get("sync_gaps") == 5, f"5 little syncs, 5 gaps: {ls}")
check(sc.get("overlap_ns") == 0 and ls.get("overlap_ns") == 0 and sc.get("adds_ns") == sc.get("saving_ns")
      and ls.get("adds_ns") == ls.get("saving_ns"), f"apart, each adds all: {brief(doc)}")
check(doc.get("findings_total", {}).get("saving_ns") == sc.get("saving_ns", 0) + ls.get("saving_ns", 0),
      f"the total: {doc.get('findings_total')}")

# 2. A CUDA-graph candidate whose waits lie in alloc gaps (--repeat-min 7).
p = Plant(82)
t = warm(p, 10**9)
call_end = t - 3 * US
for i in range(12):
    p.kernel("_Z1APf", call_end - 2 * US, call_end, t, t + 50 * US)  # A, queued or waited on
    e = t + 50 * US
    if i < 8:
        p.api("cudaFree", e + 5 * US, e + 305 * US)
    b = e + 310 * US if i < 8 else e + 210 * US  # B starts: the wait inside the instance ends
    p.kernel("_Z1BPf", b - 4 * US, b - 2 * US, b, b + 50 * US)
    t, call_end = b + 50 * US, b - 1 * US
    if i in (2, 5, 8):  # an alloc gap between instances: B's end to the next A
        p.api("cudaFree", t + 5 * US, t + 305 * US)
        call_end = t + 308 * US
        t += 310 * US
doc, dev, fs = p.run("--repeat-min", "7")
al, gr = fs.get("alloc_in_loop", {}), fs.get("graph_candidate", {})
check(dev.get("idle", {}).get("alloc_ns") == 11 * 310 * US and dev.get("idle", {}).get("host_wait_ns") == 5000 * US
      + 4 * 210 * US, f"11 alloc gaps of 310 us, 4 + 1 host_wait: {dev.get('idle')}")
check(al.get("count") == 11 and al.get("saving_ns") == 11 * 310 * US, f"alloc_in_loop: {al}")
check(gr.get("what") == "A > B" and gr.get("count") == 12 and gr.get("idle_ns") == 8 * 310 * US + 4 * 210 * US,
      f"the candidate: {gr}")
check(sorted(fs) == ["alloc_in_loop", "graph_candidate"], f"no other finding: {brief(doc)}")
check(al.get("adds_ns") == al.get("saving_ns") and gr.get("overlap_ns") == 8 * 310 * US
      and gr.get("adds_ns") == 4 * 210 * US, f"the candidate's waits in alloc gaps counted once: {brief(doc)}")
check(doc.get("findings_total", {}).get("saving_ns") == 11 * 310 * US + 4 * 210 * US,
      f"the total: {doc.get('findings_total')}")

# 3. A launch-bound run inside gaps that little syncs opened.
p = Plant(83)
t = warm(p, 10**9)
call_begin = t
for i in range(24):
    s = call_begin + 8 * US  # the kernel starts as its call returns
    p.kernel(f"_Z2k{i}Pf", call_begin, s, s, s + US)
    if i % 2 == 0:  # a little sync: returns 40 us after the 1 us kernel
        p.api("cudaStreamSynchronize", s, s + 41 * US)
        call_begin = s + 41 * US
    else:
        call_begin = s + US  # the next launch right after the kernel: a 8 us launch_overhead gap
p.kernel("_Z4lastPf", call_begin, call_begin + 8 * US, call_begin + 8 * US, call_begin + 100 * US)
doc, dev, fs = p.run()
lb, ls = fs.get("launch_bound", {}), fs.get("sync_little_work", {})
check(lb.get("count") == 24 and lb.get("saving_ns") == 24 * 7 * US, f"the launch-bound run: {lb}")
check(ls.get("count") == 12 and ls.get("sync_gaps") == 12, f"12 little syncs and their gaps: {ls}")
check(ls.get("saving_ns", 0) > lb.get("saving_ns", 0) and lb.get("overlap_ns") == 12 * 8 * US
      and lb.get("adds_ns") == 24 * 7 * US - 12 * 8 * US,
      f"the launch calls inside the little syncs' gaps counted once: {brief(doc)}")

# 4. The order: what each adds, then its saving. Four pageable cudaMemcpyAsync calls of
# 500 us during a 3 ms kernel (their 10 us transfers queued behind it): a saving of
# 4 x 490 us, none of it idle time (the device was busy); then the five little syncs of
# trace 1 (525 us, all idle). By saving the copies came first, adding nothing; by what
# they add the little syncs do, in JSON, text and --summary.
p = Plant(84)
t = warm(p, 10**9)
p.kernel("_Z4longPf", t - 5 * US, t - 3 * US, t, t + 3000 * US)
for i in range(4):
    b = t + i * 600 * US
    c = p.api("cudaMemcpyAsync", b, b + 500 * US)
    p.records.append((b + 500 * US, 1, "memop", dict(corr=c, bytes=1 << 20, kind=1, src_mem=3, dst_mem=1,
                                                     **{"async": 1})))
    s = t + 3000 * US + i * 10 * US
    p.records.append((s + 10 * US, 2, "gpu", dict(corr=c, device=0, stream=1, start_ns=s, end_ns=s + 10 * US,
                                                  type=2)))
t += 3040 * US + 1000 * US
for i in range(5):
    p.kernel("_Z5smallPf", t - 3 * US, t, t, t + 20 * US, api="cuLaunchKernel")
    p.api("cudaStreamSynchronize", t + US, t + 120 * US)
    t += 20 * US + 105 * US
p.kernel("_Z4lastPf", t - 3 * US, t, t, t + 20 * US, api="cuLaunchKernel")
doc, dev, fs = p.run()
pg, ls = fs.get("pageable_copy", {}), fs.get("sync_little_work", {})
check(pg.get("saving_ns", 0) >= 4 * 490 * US and pg.get("not_idle_ns") == pg.get("saving_ns")
      and pg.get("adds_ns") == 0 and ls.get("adds_ns") == ls.get("saving_ns") == 5 * 100 * US + 5 * 5 * US,
      f"the copies save busy time, the syncs idle time: {brief(doc)}")
check([f["kind"] for f in doc["findings"]] == ["sync_little_work", "pageable_copy"],
      f"by what they add: {brief(doc)}")
path = os.path.join(tmp, "meet.84.ctr")
q = subprocess.run([cutrace, "gaps", path], capture_output=True, text=True, timeout=60)
text = q.stdout[q.stdout.find("\nFindings"):]
check(q.returncode == 0 and 0 <= text.find("waited on little GPU work") < text.find("pageable"),
      f"text: the little syncs first: {text[:600]}")
q = subprocess.run([cutrace, "gaps", "--summary", path], capture_output=True, text=True, timeout=60)
line = [x for x in q.stdout.splitlines() if x.startswith("findings:")]
check(q.returncode == 0 and line and line[0].startswith("findings: syncs on little GPU work up to 525.000 us, "
                                                        "pageable copies (no idle saving estimated)"),
      f"--summary: the little syncs first: {line}")

# 5. A graph candidate's waits while another stream keeps the device busy (pid 85,
# --repeat-min 13: no host-bound finding). A > B 12 times on stream 1, 200 us of host
# work between A and B; in 6 of the waits the thread's kernel C runs 150 us on stream 2.
# The candidate claims only the device's idle in its waits: 6 x 200 + 6 x 50 us (it used
# to claim the stream's 12 x 200 us).
p = Plant(85)
t = warm(p, 10**9)
call_end = t - 3 * US
for i in range(12):
    p.kernel("_Z1APf", call_end - 2 * US, call_end, t, t + 50 * US)
    e = t + 50 * US
    if i % 2:
        p.kernel("_Z1CPf", e + 10 * US, e + 12 * US, e + 20 * US, e + 170 * US, stream=2)
    b = e + 200 * US
    p.kernel("_Z1BPf", b - 6 * US, b - 4 * US, b, b + 50 * US)
    t, call_end = b + 50 * US, b - 1 * US
doc, dev, fs = p.run("--repeat-min", "13")
gr = fs.get("graph_candidate", {})
check(gr.get("what") == "A > B" and gr.get("count") == 12 and gr.get("idle_ns") == gr.get("saving_ns")
      == 6 * 200 * US + 6 * 50 * US, f"the candidate's waits less the other stream's work: {gr}")

# 6. A slow first call (warm-up) beside alloc gaps that its later, fast calls ended (pid
# 86). The first cudaLaunchKernel holds the thread 3 ms in a launch_overhead gap; then 6
# gaps of cause alloc: a 300 us cudaFree, then a 20 us cudaLaunchKernel whose kernel
# ends the gap (325 us each). slow_launch_call (first_call) saves the first call's 3 ms,
# none of it in alloc gaps; alloc_in_loop saves 6 x 325 us. They share nothing: before,
# the first_call finding shared the later calls' 6 x 20 us in alloc gaps (its overlap
# was computed over all its calls), and alloc_in_loop added 120 us less.
p = Plant(86)
t = warm(p, 10**9)
p.kernel("_Z3fooPf", t + US, t + 3001 * US, t + 3001 * US, t + 3051 * US)  # the slow first call
t += 3051 * US
for i in range(6):
    p.api("cudaFree", t + 5 * US, t + 305 * US)
    p.kernel("_Z3fooPf", t + 305 * US, t + 325 * US, t + 325 * US, t + 375 * US)
    t += 375 * US
doc, dev, fs = p.run()
sc, al = fs.get("slow_launch_call", {}), fs.get("alloc_in_loop", {})
check(dev.get("idle", {}).get("alloc_ns") == 6 * 325 * US, f"6 alloc gaps of 325 us: {dev.get('idle')}")
check(sc.get("pattern") == "first_call" and sc.get("saving_ns") == 3000 * US and sc.get("count") == 7,
      f"the slow first call: {sc}")
check(al.get("count") == 6 and al.get("saving_ns") == 6 * 325 * US, f"alloc_in_loop: {al}")
check(sc.get("overlap_ns") == 0 and al.get("overlap_ns") == 0 and al.get("adds_ns") == al.get("saving_ns")
      and sc.get("adds_ns") == sc.get("saving_ns"), f"the first call shares nothing with the alloc gaps: {brief(doc)}")
check(doc.get("findings_total", {}).get("saving_ns") == 3000 * US + 6 * 325 * US,
      f"the total: {doc.get('findings_total')}")

# 7. Little syncs that begin before the kernel they wait on starts (pid 87). Five 20 us
# kernels, each launched by a 3 us cuLaunchKernel and starting 6 us after it returned;
# a cudaStreamSynchronize begins 5 us before each kernel starts and returns 100 us
# after its end, and the next launch follows it. Each gap (110 us, cause sync) is opened
# by the sync before it: 10 us of it after that sync's return, the last 5 us of which
# the next sync's time already holds (its calls - GPU). The saving is the union: the
# first sync's 5 us before its kernel (in the host_wait gap before it) and the 5 gaps
# whole, 555 us (before, the 4 x 5 us were counted twice: 575 us).
p = Plant(87)
t = warm(p, 10**9)
s = t + 200 * US
for i in range(6):
    p.kernel("_Z5smallPf", s - 9 * US, s - 6 * US, s, s + 20 * US, api="cuLaunchKernel")
    if i < 5:
        p.api("cudaStreamSynchronize", s - 5 * US, s + 120 * US)
    s += 130 * US
doc, dev, fs = p.run()
ls = fs.get("sync_little_work", {})
check(dev.get("idle", {}).get("sync_ns") == 5 * 110 * US, f"5 sync gaps of 110 us: {dev.get('idle')}")
check(ls.get("count") == 5 and ls.get("sync_gaps") == 5 and ls.get("idle_after_ns") == 5 * 10 * US,
      f"5 little syncs, 5 gaps, 10 us after each return: {ls}")
check(ls.get("saving_ns") == 5 * US + 5 * 110 * US and ls.get("adds_ns") == ls.get("saving_ns"),
      f"the syncs' idle and their gaps' counted once: {brief(doc)}")
check(doc.get("findings_total", {}).get("saving_ns") == 5 * US + 5 * 110 * US, f"the total: {doc.get('findings_total')}")

# 8. A graph candidate's waits while another stream's kernel, begun inside the wait,
# still runs when the next kernel starts (pid 88, --repeat-min 13): as trace 5, but C
# starts 20 us into 6 of the waits and ends 100 us after B starts (its GPU record comes
# after B's). Only the first 20 us of those waits are idle: 6 x 200 + 6 x 20 us (before,
# C was not known when B came, and the candidate claimed 12 x 200 us).
p = Plant(88)
t = warm(p, 10**9)
call_end = t - 3 * US
for i in range(12):
    p.kernel("_Z1APf", call_end - 2 * US, call_end, t, t + 50 * US)
    e = t + 50 * US
    b = e + 200 * US
    if i % 2:
        p.kernel("_Z1CPf", e + 10 * US, e + 12 * US, e + 20 * US, b + 100 * US, stream=2)
    p.kernel("_Z1BPf", b - 6 * US, b - 4 * US, b, b + 50 * US)
    t, call_end = b + 50 * US, b - 1 * US
    if i % 2:
        t += 50 * US  # A after C's end: C does not overlap the next instance
        call_end = t - 3 * US
doc, dev, fs = p.run("--repeat-min", "13")
gr = fs.get("graph_candidate", {})
check(gr.get("what") == "A > B" and gr.get("count") == 12 and gr.get("idle_ns") == gr.get("saving_ns")
      == 6 * 200 * US + 6 * 20 * US and gr.get("idle_in_calls_ns", -1) <= gr.get("idle_ns", 0),
      f"the candidate's waits less the other stream's work still running at B: {gr}")

# 9. The same in a dense loop (pid 89): 60 instances of A > B every 20 us (50 kernels
# every 500 us), B waiting 10 us on its launch call; C runs on stream 2 for 700 us from
# 3 us into the 11th wait, through the next 34 waits, into the 46th (its GPU record
# comes some 70 kernels later). Idle inside: 10 x 10 + 3 + 7 + 14 x 10 us.
p = Plant(89)
t = warm(p, 10**9)
call_end = t - 3 * US
for i in range(60):
    p.kernel("_Z1APf", call_end - 2 * US, call_end, t, t + 5 * US)
    b = t + 15 * US
    if i == 10:
        p.kernel("_Z1CPf", t + 1 * US, t + 2 * US, t + 8 * US, t + 708 * US, stream=2)
    p.kernel("_Z1BPf", t + 4 * US, b - 1 * US, b, b + 5 * US)
    t, call_end = b + 5 * US, b - 1 * US + US // 2
doc, dev, fs = p.run()
gr = fs.get("graph_candidate", {})
check(gr.get("what") == "A > B" and gr.get("count") == 60
      and gr.get("idle_ns") == 10 * 10 * US + 3 * US + 7 * US + 14 * 10 * US,
      f"a dense loop's waits less the other stream's long work: {gr} {brief(doc)}")
sys.exit(finish())
