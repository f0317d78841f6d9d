#!/usr/bin/env python3
"""cutrace report and dump --chrome on planted traces with CUDA graphs (tracewrite.py):
an exec instantiated with a known inventory and then updated (the update's inventory
wins), an exec launched without inventory (instantiated before tracing began), an exec
with more distinct kernels than the table keeps; launches, GPU time and inventories
exact in json, csv and text; Chrome args per graph activity. A file of format 1.12 (no
inventory versions) gives the same graphs table, chrome and CSV output. Then the same
launches in
files of format 1.1 and 1.0 (no GRAPH kinds; 1.0 also without api.stack / parent)
read by this reader: one graphs row of exec 0 with no inventory. dump --perfetto of
each holds the same events as dump --chrome (test_perfetto.compare).

usage: test_graphs_report.py CUTRACE"""
import csv
import io
import json
import os
import sys

import tooltest
from tooltest import check, finish, scratch
from tracewrite import TraceWriter

cutrace = sys.argv[1]
PID, GPU_GRAPH = 7, 5


def run(*args):
    return tooltest.run(cutrace, *args)


def launches(w, corr, exec_id, n, t0, dur, failed=0, graph_launch=True):
    """n successful launches (each timed dur + i ns) and `failed` failing ones of exec_id;
    returns (next corr, next time, GPU ns)."""
    name = w.string("cudaGraphLaunch")
    gpu_ns = 0
    for i in range(n + failed):
        t = t0 + i * 100000
        ok = i < n
        w.add("api", tid=PID, name=name, begin_ns=t, end_ns=t + 2000, corr=corr, flags=0x4 if ok else 0,
              result=0 if ok else 400)
        if graph_launch:
            w.add("graph_launch", corr=corr, exec=exec_id)
        if ok:
            w.add("gpu", corr=corr, start_ns=t + 3000, end_ns=t + 3000 + dur + i, type=GPU_GRAPH, name=name)
            gpu_ns += dur + i
        corr += 1
    return corr, t0 + (n + failed) * 100000, gpu_ns


def instantiate(w, corr, t, exec_id, inv, kernels, api="cudaGraphInstantiate"):
    w.add("api", tid=PID, name=w.string(api), begin_ns=t, end_ns=t + 5000, corr=corr)
    w.add("graph", corr=corr, exec=exec_id, **inv)
    for name, count in kernels:
        w.add("graph_kernel", exec=exec_id, name=w.string(name) if name else 0, count=count)
    return corr + 1, t + 10000


def planted(path, as_1_12=False):
    """as_1_12: written as format 1.12 wrote it (GRAPH, GRAPH_KERNEL and GRAPH_LAUNCH
    without their 1.13 `version`)."""
    w = TraceWriter()
    if as_1_12:
        for kind in ("graph", "graph_kernel", "graph_launch"):
            kid, fields = w.schema[kind]
            w.schema[kind] = (kid, [f for f in fields if f[0] != "version"])
        w.version = (1, 12)
    w.add("process", pid=PID, start_ns=10**9)
    corr, t = 1, 10**9 + 1000
    # exec 1: instantiated (2 kernels), then updated: 9 kernels, 1 copy, 1 set, 1 host node
    corr, t = instantiate(w, corr, t, 1, dict(nodes=2, kernels=2), [("_Z3oldv", 2)])
    corr, t = instantiate(w, corr, t, 1, dict(nodes=12, kernels=9, memcpys=1, memsets=1, others=1),
                          [("_Z3k_av", 5), ("_Z3k_bv", 3), (None, 1)], api="cudaGraphExecUpdate")
    corr, t, gpu1 = launches(w, corr, 1, 10, t, 1000, failed=1)
    # exec 2: launched only (instantiated before tracing)
    corr, t, gpu2 = launches(w, corr, 2, 3, t, 500)
    # exec 3: 10 distinct kernels (counts 1..10), partial walk, never launched
    corr, t = instantiate(w, corr, t, 3, dict(nodes=55, kernels=55, partial=2),
                          [(f"_Z2k{i}v", i + 1) for i in range(10)])
    w.add("end", records=0, end_ns=t)
    w.save(path)
    return gpu1, gpu2


def old_format(path, minor):
    """Graph launches in a file of format 1.minor (before GRAPH records existed)."""
    w = TraceWriter()
    for kind in ("graph", "graph_kernel", "graph_launch"):
        del w.schema[kind]
    if minor == 0:
        for kind in ("stack", "module"):
            del w.schema[kind]
        kid, fields = w.schema["api"]
        w.schema["api"] = (kid, [f for f in fields if f[0] not in ("stack", "parent")])
    w.version = (1, minor)
    w.add("process", pid=PID, start_ns=10**9)
    _, _, gpu = launches(w, 1, 0, 4, 10**9, 2000, graph_launch=False)
    w.save(path)
    return gpu


