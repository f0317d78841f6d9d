#!/usr/bin/env python3
"""Graph exec destroys that fail leave the exec known (programs/execkeep.cu): exec E
(1 ek_a) is instantiated and launched; cudaGraphExecDestroy(E) is refused inside a
global-mode capture (900, the simulator's rule), E is launched; E's node is given ek_b
(cudaGraphExecKernelNodeSetParams), E is launched; the driver's cuGraphExecDestroy(E) is
refused the same way, E is launched; E is destroyed (success), then again (stale: 1).
Before 2026-12-07 the tracer forgot the exec before the call, whatever it answered: the
launches after a refused destroy had exec id 0 and no inventory, and the edit wrote none.

Asserted: the destroys are API records with results 900, 900, 0, 1 (in call order;
cudaGraphExecDestroy three times, cuGraphExecDestroy once, flagged DRIVER); E's
inventories are {ek_a} v1 (the instantiation's) and {ek_b} v2 (the edit's corr), under
one exec id; the four launches' GRAPH_LAUNCH records carry that id, versions 1, 1, 2, 2;
at exit nothing is kept for graph execs (TRACER graph_kept 0: the successful destroy freed
what was kept, the refused ones did not).

usage: test_execkeep.py SIM_DIR CUTRACE LIBTRACE EXECKEEP
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cttest import check, finish, require_built, scratch_dir  # noqa: E402
from harness import record_one_file  # noqa: E402
from rawdump import kernel_identifier, raw_records  # noqa: E402

sim_dir, cutrace, libtrace, program = sys.argv[1:5]
require_built(os.path.join(sim_dir, "libcuda.so.1"), libtrace, cutrace, program)
tmp = scratch_dir("cutrace-execkeep-")
API_DRIVER = 0x10
UNSUPPORTED, INVALID_VALUE = 900, 1

path = record_one_file(cutrace, libtrace, sim_dir, os.path.join(tmp, "execkeep"), [program],
                       "execkeep: ok", {})
if path:
    recs, names = raw_records(cutrace, path)
    apis = sorted((r for r in recs if r["kind"] == "api"), key=lambda a: a["begin_ns"])
    destroys = [(names.get(a["name"]), a["result"], bool(a["flags"] & API_DRIVER))
                for a in apis if names.get(a["name"]) in ("cudaGraphExecDestroy", "cuGraphExecDestroy")
                and a["depth"] == 0]
    want = [("cudaGraphExecDestroy", UNSUPPORTED, False), ("cuGraphExecDestroy", UNSUPPORTED, True),
            ("cudaGraphExecDestroy", 0, False), ("cudaGraphExecDestroy", INVALID_VALUE, False)]
    check(destroys == want, f"destroys {destroys}, want {want}")
    api_name = {a["corr"]: names.get(a["name"]) for a in apis}
    inventories = []
    for r in recs:
        if r["kind"] == "graph":
            inventories.append({"exec": r["exec"], "version": r["version"], "names": {},
                                "by": api_name.get(r["corr"], r["corr"])})
        elif r["kind"] == "graph_kernel" and inventories:
            inventories[-1]["names"][kernel_identifier(names.get(r["name"], ""))] = r["count"]
    got = [(i["names"], i["version"], i["by"]) for i in inventories]
    check(got == [({"ek_a": 1}, 1, "cudaGraphInstantiate"),
                  ({"ek_b": 1}, 2, "cudaGraphExecKernelNodeSetParams")],
          f"inventories {got}: want ek_a v1 (instantiation), ek_b v2 (the edit after a refused destroy)")
    execs = {i["exec"] for i in inventories}
    check(len(execs) == 1 and 0 not in execs, f"inventory exec ids {execs}, want one")
    launches = sorted((r for r in recs if r["kind"] == "graph_launch"),
                      key=lambda r: r["corr"])
    got = [(r["exec"] in execs, r["version"]) for r in launches]
    check(got == [(True, 1), (True, 1), (True, 2), (True, 2)],
          f"launches (E's id, version) {got}: the launches after a refused destroy lost E")
    kept = [r["amount"] for r in recs if r["kind"] == "tracer" and names.get(r["what"]) == "graph_kept"]
    check(kept == [0], f"graph_kept at exit {kept}, want [0]")
sys.exit(finish())
