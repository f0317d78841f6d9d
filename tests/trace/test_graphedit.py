"""Graph execs edited in place, updated and destroyed, end to end on the simulated GPU
(programs/graphedit.cu, ITERS launches between changes): exec 1 (2 ge_a nodes) gets ge_b
on node 0 then node 1 through cudaGraphExecKernelNodeSetParams, then node 1 ge_b again at
another block size; exec 2 (1 ge_a node) gets ge_drv through the driver's
cuGraphExecKernelNodeSetParams (_v2) and ge_drv2 through cuGraphExecNodeSetParams; exec
3's set and copy nodes are given other parameters (calls only: its inventory stays that
of the instantiation, 1 ge_a; one set edit aimed at a kernel node fails and its API
record keeps the error); exec 4's child graph node (1 ge_a) is given a graph of 1 ge_b
by cuGraphExecChildGraphNodeSetParams (followed: {ge_b} v2 with that call's corr), then
1 ge_a again by the runtime's cudaGraphExecChildGraphNodeSetParams ({ge_a} v3, the
runtime call's corr), and exec 4 is destroyed with cuGraphExecDestroy; exec 5 (1 ge_a) is updated (cudaGraphExecUpdate) to 1 ge_b, then to an
equal graph, and destroyed (cudaGraphExecDestroy); exec 6 (2 ge_a) is made after that.

Asserted (format 1.13, inventory versions): the edits, updates and destroys are API
records (DRIVER flag on the cu* ones, result 0 but the refused set); each change of what
an exec runs wrote its inventory again under the same exec id and the next version, an
update to an equal inventory kept the version, the edit that kept the function (other
block size) wrote none: exec 1's inventories {ge_a: 2} v1, {ge_a: 1, ge_b: 1} v2, {ge_b: 2}
v3, the edits' inventories carrying the corr of the runtime call that made them; exec 2's
{ge_a: 1}, {ge_drv: 1} (corr: the cuGraphExecKernelNodeSetParams_v2 record), {ge_drv2: 1};
exec 5's {ge_a} v1, {ge_b} v2, {ge_b} v2; ge_drv's GRAPH_KERNEL carries the node's new
block (64). Each launch is labelled with what IT ran, before and after each edit and
update: GRAPH_LAUNCH versions, `dump --chrome` graph kernel names, `dump --csv`
graph_version/graph_kernels of the GPU and call rows, `report --format json` one graphs
row per (exec, version) with its launches and kernels. At exit the tracer still keeps
what it kept for the three execs never destroyed (TRACER graph_kept > 0).

CHURN mode (10,000 execs of 64 kernel nodes, each edited, destroyed by the runtime or
the driver), recorded twice: with a 64 MiB buffer (no drops), every instantiation a new
exec id (the simulator reuses the freed addresses), the 10,000 destroys recorded,
nothing kept at exit (graph_kept 0); with the default buffer (whose pages a big one
would add), the program's resident memory grown by less than 8 MB from the 1,000th
exec to the last
(the kept nodes alone, never freed, would be 10,000 x 64 x 40 B = 25 MB on a driver that
does not reuse addresses).

usage: test_graphedit.py SIM_DIR CUTRACE LIBTRACE GRAPHEDIT
"""
import csv
import io
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cttest import check, finish, require_built, scratch_dir  # noqa: E402
from harness import chrome_events, record_one_file  # noqa: E402
from rawdump import kernel_identifier, raw_records  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import perfetto_read  # noqa: E402
from test_perfetto import compare  # noqa: E402

sim_dir, cutrace, libtrace, program = sys.argv[1:5]
require_built(os.path.join(sim_dir, "libcuda.so.1"), libtrace, cutrace, program)
tmp = scratch_dir("cutrace-graphedit-")
API_DRIVER = 0x10
ITERS = 3
CHURN = 10000
CALLS = {"cudaGraphExecKernelNodeSetParams": 3, "cuGraphExecKernelNodeSetParams_v2": 1,
         "cuGraphExecNodeSetParams": 1, "cudaGraphExecMemsetNodeSetParams": 2,
         "cudaGraphExecMemcpyNodeSetParams1D": 1, "cuGraphExecMemsetNodeSetParams": 1,
         "cuGraphExecChildGraphNodeSetParams": 1, "cudaGraphExecChildGraphNodeSetParams": 1,
         "cudaGraphExecUpdate": 2,
         "cudaGraphExecDestroy": 2, "cuGraphExecDestroy": 1}
