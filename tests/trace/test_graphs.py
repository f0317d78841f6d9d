#!/usr/bin/env python3
"""The capture workload (3 kernels, a memset and a kernel captured into a graph,
instantiated, launched ITERS times) traced on the simulated GPU under `cutrace record`:
the GRAPH inventory recorded at instantiation is 5 nodes, 4 kernels (all capture_step)
and 1 memset; every graph launch names that exec; `cutrace report` has one graphs row
(launches = ITERS, GPU time = the graph activities' sum, top kernel capture_step x4) in
json, csv and text; `cutrace dump --chrome` carries the inventory in each graph
activity's args. Format 1.6: with capture_step planted at 128 registers and 4096 bytes
of static shared memory (SIMCUDA_KERNEL_ATTRS), the GRAPH_KERNEL record names its
KERNEL_ATTR record and its node's shape (1 thread, no dynamic shared memory), and the
report's top kernel carries them with 16 resident blocks per SM (registers: 128 x 32 =
4096 per warp, 4 warps per sub-partition, 16 per SM) and 25 % theoretical occupancy.

usage: test_graphs.py SIM_DIR CUTRACE LIBTRACE WORKLOAD_DIR
"""
import json
import os
import sys

from harness import Harness
from rawdump import details_not_first, kernel_identifier, raw_records

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from chrome_check import trace_event_format_problem  # noqa: E402

ITERS = 6
GPU_GRAPH = 5

h = Harness(sys.argv)
rc, out, err, data, _ = h.record("capture", [str(ITERS)], "capture_step=4",
                                 extra={"SIMCUDA_KERNEL_ATTRS": "capture_step=128:4096:0"})
h.check(rc == 0, f"capture traced exit {rc}: {err.strip()[-300:]}")
files = sorted(f for f in os.listdir(data) if f.endswith(".ctr")) if os.path.isdir(data) else []
if not h.check(len(files) == 1, f"one trace file expected in {data}: {files}"):
    h.finish()
path = os.path.join(data, files[0])

# The records themselves.
recs, strings = raw_records(h.cutrace, path)
late = details_not_first(recs)
h.check(not late and any(r["kind"] == "graph_launch" for r in recs),
        f"detail records not before their API records (CTPH_FINISH): {late[:10]}")
graphs = [r for r in recs if r["kind"] == "graph"]
apis = {r["corr"]: strings.get(r["name"], "") for r in recs if r["kind"] == "api"}
exec_id = graphs[0]["exec"] if graphs else None
if h.check(len(graphs) == 1, f"{len(graphs)} GRAPH records, want 1"):
    g = graphs[0]
    counts = (g["nodes"], g["kernels"], g["memcpys"], g["memsets"], g["others"], g["partial"])
    h.check(counts == (5, 4, 0, 1, 0, 0), f"inventory (nodes kernels memcpys memsets others partial) {counts}")
    h.check(apis.get(g["corr"]) == "cudaGraphInstantiate", f"GRAPH corr is a {apis.get(g['corr'])} call")
# the walk's own time, labelled on the instantiating thread: one TRACER record
walks = [r for r in recs if r["kind"] == "tracer" and strings.get(r["what"], "") == "graph_walk"]
inst = [r for r in recs if r["kind"] == "api" and strings.get(r["name"], "") == "cudaGraphInstantiate"]
h.check(len(walks) == 1 and walks[0]["amount"] == 5 and inst and walks[0]["tid"] == inst[0]["tid"]
        and walks[0]["begin_ns"] >= inst[0]["end_ns"] and walks[0]["end_ns"] >= walks[0]["begin_ns"],
        f"TRACER graph_walk records {walks} (instantiate {inst[:1]})")
kernels = [(kernel_identifier(strings.get(r["name"], "")), r["count"], r["exec"])
           for r in recs if r["kind"] == "graph_kernel"]
