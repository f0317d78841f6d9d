#!/usr/bin/env python3
"""Several ranks read together, on a planted job (ranks_scenario.py: ranks 0, 1, 2, a
fork child of rank 0, the launcher without a rank): dump --chrome gives each file's GPU
a process row of its own (pid 10^9 + file * 1000 + device, "rank N GPU 0 (H100)",
sorted right under its CPU process) with its kernels, flows, gpu_user_annotation, idle
tracks and queue counters, deviceProperties per process; one file stays Kineto-like;
gaps compares the ranks (exact busy, idle by cause, comm, the most idle rank and the
one the others waited for); report --per-process CSV, diff, steps and info name the
ranks.

usage: test_ranks_tools.py CUTRACE
"""
import collections
import csv
import io
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ranks_scenario as rs  # noqa: E402
import tooltest  # noqa: E402
from chrome_check import trace_event_format_problem  # noqa: E402
from tooltest import check, finish, scratch_dir  # noqa: E402

cutrace = sys.argv[1]
tmp = scratch_dir("cutrace-ranks-tools-")
job = os.path.join(tmp, "job")
names = rs.write(job)
path = {n: os.path.join(job, n) for n in names}
R0, R0C, R1, R2 = (rs.rank_file(0, 100), rs.rank_file(0, 105), rs.rank_file(1, 101),
                   rs.rank_file(2, 102))
check(names == ["node0.99.ctr", R0, R0C, R1, R2], f"planted files {names}")
US = 1000
ROW = 10**9
rows = {R0: ROW + 1000, R0C: ROW + 2000, R1: ROW + 3000, R2: ROW + 4000}  # file index * 1000
cpu = {R0: 100, R0C: 105, R1: 101, R2: 102}


def run(*args):
    return tooltest.run(cutrace, *args)


def run_json(*args):
    rc, out, err = run(*args)
    try:
        return rc, json.loads(out), err
    except ValueError:
        return rc, None, err


# ---- dump --chrome over the job: one process row per file and device ----
rc, doc, err = run_json("dump", "--chrome", "--queues", job)
check(rc == 0 and doc is not None, f"chrome: {rc} {err}")
doc = doc or {"traceEvents": [], "deviceProperties": []}
ev = doc["traceEvents"]
plain = dict(doc, traceEvents=[e for e in ev if e["ph"] != "C"])  # the checker knows no counters
check(not trace_event_format_problem(plain), f"chrome: {trace_event_format_problem(plain)}")
tooltest.check_nesting(doc, "chrome")
pnames = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
want = {rows[R0]: "rank 0 GPU 0 (H100)", rows[R0C]: "rank 0 GPU 0 (H100)",
        rows[R1]: "rank 1 GPU 0 (H100)", rows[R2]: "rank 2 GPU 0 (H100)"}
check({p: n for p, n in pnames.items() if p >= ROW} == want, f"chrome: GPU rows {pnames}")
order = {e["pid"]: e["args"]["sort_index"] for e in ev
         if e["ph"] == "M" and e["name"] == "process_sort_index"}
check(order == {99: 1000, 100: 2000, rows[R0]: 2001, 105: 3000, rows[R0C]: 3001, 101: 4000,
                rows[R1]: 4001, 102: 5000, rows[R2]: 5001}, f"chrome: row order {order}")
by_cat = collections.Counter((e["cat"], e["pid"], e["tid"]) for e in ev if e["ph"] == "X")
for f in (R0, R1, R2):
    got = {k: by_cat[(k, rows[f], s)] for k in ("kernel", "gpu_user_annotation") for s in (1, 2)}
    check(set(got.values()) == {rs.ITERS}, f"chrome {f}: kernels and annotations per stream {got}")
check(by_cat[("kernel", rows[R0C], 1)] == 1, "chrome: the fork child's kernel on its own row")
gpu_cats = {"kernel", "gpu_user_annotation", "gap"}
stray = [e for e in ev if e["ph"] == "X" and e["cat"] in gpu_cats and e["pid"] < ROW]
check(not stray, f"chrome: GPU slices on CPU or device-index rows {stray[:2]}")
tnames = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev
          if e["ph"] == "M" and e["name"] == "thread_name"}
check(all(tnames.get((rows[f], s)) == f"stream {s}" for f in (R0, R1, R2) for s in (1, 2)),
      f"chrome: stream tracks named plainly {tnames}")
idle = {k for k, n in tnames.items() if n == "GPU idle"}
check(idle == {(rows[f], 1500000000) for f in (R0, R1, R2)}, f"chrome: device idle tracks {idle}")
kernels = {(e["pid"], e["args"]["correlation"]): e for e in ev if e["ph"] == "X" and e["cat"] == "kernel"}
flows = collections.defaultdict(dict)
for e in ev:
    if e["ph"] in ("s", "f"):
        flows[e["id"]][e["ph"]] = e
