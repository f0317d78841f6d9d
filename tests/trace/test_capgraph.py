#!/usr/bin/env python3
"""Captures begun by the entry points cudaStreamBeginCapture is not, and graph uploads,
end to end on the simulated GPU (programs/capgraph.cu, ITERS graph launches of each):
cudaStreamBeginCaptureToGraph (3 cg_step), cuStreamBeginCaptureToGraph (2 cg_drv) and
the CUDA 10.0 one-argument cuStreamBeginCapture (1 cg_old), the first two into graphs
made by the program and uploaded (cudaGraphUpload, cuGraphUpload).

Asserted: each of those five calls is one outermost API record with result 0 on the
kernels' stream (DRIVER flag on the cu* ones); every one of the 6 launches made while a
stream captured is flagged CAPTURED with no GPU record (the tracer knew the stream was
capturing: no timing event went into the capture); no kernel GPU record at all (the
kernels only ran inside graph launches); `cutrace report --format json`: three graphs
rows, each launched ITERS times with its planted inventory (3 cg_step, 2 cg_drv,
1 cg_old), and the five calls in its API table once each without errors.

usage: test_capgraph.py SIM_DIR CUTRACE LIBTRACE CAPGRAPH
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cttest import check, finish, require_built, scratch_dir  # noqa: E402
from harness import record_one_file  # noqa: E402
from rawdump import kernel_identifier, raw_records  # noqa: E402

sim_dir, cutrace, libtrace, program = sys.argv[1:5]
require_built(os.path.join(sim_dir, "libcuda.so.1"), libtrace, cutrace, program)
tmp = scratch_dir("cutrace-capgraph-")
API_CAPTURED, API_DRIVER = 0x2, 0x10
GPU_KERNEL = 1
ITERS = 4
CALLS = ["cudaStreamBeginCaptureToGraph", "cudaGraphUpload", "cuStreamBeginCaptureToGraph",
         "cuGraphUpload", "cuStreamBeginCapture"]
INVENTORY = {"cg_step": 3, "cg_drv": 2, "cg_old": 1}  # kernel -> nodes of its graph

path = record_one_file(cutrace, libtrace, sim_dir, os.path.join(tmp, "capgraph"),
                       [program, str(ITERS)], "capgraph: ok", {})
if path:
    recs, names = raw_records(cutrace, path)
    apis = [r for r in recs if r["kind"] == "api"]
    gpu_corrs = {r["corr"] for r in recs if r["kind"] == "gpu"}
    launch_names = {r["corr"]: kernel_identifier(names.get(r["kernel"], ""))
                    for r in recs if r["kind"] == "launch"}
    kernel_stream = None
    launches = [a for a in apis if names.get(a["name"]) == "__cudaLaunchKernel"]
    if launches:
        kernel_stream = launches[0]["stream"]
    for name in CALLS:
        got = [a for a in apis if names.get(a["name"]) == name]
        if check(len(got) == 1, f"{name}: {len(got)} API records, want 1"):
            a = got[0]
            check(a["depth"] == 0 and a["result"] == 0 and a["stream"] == kernel_stream,
                  f"{name}: depth {a['depth']} result {a['result']} stream {a['stream']} "
                  f"(kernels' {kernel_stream})")
            check(bool(a["flags"] & API_DRIVER) == (not name.startswith("cuda")),
                  f"{name}: flags {a['flags']:#x}")
    # the launches made while capturing: 3 + 2 + 1, all CAPTURED and untimed
    counts = {}
    for a in launches:
        k = launch_names.get(a["corr"], "?")
        counts[k] = counts.get(k, 0) + 1
        check(a["flags"] & API_CAPTURED and a["corr"] not in gpu_corrs,
              f"launch of {k} (corr {a['corr']}) not seen as captured: flags {a['flags']:#x}, "
              f"GPU record {a['corr'] in gpu_corrs}")
    check(counts == INVENTORY, f"captured launches by kernel {counts}, want {INVENTORY}")
    kernels = [kernel_identifier(names.get(r["name"], "")) for r in recs
               if r["kind"] == "gpu" and r["type"] == GPU_KERNEL]
    check(not kernels, f"kernel GPU records (kernels ran only in graphs): {kernels}")

    p = subprocess.run([cutrace, "report", "--format", "json", path], capture_output=True,
                       text=True, timeout=60)
    rep = json.loads(p.stdout) if p.returncode == 0 else {}
    check(p.returncode == 0, f"report: status {p.returncode}: {p.stderr}")
    rows = {}
    for g in rep.get("graphs", []):
        top = [(kernel_identifier(k["name"]), k["count"]) for k in g.get("top_kernels", [])]
        rows[top[0][0] if len(top) == 1 else repr(top)] = g
    check(sorted(rows) == sorted(INVENTORY), f"report graphs rows by top kernel {sorted(rows)}")
    for kernel, nodes in INVENTORY.items():
        g = rows.get(kernel)
        if g:
            got = (g["launches"], g["nodes"], g["kernels"], g["partial"], g["inventory"],
                   g["top_kernels"][0]["count"])
            check(got == (ITERS, nodes, nodes, 0, True, nodes),
                  f"graphs row of {kernel}: (launches nodes kernels partial inventory count) {got}")
    api_rows = {a["name"]: a for a in rep.get("apis", [])}
    for name in CALLS:
        a = api_rows.get(name)
        check(a is not None and a["calls"] == 1 and a["errors"] == 0,
              f"report apis row of {name}: {a}")
sys.exit(finish())
