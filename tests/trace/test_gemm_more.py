#!/usr/bin/env python3
"""The complex, typed-operand, grouped and legacy handle-less cuBLAS GEMMs end to end on
the simulated GPU (programs/gemm_more.cu: fourteen planted calls, listed there, each after the GPU went idle
and the host slept 2 ms).

Asserted from `cutrace report --format json`: the GEMM table has exactly one row per
planted entry point, with its planted shape (m, n, k, batch; a grouped call's batch is
all its GEMMs, and m = n = k = 0 when its groups' shapes differ), transposes, operand
types, calls and kernels (the simulator's: one per call, one per GEMM of a grouped
call); GFLOP/s = 2 m n k batch calls / GPU time for real types and 8 m n k ... for
complex ones (0 for the mixed-shape row). From `cutrace gaps --format json`: each planted
call ends its planted host_wait gaps itself (idle by ending call: that entry point,
nested launch, as many gaps as calls), instead of the driver's cuLaunchKernel. A planted
gap may instead be caused by tracer or launch_overhead, but only where the trace says
so: tracer where a TRACER record on the calling thread covers at least half of the 2 ms
sleep before the call (the "stacks" capture-cost estimate, stretched when its one timed
capture was preempted on a loaded machine, seen at 10 ms over the three legacy calls);
launch_overhead where the call itself held the thread for at least half the sleep (a
GEMM call takes tens of us here: one preempted before its launch on a loaded machine
makes its own time the larger part of the gap, docs/gaps.md rule 9; a planted gap went
missing so once in session 14).

usage: test_gemm_more.py SIM_DIR CUTRACE LIBTRACE GEMM_MORE
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cttest import check, finish, require_built, scratch_dir  # noqa: E402
from harness import record_one_file  # noqa: E402
from rawdump import raw_records  # noqa: E402

sim_dir, cutrace, libtrace, program = sys.argv[1:5]
require_built(os.path.join(sim_dir, "libcuda.so.1"), libtrace, cutrace, program)
tmp = scratch_dir("cutrace-gemm-more-")
SLEEP_NS = 2_000_000  # gemm_more.cu's usleep(2000) before each planted call

# api: (m, n, k, batch, transa, transb, atype, btype, ctype, calls, kernels)
PLANTED = {
    "cublasCgemm_v2": (24, 40, 8, 1, False, False, "c32", "c32", "c32", 2, 2),
    "cublasZgemm_v2": (16, 16, 32, 1, True, False, "c64", "c64", "c64", 1, 1),
    "cublasZgemm_v2_64": (8, 8, 8, 1, False, True, "c64", "c64", "c64", 1, 1),
    "cublasCgemm3m": (8, 8, 8, 1, False, False, "c32", "c32", "c32", 1, 1),
    "cublasCgemmStridedBatched": (8, 8, 8, 3, True, False, "c32", "c32", "c32", 1, 1),
    "cublasZgemmBatched": (4, 4, 4, 2, False, False, "c64", "c64", "c64", 1, 1),
    "cublasSgemmEx": (32, 16, 8, 1, False, False, "f16", "f16", "f32", 1, 1),
    "cublasCgemmEx": (8, 16, 4, 1, False, False, "c32", "c32", "c32", 1, 1),
    "cublasSgemmGroupedBatched": (16, 8, 4, 5, False, False, "f32", "f32", "f32", 1, 5),
    "cublasGemmGroupedBatchedEx": (0, 0, 0, 3, False, False, "f32", "f32", "f32", 1, 3),
    "cublasDgemmGroupedBatched_64": (4, 4, 4, 2, False, False, "f64", "f64", "f64", 1, 2),
    # the legacy handle-less API
    "cublasDgemm": (8, 8, 8, 1, False, False, "f64", "f64", "f64", 1, 1),
    "cublasCgemm": (16, 8, 4, 1, False, True, "c32", "c32", "c32", 1, 1),
    "cublasZgemm": (4, 8, 2, 1, True, False, "c64", "c64", "c64", 1, 1),
}

path = record_one_file(cutrace, libtrace, sim_dir, os.path.join(tmp, "gemm_more"), [program],
                       "gemm_more: ok", {})
if path:
    p = subprocess.run([cutrace, "report", "--format", "json", path], capture_output=True,
                       text=True, timeout=60)
    check(p.returncode == 0, f"report: status {p.returncode}: {p.stderr}")
    rows = json.loads(p.stdout).get("gemms", []) if p.returncode == 0 else []
    by_api = {}
    for r in rows:
        by_api.setdefault(r["api"], []).append(r)
    check(sorted(by_api) == sorted(PLANTED), f"GEMM rows' entry points {sorted(by_api)}, "
          f"planted {sorted(PLANTED)}")
    for api, want in PLANTED.items():
        got_rows = by_api.get(api, [])
        if not check(len(got_rows) == 1, f"{api}: {len(got_rows)} GEMM rows, want 1"):
            continue
        r = got_rows[0]
        got = (r["m"], r["n"], r["k"], r["batch"], r["transa"], r["transb"], r["atype"],
               r["btype"], r["ctype"], r["calls"], r["kernels"])
        check(got == want, f"{api}: (m n k batch transa transb atype btype ctype calls kernels) "
              f"{got}, planted {want}")
        m, n, k, batch, calls = want[0], want[1], want[2], want[3], want[9]
        per_mnk = 8 if want[6].startswith("c") else 2
        flops = per_mnk * m * n * k * batch * calls
        expect = flops / r["total_ns"] if r["total_ns"] else 0
        check(abs(r["gflops"] - expect) <= max(0.0015, expect * 0.001),
              f"{api}: {r['gflops']} GFLOP/s, want {per_mnk} m n k batch calls / time = {expect:.3f}")

    p = subprocess.run([cutrace, "gaps", "--format", "json", path], capture_output=True,
                       text=True, timeout=60)
    check(p.returncode == 0, f"gaps: status {p.returncode}: {p.stderr}")
    enders = json.loads(p.stdout).get("idle_by_ending_call", []) if p.returncode == 0 else []
    host_wait, by_tracer, by_launch = {}, {}, {}
    for e in enders:
        into = {"host_wait": host_wait, "tracer": by_tracer, "launch_overhead": by_launch}
        if e["cause"] in into:
            into[e["cause"]].setdefault(e["api"], []).append(e)
    recs, names = raw_records(cutrace, path)
    tracer_spans = [r for r in recs if r["kind"] == "tracer"]

    def tracer_covered(call):
        """Whether a TRACER record on call's thread covers at least half of the sleep
        before it: the trace then rightly blames the tracer for that gap."""
        lo, hi = call["begin_ns"] - SLEEP_NS, call["begin_ns"]
        return any(t["tid"] == call["tid"] and
                   min(hi, t["end_ns"]) - max(lo, t["begin_ns"]) >= SLEEP_NS // 2
                   for t in tracer_spans)

    for api, want in PLANTED.items():
        calls = [r for r in recs if r["kind"] == "api" and r["depth"] == 0
                 and names.get(r["name"]) == api]
        covered = sum(1 for c in calls if tracer_covered(c))
        held = sum(1 for c in calls if c["end_ns"] - c["begin_ns"] >= SLEEP_NS // 2)
        got = host_wait.get(api, []) + (by_tracer.get(api, []) if covered else [])
        n = sum(g["count"] for g in got)
        # a planted gap a held call took as launch_overhead (grouped calls also end short
        # launch_overhead gaps between their own kernels: only their time is asked)
        moved = want[9] - n
        check(len(calls) == want[9] and 1 <= len(got) + (moved > 0) <= 2
              and all(g["nested"] for g in got)
              and want[9] - held <= n <= want[9]
              and sum(g["count"] for g in by_tracer.get(api, [])) <= covered
              and sum(g["idle_ns"] for g in got) >= 1500000 * n
              and sum(g["idle_ns"] for g in by_launch.get(api, [])) >= 1500000 * moved,
              f"{api}: host_wait gaps it ended {host_wait.get(api, [])}, tracer "
              f"{by_tracer.get(api, [])} ({covered} of {len(calls)} calls behind a TRACER "
              f"record), launch_overhead {by_launch.get(api, [])} ({held} calls of at least "
              f"{SLEEP_NS // 2} ns) (want {want[9]} in all, nested, 2 ms each)")
    check("cuLaunchKernel" not in host_wait,
          f"host_wait gaps ended by a bare cuLaunchKernel: {host_wait.get('cuLaunchKernel')}")
sys.exit(finish())
