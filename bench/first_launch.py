#!/usr/bin/env python3
"""What the tracer adds to a program's first kernel launch, on the simulated GPU.

usage: bench/first_launch.py [--build DIR] [--runs R] [--settle MS ...]
           [--libtrace NAME=SO ...]

Runs preload/stacks/bench/first_launch (built by nvcc with the project) R times per
variant, interleaved so that machine load hits every variant alike: untraced, and
under LD_PRELOAD of each libtrace.so given (default: the build's, named "traced";
pass an older build's as e.g. --libtrace before=/old/preload/libtrace.so to compare),
once per settle time: the program sleeps that long between its first CUDA calls
and its first launch (a real GPU's context and module set-up take about 100 ms or
more; 0 is a program that launches at once). Prints one markdown table: the median
of the first and of the second launch in microseconds, and the first launch's
added time against untraced. Informational (timings are never asserted in tests).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

LINE = re.compile(r"first_launch: first (\d+) ns, second (\d+) ns")


def run_once(build, settle, libtrace, outdir):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUTRACE_", "SIMCUDA_"))}
    env.pop("LD_PRELOAD", None)
    env["LD_LIBRARY_PATH"] = os.path.join(build, "tests", "sim")
    if libtrace:
        env["LD_PRELOAD"] = libtrace
        env["CUTRACE_OUTPUT"] = outdir
    prog = os.path.join(build, "preload", "stacks", "first_launch")
    p = subprocess.run([prog, str(settle)], env=env, capture_output=True, text=True, timeout=60)
    m = LINE.search(p.stdout)
    if p.returncode != 0 or not m:
        sys.exit(f"first_launch failed ({p.returncode}): {p.stdout}{p.stderr}")
    return int(m.group(1)), int(m.group(2))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(here, "..", "build"))
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--settle", type=int, nargs="+", default=[100, 0])
    ap.add_argument("--libtrace", action="append", default=[], metavar="NAME=SO")
    a = ap.parse_args()
    libs = [("untraced", None)]
    for spec in a.libtrace or ["traced=" + os.path.join(a.build, "preload", "libtrace.so")]:
        name, _, path = spec.partition("=")
        libs.append((name, os.path.abspath(path)))
    times = {(s, n): [] for s in a.settle for n, _ in libs}
    with tempfile.TemporaryDirectory(prefix="first-launch-") as tmp:
        for i in range(a.runs):
            for s in a.settle:
                for n, lib in libs:
                    times[(s, n)].append(run_once(a.build, s, lib, os.path.join(tmp, f"{n}-{s}-{i}")))
    print(f"| settle ms | variant | first launch us | second launch us | first added us |")
    print("|---|---|---|---|---|")
    for s in a.settle:
        base = statistics.median(t[0] for t in times[(s, "untraced")])
        for n, _ in libs:
            first = statistics.median(t[0] for t in times[(s, n)])
            second = statistics.median(t[1] for t in times[(s, n)])
            added = "" if n == "untraced" else f"{(first - base) / 1e3:+.1f}"
            print(f"| {s} | {n} | {first / 1e3:.1f} | {second / 1e3:.1f} | {added} |")


if __name__ == "__main__":
    main()
