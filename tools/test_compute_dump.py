#!/usr/bin/env python3
"""GEMM compute types by name in every output (docs/dump.md, docs/report.md), and "not
recorded" told apart from legacy_f32.

Planted calls, one GEMM GPU activity each: cublasGemmEx with compute type 68 (32F), 77
(32F_FAST_TF32) and 0 (the legacy CUDA_R_32F a pre-CUDA 11 program passes: legacy_f32),
and cublasLtMatmul with 0 (cuBLASLt takes only cublasComputeType_t values, 64 and up:
0 is the hook's "descriptor not read", `unknown`) and 77.

Checked: report JSON and CSV compute_type_name per (api, compute type); dump --csv
columns compute_type (the number) and compute_type_name on both the call and the gpu
row of each GEMM, empty on other rows; dump --chrome and --perfetto args compute_type
and compute_type_name on the call and GPU slices.

usage: test_compute_dump.py CUTRACE
"""
import csv
import io
import json
import os
import sys

import perfetto_read
from tracewrite import TraceWriter
import tooltest
from tooltest import check, finish, scratch

cutrace = sys.argv[1]
US, T0 = 1000, 10**9
PLAN = [("cublasGemmEx", 68), ("cublasGemmEx", 77), ("cublasGemmEx", 0),
        ("cublasLtMatmul", 0), ("cublasLtMatmul", 77)]
WANT = {("cublasGemmEx", 68): "32F", ("cublasGemmEx", 77): "32F_FAST_TF32",
        ("cublasGemmEx", 0): "legacy_f32", ("cublasLtMatmul", 0): "unknown",
        ("cublasLtMatmul", 77): "32F_FAST_TF32"}


def write(path):
    w = TraceWriter()
    w.add("process", pid=100, ppid=1, start_ns=T0, host=w.string("node1"),
          cmdline=w.string("./mm"))
    w.add("thread", tid=100, name=w.string("main"), start_ns=T0)
    t = T0 + 10 * US
    for corr, (api, compute) in enumerate(PLAN, 1):
        name = w.string(api)
        w.add("gemm", corr=corr, m=64, n=64, k=64, batch=1, compute_type=compute)
        w.add("api", tid=100, name=name, begin_ns=t, end_ns=t + 5 * US, corr=corr, flags=0x4)
        w.add("gpu", corr=corr, start_ns=t + 6 * US, end_ns=t + 16 * US, type=4, name=name)
        t += 20 * US
    w.save(path)


with scratch("cutrace-compute-dump-") as d:
    trace = os.path.join(d, "mm.ctr")
    write(trace)

    rc, out, err = tooltest.run(cutrace, "report", "--format", "json", "--tables", "gemms", trace)
    got = {(g["api"], g["compute_type"]): g["compute_type_name"] for g in json.loads(out)["gemms"]} \
        if rc == 0 else {}
    check(got == WANT, f"report JSON names\n  got  {got}\n  want {WANT}")
    rc, out, err = tooltest.run(cutrace, "report", "--format", "csv", "--tables", "gemms", trace)
    rows = list(csv.DictReader(io.StringIO(out))) if rc == 0 else []
    got = {(r["api"], int(r["compute_type"])): r["compute_type_name"] for r in rows}
    check(got == WANT, f"report CSV names\n  got  {got}\n  want {WANT}")

    rc, out, err = tooltest.run(cutrace, "dump", "--csv", trace)
    rows = list(csv.DictReader(io.StringIO(out))) if rc == 0 else []
    check(rc == 0 and len(rows) == 2 * len(PLAN), f"dump --csv: {rc} {err!r} {len(rows)} rows")
    for kind in ("call", "gpu"):
        got = sorted((r["name"], r["compute_type"], r["compute_type_name"]) for r in rows
                     if r["row"] == kind)
        want = sorted((api, str(ct), WANT[(api, ct)]) for api, ct in PLAN)
        check(got == want, f"dump --csv {kind} rows\n  got  {got}\n  want {want}")

    def slices_args(events):
        return sorted((e["name"], e["args"].get("compute_type"), e["args"].get("compute_type_name"))
                      for e in events if "m" in e.get("args", {}))

    want = sorted((api, ct, WANT[(api, ct)]) for api, ct in PLAN for _ in range(2))
    rc, out, err = tooltest.run(cutrace, "dump", "--chrome", trace)
    events = [e for e in json.loads(out)["traceEvents"] if e.get("ph") == "X"] if rc == 0 else []
    got = slices_args(events)
    check(got == want, f"dump --chrome GEMM args\n  got  {got}\n  want {want}")
    pf = os.path.join(d, "t.pftrace")
    rc, out, err = tooltest.run(cutrace, "dump", "--perfetto", "-o", pf, trace)
    got = slices_args(perfetto_read.read(pf).slices) if rc == 0 else []
    check(got == want, f"dump --perfetto GEMM args\n  got  {got}\n  want {want}")

sys.exit(finish())
