#!/usr/bin/env python3
"""End to end: the cuBLAS workloads (mlp, linear) and an NVTX program traced on the
simulated GPU, then what `cutrace report` and `cutrace dump --chrome` make of them,
checked against the trace's own records:

- each GEMM row's GPU time is the sum of its calls' GPU work: the kernels each call
  launched (CT_API_INNER_TIMED, activities whose call's parent is the GEMM), or the
  call's own activity (older preloads); its calls and kernels counted likewise;
- no GPU time counted twice: the report's total is the sum of the GPU records, and the
  kernel and memory tables add up to it;
- the Chrome trace parses and follows the Trace Event Format; every GPU record is one
  slice; a GEMM span's args list its kernels; each child kernel has a flow from the
  call that launched it; with CUTRACE_STACKS=all (mlp) calls carry their stack id and
  call site (function file:line: mlp.cu for cublasSgemm_v2, workload_lt.h for
  cublasLtMatmul);
- NVTX ranges (nvtx_kernels) are projected onto the GPU streams (gpu_user_annotation)
  from the first start to the last end of exactly the work launched inside them;
- `dump --perfetto` of each trace holds the same events as its `dump --chrome`
  (tools/test_perfetto.py's comparison, through tools/perfetto_read.py).

usage: test_gemm_chrome.py SIM_DIR CUTRACE LIBTRACE WORKLOAD_DIR NVTX_KERNELS
"""
import collections
import glob
import json
import os
import re
import sys

from harness import Harness
from rawdump import raw_records

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from chrome_check import trace_event_format_problem  # noqa: E402
import perfetto_read  # noqa: E402
from test_perfetto import compare  # noqa: E402

INNER_TIMED, TIMED = 0x20, 0x4

h = Harness(sys.argv)
nvtx_program = h.extra[0] if h.extra else ""


def same_as_perfetto(label, path, chrome):
    """Checks that dump --perfetto of path holds the events of its --chrome document."""
    pf = os.path.join(h.tmp, f"{label}.pftrace")
    rc, out, err = h.run("dump", "--perfetto", "--no-gaps", "-o", pf, path)
    diffs = compare(chrome, perfetto_read.read(pf)) if rc == 0 else [f"status {rc}: {err!r}"]
    h.check(not diffs, f"{label}: --perfetto holds the --chrome events: {diffs[:3]}")


def trace_file(data):
    files = glob.glob(os.path.join(data, "*.ctr"))
    h.check(len(files) == 1, f"one trace in {data}: {files}")
    return files[0] if files else None


def planted_gemms(records):
    """Per GEMM key (api, m, n, k, batch): calls, GPU ns, timing activities, inner-timed
    calls; and the child kernels' corrs by their GEMM's corr."""
    apis = {r["corr"]: r for r in records if r["kind"] == "api" and r["corr"]}
    gpus = {r["corr"]: r for r in records if r["kind"] == "gpu"}
    children = collections.defaultdict(list)
    for r in apis.values():
        if r.get("depth", 0) > 0 and r.get("parent") and r["corr"] in gpus:
            children[r["parent"]].append(r["corr"])
    rows = collections.defaultdict(lambda: [0, 0, 0, 0])
    for g in (r for r in records if r["kind"] == "gemm"):
        call = apis.get(g["corr"])
        if not call:
            continue
        if call["flags"] & INNER_TIMED:
            parts = children.get(g["corr"], [])
        else:
            parts = [g["corr"]] if g["corr"] in gpus else []
        if not parts:
            continue
        row = rows[(call["name"], g["m"], g["n"], g["k"], g["batch"] or 1)]
        row[0] += 1
        row[1] += sum(gpus[c]["end_ns"] - gpus[c]["start_ns"] for c in parts)
        row[2] += len(parts)
        row[3] += bool(call["flags"] & INNER_TIMED)
    return rows, children, apis, gpus


