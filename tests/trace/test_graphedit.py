#!/usr/bin/env python3
"""Graph execs edited in place, end to end on the simulated GPU (programs/graphedit.cu,
ITERS launches between edits): exec 1 (2 ge_a nodes) gets ge_b on node 0 then node 1
through cudaGraphExecKernelNodeSetParams, then node 1 ge_b again at another block size;
exec 2 (1 ge_a node) gets ge_drv through the driver's cuGraphExecKernelNodeSetParams
(_v2) and ge_drv2 through cuGraphExecNodeSetParams; exec 3's set and copy nodes and
exec 4's child graph node are given other parameters (calls only: their inventories
stay those of the instantiation, 1 ge_a each; one set edit aimed at a kernel node
fails and its API record keeps the error).

Asserted: the edits are API records (3 cudaGraphExecKernelNodeSetParams, one
cuGraphExecKernelNodeSetParams_v2 and one cuGraphExecNodeSetParams, DRIVER flag on the
cu* ones, result 0); each edit that changed a function wrote the exec's inventory again
under the same exec id, and the one that did not (same function, other block size)
wrote none: exec 1's inventories in order are {ge_a: 2}, {ge_a: 1, ge_b: 1}, {ge_b: 2};
exec 2's {ge_a: 1}, {ge_drv: 1} (corr: the cuGraphExecKernelNodeSetParams_v2 record),
{ge_drv2: 1} (corr: the cuGraphExecNodeSetParams record); a runtime edit's inventory
has corr 0 (the driver's wrapper, reached from libcudart, follows it); ge_drv's
GRAPH_KERNEL carries the node's new block (64). `cutrace report --format json`: two
graphs rows, exec 1 launched 4 x ITERS with top kernels [ge_b x2], exec 2 3 x ITERS
with [ge_drv2 x1]; the API table has the edit calls without errors.

usage: test_graphedit.py SIM_DIR CUTRACE LIBTRACE GRAPHEDIT
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cttest import check, finish, require_built  # noqa: E402
from harness import record_one_file  # noqa: E402
from rawdump import kernel_identifier, raw_records  # noqa: E402

sim_dir, cutrace, libtrace, program = sys.argv[1:5]
require_built(os.path.join(sim_dir, "libcuda.so.1"), libtrace, cutrace, program)
tmp = tempfile.mkdtemp(prefix="cutrace-graphedit-")
API_DRIVER = 0x10
ITERS = 3
CALLS = {"cudaGraphExecKernelNodeSetParams": 3, "cuGraphExecKernelNodeSetParams_v2": 1,
         "cuGraphExecNodeSetParams": 1, "cudaGraphExecMemsetNodeSetParams": 2,
         "cudaGraphExecMemcpyNodeSetParams1D": 1, "cuGraphExecMemsetNodeSetParams": 1,
         "cuGraphExecChildGraphNodeSetParams": 1}
FAILED = {"cudaGraphExecMemsetNodeSetParams": 1}  # calls refused (the set's on a kernel node)

path = record_one_file(cutrace, libtrace, sim_dir, os.path.join(tmp, "graphedit"),
                       [program, str(ITERS)], "graphedit: ok", {})
if path:
    recs, names = raw_records(cutrace, path)
    apis = [r for r in recs if r["kind"] == "api"]
    api_name = {r["corr"]: names.get(r["name"], "") for r in apis}
    for name, want in CALLS.items():
        got = [a for a in apis if names.get(a["name"]) == name]
        failed = [a for a in got if a["result"] != 0]
        check(len(failed) == FAILED.get(name, 0), f"{name}: failed calls {failed}")
        check(len(got) == want and all(a["depth"] == 0 for a in got)
              and all(bool(a["flags"] & API_DRIVER) == (not name.startswith("cuda"))
                      for a in got),
              f"{name}: {len(got)} API records, want {want}: {got}")
    # the inventories of each exec, in record order
    inventories = {}
    current = None
    for r in recs:
        if r["kind"] == "graph":
            current = {"corr": r["corr"], "kernels": r["kernels"], "names": {}, "blocks": {}}
            inventories.setdefault(r["exec"], []).append(current)
        elif r["kind"] == "graph_kernel" and current is not None:
            k = kernel_identifier(names.get(r["name"], ""))
            current["names"][k] = r["count"]
            current["blocks"][k] = r["block_threads"]
    execs = sorted(inventories)
    if check(len(execs) == 4, f"inventories of {len(execs)} execs, want 4: {inventories}"):
        one, two, three, four = (inventories[e] for e in execs)
        got = [(i["names"], api_name.get(i["corr"], i["corr"])) for i in three + four]
        check(got == [({"ge_a": 1}, "cudaGraphInstantiate"), ({"ge_a": 1}, "cudaGraphInstantiate")],
              f"execs 3 and 4 (set, copy, child graph edits: no new inventory) {got}")
        got = [i["names"] for i in one]
        check(got == [{"ge_a": 2}, {"ge_a": 1, "ge_b": 1}, {"ge_b": 2}],
              f"exec 1 inventories {got}")
        corrs = [api_name.get(i["corr"], i["corr"]) for i in one]
        check(corrs == ["cudaGraphInstantiate", 0, 0], f"exec 1 inventories' calls {corrs}")
        got = [i["names"] for i in two]
        check(got == [{"ge_a": 1}, {"ge_drv": 1}, {"ge_drv2": 1}], f"exec 2 inventories {got}")
        corrs = [api_name.get(i["corr"], i["corr"]) for i in two]
        check(corrs == ["cudaGraphInstantiate", "cuGraphExecKernelNodeSetParams_v2",
                        "cuGraphExecNodeSetParams"], f"exec 2 inventories' calls {corrs}")
        blocks = [i["blocks"] for i in two]
        check(blocks[1:] == [{"ge_drv": 64}, {"ge_drv2": 128}], f"exec 2 blocks {blocks}")
        check(all(i["kernels"] == sum(i["names"].values()) for i in one + two),
              f"GRAPH kernels counts {[i['kernels'] for i in one + two]}")

    p = subprocess.run([cutrace, "report", "--format", "json", path], capture_output=True,
                       text=True, timeout=60)
    rep = json.loads(p.stdout) if p.returncode == 0 else {}
    check(p.returncode == 0, f"report: status {p.returncode}: {p.stderr}")
    rows = sorted(rep.get("graphs", []), key=lambda g: g["exec"])
    got = [(g["launches"], [(kernel_identifier(k["name"]), k["count"])
                            for k in g.get("top_kernels", [])]) for g in rows]
    check(got == [(4 * ITERS, [("ge_b", 2)]), (3 * ITERS, [("ge_drv2", 1)]),
                  (ITERS, [("ge_a", 1)]), (ITERS, [("ge_a", 1)])],
          f"report graphs rows (launches, top kernels) {got}")
    api_rows = {a["name"]: a for a in rep.get("apis", [])}
    for name, want in CALLS.items():
        a = api_rows.get(name)
        check(a is not None and a["calls"] == want and a["errors"] == FAILED.get(name, 0),
              f"report apis row of {name}: {a}")
sys.exit(finish())
