#!/usr/bin/env python3
"""Which math a GEMM used (docs/report.md, docs/diff.md): two GEMMs of one shape that
differ only in compute type are two report rows, each named from cublasComputeType_t
(CUBLAS_COMPUTE_32F 68 -> "32F", CUBLAS_COMPUTE_32F_FAST_TF32 77 -> "32F_FAST_TF32"), a
legacy cudaDataType compute type (CUDA_R_16F 2, as a pre-CUDA-11 program passes it) is
"legacy_f16", an unknown value is "?"; JSON and CSV keep the number and add the name;
diff keys its GEMM rows by compute type and shows it. Planted traces of known content.

usage: test_compute_type.py CUTRACE
"""
import csv
import io
import json
import os
import sys

from tracewrite import TraceWriter
import tooltest
from tooltest import check, finish, scratch

cutrace = sys.argv[1]
US = 1000
T0 = 10**9
SHAPE = dict(m=256, n=128, k=64, batch=1, transa=0, transb=0, atype=0, btype=0, ctype=0)


def write(path, plan):
    """plan: [(compute_type, calls, GPU us per call)], one cublasGemmEx per call."""
    w = TraceWriter()
    w.add("process", pid=100, ppid=1, start_ns=T0, host=w.string("node1"),
          cmdline=w.string("./mm"))
    w.add("thread", tid=100, name=w.string("main"), start_ns=T0)
    api = w.string("cublasGemmEx")
    corr, cpu, gpu = 0, T0 + 10 * US, T0 + 15 * US
    for compute, calls, dur_us in plan:
        for _ in range(calls):
            corr += 1
            w.add("api", tid=100, name=api, begin_ns=cpu, end_ns=cpu + 5 * US, corr=corr, flags=0x4)
            w.add("gemm", corr=corr, compute_type=compute, **SHAPE)
            gs = max(gpu, cpu + 6 * US)
            w.add("gpu", corr=corr, start_ns=gs, end_ns=gs + dur_us * US, type=4, name=api)
            cpu, gpu = cpu + 10 * US, gs + dur_us * US + US
    w.save(path)


def report(path, fmt):
    rc, out, err = tooltest.run(cutrace, "report", "--format", fmt, path)
    check(rc == 0 and not err, f"report --format {fmt}: exit {rc}: {err!r}")
    return out


with scratch("cutrace-compute-type-") as d:
    before, after = os.path.join(d, "before.ctr"), os.path.join(d, "after.ctr")
    # before: 32F (3 calls, 40 us), TF32 (2 calls, 10 us), legacy CUDA_R_16F (1 call), 99 (1)
    write(before, [(68, 3, 40), (77, 2, 10), (2, 1, 20), (99, 1, 30)])
    # after: everything moved to TF32 (5 calls), the 32F row is gone
    write(after, [(77, 5, 10)])

    # text: a Compute column, one row per compute type
    text = report(before, "text")
    lines = text.splitlines()
    head = [l for l in lines if "GFLOP/s" in l and "Types" in l]
    check(len(head) == 1 and head[0].split()[-2:] == ["Compute", "API"],
          f"GEMM table header with Compute before API:\n{text}")
    rows = {}
    for l in lines:
        f = l.split()
        if f and f[-1] == "cublasGemmEx" and "f32*f32->f32" in f:
            rows[" ".join(f[f.index("f32*f32->f32") + 1:-1])] = f[2]  # compute -> calls
    want = {"32F": "3", "32F_FAST_TF32": "2", "legacy_f16": "1", "?": "1"}
    check(rows == want, f"GEMM text rows by compute type\n  got  {rows}\n  want {want}\n{text}")

    # JSON: the number and the name
    doc = json.loads(report(before, "json"))
    got = sorted((g["compute_type"], g["compute_type_name"], g["calls"]) for g in doc["gemms"])
    want = [(2, "legacy_f16", 1), (68, "32F", 3), (77, "32F_FAST_TF32", 2), (99, "?", 1)]
    check(got == want, f"JSON gemms\n  got  {got}\n  want {want}")

    # CSV: the number and the name in the gemms block
    out = report(before, "csv")
    block = [b for b in out.strip().split("\n\n") if b.startswith("table,api,")]
    check(len(block) == 1, f"one gemms CSV block:\n{out}")
    recs = list(csv.DictReader(io.StringIO(block[0] if block else "")))
    got = sorted((int(r["compute_type"]), r["compute_type_name"], int(r["calls"])) for r in recs)
    check(got == want, f"CSV gemms\n  got  {got}\n  want {want}")

    # diff: 32F removed, TF32 slower (more calls), shown apart in text, JSON and CSV
    rc, text, err = tooltest.run(cutrace, "diff", before, after)
    check(rc == 0, f"diff exit {rc}: {err!r}")
    label = "cublasGemmEx 256x128x64 NN f32*f32->f32 "
    for name, status in (("32F", "removed"), ("32F_FAST_TF32", "slower")):
        hit = [l for l in text.splitlines() if l.endswith(label + name)]
        check(len(hit) == 1 and hit[0].split()[0] == status,
              f"diff text row {name} ({status}):\n{text}")
    rc, out, err = tooltest.run(cutrace, "diff", "--format", "json", before, after)
    jd = json.loads(out) if rc == 0 else {"gemms": []}
    got = sorted((r["compute_type"], r["compute_type_name"], r["status"], r["calls_before"],
                  r["calls_after"]) for r in jd["gemms"])
    want = [(2, "legacy_f16", "removed", 1, 0), (68, "32F", "removed", 3, 0),
            (77, "32F_FAST_TF32", "slower", 2, 5), (99, "?", "removed", 1, 0)]
    check(got == want, f"diff JSON gemms\n  got  {got}\n  want {want}")
    rc, out, err = tooltest.run(cutrace, "diff", "--format", "csv", before, after)
    block = [b for b in out.strip().split("\n\n") if "\ngemms," in "\n" + b]
    recs = list(csv.DictReader(io.StringIO(block[0] if block else "")))
    got = sorted((int(r["compute_type"]), r["compute_type_name"], r["status"],
                  int(r["calls_before"]), int(r["calls_after"])) for r in recs)
    check(got == want, f"diff CSV gemms\n  got  {got}\n  want {want}")

finish()