with scratch("ct-graphs-") as d:
    path = os.path.join(d, "graphs.ctr")
    gpu1, gpu2 = planted(path)
    rc, out, err = run("report", "--format", "json", path)
    doc = json.loads(out) if rc == 0 else {}
    rows = {r["exec"]: r for r in doc.get("graphs", [])}
    check(rc == 0 and sorted(rows) == [1, 2, 3], f"graphs rows {sorted(rows)} ({rc} {err!r})")
    if sorted(rows) == [1, 2, 3]:
        r1, r2, r3 = rows[1], rows[2], rows[3]
        got = (r1["launches"], r1["timed"], r1["gpu_ns"], r1["inventory"], r1["nodes"], r1["kernels"],
               r1["memcpys"], r1["memsets"], r1["others"], r1["partial"])
        check(got == (10, 10, gpu1, True, 12, 9, 1, 1, 1, 0), f"exec 1 (updated inventory): {got}")
        top = [(k["name"], k["count"]) for k in r1["top_kernels"]]
        check(top == [("k_a()", 5), ("k_b()", 3), ("?", 1)], f"exec 1 top kernels {top}")
        got = (r2["launches"], r2["gpu_ns"], r2["inventory"], r2["nodes"], r2["top_kernels"])
        check(got == (3, gpu2, False, 0, []), f"exec 2 (no inventory): {got}")
        top = [k["count"] for k in r3["top_kernels"]]
        check(r3["launches"] == 0 and r3["partial"] == 2 and top == list(range(10, 2, -1)),
              f"exec 3: 8 largest of 10 kernels kept {top}, partial {r3['partial']}")
        check(doc["gpu_total_ns"] == gpu1 + gpu2, f"GPU total {doc['gpu_total_ns']}")
    rc, out, err = run("report", path)
    check(rc == 0 and "CUDA graphs" in out and "(not seen instantiated)" in out and
          "k_a() x5, k_b() x3, ? x1" in out and "(partial)" in out, f"text graphs table:\n{out}")
    rc, out, err = run("report", "--format", "csv", "--tables", "graphs", path)
    rows = list(csv.reader(io.StringIO(out)))
    check(rc == 0 and rows[0][:3] == ["table", "exec", "launches"] and len(rows) == 4 and
          ["graphs", "1", "10", str(gpu1)] == rows[1][:4] and
          rows[1][13:] == ["_Z3k_av:5;_Z3k_bv:3;?:1", "0", "0"] and rows[0][13:] == [
              "top_kernels", "folded", "last_version"],
          f"csv graphs table {rows}")
    rc, out, err = run("report", "--tables", "kernels", path)
    check(rc == 0 and "CUDA graphs" not in out, "--tables kernels printed the graphs table")
    rc, out, err = run("dump", "--chrome", "--no-gaps", path)
    doc = json.loads(out) if rc == 0 else {"traceEvents": []}
    args = [e["args"] for e in doc["traceEvents"] if e.get("ph") == "X" and "graph exec" in e.get("args", {})]
    one = [a for a in args if a["graph exec"] == 1]
    two = [a for a in args if a["graph exec"] == 2]
    check(len(one) == 10 and all(a["graph kernels"] == 9 and a["graph nodes"] == 12 and
                                 a["graph kernel names"] == {"k_a()": 5, "k_b()": 3, "?": 1} for a in one),
          f"chrome args of exec 1: {one[:1]}")
    check(len(two) == 3 and all(a.get("graph inventory") == "not seen instantiated" for a in two),
          f"chrome args of exec 2: {two[:1]}")
    # A 1.12 file (no inventory versions): read as the 1.13 file whose versions are all 0
    old12 = os.path.join(d, "old12.ctr")
    planted(old12, as_1_12=True)
    for args in (("report", "--format", "json"), ("report",), ("report", "--format", "csv"),
                 ("dump", "--chrome", "--no-gaps"), ("dump", "--csv")):
        rc, out, err = run(*args, path)
        rc12, out12, err12 = run(*args, old12)
        out12 = out12.replace(old12, path)  # the file's name, in process names
        if args[-1] == "json":
            out, out12 = (json.loads(o).get("graphs") if o else None for o in (out, out12))
        check(rc == rc12 == 0 and out == out12 and out,
              f"format 1.12 {' '.join(args)}: as 1.13 with versions 0 ({rc} {rc12} {err12!r})")
    # Older files: the new reader reads them, graph launches grouped under exec 0.
    for minor in (1, 0):
        old = os.path.join(d, f"old{minor}.ctr")
        gpu = old_format(old, minor)
        rc, out, err = run("report", "--format", "json", old)
        doc = json.loads(out) if out else {}
        rows = [(r["exec"], r["launches"], r["gpu_ns"], r["inventory"]) for r in doc.get("graphs", [])]
        check(rows == [(0, 4, gpu, False)], f"format 1.{minor}: graphs rows {rows} ({rc} {err!r})")
        rc, out, err = run("dump", old)
        check(rc == 0 and "cudaGraphLaunch" in out and "graph_launch" not in out,
              f"format 1.{minor}: dump {rc} {err!r}")
        rc, out, err = run("info", old)
        check(f"1.{minor}" in out, f"format 1.{minor}: info says {out!r}")
    # dump --perfetto: the same events as --chrome (graph args as a dict, old formats)
    import perfetto_read
    from test_perfetto import compare
    for trace in (path, old12, os.path.join(d, "old1.ctr"), os.path.join(d, "old0.ctr")):
        pf = os.path.join(d, "out.pftrace")
        rc, out, err = run("dump", "--chrome", "--no-gaps", trace)
        rc2, _, err2 = run("dump", "--perfetto", "--no-gaps", "-o", pf, trace)
        diffs = compare(json.loads(out), perfetto_read.read(pf)) if rc == rc2 == 0 else [err, err2]
        check(not diffs, f"{os.path.basename(trace)}: --perfetto as --chrome: {diffs[:3]}")
sys.exit(finish())
