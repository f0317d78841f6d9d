#!/usr/bin/env python3
"""cutrace report and dump on graph churn (`cutrace-gentrace --churn FILE graphs N`): one
exec updated N times to graphs that alternate their second kernel, so that each update is
a new inventory version (format 1.13), launched once after each update (a 5 us graph
activity). Version v runs _Z3fixv x2 and _Z4odd_v (odd v) or _Z5even_v (even v) x1.

Asserted, at N = SMALL (under the graphs table's limit of ROWS rows): one row per version
and no folded row. At N = BIG and 4 BIG (past it): the first ROWS versions have a row
each, with their launch and kernels (sampled); the rest are one folded row of exec 1,
versions ROWS + 1 to N, N - ROWS inventories and launches, their GPU time; the text table
says how many were not kept; dump --chrome labels every graph activity with its own
version and kernels (the exporter's cache of recent inventories). Memory: the peak
resident memory of `report` and of `dump --chrome` at 4 BIG versions is less than
MAX_RATIO times that at BIG (a row per version, about 1 KiB, made it 3-4 times).

usage: test_graphs_churn.py CUTRACE GENTRACE"""
import json
import os
import subprocess
import sys

import tooltest
from tooltest import check, finish, scratch

cutrace, gentrace = sys.argv[1], sys.argv[2]
ROWS, SMALL, BIG = 4096, 1000, 20000
MAX_RATIO = 1.3


def kernels_of(v):
    return [("_Z3fixv", 2), ("_Z4odd_v" if v % 2 else "_Z5even_v", 1)]


def peak_kb(argv, out_path):
    """Runs argv with stdout to out_path: (exit status, peak resident memory in kB, stderr).
    /usr/bin/time measures it when present, else wait4's rusage, which also counts the
    pages of this Python process at the fork: the runs are made before any output is
    read, while it is small."""
    timer = "/usr/bin/time"
    use_time = os.access(timer, os.X_OK)
    with open(out_path, "wb") as o:
        p = subprocess.Popen([timer, "-f", "@@ %M", *argv] if use_time else argv, stdout=o,
                             stderr=subprocess.PIPE)
        err = p.stderr.read().decode()
        _, status, usage = os.wait4(p.pid, 0)
    kb = usage.ru_maxrss
    if use_time and "@@ " in err:
        err, _, tail = err.rpartition("@@ ")
        kb = int(tail.split()[0])
    return os.waitstatus_to_exitcode(status), kb, err


def report_json(path, out):
    """`cutrace report --format json --tables graphs path` into out: (status, peak kB)."""
    rc, kb, err = peak_kb([cutrace, "report", "--format", "json", "--tables", "graphs", path], out)
    check(rc == 0, f"report {path}: exit {rc}: {err!r}")
    return rc, kb


def load(path, rc):
    return json.load(open(path)) if rc == 0 else {}


def check_rows(doc, n, label):
    rows = doc.get("graphs", [])
    kept = {r["version"]: r for r in rows if not r["folded_row"]}
    folded = [r for r in rows if r["folded_row"]]
    want_kept = min(n, ROWS)
    check(len(kept) == want_kept and all(r["exec"] == 1 and r["launches"] == 1 and r["folded"] == 0
                                         for r in kept.values()),
          f"{label}: {len(kept)} rows of exec 1 with one launch each (want {want_kept})")
    for v in (1, 2, want_kept // 2 + 1, want_kept):
        top = [(k["mangled"], k["count"]) for k in kept.get(v, {}).get("top_kernels", [])]
        check(top == kernels_of(v), f"{label}: version {v} top kernels {top}, want {kernels_of(v)}")
    if n <= ROWS:
        check(not folded, f"{label}: no folded row under the limit ({folded})")
        return
    f = folded[0] if len(folded) == 1 else {}
    got = {k: f.get(k) for k in ("exec", "version", "last_version", "folded", "launches", "gpu_ns",
                                 "inventory", "top_kernels")}
    want = {"exec": 1, "version": ROWS + 1, "last_version": n, "folded": n - ROWS,
            "launches": n - ROWS, "gpu_ns": 5000 * (n - ROWS), "inventory": False,
            "top_kernels": []}
    check(len(folded) == 1 and got == want, f"{label}: folded row {got}, want {want}")


with scratch("ct-graph-churn-") as d:
    paths, out = {}, {}
    for n in (SMALL, BIG, 4 * BIG):
        paths[n] = os.path.join(d, f"churn{n}.ctr")
        subprocess.run([gentrace, "--churn", paths[n], "graphs", str(n)], check=True)
    # every run measured first, before this process reads (and holds) any output
    rss, status = {}, {}
    for n in (SMALL, BIG, 4 * BIG):
        out[n] = os.path.join(d, f"report{n}.json")
        status[n], rss["report", n] = report_json(paths[n], out[n])
    for n in (BIG, 4 * BIG):
        out["chrome", n] = os.path.join(d, f"chrome{n}.json")
        rc, rss["chrome", n], err = peak_kb([cutrace, "dump", "--chrome", paths[n]], out["chrome", n])
        check(rc == 0, f"dump --chrome {n}: exit {rc}: {err!r}")
        status["chrome", n] = rc

    check_rows(load(out[SMALL], status[SMALL]), SMALL, f"{SMALL} versions")
    check_rows(load(out[BIG], status[BIG]), BIG, f"{BIG} versions")
    check_rows(load(out[4 * BIG], status[4 * BIG]), 4 * BIG, f"{4 * BIG} versions")

    rc, text, err = tooltest.run(cutrace, "report", "--tables", "graphs", "--limit", "2", paths[BIG])
    want = f"1 v{ROWS + 1}-{BIG}  ({BIG - ROWS} more inventories not kept: the table keeps {ROWS} rows)"
    check(rc == 0 and want in text, f"text table says {want!r}: {text!r} {err!r}")

    doc = load(out["chrome", BIG], status["chrome", BIG])
    graph_events = [e["args"] for e in doc.get("traceEvents", []) if e.get("cat") == "kernel"]
    wrong = [a for a in graph_events
             if a.get("graph inventory version") != a["correlation"] // 2
             or list(a.get("graph kernel names", {}).items()) !=
             [("fix()", 2), ("odd_()" if (a["correlation"] // 2) % 2 else "even_()", 1)]]
    check(len(graph_events) == BIG and not wrong,
          f"dump --chrome: {len(graph_events)} graph activities (want {BIG}), {len(wrong)} labelled "
          f"with another version's inventory, first {wrong[:1]}")

    print(f"peak RSS at {BIG} and {4 * BIG} versions: report {rss['report', BIG]} and "
          f"{rss['report', 4 * BIG]} kB, dump --chrome {rss['chrome', BIG]} and "
          f"{rss['chrome', 4 * BIG]} kB")
    for what in ("report", "chrome"):
        a, b = rss[what, BIG], rss[what, 4 * BIG]
        check(a > 0 and b < MAX_RATIO * a,
              f"{what}: peak RSS {b} kB at {4 * BIG} versions, {b / max(a, 1):.2f} x the {a} kB at "
              f"{BIG} (want < {MAX_RATIO} x: memory does not grow with the versions)")
finish()
