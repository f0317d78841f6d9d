#!/usr/bin/env python3
"""Host cost the tracer adds to one intercepted call, on the simulated GPU.

usage: bench/host_cost.py [--build DIR] [--n N] [--repeat R] [--json FILE] [--real]

Runs, interleaved in one session so that machine load hits every variant alike:
- bench/workloads/api_loop N MODE: runtime launches (`<<<>>>`, i.e.
  __cudaLaunchKernel), cudaMemcpyAsync (256 B, device to device) and
  cublasSgemm (16 x 16); the program times the calls themselves, in batches
  of 256 with untimed syncs between them;
- preload/driver/tests/dt_app bench N: cuLaunchKernel called directly (the
  driver-level path that Triton, -lcuda programs and cuBLAS's own launches take);
- preload/driver/tests/dt_app bench_alloc N: cuMemAlloc (256 B) and cuMemFree called
  directly, the mean of the two (the driver-level allocation wrappers: what a
  static-cudart program's cudaMalloc/cudaFree reach);
each untraced and under LD_PRELOAD=libtrace.so in four settings:
- default: stacks of launches (CUTRACE_STACKS=launches) and GPU timing with events;
- no stacks: CUTRACE_STACKS=off;
- all stacks: CUTRACE_STACKS=all (copies and GEMMs unwound too);
- record only: CUTRACE_STACKS=off CUTRACE_GPU_TIMING=0 (API and detail records,
  no events).
The simulated driver costs SIMCUDA_LAUNCH_US=0 per launch, so the untraced
column is the simulator's own bookkeeping. With --real the programs run on the
machine's CUDA driver and GPU instead (scripts/gpu-check): the added cost then
includes the real cuEventRecord. Prints one markdown table: the median
ns per call over R runs of each, and the added ns and ratio against untraced.
The traced numbers include the CUDA event calls the tracer makes (cuEventRecord
on the simulated driver takes its global lock, which a real driver does not).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

VARIANTS = [
    ("untraced", None),
    ("default", {}),
    ("no stacks", {"CUTRACE_STACKS": "off"}),
    ("all stacks", {"CUTRACE_STACKS": "all"}),
    ("record only", {"CUTRACE_STACKS": "off", "CUTRACE_GPU_TIMING": "0"}),
]
LINE = re.compile(r"(?:api_loop: (\w+): \d+ calls|bench: \d+ launches|bench_alloc: \d+ calls), "
                  r"([0-9.]+) ns per (?:call|launch)")


def cases(build, n, real=False):
    """(label, argv) of each call kind measured."""
    loop = os.path.join(build, "bench/workloads/api_loop")
    dt_app = os.path.join(build, "preload/driver/tests/dt_app")
    out = [("runtime launch (`<<<>>>`)", [loop, str(n), "1"]),
           ("cudaMemcpyAsync 256 B D2D", [loop, str(n), "2"]),
           ("cublasSgemm 16x16", [loop, str(max(n // 10, 256)), "3"])]
    if os.path.exists(dt_app) and not real:  # dt_app loads a module only the simulator has
        out.append(("cuLaunchKernel (driver, -lcuda)", [dt_app, "bench", str(n)]))
        out.append(("cuMemAlloc_v2 / cuMemFree_v2 256 B (driver, -lcuda)",
                    [dt_app, "bench_alloc", str(n)]))
    return out


def run_once(build, argv, extra, tmp, real=False):
    """ns per call printed by the program, or None when it failed."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CUTRACE_", "SIMCUDA_")) and k != "LD_PRELOAD"}
    if not real:
        env.update(LD_LIBRARY_PATH=os.path.join(build, "tests/sim"), SIMCUDA_LAUNCH_US="0",
                   SIMCUDA_KERNEL_US="default=0")
    if extra is not None:
        env.update(extra, LD_PRELOAD=os.path.abspath(os.path.join(build, "preload/libtrace.so")),
                   CUTRACE_OUTPUT=tmp, CUTRACE_QUIET="1")
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    for name in os.listdir(tmp):
        os.unlink(os.path.join(tmp, name))
    m = LINE.search(p.stdout)
    if p.returncode != 0 or not m:
        print(f"host_cost: {' '.join(argv)} failed ({p.returncode}): {p.stderr.strip()[:200]}",
              file=sys.stderr)
        return None
    return float(m.group(2))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--n", type=int, default=20000, help="calls per run (GEMMs: N/10)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", help="also write the medians to this file")
    ap.add_argument("--real", action="store_true", help="the machine's CUDA driver and GPU, not the simulator")
    a = ap.parse_args()
    if a.n < 1 or a.repeat < 1:
        print("host_cost: --n and --repeat must be positive", file=sys.stderr)
        return 2
    if not os.path.exists(os.path.join(a.build, "bench/workloads/api_loop")):
        print(f"host_cost: {a.build}/bench/workloads/api_loop not built (needs nvcc)", file=sys.stderr)
        return 2
    tmp = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"cutrace-host-cost-{os.getpid()}")
    os.makedirs(tmp, exist_ok=True)
    kinds = cases(a.build, a.n, a.real)
    samples = {(k, v): [] for k, _ in kinds for v, _ in VARIANTS}
    try:
        for _ in range(a.repeat):
            for label, argv in kinds:
                for vname, extra in VARIANTS:
                    ns = run_once(a.build, argv, extra, tmp, a.real)
                    if ns is not None:
                        samples[(label, vname)].append(ns)
    finally:
        os.rmdir(tmp)
    med = {key: statistics.median(v) if v else None for key, v in samples.items()}
    head = "| call | untraced ns | " + " | ".join(
        f"{v} ns (+added, ratio)" for v, _ in VARIANTS[1:]) + " |"
    print(head)
    print("|---|---:|" + "---:|" * (len(VARIANTS) - 1))
    for label, _ in kinds:
        base = med[(label, "untraced")]
        cells = []
        for vname, _ in VARIANTS[1:]:
            t = med[(label, vname)]
            if t is None or base is None:
                cells.append("n/a")
            else:
                cells.append(f"{t:.0f} (+{t - base:.0f}, {t / base:.2f}x)")
        print(f"| {label} | {base:.0f} | " + " | ".join(cells) + " |" if base is not None
              else f"| {label} | n/a | " + " | ".join(cells) + " |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({f"{k}|{v}": x for (k, v), x in med.items()}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
