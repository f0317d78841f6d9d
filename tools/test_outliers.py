#!/usr/bin/env python3
"""report: the slowest instance of each kernel, and the outliers named under the kernels
table, on a planted trace (process start 1 s):

  _Z5setupv: 10 instances of 10 us every 1 ms from +1 ms, the first one 500 us (a first
             call paying for setup): an outlier, instance 1 at +1 ms;
  _Z4stepv:  10 instances of 20 us, the 7th 70 us (3.5x the median): not an outlier;
  _Z4tailv:  2 instances, one 1 ms: too few to call one an outlier;
  _Z4rarev:  5 instances of 100 us, the 4th 900 us (the 26th launch, at +26 ms): an
             outlier 800 us above its median, listed before setup's 490 us.

usage: test_outliers.py CUTRACE
"""
import csv
import io
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib"))
from cttest import check, finish, scratch_dir  # noqa: E402
from tracewrite import TraceWriter  # noqa: E402

US, MS, START = 1000, 1000 * 1000, 10**9
cutrace = sys.argv[1]
tmp = scratch_dir("cutrace-outliers-")
w = TraceWriter()
w.add("process", pid=9, ppid=1, start_ns=START, realtime_ns=1700000000 * 10**9, host=w.string("h"),
      cmdline=w.string("./app"))
w.add("thread", tid=9, name=w.string("main"), start_ns=START)
corr = 0
plan = {"_Z5setupv": [500] + [10] * 9, "_Z4stepv": [20] * 6 + [70] + [20] * 3,
        "_Z4tailv": [10, 1000], "_Z4rarev": [100, 100, 100, 900, 100]}
t = START + MS
for name, durs in plan.items():
    for d in durs:
        corr += 1
        w.add("api", tid=9, name=w.string("cudaLaunchKernel"), begin_ns=t - 5 * US, end_ns=t - 4 * US,
              corr=corr, stream=1, flags=4)
        w.add("launch", corr=corr, kernel=w.string(name), grid_x=1, grid_y=1, grid_z=1, block_x=1,
              block_y=1, block_z=1)
        w.add("gpu", corr=corr, stream=1, start_ns=t, end_ns=t + d * US, type=1, name=w.string(name))
        t += MS
w.add("end")
path = os.path.join(tmp, "o.ctr")
w.save(path)


def run(*args):
    p = subprocess.run([cutrace, *args, path], capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, f"cutrace {' '.join(args)}: exit {p.returncode} {p.stderr[-200:]}")
    return p.stdout


doc = json.loads(run("report", "--format", "json", "--tables", "kernels") or "{}")
rows = {r["mangled"]: r.get("slowest", {}) for r in doc.get("kernels", [])}
check(rows.get("_Z5setupv") == {"start_ns": START + MS, "offset_ns": MS, "pid": 9, "instance": 1,
                                "outlier": True}, f"setup: slowest is the first call {rows.get('_Z5setupv')}")
check(rows.get("_Z4stepv", {}).get("instance") == 7 and rows["_Z4stepv"].get("outlier") is False,
      f"step: 7th slowest, 3.5x is no outlier {rows.get('_Z4stepv')}")
check(rows.get("_Z4tailv", {}).get("outlier") is False, "tail: 2 instances are too few")
check(rows.get("_Z4rarev", {}).get("instance") == 4 and rows["_Z4rarev"].get("outlier") is True,
      f"rare: the 4th, an outlier {rows.get('_Z4rarev')}")
text = run("report", "--tables", "kernels")
lines = text.split("Slowest instances far above their kernel's median")[-1].strip().splitlines()
check(len(lines) == 3 and lines[1].lstrip().startswith("rare()") and lines[2].lstrip().startswith("setup()"),
      f"text: rare then setup, by excess: {lines}")
check("instance 1 of 10, at +1.000 ms in pid 9 (@%d)" % (START + MS) in text,
      f"text: when and which instance: {text}")
check("Slowest instances" not in run("report", "--tables", "apis"), "no outlier block without kernels")
rows_csv = list(csv.DictReader(io.StringIO(run("report", "--format", "csv", "--tables", "kernels"))))
byname = {r["mangled"]: r for r in rows_csv}
check(byname.get("_Z4rarev", {}).get("max_instance") == "4" and
      byname["_Z4rarev"].get("max_start_ns") == str(START + MS * 26),
      f"csv: max_instance, max_start_ns {byname.get('_Z4rarev')}")
sys.exit(finish())
