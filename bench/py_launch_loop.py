#!/usr/bin/env python3
"""A Python program launching GPU work through ctypes at a known Python depth, for the
cost of Python frames in call stacks (docs/performance.md, "Python frames").

usage: py_launch_loop.py N [DEPTH]
Calls cudaMemsetAsync N times from DEPTH nested Python functions (default 10) on the
simulated (or a real) libcudart, then prints the mean wall time per call in ns.
Run it under `cutrace record` with CUTRACE_PYTHON=auto or off, or under
bench/callgrind_launch.py (-- python3 bench/py_launch_loop.py {n} 10).
"""
import ctypes
import sys
import time

rt = ctypes.CDLL("libcudart.so.13")
buf = ctypes.c_void_p()


def loop(n):
    memset = rt.cudaMemsetAsync
    t0 = time.perf_counter_ns()
    for _ in range(n):
        memset(buf, 0, 16, None)
    return time.perf_counter_ns() - t0


def nest(depth, n):
    if depth <= 1:
        return loop(n)
    return nest(depth - 1, n)


def main():
    n = int(sys.argv[1])
    depth = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    assert rt.cudaMalloc(ctypes.byref(buf), 4096) == 0
    nest(depth, min(n, 1000))  # warm-up: caches, first stacks
    ns = nest(depth, n)
    rt.cudaDeviceSynchronize()
    print(f"{ns / n:.1f} ns per call ({n} calls, {depth} Python frames)")


if __name__ == "__main__":
    main()