A2, A1B1, B2, A1, B1 = ({"ge_a": 2}, {"ge_a": 1, "ge_b": 1}, {"ge_b": 2}, {"ge_a": 1},
                        {"ge_b": 1})
# what each exec's launches ran, in launch order: (version, kernels) per launch
RAN = {1: [(1, A2)] * ITERS + [(2, A1B1)] * ITERS + [(3, B2)] * 2 * ITERS,
       2: [(1, A1)] * ITERS + [(2, {"ge_drv": 1})] * ITERS + [(3, {"ge_drv2": 1})] * ITERS,
       3: [(1, A1)] * ITERS, 4: [(1, A1)] * ITERS + [(2, B1)] * ITERS + [(3, A1)] * ITERS,
       5: [(1, A1)] * ITERS + [(2, B1)] * 2 * ITERS, 6: [(1, A2)]}


def kernels_of(text):
    """'mangled:count;...' (report and dump --csv) -> {identifier: count}."""
    out = {}
    for part in filter(None, text.split(";")):
        name, _, count = part.rpartition(":")
        out[kernel_identifier(name)] = int(count)
    return out


def by_exec(items):
    """[(exec, start, label)] -> {exec: [label, ...] in start order}, exec ids renumbered
    1, 2, ... in order of first appearance of the sorted ids."""
    out = {}
    for e, _, label in sorted(items, key=lambda i: (i[0], i[1])):
        out.setdefault(e, []).append(label)
    return {i + 1: out[e] for i, e in enumerate(sorted(out))}
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
            current = {"corr": r["corr"], "kernels": r["kernels"], "names": {}, "blocks": {},
                       "version": r["version"]}
            inventories.setdefault(r["exec"], []).append(current)
        elif r["kind"] == "graph_kernel" and current is not None:
            k = kernel_identifier(names.get(r["name"], ""))
            check(r["version"] == current["version"] and r["exec"] in inventories,
                  f"graph_kernel {r} after graph version {current['version']}")
            current["names"][k] = r["count"]
            current["blocks"][k] = r["block_threads"]
    execs = sorted(inventories)
    edits = [a["corr"] for a in apis if names.get(a["name"]) == "cudaGraphExecKernelNodeSetParams"]
    if check(len(execs) == 6, f"inventories of {len(execs)} execs, want 6: {inventories}"):
        one, two, three, four, five, six = (inventories[e] for e in execs)
        got = [(i["names"], api_name.get(i["corr"], i["corr"])) for i in three]
        check(got == [({"ge_a": 1}, "cudaGraphInstantiate")],
              f"exec 3 (set and copy edits: no new inventory) {got}")
        got = [(i["names"], i["version"], api_name.get(i["corr"], i["corr"])) for i in four]
        check(got == [(A1, 1, "cudaGraphInstantiate"),
                      (B1, 2, "cuGraphExecChildGraphNodeSetParams"),
                      (A1, 3, "cudaGraphExecChildGraphNodeSetParams")],
              f"exec 4 (its child graph node given a graph of ge_b, then of ge_a) {got}")
        got = [(i["names"], i["version"]) for i in one]
        check(got == [(A2, 1), (A1B1, 2), (B2, 3)], f"exec 1 inventories {got}")
        corrs = [i["corr"] for i in one]
        check(len(edits) == 3 and corrs[1:] == edits[:2] and
              api_name.get(corrs[0]) == "cudaGraphInstantiate",
              f"exec 1 inventories' corrs {corrs}: the instantiation, then the runtime edits "
              f"{edits[:2]} (the third kept the function)")
        got = [(i["names"], i["version"]) for i in two]
        check(got == [(A1, 1), ({"ge_drv": 1}, 2), ({"ge_drv2": 1}, 3)],
              f"exec 2 inventories {got}")
        corrs = [api_name.get(i["corr"], i["corr"]) for i in two]
        check(corrs == ["cudaGraphInstantiate", "cuGraphExecKernelNodeSetParams_v2",
                        "cuGraphExecNodeSetParams"], f"exec 2 inventories' calls {corrs}")
        blocks = [i["blocks"] for i in two]
        check(blocks[1:] == [{"ge_drv": 64}, {"ge_drv2": 128}], f"exec 2 blocks {blocks}")
        got = [(i["names"], i["version"], api_name.get(i["corr"])) for i in five + six]
        check(got == [(A1, 1, "cudaGraphInstantiate"), (B1, 2, "cudaGraphExecUpdate"),
                      (B1, 2, "cudaGraphExecUpdate"), (A2, 1, "cudaGraphInstantiate")],
              f"exec 5 (updated, then to an equal graph) and 6 inventories {got}")
        check(all(i["kernels"] == sum(i["names"].values()) for i in one + two),
              f"GRAPH kernels counts {[i['kernels'] for i in one + two]}")
    # each launch's version, from its GRAPH_LAUNCH record
    begin = {a["corr"]: a["begin_ns"] for a in apis}
    launched = by_exec([(r["exec"], begin.get(r["corr"], 0), r["version"])
                        for r in recs if r["kind"] == "graph_launch"])
    want = {e: [v for v, _ in ran] for e, ran in RAN.items()}
    check(launched == want, f"GRAPH_LAUNCH versions per exec {launched}, want {want}")
    kept = [r["amount"] for r in recs if r["kind"] == "tracer" and names.get(r["what"]) == "graph_kept"]
    check(len(kept) == 1 and kept[0] > 0, f"graph_kept at exit (3 execs never destroyed): {kept}")

    # dump --chrome: each graph launch's kernel names are what it ran
    events = chrome_events(cutrace, path, os.path.join(tmp, "graphedit.json"), "graphedit")
    if events is not None:
        slices = [(e["args"]["graph exec"], e["ts"],
                   {kernel_identifier(k): n for k, n in e["args"].get("graph kernel names", {}).items()})
                  for e in events if e.get("ph") == "X" and "graph exec" in e.get("args", {})]
        got = by_exec(slices)
        want = {e: [k for _, k in ran] for e, ran in RAN.items()}
        check(got == want, f"dump --chrome graph kernel names per exec {got}, want {want}")
        # dump --perfetto: the same slices and args (tools/test_perfetto.py's comparison)
        pf = os.path.join(tmp, "graphedit.pftrace")
        p = subprocess.run([cutrace, "dump", "--perfetto", "-o", pf, path], capture_output=True,
                           text=True, timeout=60)
        with open(os.path.join(tmp, "graphedit.json")) as fh:
            doc = json.load(fh)
        diffs = compare(doc, perfetto_read.read(pf)) if p.returncode == 0 else [p.stderr]
        check(not diffs, f"dump --perfetto holds the --chrome events: {diffs[:3]}")

    # dump --csv: graph_version and graph_kernels of the GPU rows and the launch calls' rows
    p = subprocess.run([cutrace, "dump", "--csv", path], capture_output=True, text=True,
                       timeout=60)
    rows = list(csv.DictReader(io.StringIO(p.stdout))) if p.returncode == 0 else []
    check(p.returncode == 0 and rows, f"dump --csv: status {p.returncode}: {p.stderr}")
    for row_kind in ("gpu", "call"):
        got = by_exec([(int(r["graph_exec"]), int(r["start_ns"]),
                        (int(r["graph_version"]), kernels_of(r["graph_kernels"])))
                       for r in rows if r["row"] == row_kind and r["graph_exec"]
                       and (row_kind == "gpu" or r["name"] == "cudaGraphLaunch")])
        check(got == RAN, f"dump --csv {row_kind} rows (graph_version, graph_kernels) per "
              f"exec {got}, want {RAN}")

    # report: one graphs row per exec version, its launches and kernels
    p = subprocess.run([cutrace, "report", "--format", "json", path], capture_output=True,
                       text=True, timeout=60)
    rep = json.loads(p.stdout) if p.returncode == 0 else {}
    check(p.returncode == 0, f"report: status {p.returncode}: {p.stderr}")
    want = {}
    for e, ran in RAN.items():
        for v, k in ran:
            n, _ = want.get((e, v), (0, k))
            want[(e, v)] = (n + 1, k)
    ids = {e: i + 1 for i, e in enumerate(sorted({g["exec"] for g in rep.get("graphs", [])}))}
    got = {(ids[g["exec"]], g["version"]): (g["launches"],
                                            {kernel_identifier(k["name"]): k["count"]
                                             for k in g.get("top_kernels", [])})
           for g in rep.get("graphs", [])}
    check(got == want, f"report graphs rows (exec, version) -> (launches, kernels) {got}, "
          f"want {want}")
    p = subprocess.run([cutrace, "report", "--tables", "graphs", path], capture_output=True,
                       text=True, timeout=60)
    rows = [line.split() for line in p.stdout.splitlines() if "ge_" in line]
    execs = [r[r.index(next(w for w in r if w.startswith("ge_"))) - 2:][:2] for r in rows]
    check(p.returncode == 0 and sum(1 for e in execs if e[1] in ("v2", "v3")) == 7,
          f"report text: 7 rows of later versions ('1 v2' ...): {execs}")
    api_rows = {a["name"]: a for a in rep.get("apis", [])}
    for name, want_calls in CALLS.items():
        a = api_rows.get(name)
        check(a is not None and a["calls"] == want_calls and a["errors"] == FAILED.get(name, 0),
              f"report apis row of {name}: {a}")