def check_workload(name, args, stacks=False):
    rc, out, err, data, truth = h.record(name, args, extra={"CUTRACE_STACKS": "all"} if stacks else None)
    h.check(rc == 0, f"{name}: exit {rc}: {err[-400:]}")
    path = trace_file(data)
    if not path:
        return
    records, strings = raw_records(h.cutrace, path)
    for r in records:  # string ids -> names, as the report shows them
        if r["kind"] == "api":
            r["name"] = strings.get(r["name"], "")
    rows, children, apis, gpus = planted_gemms(records)
    inner = sum(row[3] for row in rows.values())
    print(f"{name}: {sum(row[0] for row in rows.values())} GEMM calls, {inner} timed by "
          f"{sum(len(c) for c in children.values())} child kernels")
    h.check(rows, f"{name}: GEMMs were traced and timed")

    rc, doc, err = h.cutrace_json("report", "--format", "json", path)
    h.check(rc == 0 and doc, f"{name}: report {rc} {err!r}")
    if not doc:
        return
    got = {(g["api"], g["m"], g["n"], g["k"], g["batch"]): [g["calls"], g["total_ns"], g["kernels"],
                                                          g["inner_timed"]] for g in doc["gemms"]}
    h.check(got == {k: v for k, v in rows.items()}, f"{name}: GEMM rows {got} != planted {dict(rows)}")
    total = sum(g["end_ns"] - g["start_ns"] for g in gpus.values())
    h.check(doc["gpu_total_ns"] == total, f"{name}: report GPU total {doc['gpu_total_ns']} != records {total}")
    tables = sum(k["total_ns"] for k in doc["kernels"]) + sum(m["total_ns"] for m in doc["memcpy"])
    h.check(tables == total, f"{name}: kernel + memory tables {tables} != {total}")
    if inner:  # a library call timed by its kernels has no activity of its own
        lib_rows = [k for k in doc["kernels"] if k["type"] == "gemm"]
        h.check(not lib_rows, f"{name}: GEMMs timed by kernels also timed as one: {lib_rows}")
        by = {k["mangled"]: k["launched_by"] for k in doc["kernels"]}
        child_names = {strings.get(r["kernel"]) for r in records if r["kind"] == "launch" and
                       any(r["corr"] in c for c in children.values())}
        h.check(all(by.get(n) and by[n].startswith("cublas") for n in child_names),
                f"{name}: child kernels marked as launched by cuBLAS: {by}")
        inner_api = [a for a in doc["apis"] if a["inner"]]
        h.check(sum(a["calls"] for a in inner_api) == sum(1 for a in apis.values() if a.get("depth", 0) > 0),
                f"{name}: inner calls in their own API rows {inner_api}")
    else:
        print(f"{name}: the preload times GEMMs as one activity (no CT_API_INNER_TIMED yet)")

    rc, out, err = h.run("dump", "--chrome", "--no-gaps", path)
    h.check(rc == 0, f"{name}: dump --chrome {rc} {err!r}")
    chrome = json.loads(out)
    problem = trace_event_format_problem(chrome)
    h.check(not problem, f"{name}: Trace Event Format: {problem}")
    same_as_perfetto(name, path, chrome)
    xs = [e for e in chrome["traceEvents"] if e["ph"] == "X"]
    gpu_slices = [e for e in xs if e["cat"] in ("kernel", "gpu_memcpy", "gpu_memset")]
    h.check(sorted(e["args"]["correlation"] for e in gpu_slices) == sorted(gpus),
            f"{name}: one slice per GPU record")
    spans = {e["args"]["correlation"]: e for e in xs if e["cat"] in ("cuda_runtime", "cuda_driver")}
    flows = collections.defaultdict(dict)
    for e in chrome["traceEvents"]:
        if e["ph"] in ("s", "f"):
            flows[e["id"]][e["ph"]] = e
    for parent, kids in children.items():
        span = spans.get(parent)
        if not span or not (apis[parent]["flags"] & INNER_TIMED):
            continue
        h.check(span["args"].get("kernels") == len(kids) and "m" in span["args"],
                f"{name}: GEMM span lists its kernels: {span['args']}")
        for kid in kids:
            f = flows.get(kid, {})
            h.check("s" in f and spans.get(kid) and f["s"]["ts"] == spans[kid]["ts"],
                    f"{name}: flow from child launch {kid}")
    if stacks:  # call sites: the stack id and the first frame in the program's own code
        gemm_spans = [spans[c] for c in children if c in spans]
        sites = {e["name"]: e["args"].get("call site", "") for e in gemm_spans}
        h.check(gemm_spans and all(e["args"].get("stack") and
                                   re.search(r" \S+\.(cu|h):\d+$", e["args"].get("call site", ""))
                                   for e in gemm_spans) and
                f"{name}.cu:" in sites.get("cublasSgemm_v2", "") and
                "workload_lt.h:" in sites.get("cublasLtMatmul", ""),
                f"{name}: GEMM spans carry their call site: {[e['args'].get('call site') for e in gemm_spans]}")


def check_nvtx():
    if not os.path.exists(nvtx_program):
        print("nvtx_kernels not built: gpu_user_annotation on a real program skipped")
        return
    rc, out, err, data, truth = h.record(nvtx_program, (), tag="nvtx")
    h.check(rc == 0, f"nvtx_kernels: exit {rc}: {err[-400:]}")
    path = trace_file(data)
    if not path:
        return
    rc, out, err = h.run("dump", "--chrome", "--no-gaps", path)
    doc = json.loads(out)
    h.check(not trace_event_format_problem(doc), "nvtx_kernels: Trace Event Format")
    same_as_perfetto("nvtx_kernels", path, doc)
    xs = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    gpu = [e for e in xs if e["cat"] in ("kernel", "gpu_memcpy", "gpu_memset")]
    ann = [e for e in xs if e["cat"] == "gpu_user_annotation"]

    def extent(pred):
        sel = [e for e in gpu if pred(e)]
        return (min(e["ts"] for e in sel), max(round(e["ts"] + e["dur"], 3) for e in sel), sel[0]["tid"]) if sel else None

    kern = lambda n: lambda e: e["cat"] == "kernel" and e["name"].startswith(n)
    want = {
        "phase_a": extent(kern("nvtx_kernel_a")),
        "step": extent(lambda e: kern("nvtx_kernel_a")(e) or (e["cat"] == "gpu_memcpy" and
                                                             e["args"].get("bytes") and "DtoH" in e["name"])),
        "t1_work": extent(kern("nvtx_kernel_c")),
    }
    got = {e["name"]: (e["ts"], round(e["ts"] + e["dur"], 3), e["tid"]) for e in ann}
    for rname, ext in want.items():
        h.check(ext and rname in got and abs(got[rname][0] - ext[0]) <= 0.001 and
                abs(got[rname][1] - ext[1]) <= 0.001 and got[rname][2] == ext[2],
                f"nvtx_kernels: {rname} annotation {got.get(rname)} != its work {ext}")
    h.check("t1_leak" not in got, "nvtx_kernels: a range without GPU work has no annotation")
    inside = [e for e in gpu if e["name"].startswith("nvtx_kernel_b")]
    h.check(inside and all(not (got["step"][0] <= e["ts"] < got["step"][1]) for e in inside)
            if "step" in got else False, "nvtx_kernels: work outside the ranges stays outside")


check_workload("mlp", ["16", "64", "3"], stacks=True)
check_workload("linear", ["16", "64", "32", "4"])
check_nvtx()
h.finish()