bad = []
for idx, f in enumerate(names):
    if f not in rows:
        continue
    for (pid, corr), k in kernels.items():
        if pid != rows[f]:
            continue
        pair = flows.get(corr | (idx << 40), {})
        if (pair.get("f", {}).get("pid"), pair.get("f", {}).get("tid"), pair.get("f", {}).get("ts")) != \
                (k["pid"], k["tid"], k["ts"]) or pair.get("s", {}).get("pid") != cpu[f]:
            bad.append((f, corr, pair))
check(not bad and len(kernels) == 3 * 2 * rs.ITERS + 1, f"chrome: flows from each call to its row {bad[:2]}")
counters = {(e["pid"], e["name"]) for e in ev if e["ph"] == "C"}
check(counters == {(rows[f], f"stream {s} queue") for f in (R0, R1, R2) for s in (1, 2)} |
      {(rows[R0C], "stream 1 queue")}, f"chrome: queue counters on the rows {counters}")
props = [(d["id"], d.get("pid"), d.get("process"), d.get("rank"), d.get("pciBusId"))
         for d in doc["deviceProperties"]]
check(props == [(0, rows[R0], 100, 0, "0000:18:00.0"), (0, rows[R0C], 105, 0, "0000:18:00.0"),
                (0, rows[R1], 101, 1, "0000:19:00.0"), (0, rows[R2], 102, 2, "0000:1a:00.0")],
      f"chrome: deviceProperties {props}")
check(doc.get("distributedInfo") == {"ranks": [0, 1, 2], "world_size": 3},
      f"chrome: distributedInfo {doc.get('distributedInfo')}")

# one file: Kineto's layout (pid = device index), unchanged
rc, one, err = run_json("dump", "--chrome", path[R1])
ev1 = (one or {}).get("traceEvents", [])
gpu_pids = {e["pid"] for e in ev1 if e.get("cat") in gpu_cats}
pn1 = {e["pid"]: e["args"]["name"] for e in ev1 if e["ph"] == "M" and e["name"] == "process_name"}
check(rc == 0 and gpu_pids == {0} and pn1.get(0) == "GPU 0" and
      [sorted(d) for d in one["deviceProperties"]] ==
      [sorted(["id", "name", "totalGlobalMem", "computeMajor", "computeMinor", "numSms", "pciBusId"])],
      f"chrome one file: pid = device {gpu_pids} {pn1} {one and one['deviceProperties']}")

# --split: rank 0's document holds two files (its own rows), rank 1's one (pid = device)
split = os.path.join(tmp, "split")
rc, out, err = run("dump", "--chrome", "--split", split, job)
docs = {}
for r in range(3):
    try:
        with open(os.path.join(split, f"rank-{r}.json")) as fh:
            docs[r] = json.load(fh)
    except (OSError, ValueError):
        docs[r] = {"traceEvents": []}
gp = {r: sorted({e["pid"] for e in d["traceEvents"] if e.get("cat") == "kernel"}) for r, d in docs.items()}
check(rc == 0 and gp == {0: [ROW, ROW + 1000], 1: [0], 2: [0]}, f"split: GPU rows {gp} {err}")

# ---- gaps: the ranks side by side ----
rc, g, err = run_json("gaps", "--format", "json", job)
g = g or {}
causes = {c: 0 for c in ("host_wait_ns", "launch_overhead_ns", "sync_ns", "alloc_ns",
                         "other_stream_ns", "tracer_ns", "other_ns", "external_wait_ns")}
want = [{"rank": 0, "files": 2, "devices": 2, "observed_ns": 4000 * US, "busy_ns": 3700 * US,
         "idle_ns": 300 * US, "idle": dict(causes, host_wait_ns=300 * US), "comm_ns": 2400 * US,
         "exposed_comm_ns": 2400 * US},
        {"rank": 1, "files": 1, "devices": 1, "observed_ns": 3700 * US, "busy_ns": 2800 * US,
         "idle_ns": 900 * US, "idle": dict(causes, host_wait_ns=900 * US), "comm_ns": 1600 * US,
         "exposed_comm_ns": 1600 * US},
        {"rank": 2, "files": 1, "devices": 1, "observed_ns": 3900 * US, "busy_ns": 3600 * US,
         "idle_ns": 300 * US, "idle": dict(causes, host_wait_ns=300 * US), "comm_ns": 400 * US,
         "exposed_comm_ns": 400 * US}]
check(rc == 0 and g.get("ranks") == want, f"gaps json ranks {g.get('ranks')}")
check((g.get("most_idle_rank"), g.get("waited_for_rank")) == (1, 2),
      f"gaps json: most idle {g.get('most_idle_rank')}, waited for {g.get('waited_for_rank')}")
rc, text, err = run("gaps", job)
table = [line.split() for line in text.splitlines()]
check(["Per", "rank", "(3", "ranks;", "GPU", "time", "summed", "over", "each", "rank's", "devices)"]
      in table, f"gaps text: per-rank title\n{text[:1500]}")