# CHURN: destroyed execs leave nothing kept; every instantiation a new exec id
def churn(name, env_extra):
    """Records the CHURN run; returns (its rss growth in kB, the trace's path) or None."""
    env = dict(os.environ, LD_LIBRARY_PATH=sim_dir, CUTRACE_PRELOAD=libtrace, **env_extra)
    for k in ("LD_PRELOAD", "CUTRACE_OUTPUT", "CUTRACE_CAPTURE", "CUTRACE_DELAY",
              "CUTRACE_DURATION"):
        env.pop(k, None)
    data = os.path.join(tmp, name)
    p = subprocess.run([cutrace, "record", "-q", "-o", data, "--", program, str(ITERS),
                        str(CHURN)], env=env, capture_output=True, text=True, timeout=120)
    m = re.search(rf"graphedit churn: {CHURN} execs, rss growth (-?\d+) kB", p.stdout)
    files = sorted(os.listdir(data)) if os.path.isdir(data) else []
    if check(p.returncode == 0 and m and len(files) == 1,
             f"{name}: record status {p.returncode}, {p.stdout!r}, {p.stderr[-400:]!r}, {files}"):
        return int(m.group(1)), os.path.join(data, files[0])
    return None


# the resident memory, with the default buffer (its pages touched once: 1 MiB)
got = churn("churn", {})
if got:
    check(got[0] < 8192, f"churn: resident memory grew {got[0]} kB (limit 8192)")
