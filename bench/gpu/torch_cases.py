#!/usr/bin/env python3
"""The torch.profiler tutorial's workloads, for scripts/gpu-check (real GPU only).

usage: torch_cases.py CASE [--profile OUT.json | --emit-nvtx | --profiler-window]
                     [--iters N] [--warmup N]

CASE is one of: matmul_add_64, matmul_add_4096, matmul_add_64_compile,
matmul_add_4096_compile, linear, mlp, tiny_loop.

Runs WARMUP untimed steps, then ITERS timed ones, and prints one JSON line:
{"case": ..., "wall_s": <time of the timed steps>, "steps": ITERS}. With --profile
the timed steps run under torch.profiler (CPU + CUDA activities) and its Kineto
trace is exported to OUT.json, so the same steps can be compared with cutrace's.
Each step is wrapped in record_function("<case>") as the tutorial does. With
--emit-nvtx the timed steps run under torch.autograd.profiler.emit_nvtx(), which
turns record_function and every aten:: op into NVTX ranges (what cutrace's NVTX
injection records: checked by bench/gpu/check_nvtx.py). With --profiler-window the
timed steps run between torch.cuda.profiler.start() and stop() (cudaProfilerStart /
cudaProfilerStop: the window `cutrace record --capture=profiler` records; checked by
bench/gpu/check_window.py).
"""
import argparse
import json
import sys
import time

import torch

CASES = ["matmul_add_64", "matmul_add_4096", "matmul_add_64_compile",
         "matmul_add_4096_compile", "linear", "mlp", "tiny_loop"]


def build(case):
    """Returns a zero-argument step function for case."""
    dev = "cuda"
    if case.startswith("matmul_add"):
        n = 64 if "_64" in case else 4096
        x = torch.randn(n, n, device=dev)
        w = torch.randn(n, n, device=dev)
        b = torch.randn(n, device=dev)

        def f(x, w, b):
            return torch.add(torch.matmul(x, w), b)
        if case.endswith("_compile"):
            f = torch.compile(f)
        return lambda: f(x, w, b)
    if case == "linear":
        lin = torch.nn.Linear(1024, 1024, device=dev)
        x = torch.randn(256, 1024, device=dev)
        return lambda: lin(x)
    if case == "mlp":
        mlp = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(),
                                  torch.nn.Linear(4096, 4096), torch.nn.ReLU(),
                                  torch.nn.Linear(4096, 1024)).to(dev)
        x = torch.randn(256, 1024, device=dev)
        return lambda: mlp(x)
    if case == "tiny_loop":
        x = torch.zeros(16, device=dev)

        def loop():
            y = x
            for _ in range(200):
                y = y + 1.0
            return y
        return loop
    raise SystemExit(f"torch_cases.py: unknown case '{case}' (one of: {', '.join(CASES)})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case")
    ap.add_argument("--profile", metavar="OUT.json")
    ap.add_argument("--emit-nvtx", action="store_true")
    ap.add_argument("--profiler-window", action="store_true")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("torch_cases.py: no CUDA device", file=sys.stderr)
        return 77
    step = build(a.case)
    for _ in range(a.warmup):
        step()
    torch.cuda.synchronize()

    def run():
        t0 = time.perf_counter()
        for _ in range(a.iters):
            with torch.profiler.record_function(a.case):
                step()
        torch.cuda.synchronize()
        return time.perf_counter() - t0

    if a.profile:
        acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(activities=acts) as prof:
            wall = run()
        prof.export_chrome_trace(a.profile)
    elif a.emit_nvtx:
        with torch.autograd.profiler.emit_nvtx():
            wall = run()
    elif a.profiler_window:
        torch.cuda.profiler.start()
        wall = run()
        torch.cuda.profiler.stop()
    else:
        wall = run()
    print(json.dumps({"case": a.case, "wall_s": wall, "steps": a.iters}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