check(["1", "1", "1", "75.7%", "900.000", "us", "900.000", "us", "0", "ns", "0", "ns", "0", "ns",
       "0", "ns", "0", "ns", "0", "ns", "0", "ns", "1.600", "ms", "1.600", "ms"] in table and
      ["0", "2", "2", "92.5%", "300.000", "us", "300.000", "us", "0", "ns", "0", "ns", "0", "ns",
       "0", "ns", "0", "ns", "0", "ns", "0", "ns", "2.400", "ms", "2.400", "ms"] in table,
      f"gaps text: rank rows\n{text[:1500]}")
check("most idle: rank 1 (busy 75.7%, idle 900.000 us, most of it host_wait 900.000 us)\n" in text
      and "waited for: rank 2 spent the least time in communication kernels (400.000 us, "
      "2.400 ms on rank 0)" in text, f"gaps text: named ranks\n{text[:2000]}")
rc, g1, err = run_json("gaps", "--format", "json", path[R0], path[R0C], path[names[0]])
check(rc == 0 and g1 and g1["ranks"] == [] and g1["most_idle_rank"] is None and
      g1["waited_for_rank"] is None, f"gaps json, one rank: no comparison {g1 and g1['ranks']}")
rc, text1, err = run("gaps", path[R0], path[R0C])
check(rc == 0 and "Per rank" not in text1, "gaps text, one rank: no per-rank table")

# ---- report --per-process: pid and rank columns in CSV ----
rc, out, err = run("report", "--per-process", "--format", "csv", "--tables", "kernels", job)
recs = list(csv.DictReader(io.StringIO(out)))
got = sorted({(r["pid"], r["rank"]) for r in recs if r["table"] == "kernels"})
check(rc == 0 and out.startswith("table,pid,rank,name,") and
      got == [("100", "0"), ("101", "1"), ("102", "2"), ("105", "0")],
      f"report csv: pid and rank {got} {out[:200]}")
rc, out, err = run("report", "--per-process", "--format", "csv", "--by", "callsite", path[R2])
check(out.startswith("table,pid,rank,function,"), f"report --by callsite csv header: {out[:120]}")

# ---- diff: each side's ranks ----
rc, out, err = run("diff", path[R0], path[R2])
check(out.startswith(f"cutrace diff: BEFORE {path[R0]} (1 file: rank 0 (pid 100 on node0)) -> "
                     f"AFTER {path[R2]} (1 file: rank 2 (pid 102 on node1))\n"), f"diff heading: {out[:300]}")
rc, out, err = run("diff", job, path[R1])
check(out.startswith(f"cutrace diff: BEFORE {job} (5 files, ranks 0,1,2) -> AFTER {path[R1]} "
                     "(1 file: rank 1 (pid 101 on node0))\n"), f"diff heading, a directory: {out[:300]}")
rc, d, err = run_json("diff", "--format", "json", job, path[R1])
ins = [(i.get("pid"), i.get("host"), i.get("rank"), i.get("world_size"))
       for i in (d or {}).get("before", {}).get("inputs", [])]
check(ins == [(99, "node0", None, None), (100, "node0", 0, 3), (105, "node0", 0, 3),
              (101, "node0", 1, 3), (102, "node1", 2, 3)], f"diff json inputs {ins}")

# ---- steps and info: "rank N (pid P on HOST)" ----
rc, out, err = run("steps", "--summary", job)
heads = [line for line in out.splitlines() if line.startswith("== ")]
check(heads == [f"== {path[R0]}: rank 0 (pid 100 on node0) ==", f"== {path[R1]}: rank 1 (pid 101 on node0) ==",
                f"== {path[R2]}: rank 2 (pid 102 on node1) =="], f"steps headings {heads}")
rc, out, err = run("steps", "--format", "csv", job)
recs = list(csv.DictReader(io.StringIO(out)))
got = collections.Counter((r["pid"], r["rank"]) for r in recs)
check(got == {("100", "0"): rs.ITERS, ("101", "1"): rs.ITERS, ("102", "2"): rs.ITERS},
      f"steps csv rank column {got}")
rc, s, err = run_json("steps", "--format", "json", job)
got = [(p["pid"], p["host"], p["rank"], p["world_size"]) for p in (s or {}).get("processes", [])]
check(got == [(100, "node0", 0, 3), (101, "node0", 1, 3), (102, "node1", 2, 3)], f"steps json {got}")
rc, out, err = run("info", job)
heads = [line for line in out.splitlines() if line.startswith(job) and "device" not in line]
check(heads == [f"{path[names[0]]}:", f"{path[R0]}: rank 0 (pid 100 on node0)",
                f"{path[R0C]}: rank 0 (pid 105 on node0)", f"{path[R1]}: rank 1 (pid 101 on node0)",
                f"{path[R2]}: rank 2 (pid 102 on node1)"], f"info headings {heads}")

sys.exit(finish())
