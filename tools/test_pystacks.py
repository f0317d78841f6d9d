#!/usr/bin/env python3
"""Python frames in the tools (format 1.3) on a planted trace (tracewrite.py): PYCODE
records and STACK nodes whose pc has bit 63 (code id << 24 | line), read by report
--by callsite / --by stack (text and JSON), dump --chrome and gaps.

Planted, innermost first (times in us from 1 s; kernels 10 us, launched 5 us before):
  A  at 3000: 0x7000 < functional.py:50 linear (site-packages) < train.py:12 step
     < train.py:30 main < train.py:40 <module> < 0x1000; 2 launches (3000, 5000), each
     ending a gap of ~1990 us
  B  at 1000: 0x7000 < threading.py:982 Thread.run (the standard library) < 0x1000
  C  at 7000: 0x7000 < a Python frame whose PYCODE record is missing, line 77; and one
     whose line is stored as 0xffffff (unknown)
Known answers: call sites "train.py:12 step" (the innermost frame of the program's
own code, not torch's), "threading.py:982 Thread.run" (only library frames: the
innermost Python frame), "?" for a missing code; stack text from the call site out;
JSON frames with note "python"; Chrome "call site" and "python stack"; gaps names
train.py:12 step as the call that ended the largest gap.

usage: test_pystacks.py CUTRACE"""
import json
import os
import sys

import tooltest
from tooltest import check, finish, scratch_dir
from tracewrite import TraceWriter

cutrace = sys.argv[1]
PID, US, T0 = 7, 1000, 10**9
PY = 1 << 63


def pypc(code, line):
    return PY | (code << 24) | line


def planted(path):
    w = TraceWriter()
    w.add("process", pid=PID, start_ns=T0)
    w.add("device", device=0, name=w.string("GPU"), cc_major=9, sm_count=132)
    codes = {1: ("/env/lib/python3.11/site-packages/torch/functional.py", "linear", 45),
             2: ("/home/u/train.py", "step", 10), 3: ("/home/u/train.py", "main", 20),
             4: ("/home/u/train.py", "<module>", 1),
             5: ("/usr/lib/python3.11/threading.py", "Thread.run", 970)}
    for cid, (f, q, first) in codes.items():
        w.add("pycode", id=cid, file=w.string(f), qualname=w.string(q), first_line=first)
    # the trees: ids root-first; A = 6, B = 8, C = 10, C' = 11
    nodes = [(1, 0, 0x1000), (2, 1, pypc(4, 40)), (3, 2, pypc(3, 30)), (4, 3, pypc(2, 12)),
             (5, 4, pypc(1, 50)), (6, 5, 0x7000),
             (7, 1, pypc(5, 982)), (8, 7, 0x7000),
             (9, 1, pypc(99, 77)), (10, 9, 0x7000),
             (11, 1, pypc(2, 0xffffff))]
    for nid, parent, pc in nodes:
        w.add("stack", id=nid, parent=parent, pc=pc)
    launch, kernel = w.string("cudaLaunchKernel"), w.string("_Z4stepv")
    corr = 1
    for at, stack in ((1000, 8), (3000, 6), (5000, 6), (7000, 10), (7100, 11)):
        b = T0 + at * US
        w.add("api", tid=PID, name=launch, begin_ns=b - 5 * US, end_ns=b - 4 * US, corr=corr, flags=4,
              stack=stack)
        w.add("launch", corr=corr, kernel=kernel, grid_x=1, grid_y=1, grid_z=1, block_x=1, block_y=1,
              block_z=1)
        w.add("gpu", corr=corr, device=0, stream=0, start_ns=b, end_ns=b + 10 * US, type=1, name=kernel)
        corr += 1
    w.add("end", records=0, end_ns=T0 + 8000 * US)
    w.save(path)


def py(fr):
    return (os.path.basename(fr["file"]), fr["line"], fr["function"]) if fr.get("note") == "python" else None


tmp = scratch_dir("cutrace-pystacks-")
path = os.path.join(tmp, "t.ctr")
planted(path)

rc, out, err = tooltest.run(cutrace, "report", "--by", "callsite", "--format", "json", path)
check(rc == 0, f"report --by callsite: {rc} {err}")
rows = {(os.path.basename(r["file"]), r["line"], r["function"]): r["calls"]
        for r in json.loads(out or "{}").get("callsites", [])}
want = {("train.py", 12, "step"): 2, ("threading.py", 982, "Thread.run"): 1, ("", 77, "?"): 1,
        ("train.py", 0, "step"): 1}
check(rows == want, f"call sites {rows}, want {want}")

rc, out, err = tooltest.run(cutrace, "report", "--by", "callsite", path)
for label in ("train.py:12 step", "threading.py:982 Thread.run", ":77 ?", "train.py:0 step"):
    check(label in out, f"text call site {label!r} in {out!r}")
check("functional.py" not in out, f"the library frame is not the call site: {out!r}")

rc, out, err = tooltest.run(cutrace, "report", "--by", "stack", path)
check("train.py:12 step < train.py:30 main < train.py:40 <module> < 0x1000" in out,
      f"text stack from the call site out: {out!r}")
rc, out, err = tooltest.run(cutrace, "report", "--by", "stack", "--format", "json", path)
stacks = json.loads(out or "{}").get("stacks", [])
a = next((s for s in stacks if s["calls"] == 2), None)
check(a is not None and [py(f) for f in a["stack"]] ==
      [None, ("functional.py", 50, "linear"), ("train.py", 12, "step"), ("train.py", 30, "main"),
       ("train.py", 40, "<module>"), None] and a["site_index"] == 2 and a["stack"][5]["function"] == "0x1000",
      f"JSON stack A: {a}")

chrome = os.path.join(tmp, "t.json")
rc, out, err = tooltest.run(cutrace, "dump", "--chrome", "-o", chrome, path)
check(rc == 0, f"dump --chrome: {err}")
args = [e["args"] for e in json.load(open(chrome))["traceEvents"] if e.get("name") == "cudaLaunchKernel"]
got = {(x.get("call site"), x.get("python stack")) for x in args}
check(("train.py:12 step", "functional.py:50 linear < train.py:12 step < train.py:30 main < "
       "train.py:40 <module>") in got and ("threading.py:982 Thread.run", "threading.py:982 Thread.run") in got,
      f"chrome call site and python stack: {got}")

rc, out, err = tooltest.run(cutrace, "gaps", path)
check("at train.py:12 step" in out, f"gaps: the call that ended the largest gap: {out!r}")
rc, out, err = tooltest.run(cutrace, "gaps", "--format", "json", path)
check('"function": "step"' in out and '"file": "/home/u/train.py"' in out, f"gaps JSON frames: {out[:400]}")
finish()
