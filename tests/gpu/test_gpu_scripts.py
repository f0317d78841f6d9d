#!/usr/bin/env python3
"""The comparison scripts scripts/gpu-check runs on a real GPU, checked here on
planted inputs with known answers (the GPU session has minutes; a bug found there
costs the run).

usage: test_gpu_scripts.py CUTRACE SIM_DIR WORKLOADS_DIR

- bench/gpu/compare.py on a Kineto-style trace and a cutrace Chrome trace of the
  same kernels (CUPTI's "> >" template spelling against __cxa_demangle's ">>", a
  leading "void", extra warm-up kernels only cutrace saw, one kernel cutrace
  missed): kernel counts, found share, duration differences, the 2 us / 5% share,
  busy time and slowdowns in its table row, and the missed kernel named on stderr.
- compare.py on `cutrace dump --chrome` of a real traced workload (matmul_add on the
  simulated GPU) against itself: every kernel found, zero difference.
- bench/gpu/check_nvtx.py on planted `report --by range` JSON: a case range with
  kernels and aten:: ranges passes, one without kernels fails.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from cttest import check, finish, scratch  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
COMPARE = os.path.join(ROOT, "bench", "gpu", "compare.py")
CHECK_NVTX = os.path.join(ROOT, "bench", "gpu", "check_nvtx.py")


def kernel(name, ts, dur):
    return {"ph": "X", "cat": "kernel", "name": name, "ts": ts, "dur": dur, "pid": 0, "tid": 7}


def row_cells(out):
    """The cells of compare.py's one table row."""
    line = [l for l in out.splitlines() if l.startswith("|")][-1]
    return [c.strip() for c in line.strip().strip("|").split("|")]


def planted(tmp):
    cupti_add = "void at::native::add_kernel<float, at::native::Array<char*, 3> >(int, float*)"
    ours_add = "at::native::add_kernel<float, at::native::Array<char*, 3>>(int, float*)"
    gemm = "sm90_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x16_cublas"
    kineto = {"traceEvents": [
        kernel(gemm, 1000.0, 100.0), kernel(cupti_add, 1100.0, 4.0),
        kernel(gemm, 2000.0, 100.0), kernel(cupti_add, 2100.0, 4.0),
        kernel("missed_kernel(int)", 3000.0, 50.0),
        {"ph": "X", "cat": "cpu_op", "name": "aten::add", "ts": 1090.0, "dur": 5.0},
    ]}
    ours = {"traceEvents": [
        kernel(gemm, 10.0, 90.0), kernel(ours_add, 110.0, 3.0),        # warm-up, not compared
        kernel(gemm, 500000.0, 101.0), kernel(ours_add, 500101.0, 4.4),
        kernel(gemm, 501000.0, 108.0), kernel(ours_add, 501108.0, 3.0),
    ]}
    k, c = os.path.join(tmp, "kineto.json"), os.path.join(tmp, "cutrace.json")
    json.dump(kineto, open(k, "w"))
    json.dump(ours, open(c, "w"))
    p = subprocess.run([sys.executable, COMPARE, "case1", c, k, "1.0", "1.2", "1.5"],
                       capture_output=True, text=True, timeout=60)
    if not check(p.returncode == 0, f"compare.py failed: {p.stderr}"):
        return
    cells = row_cells(p.stdout)
    # 5 kernels by Kineto, 4 found; diffs 1, 0.4, 8, 1 us -> median 1.00; >=10 us:
    # the two GEMMs, 1 and 8 us (8 > max(2, 5 us)) -> 1/2 within, worst 8.00;
    # busy: kineto 100+4+100+4+50 = 258 us; cutrace window (last 2 of each) 101+4.4+108+3
    want = ["case1", "5", "4 (80%)", "1.00", "8.00", "1/2", "0.258", "0.216", "1.20x", "1.50x"]
    check(cells == want, f"compare.py planted row {cells}, want {want}")
    check("missed_kernel(int)" in p.stderr and "cutrace 0" in p.stderr,
          f"compare.py names the kernel cutrace missed: {p.stderr!r}")


def real_trace(tmp, cutrace, sim, workloads):
    exe = os.path.join(workloads, "matmul_add")
    if not os.path.exists(exe):
        print("  (matmul_add not built: real-trace case skipped)")
        return
    env = dict(os.environ, LD_LIBRARY_PATH=sim)
    out = os.path.join(tmp, "mm.data")
    p = subprocess.run([cutrace, "record", "-q", "-o", out, "--", exe, "64", "3", "1"], env=env,
                       capture_output=True, text=True, timeout=120)
    if not check(p.returncode == 0, f"record matmul_add: {p.stderr}"):
        return
    js = os.path.join(tmp, "mm.json")
    p = subprocess.run([cutrace, "dump", "--chrome", "-o", js, out], capture_output=True, text=True,
                       timeout=120)
    if not check(p.returncode == 0, f"dump --chrome: {p.stderr}"):
        return
    p = subprocess.run([sys.executable, COMPARE, "mm", js, js, "1", "1", "1"], capture_output=True,
                       text=True, timeout=60)
    cells = row_cells(p.stdout) if p.returncode == 0 else []
    check(len(cells) == 10 and cells[1] == "8" and cells[2] == "8 (100%)" and cells[3] == "0.00",
          f"compare.py on a real cutrace trace against itself: {cells} {p.stderr!r}")


def nvtx(tmp):
    good = {"ranges": [
        {"name": "matmul_add_64", "calls": 20, "kernels": 40, "gpu_ns": 2000000},
        {"name": "aten::matmul, seq = 3", "calls": 20, "kernels": 20, "gpu_ns": 1500000},
        {"name": "aten::add", "calls": 20, "kernels": 20, "gpu_ns": 500000},
        {"name": "aten::empty", "calls": 20, "kernels": 0, "gpu_ns": 0}]}
    bad = {"ranges": [{"name": "matmul_add_64", "calls": 20, "kernels": 0, "gpu_ns": 0}]}
    for label, doc, rc_want, verdict in (("good", good, 0, "ok"), ("bad", bad, 1, "FAILED")):
        path = os.path.join(tmp, f"{label}.json")
        json.dump(doc, open(path, "w"))
        p = subprocess.run([sys.executable, CHECK_NVTX, "matmul_add_64", path], capture_output=True,
                           text=True, timeout=60)
        cells = row_cells(p.stdout) if p.stdout.strip() else []
        check(p.returncode == rc_want and cells and cells[-1] == verdict,
              f"check_nvtx.py {label}: exit {p.returncode}, row {cells}")
        if label == "good" and cells:
            check(cells[1:7] == ["20", "40", "2.000", "3", "2", "aten::matmul, aten::add"],
                  f"check_nvtx.py good row {cells}")


def main():
    if len(sys.argv) != 4:
        print(__doc__.split("\n\n")[1])
        return 2
    cutrace, sim, workloads = sys.argv[1:]
    with scratch("gpuscripts_") as tmp:
        planted(tmp)
        real_trace(tmp, cutrace, sim, workloads)
        nvtx(tmp)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