# the records, all of them: a 64 MiB buffer (the loop writes about 100,000 records faster
# than a loaded writer drains 1 MiB: drops seen under the full suite)
got = churn("churn_all", {"CUTRACE_BUFFER_KB": "65536"})
if got:
    recs, names = raw_records(cutrace, got[1])
    drops = [r for r in recs if r["kind"] == "drop"]
    check(not drops, f"churn: records dropped {drops[:3]} (the counts below cannot hold)")
    apis = [r for r in recs if r["kind"] == "api"]
    destroys = {n: sum(1 for a in apis if names.get(a["name"]) == n and a["result"] == 0)
                for n in ("cudaGraphExecDestroy", "cuGraphExecDestroy")}
    check(destroys == {"cudaGraphExecDestroy": CHURN // 2, "cuGraphExecDestroy": CHURN // 2},
          f"churn: destroy calls {destroys}")
    ids = {r["exec"] for r in recs if r["kind"] == "graph"}
    check(len(ids) == CHURN and 0 not in ids, f"churn: {len(ids)} exec ids, want {CHURN}")
    kept = [r["amount"] for r in recs if r["kind"] == "tracer" and names.get(r["what"]) == "graph_kept"]
    check(kept == [0], f"churn: bytes kept at exit for destroyed execs {kept}, want [0]")
sys.exit(finish())
