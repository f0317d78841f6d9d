#!/usr/bin/env python3
"""End to end: bench/workloads/matmul_add traced twice on the simulated GPU with
`cutrace record`, changed in known ways, then compared with `cutrace diff`:

  BEFORE  matmul_add 128 10 2, bias_add lasting 2 ms   (SIMCUDA_KERNEL_US)
  AFTER   matmul_add 256 10 2, bias_add lasting 8 ms

What must show (docs/workloads.md: W+I SGEMMs and bias_adds; 3 HtoD, 2 DtoH copies):
bias_add slower with 12 calls on both sides and an average about 4x; the SGEMM shape
128^3 removed and 256^3 added in the GEMM table; the copies 4x the bytes; the same
kernel launch count; --per-range fails (the workload has no NVTX range).
The kernels last milliseconds: a kernel started on an idle stream is dated at its
launch call's return (docs/preload.md, "What events cannot tell"), about 1 us late on
an idle machine (bias_add of 10 us measured 8.8 us, so 10 -> 40 us read as 4.4x) and
more when load preempts the program inside the launch; 2 -> 8 ms keeps that error far
below the margins of "about 4x".

usage: test_diff_e2e.py CUTRACE LIBTRACE_SO SIM_DIR WORKLOAD_DIR
Exits 77 (skip) when the simulated driver, the tracer or matmul_add is not built.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib"))
from cttest import check, finish, scratch, skip  # noqa: E402

cutrace, libtrace, sim_dir, wdir = sys.argv[1:5]
matmul = os.path.join(wdir, "matmul_add")
if not all(os.path.exists(p) for p in (os.path.join(sim_dir, "libcuda.so.1"), libtrace, matmul)):
    skip("the simulated driver, libtrace.so or matmul_add (needs nvcc) is not built")


BIAS_US_BEFORE, BIAS_US_AFTER = 2000, 8000


def record(out, n, bias_us):
    env = dict(os.environ, LD_LIBRARY_PATH=sim_dir, CUTRACE_PRELOAD=libtrace,
               SIMCUDA_KERNEL_US=f"bias_add={bias_us}")
    env.pop("LD_PRELOAD", None)
    p = subprocess.run([cutrace, "record", "-q", "-o", out, "--", matmul, str(n), "10", "2"],
                       env=env, capture_output=True, text=True, timeout=180)
    check(p.returncode == 0, f"matmul_add {n}: exit {p.returncode}: {p.stderr[-500:]}")


with scratch("cutrace-diff-e2e-") as tmp:
    before, after = os.path.join(tmp, "before"), os.path.join(tmp, "after")
    record(before, 128, BIAS_US_BEFORE)
    record(after, 256, BIAS_US_AFTER)
    p = subprocess.run([cutrace, "diff", "--format", "json", before, after], capture_output=True,
                       text=True, timeout=120)
    check(p.returncode == 0 and not p.stderr, f"diff exit {p.returncode}: {p.stderr}")
    doc = json.loads(p.stdout)
    kern = {r["name"]: r for r in doc["kernels"]}
    bias = kern.get("bias_add(float const*, float const*, float*, int)", {})
    check(bias.get("status") == "slower" and bias.get("calls_before") == 12 and
          bias.get("calls_after") == 12 and 3.5 < bias["avg_after_ns"] / bias["avg_before_ns"] < 4.5,
          f"bias_add slower, 12 calls, about 4x: {bias}")
    check(doc["kernels"][0]["name"].startswith("bias_add"), "bias_add has the largest change")
    gem = {(r["m"], r["n"], r["k"]): (r["status"], r["calls_before"], r["calls_after"])
           for r in doc["gemms"]}
    check(gem == {(128, 128, 128): ("removed", 12, 0), (256, 256, 256): ("added", 0, 12)},
          f"GEMM shapes: {gem}")
    mem = {r["kind"]: (r["calls_before"], r["calls_after"], r["bytes_before"], r["bytes_after"])
           for r in doc["memcpy"]}
    n1, n2 = 128, 256
    check(mem.get("HtoD") == (3, 3, 2 * n1 * n1 * 4 + n1 * 4, 2 * n2 * n2 * 4 + n2 * 4) and
          mem.get("DtoH") == (2, 2, 2 * n1 * n1 * 4, 2 * n2 * n2 * 4), f"copies: {mem}")
    s = doc["summary"]
    check(s["kernel_launches"]["before"] == s["kernel_launches"]["after"] == 24 and
          s["kernel_launches"]["delta"] == 0, f"launches {s['kernel_launches']}")
    # GPU busy time includes the copies, which the simulator times by the host's memcpy
    # when that outlasts the model (docs/simulator.md): under load a 64 KiB copy once took
    # 8 ms, so only the kernels' time, which the simulator sets, must grow (bias_add's 12 x
    # 6 ms, less what event timing and the GEMMs' model give or take: at least 12 x 5 ms);
    # busy time must be reported consistently.
    busy = s["gpu_busy_ns"]
    check(s["bytes_copied"]["ratio"] > 3.9 and busy["after"] - busy["before"] == busy["delta"] and
          s["kernel_gpu_ns"]["after"] - s["kernel_gpu_ns"]["before"] >= 12 * 5000 * 1000,
          f"headline {s}")
    p = subprocess.run([cutrace, "diff", "--by", "api", "--format", "json", before, after],
                       capture_output=True, text=True, timeout=120)
    apis = {r["name"]: (r["calls_before"], r["calls_after"]) for r in json.loads(p.stdout)["apis"]}
    check(p.returncode == 0 and apis.get("cublasSgemm_v2") == (12, 12), f"--by api: {apis}")
    p = subprocess.run([cutrace, "diff", "--per-range", "step", before, after], capture_output=True,
                       text=True, timeout=120)
    check(p.returncode == 2 and "no NVTX range 'step'" in p.stderr and not p.stdout,
          f"--per-range on a trace without ranges: {p.returncode} {p.stderr!r}")
    p = subprocess.run([cutrace, "diff", before, after], capture_output=True, text=True, timeout=120)
    check(p.returncode == 0 and "GEMMs (GPU time): 1 added, 1 removed" in p.stdout, "text output")
    print(p.stdout)

sys.exit(finish())
