#!/usr/bin/env python3
"""cutrace gaps: the graph_candidate finding (repeated kernel sequences waiting on their
launches), on planted traces.

Thread 77, stream 1: 30 instances of layer_a, layer_b, layer_c, layer_d (5, 6, 7, 8 us),
each next kernel starting 8 us after the previous one ended and its launch call ending
1 us before it starts (after the previous kernel ended: the GPU waited on the launch).
Between instances 1-3 noise kernels (noise_0..noise_6, none repeated 10 times in a row
with the same neighbours). Per instance: GPU 26 us, idle inside 3 x 8 = 24 us, span
50 us; over 30: GPU 780 us, idle 720 us, span 1500 us.
Thread 78, stream 2 on the same device: 200 kernels, all names different, after thread
77's (during its waits they would keep the device busy, and the waits would not be idle:
tools/test_gaps_meet.py plants that): no candidate.
A second trace repeats the same sequence, but every launch call ends long before the
previous kernel ended (the GPU never waited on a launch): no candidate. A third puts a
copy by thread 77 on stream 1 between layer_b and layer_c of every instance: the kernels
are no longer consecutive, and the candidate is layer_a > layer_b (30 times, 240 us idle).
A fourth separates the 30 instances by 600 kernels of distinct names each (9,000 new
sequences per period against a table of 16,384): the body still counts 30 times. A fifth
launches one kernel 33 times (2 us kernels, then 0 ns ones): named by that kernel alone,
33 repetitions.

usage: test_gaps_graphs.py CUTRACE
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
tmp = scratch_dir("cutrace-graphs-")
SEQ = [("_Z7layer_aPf", 5), ("_Z7layer_bPf", 6), ("_Z7layer_cPf", 7), ("_Z7layer_dPf", 8)]


class Planted:
    def __init__(self, pid=77):
        self.w = TraceWriter()
        self.corr = 0
        w = self.w
        w.add("process", pid=pid, ppid=1, start_ns=10**9, realtime_ns=1700000000 * 10**9,
              host=w.string("host"), cmdline=w.string("./train"))
        w.add("device", device=0, name=w.string("GPU"), cc_major=9, sm_count=132,
              mem_bytes=80 << 30)
        for tid in (77, 78):
            w.add("thread", tid=tid, name=w.string(f"t{tid}"), start_ns=10**9)
        for st in (1, 2):
            w.add("stream", stream=st, handle=0x100 + st, device=0, flags=1)

    def kernel(self, tid, name, stream, b, e, call_end):
        """A kernel running [b, e] whose launch call ran [call_end - 2 us, call_end]."""
        self.corr += 1
        c = self.corr
        w = self.w
        w.add("api", tid=tid, name=w.string("cudaLaunchKernel"), begin_ns=call_end - 2 * US,
              end_ns=call_end, corr=c, device=0, stream=stream, flags=TIMED)
        w.add("launch", corr=c, kernel=w.string(name), grid_x=1, grid_y=1, grid_z=1,
              block_x=32, block_y=1, block_z=1)
        w.add("gpu", corr=c, device=0, stream=stream, start_ns=b, end_ns=e, type=1,
              name=w.string(name))

    def copy(self, tid, stream, b, e):
        self.corr += 1
        c = self.corr
        w = self.w
        w.add("api", tid=tid, name=w.string("cudaMemcpyAsync"), begin_ns=b - 3 * US,
              end_ns=b - 2 * US, corr=c, device=0, stream=stream, flags=TIMED)
        w.add("memop", corr=c, bytes=1 << 10, kind=1, src_mem=2, dst_mem=1, **{"async": 1})
        w.add("gpu", corr=c, device=0, stream=stream, start_ns=b, end_ns=e, type=2)

    def save(self, path):
        self.w.add("end", records=0, drops=0, end_ns=10**10)
        self.w.save(path)


def plant(path, waits, copy=False, other_thread=False):
    """The repeated sequence on thread 77 (waits: the GPU waits on each launch; copy: a
    copy between its second and third kernels; other_thread: thread 78 puts a kernel on
    the same stream there) and, after them, 200 distinct kernels on thread 78."""
    p = Planted()
    t = 10**9
    events = []
    for i in range(30):
        for k, (name, dur) in enumerate(SEQ):
            call_end = t - US if waits else t - 100 * US
            events.append((t + dur * US, 77, name, 1, t, call_end))
            if copy and k == 1:
                events.append((t + dur * US + 4 * US, 77, None, 1, t + dur * US + 2 * US, 0))
            if other_thread and k == 1:
                events.append((t + dur * US + 4 * US, 78, "_Z5otherPf", 1, t + dur * US + 2 * US,
                               t + dur * US + US))
            t += dur * US + (8 * US if k < len(SEQ) - 1 else 0)
        for n in range(1 + i % 3):
            t += 30 * US
            events.append((t + 4 * US, 77, f"_Z7noise_{(i * 3 + n) % 7}Pf", 1, t, t - US))
            t += 4 * US
        t += 30 * US
    u = t + 100 * US  # after the sequence: work of another stream is not idle inside its waits
    for i in range(200):
        events.append((u + 3 * US, 78, f"_Z9distinct{i}Pf", 2, u, u - US))
        u += 12 * US
    for e, tid, name, stream, b, call_end in sorted(events, key=lambda ev: ev[0]):
        if name:
            p.kernel(tid, name, stream, b, e, call_end)
        else:
            p.copy(tid, stream, b, e)
    p.save(path)


def gaps(path, *args, fmt="json"):
    p = subprocess.run([cutrace, "gaps", "--format", fmt, *args, path], capture_output=True,
                       text=True, timeout=60)
    check(p.returncode == 0, f"gaps {args} on {path}: {p.returncode} {p.stderr}")
    if fmt != "json":
        return p.stdout
    try:
        return json.loads(p.stdout)
    except ValueError:
        return {}


def candidates(doc):
    return [f for f in doc.get("findings", []) if f["kind"] == "graph_candidate"]


path = os.path.join(tmp, "repeated.ctr")
plant(path, waits=True)
doc = gaps(path)
found = candidates(doc)
want = {"kind": "graph_candidate", "process": 0, "device": 0,
        "what": "layer_a > layer_b > layer_c > layer_d", "count": 30, "tid": 77, "stream": 1,
        "length": 4, "idle_ns": 720 * US, "span_ns": 1500 * US, "gpu_ns": 780 * US,
        "first_ns": 10**9}
got = [{k: f.get(k) for k in want} for f in found]
check(got == [want], f"one candidate on thread 77, none on thread 78:\n{got}\nwant {want}")
# of each 8 us wait, the launch call's last 2 us (it ran [start - 3 us, start - 1 us]):
# the part a launch-calls finding may share (docs/gaps.md "Findings add up")
check([f.get("idle_in_calls_ns") for f in found] == [30 * 3 * 2 * US], f"idle inside the launch calls: {found}")
check(found and "CUDA graph" in found[0]["fix"] and "reduce-overhead" in found[0]["fix"],
      f"the fix names CUDA graphs and reduce-overhead: {found}")
check(doc.get("options", {}).get("graph_min") == 10, f"options.graph_min: {doc.get('options')}")
text = gaps(path, fmt="text")
check("thread 77 stream 1 repeated 4 kernels 30 times (layer_a > layer_b > layer_c > layer_d): "
      "GPU 780.000 us, idle 720.000 us inside the instances (48.0% of their 1.500 ms)" in text,
      f"text finding:\n{text[-2000:]}")
summ = subprocess.run([cutrace, "gaps", "--summary", path], capture_output=True, text=True,
                      timeout=60).stdout
check("CUDA-graph candidates" in summ, f"summary names the finding: {summ}")
check(not candidates(gaps(path, "--graph-min", "31")), "--graph-min 31: 30 repetitions are too few")
found = candidates(gaps(path, "--graph-min=30"))
check([f["count"] for f in found] == [30], f"--graph-min=30: {found}")
p = subprocess.run([cutrace, "gaps", "--graph-min", "0", path], capture_output=True, text=True,
                   timeout=60)
check(p.returncode == 2 and "--graph-min takes a count >= 1" in p.stderr,
      f"--graph-min 0: {p.returncode} {p.stderr}")

path = os.path.join(tmp, "queued.ctr")
plant(path, waits=False)
check(not candidates(gaps(path)), f"launches queued ahead: no candidate: {candidates(gaps(path))}")

path = os.path.join(tmp, "copies.ctr")
plant(path, waits=True, copy=True)
got = [(f["what"], f["count"], f["length"], f["idle_ns"]) for f in candidates(gaps(path))]
check(got == [("layer_a > layer_b", 30, 2, 240 * US)],
      f"a copy between layer_b and layer_c breaks the sequence: {got}")
path = os.path.join(tmp, "other_thread.ctr")
plant(path, waits=True, other_thread=True)
got = [(f["what"], f["tid"], f["count"], f["length"], f["idle_ns"]) for f in candidates(gaps(path))]
check(got == [("layer_a > layer_b", 77, 30, 2, 240 * US)],
      f"thread 78's kernel on stream 1 between layer_b and layer_c breaks the sequence: {got}")
p = Planted()
t = 10**9
for i in range(30):
    for k, (name, dur) in enumerate(SEQ):
        p.kernel(77, name, 1, t, t + dur * US, t - US)
        t += dur * US + (8 * US if k < len(SEQ) - 1 else 0)
    for n in range(600):
        t += 10 * US
        p.kernel(77, f"_Z7churn{i}_{n}Pf", 1, t, t + 2 * US, t - US)
        t += 2 * US
    t += 10 * US
path = os.path.join(tmp, "churn.ctr")
p.save(path)
got = [(f["what"], f["count"], f["idle_ns"]) for f in candidates(gaps(path))]
check(got == [("layer_a > layer_b > layer_c > layer_d", 30, 720 * US)],
      f"600 distinct kernels between instances: {got}")

# One kernel launched 33 times in a row, the GPU waiting on each launch: counted as
# tiny > tiny > tiny (11 x 3 covers all 33; tiny > tiny 16 x 2 only 32), named tiny
# with 33 repetitions, length 1. The same with kernels mapped to 0 ns (start = end, as
# event timing can give a tiny kernel): instances still do not share kernels (they did
# when overlap was judged by time: 2,001 launches read as 1,002 pairs).
for dur, label in ((2 * US, "2 us"), (0, "0 ns")):
    p = Planted()
    t = 10**9
    for i in range(33):
        p.kernel(77, "_Z4tinyPf", 1, t, t + dur, t - US)
        t += 10 * US
    path = os.path.join(tmp, "one_kernel.ctr")
    p.save(path)
    got = [(f["what"], f["count"], f["length"]) for f in candidates(gaps(path))]
    check(got == [("tiny", 33, 1)], f"a loop of one kernel of {label}: {got}")
    text = gaps(path, fmt="text")
    check("thread 77 stream 1 repeated 1 kernel 33 times (tiny): " in text,
          f"{label}: text: {text[-600:]}")
sys.exit(finish())
