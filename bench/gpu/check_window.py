#!/usr/bin/env python3
"""Checks a PyTorch run recorded with `cutrace record --capture=profiler` (scripts/gpu-check,
real GPU): the steps between torch.cuda.profiler.start() and stop() are recorded, nothing
else. Prints one markdown table row:
| case | window kernels | per step | all-run kernels | pauses | outside the window | verdict |

usage: check_window.py CASE CUTRACE WINDOW_TRACE_DIR ALL_TRACE_DIR ITERS
The verdict is ok when the window run has kernels, a whole number of them per step,
exactly one cudaProfilerStart and one cudaProfilerStop, a PAUSE record before and after
the window, and no kernel launched outside the window.
"""
import glob
import re
import subprocess
import sys

FIELD = re.compile(r"(\w+)=(\d+)")


def records(cutrace, d):
    """Records of every trace file in d as dicts, and the strings by id."""
    recs, strings = [], {}
    for path in sorted(glob.glob(f"{d}/*.ctr")):
        out = subprocess.run([cutrace, "dump", path], capture_output=True, text=True,
                             timeout=300).stdout
        for line in out.splitlines():
            m = re.match(r'string id=(\d+) "(.*)"$', line)
            if m:
                strings[(path, int(m.group(1)))] = m.group(2)
                continue
            kind, _, rest = line.partition(" ")
            r = {k: int(v) for k, v in FIELD.findall(rest)}
            r["kind"], r["file"] = kind, path
            recs.append(r)
    return recs, strings


def main():
    case, cutrace, window_dir, all_dir, iters = sys.argv[1:6]
    iters = int(iters)
    w, ws = records(cutrace, window_dir)
    a, _ = records(cutrace, all_dir)
    name = {(r["file"], r["corr"]): ws.get((r["file"], r["name"]), "")
            for r in w if r["kind"] == "api"}
    launches = [r for r in w if r["kind"] == "launch"]
    starts = [r for r in w if r["kind"] == "api" and name[(r["file"], r["corr"])] == "cudaProfilerStart"]
    stops = [r for r in w if r["kind"] == "api" and name[(r["file"], r["corr"])] == "cudaProfilerStop"]
    pauses = {r["begin_ns"] for r in w if r["kind"] == "pause"}
    outside = 0
    if starts and stops:
        lo, hi = starts[0]["begin_ns"], stops[-1]["end_ns"]
        outside = sum(1 for r in w if r["kind"] == "api" and not lo <= r["begin_ns"] <= hi)
    n_all = sum(1 for r in a if r["kind"] == "launch")
    ok = (launches and len(launches) % iters == 0 and len(starts) == 1 and len(stops) == 1
          and len(pauses) == 2 and outside == 0)
    print(f"| {case} | {len(launches)} | {len(launches) / iters:.1f} | {n_all} | {len(pauses)} "
          f"| {outside} calls | {'ok' if ok else 'CHECK'} |")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