h.check(kernels == [("capture_step", 4, exec_id)], f"GRAPH_KERNEL records {kernels}")
attr_of = {r["id"]: (r["regs"], r["static_smem"]) for r in recs if r["kind"] == "kernel_attr"}
gk = [r for r in recs if r["kind"] == "graph_kernel"]
h.check(len(gk) == 1 and attr_of.get(gk[0]["attr"]) == (128, 4096)
        and (gk[0]["block_threads"], gk[0]["dyn_smem"], gk[0]["device"]) == (1, 0, 0),
        f"GRAPH_KERNEL attributes {gk}, KERNEL_ATTR records {attr_of}")
launches = [r for r in recs if r["kind"] == "graph_launch"]
h.check(len(launches) == ITERS and all(r["exec"] == exec_id for r in launches)
        and all(apis.get(r["corr"]) == "cudaGraphLaunch" for r in launches),
        f"{len(launches)} GRAPH_LAUNCH records naming exec {exec_id}, want {ITERS}")
graph_gpu_ns = sum(r["end_ns"] - r["start_ns"] for r in recs
                   if r["kind"] == "gpu" and r.get("type") == GPU_GRAPH)

# report: json, csv, text.
rc, rep, err = h.cutrace_json("report", "--format", "json", path)
rows = (rep or {}).get("graphs", [])
if h.check(rc == 0 and len(rows) == 1, f"report graphs rows {rows} ({err.strip()})"):
    row = rows[0]
    h.check((row["exec"], row["launches"], row["nodes"], row["kernels"], row["memsets"],
             row["memcpys"], row["others"], row["partial"], row["inventory"])
            == (exec_id, ITERS, 5, 4, 1, 0, 0, 0, True), f"report graphs row {row}")
    h.check(abs(row["gpu_ns"] - graph_gpu_ns) <= ITERS and graph_gpu_ns > 0,
            f"report gpu_ns {row['gpu_ns']}, graph GPU records sum to {graph_gpu_ns}")
    top = [(kernel_identifier(k["name"]), k["count"]) for k in row["top_kernels"]]
    h.check(top == [("capture_step", 4)], f"report top kernels {top}")
    attrs = [k.get("attributes") for k in row["top_kernels"]]
    want = {"regs": 128, "smem_static": 4096, "smem_dynamic": 0, "local_bytes": 0,
            "block_threads": 1, "blocks_per_sm": 16, "occupancy_pct": 25.0}
    h.check(attrs == [want], f"report top kernel attributes {attrs}, want {want}")
rc, csv, _ = h.run("report", "--format", "csv", "--tables", "graphs", path)
lines = csv.strip().splitlines()
h.check(rc == 0 and len(lines) == 2 and lines[0].startswith("table,exec,launches,gpu_ns")
        and lines[1].startswith(f"graphs,{exec_id},{ITERS},") and ",5,4,0,1,0,0," in lines[1]
        and "capture_step" in lines[1], f"report csv graphs table {lines}")
rc, text, _ = h.run("report", path)
h.check(rc == 0 and "CUDA graphs" in text and "capture_step(long long) x4" in text,
        f"report text has no graphs table:\n{text}")

# dump --chrome: every graph activity carries the inventory.
rc, out, err = h.run("dump", "--chrome", "--no-gaps", path)
h.check(rc == 0, f"dump --chrome {rc} {err!r}")
chrome = json.loads(out) if rc == 0 else {"traceEvents": []}
problem = trace_event_format_problem(chrome)
h.check(not problem, f"chrome trace: {problem}")
slices = [e for e in chrome["traceEvents"] if e.get("ph") == "X" and "graph exec" in e.get("args", {})]
h.check(len(slices) == ITERS, f"{len(slices)} graph slices with args, want {ITERS}")
for e in slices:
    a = e["args"]
    got = (a["graph exec"], a.get("graph nodes"), a.get("graph kernels"), a.get("graph memsets"),
           {kernel_identifier(k): v for k, v in a.get("graph kernel names", {}).items()})
    if not h.check(got == (exec_id, 5, 4, 1, {"capture_step": 4}), f"chrome graph args {a}"):
        break
h.finish()
