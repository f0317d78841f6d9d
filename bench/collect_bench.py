#!/usr/bin/env python3
"""Writer throughput to a collector vs to a file (docs/performance.md, "Streaming").

Runs `launch_loop N` on the simulated GPU with libtrace.so preloaded, writing into a
directory, into `cutrace collect` over a unix socket, and over tcp on 127.0.0.1, RUNS
times each, and prints per output: the program's wall time, records in the trace,
records per second of wall time, records dropped (full buffers, counted in DROP
records) and trace bytes (medians).

usage: bench/collect_bench.py BUILD_DIR [N] [RUNS] [VAR=VALUE ...]
  extra VAR=VALUE pairs go into the program's environment (SIMCUDA_LAUNCH_US=0,
  CUTRACE_GPU_TIMING=0 make the loop record as fast as the host allows).
"""
import glob
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def trace_stats(cutrace, path):
    out = subprocess.run([cutrace, "info", path], capture_output=True, text=True).stdout
    rec = sum(int(x) for x in re.findall(r"^\s*records\s+(\d+)", out, re.M))
    drop = sum(int(x) for x in re.findall(r"^\s*dropped\s+(\d+)", out, re.M))
    size = sum(os.path.getsize(f) for f in glob.glob(os.path.join(path, "*.ctr")))
    return rec, drop, size


def one_run(build, n, extra, mode, tmp):
    cutrace = os.path.join(build, "tools", "cutrace")
    out_dir = tempfile.mkdtemp(dir=tmp)
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(build, "tests", "sim"),
               LD_PRELOAD=os.path.join(build, "preload", "libtrace.so"), **extra)
    col = None
    if mode == "file":
        env["CUTRACE_OUTPUT"] = out_dir
    else:
        listen = "unix:" + os.path.join(tmp, "b.sock") if mode == "unix" else "tcp:127.0.0.1:0"
        col = subprocess.Popen([cutrace, "collect", "--once", "-o", out_dir, "--listen", listen],
                               stdout=subprocess.PIPE, text=True)
        env["CUTRACE_OUTPUT"] = col.stdout.readline().split()[3].rstrip(",")
    t0 = time.perf_counter()
    subprocess.run([os.path.join(build, "bench", "workloads", "launch_loop"), str(n)], env=env,
                   check=True, capture_output=True)
    wall = time.perf_counter() - t0
    if col:
        col.communicate(timeout=60)
    return (wall, *trace_stats(cutrace, out_dir))


def main():
    build = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 200000
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    extra = dict(a.split("=", 1) for a in sys.argv[4:])
    tmp = tempfile.mkdtemp(prefix="cutrace-collect-bench-")
    print(f"launch_loop {n}, {runs} runs, {extra or 'default settings'}; medians")
    print("| output | wall s | records | records/s | dropped | trace bytes |")
    print("|---|---:|---:|---:|---:|---:|")
    for mode in ("file", "unix", "tcp"):
        rs = [one_run(build, n, extra, mode, tmp) for _ in range(runs)]
        wall, rec, drop, size = (statistics.median(x) for x in zip(*rs))
        print(f"| {mode} | {wall:.3f} | {rec:.0f} | {rec / wall / 1e6:.2f}M | {drop:.0f} | {size:.0f} |")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
