#!/usr/bin/env python3
"""End-to-end cost of the tracer on the bundled workloads, on the simulated GPU:
each workload runs untraced and under `cutrace record -q`, alternately, REPEAT times;
the table gives the median wall time of each, their ratio, the trace's size and its
bytes per GPU operation.

usage: bench/workloads_bench.py [--build DIR] [--repeat N]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time

CASES = [
    ("launch_loop", ["100000"]),
    ("matmul_add", ["64", "50", "3"]),
    ("linear", ["64", "256", "128", "50"]),
    ("mlp", ["64", "256", "20"]),
    ("multistream", ["3", "50"]),
    ("threads", ["4", "500"]),
    ("gappy", []),
]
KERNEL_US = "default=5,gappy_tiny=1,gappy_short=20,gappy_work=100,gappy_long=2000"


def run(argv, env):
    t0 = time.monotonic()
    p = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({p.returncode}): {p.stderr[-300:]}")
    return time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(a.build, "tests/sim"), SIMCUDA_KERNEL_US=KERNEL_US,
               SIMCUDA_LAUNCH_US="5")
    env.pop("LD_PRELOAD", None)
    cutrace = os.path.join(a.build, "tools/cutrace")
    print("| workload | untraced s | traced s | ratio | trace bytes | GPU ops | bytes/op |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    tmp = tempfile.mkdtemp(prefix="cutrace-wbench-")
    try:
        for name, args in CASES:
            exe = os.path.join(a.build, "bench/workloads", name)
            plain, traced = [], []
            data = os.path.join(tmp, name)
            for _ in range(a.repeat):
                plain.append(run([exe, *args], env))
                shutil.rmtree(data, ignore_errors=True)
                traced.append(run([cutrace, "record", "-q", "-o", data, "--", exe, *args], env))
            size = sum(os.path.getsize(os.path.join(data, f)) for f in os.listdir(data))
            info = subprocess.run([cutrace, "dump", data], capture_output=True, text=True).stdout
            ops = sum(1 for line in info.splitlines() if line.startswith("gpu "))
            p, t = statistics.median(plain), statistics.median(traced)
            print(f"| {name} {' '.join(args)} | {p:.3f} | {t:.3f} | {t / p:.2f}x | {size} | {ops} | "
                  f"{size / ops if ops else float('nan'):.2f} |")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
