#!/usr/bin/env python3
"""--from/--to: report, gaps, dump --chrome and diff on a planted trace, restricted to a
window of time.

The process starts at 1 s (PROCESS.start_ns); iteration i (i = 0..9) opens an NVTX range
"step" and launches kernel k at 1 s + i * 10 ms for 1 ms (call 5..4 us before). So a
window [15 ms, 45 ms] after the start overlaps kernels 2, 3 and 4 only: 3 kernels, 3
calls, 3 ranges, busy 3 ms over a span of 21 ms, idle 18 ms (the two 9 ms gaps inside),
and the gap before kernel 2 touches the time left out: unrecorded, not idle. Absolute
bounds (@NS) give the same answers; a window that overlaps nothing gives nothing; bad
values give one line and exit 2.

usage: test_window.py CUTRACE
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib"))
from cttest import check, finish, scratch_dir  # noqa: E402
from tracewrite import TraceWriter  # noqa: E402

US, MS, START = 1000, 1000 * 1000, 10**9
TIMED = 0x4
cutrace = sys.argv[1]
tmp = scratch_dir("cutrace-window-")


def plant(path, iters=10):
    w = TraceWriter()
    w.add("process", pid=5, ppid=1, start_ns=START, realtime_ns=1700000000 * 10**9,
          host=w.string("host"), cmdline=w.string("./loop"))
    w.add("device", device=0, name=w.string("GPU"), cc_major=9, sm_count=132, mem_bytes=80 << 30)
    w.add("thread", tid=5, name=w.string("main"), start_ns=START)
    w.add("stream", stream=1, handle=0x101, device=0, flags=1)
    for i in range(iters):
        b = START + i * 10 * MS
        c = i + 1
        w.add("api", tid=5, name=w.string("cudaLaunchKernel"), begin_ns=b - 5 * US, end_ns=b - 4 * US,
              corr=c, device=0, stream=1, flags=TIMED)
        w.add("launch", corr=c, kernel=w.string("_Z1kv"), grid_x=1, grid_y=1, grid_z=1, block_x=32,
              block_y=1, block_z=1)
        w.add("range", tid=5, name=w.string("step"), begin_ns=b - 6 * US, end_ns=b - 3 * US, depth=0)
        w.add("gpu", corr=c, device=0, stream=1, start_ns=b, end_ns=b + MS, type=1, name=w.string("_Z1kv"))
    w.add("end")
    w.save(path)


path = os.path.join(tmp, "loop.ctr")
plant(path)


def run(*args, rc=0):
    p = subprocess.run([cutrace, *args], capture_output=True, text=True, timeout=60)
    check(p.returncode == rc, f"cutrace {' '.join(args)}: exit {p.returncode} (want {rc}) {p.stderr[-300:]}")
    return p


def report(*window):
    p = run("report", "--format", "json", *window, path)
    try:
        return json.loads(p.stdout)
    except ValueError:
        return {}


def kernels(doc):
    return sum(r["calls"] for r in doc.get("kernels", []))


# ---- report ------------------------------------------------------------------------
full = report()
check(kernels(full) == 10 and full.get("calls") == 10, f"unfiltered: 10 kernels {kernels(full)}")
win = report("--from", "15ms", "--to", "45ms")
check(kernels(win) == 3 and win.get("calls") == 3 and win.get("gpu_total_ns") == 3 * MS,
      f"[15,45] ms: kernels 2..4: {kernels(win)} calls {win.get('calls')} gpu {win.get('gpu_total_ns')}")
check(kernels(report("--from", "20.5ms", "--to", "40ms")) == 3,
      "a kernel overlapping a bound counts: [20.5, 40] ms holds kernels 2, 3, 4")
check(kernels(report("--from=21.5ms", "--to=29ms")) == 0, "[21.5, 29] ms overlaps no kernel")
check(kernels(report("--from", "0.0355")) == 6, "--from 0.0355 (seconds): kernels 4..9 (4 ends at 41 ms)")
check(kernels(report("--to", "+10ms")) == 2, "--to +10ms: kernels 0 and 1 (1 starts at 10 ms)")
absolute = report("--from", f"@{START + 15 * MS}", "--to", f"@{START + 45 * MS}")
check(kernels(absolute) == 3 and absolute.get("streams") == win.get("streams"),
      "absolute bounds (@NS) give the same rows")
p = run("report", "--by", "range", "--format", "json", "--from", "15ms", "--to", "45ms", path)
rng = {r["name"]: r for r in json.loads(p.stdout or "{}").get("ranges", [])}
check(rng.get("step", {}).get("calls") == 3 and rng.get("step", {}).get("kernels") == 3,
      f"--by range: 3 steps with 3 kernels: {rng}")
p = run("report", "--from", "15ms", "--to", "45ms", path)
check("only what overlaps the --from/--to window" in p.stdout, "report headline names the window")

# ---- gaps ----------------------------------------------------------------------------
def gaps(*window):
    p = run("gaps", "--format", "json", *window, path)
    try:
        return json.loads(p.stdout)
    except ValueError:
        return {}


g = gaps("--from", "15ms", "--to", "45ms")
dev = (g.get("devices") or [{}])[0]
check((dev.get("busy_ns"), dev.get("span_ns"), dev.get("idle_ns"), dev.get("gaps")) ==
      (3 * MS, 21 * MS, 18 * MS, 2), f"gaps in [15,45] ms: busy, span, idle, gaps {dev}")
proc = (g.get("processes") or [{}])[0]
check(proc.get("pause_why") == "filter" and proc.get("pauses") == 2,
      f"the time left out is two 'filter' pauses {proc.get('pauses')} {proc.get('pause_why')}")
gfull = (gaps().get("devices") or [{}])[0]
check(gfull.get("idle_ns") == 81 * MS and gfull.get("busy_ns") == 10 * MS, f"unfiltered gaps {gfull}")
p = run("gaps", "--summary", "--from", "21.5ms", "--to", "29ms", path)
check("no GPU activity in the --from/--to window" in p.stdout, f"empty window said: {p.stdout}")

# ---- dump --chrome ---------------------------------------------------------------------
out = os.path.join(tmp, "w.json")
run("dump", "--chrome", "-o", out, "--from", "15ms", "--to", "45ms", path)
try:
    ev = json.load(open(out))["traceEvents"]
except (OSError, ValueError):
    ev = []
check(sum(1 for e in ev if e.get("cat") == "kernel") == 3 and
      sum(1 for e in ev if e.get("cat") == "cuda_runtime") == 3,
      "chrome: 3 kernel slices, 3 calls")
check(sum(1 for e in ev if e.get("name") == "not recorded (filter)") == 2,
      "chrome: the time left out as two 'not recorded (filter)' slices")

# ---- diff: both sides filtered ------------------------------------------------------------
p = run("diff", "--format", "json", "--from", "15ms", "--to", "45ms", path, path)
try:
    summ = json.loads(p.stdout).get("summary", {})
except ValueError:
    summ = {}
check(summ.get("gpu_busy_ns", {}).get("before") == 3 * MS and
      summ.get("gpu_idle_ns", {}).get("after") == 18 * MS,
      f"diff: both sides are the window: {summ.get('gpu_busy_ns')} {summ.get('gpu_idle_ns')}")

# ---- bad values ----------------------------------------------------------------------
for args, msg in ((["report", "--from", "abc"], "--from takes a time"),
                  (["gaps", "--to"], "--to takes a time"),
                  (["report", "--from", "-1"], "--from takes a time"),
                  (["report", "--from", "5ms", "--to", "1ms"], "--from is after --to"),
                  (["report", "--from", "3parsecs"], "--from takes a time"),
                  (["dump", "--from", "1ms"], "--from/--to need --chrome")):
    p = run(*args, path, rc=2)
    check(msg in p.stderr and p.stderr.count("\n") == 1, f"{args}: one line saying '{msg}': {p.stderr!r}")
sys.exit(finish())
