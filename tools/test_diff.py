#!/usr/bin/env python3
"""cutrace diff on planted traces of known content (diff_scenario.py): the exact rows,
statuses, deltas and order of the kernel, memory, GEMM, API and range tables, the
headline, --threshold, --limit, --per-range across runs of different lengths, a DIR of
two processes, text/CSV/JSON, bad options, and damaged, empty, foreign and missing inputs.

usage: test_diff.py CUTRACE GENTRACE
"""
import csv
import io
import json
import os
import subprocess
import sys

cutrace, gentrace = sys.argv[1], sys.argv[2]
import diff_scenario as scen  # noqa: E402
import tooltest  # noqa: E402
from tooltest import check, finish, scratch  # noqa: E402

US = 1000


def run(*args):
    return tooltest.run(cutrace, "diff", *args)


def diff_json(*args):
    rc, out, err = run("--format", "json", *args)
    try:
        return rc, json.loads(out), err
    except ValueError:
        return rc, None, err


def status_of(b, a, per_b, per_a, thr):
    """The documented rule (docs/diff.md), from raw [calls, total] of each side."""
    if not b[0]:
        return "added"
    if not a[0]:
        return "removed"
    avg_b, avg_a = b[1] / b[0], a[1] / a[0]
    if b[0] * per_a == a[0] * per_b and abs(avg_a - avg_b) <= thr / 100 * avg_b:
        return "same"
    tb, ta = b[1] / per_b, a[1] / per_a
    return "slower" if ta > tb or (ta == tb and avg_a > avg_b) else "faster"


def want_rows(eb, ea, table, per_b=1, per_a=1, thr=5.0):
    """[(name, status, calls_before, calls_after, total_before, total_after, delta)] in
    the documented order: |delta| descending, then name."""
    rows = []
    for name in set(eb[table]) | set(ea[table]):
        b, a = eb[table].get(name, [0, 0, 0]), ea[table].get(name, [0, 0, 0])
        delta = a[1] / per_a - b[1] / per_b
        rows.append((name, status_of(b, a, per_b, per_a, thr), b[0] / per_b, a[0] / per_a,
                     round(b[1] / per_b), round(a[1] / per_a), round(delta)))
    rows.sort(key=lambda r: (-abs(r[6]), r[0]))
    return rows


def got_rows(doc, table):
    return [(r["name"], r["status"], r["calls_before"], r["calls_after"], r["total_before_ns"],
             r["total_after_ns"], r["delta_ns"]) for r in doc[table]]


with scratch("cutrace-diff-") as d:
    before, after, after20 = (os.path.join(d, n + ".ctr") for n in ("before", "after", "after20"))
    pb = scen.write(before, "before", 10)
    pa = scen.write(after, "after", 10)
    pa20 = scen.write(after20, "after", 20, pid=200)
    eb, hb = scen.expected(pb)
    ea, ha = scen.expected(pa)

    # JSON: every table's rows, statuses, deltas and order, exactly.
    rc, doc, err = diff_json(before, after)
    check(rc == 0 and doc and not err, f"json exit {rc}: {err!r}")
    for table in ("kernels", "memcpy", "gemms"):
        check(got_rows(doc, table) == want_rows(eb, ea, table),
              f"{table}:\n  got  {got_rows(doc, table)}\n  want {want_rows(eb, ea, table)}")
    # the planted answers, spelled out (independent of the oracle above)
    kern = {r["name"]: (r["status"], r["delta_ns"]) for r in doc["kernels"]}
    check(kern == {"cublasSgemm_v2": ("slower", 500 * US), "k_fast(float*)": ("faster", -150 * US),
                   "k_gone()": ("removed", -100 * US), "k_more(float*)": ("slower", 100 * US),
                   "k_slow(float*)": ("slower", 100 * US), "k_new()": ("added", 70 * US),
                   "k_noise(float*)": ("same", 30 * US), "k_same(float*)": ("same", 0)},
          f"planted kernel statuses: {kern}")
    check([r["name"] for r in doc["kernels"]] ==
          ["cublasSgemm_v2", "k_fast(float*)", "k_gone()", "k_more(float*)", "k_slow(float*)",
           "k_new()", "k_noise(float*)", "k_same(float*)"], "order: |delta|, ties by name")
    gone = [r for r in doc["kernels"] if r["name"] == "k_gone()"][0]
    check(gone["mangled"] == "_Z6k_gonev" and gone["calls_before"] == 20 and gone["calls_after"] == 0
          and gone["avg_before_ns"] == 5 * US and gone["delta_pct"] == -100.0 and
          gone["avg_delta_pct"] is None, f"removed row: {gone}")
    # format 1.6: k_slow's attributes on each side, the others have none
    def attrs_of(row, side):
        a = row.get("attributes_" + side)
        return a and (a["regs_min"], a["regs_max"], a["occupancy_pct_min"], a["launches"],
                      [(c["block_threads"], c["blocks_per_sm"]) for c in a["configs"]])
    slow_row = [r for r in doc["kernels"] if r["name"] == "k_slow(float*)"][0]
    check(attrs_of(slow_row, "before") == (32, 32, 50.0, 10, [(32, 32)])
          and attrs_of(slow_row, "after") == (128, 128, 25.0, 10, [(32, 16)]),
          f"k_slow attributes {slow_row.get('attributes_before')} -> {slow_row.get('attributes_after')}")
    check(all(r["attributes_before"] is None and r["attributes_after"] is None
              for r in doc["kernels"] if r["name"] != "k_slow(float*)"), "attributes of the other rows")
    new = [r for r in doc["kernels"] if r["name"] == "k_new()"][0]
    check(new["delta_pct"] is None and new["calls_after"] == 10, f"added row: {new}")
    slow = [r for r in doc["kernels"] if r["name"] == "k_slow(float*)"][0]
    check(slow["delta_pct"] == 50.0 and slow["avg_delta_pct"] == 50.0 and
          slow["avg_before_ns"] == 20 * US and slow["avg_after_ns"] == 30 * US, f"slower row: {slow}")
    mem = {r["name"]: (r["status"], r["kind"], r["src"], r["bytes_before"], r["bytes_after"])
           for r in doc["memcpy"]}
    check(mem == {"HtoD pageable -> device": ("removed", "HtoD", "pageable", 10 << 20, 0),
                  "HtoD pinned -> device": ("added", "HtoD", "pinned", 0, 10 << 20),
                  "DtoH device -> pinned": ("same", "DtoH", "device", 40960, 40960)},
          f"memory rows: {mem}")
    gem = {(r["api"], r["m"], r["status"]) for r in doc["gemms"]}
    check(gem == {("cublasSgemm_v2", 256, "removed"), ("cublasSgemm_v2", 512, "added")},
          f"GEMM rows by shape: {gem}")
    check(doc["counts"]["kernels"] == {"slower": 3, "faster": 1, "added": 1, "removed": 1, "same": 2},
          f"counts: {doc['counts']}")
    # headline: exact sums, deltas and ratios
    s = doc["summary"]
    for key in hb:
        got = (s[key]["before"], s[key]["after"], s[key]["delta"])
        check(got == (hb[key], ha[key], ha[key] - hb[key]), f"summary {key}: {got} vs {hb[key]}, {ha[key]}")
    check(abs(s["kernel_gpu_ns"]["ratio"] - ha["kernel_gpu_ns"] / hb["kernel_gpu_ns"]) < 1e-4,
          "summary ratio")
    check(abs(s["gpu_busy_pct"]["before"] - 100 * hb["gpu_busy_ns"] /
              (hb["gpu_busy_ns"] + hb["gpu_idle_ns"])) < 0.01, "busy share")
    idle = sum(s[k]["before"] for k in s if k.startswith("idle_"))
    check(idle == s["gpu_idle_ns"]["before"], f"idle causes add up: {idle}")
    check(doc["schema"] == "cutrace-diff/1" and doc["status"] == "clean" and
          [{k: i[k] for k in ("path", "status", "rank")} for i in doc["before"]["inputs"]] ==
          [{"path": before, "status": "clean", "rank": None}] and
          doc["options"] == {"by": "kernel", "per_range": None, "threshold_pct": 5.0, "limit": 0},
          "document head")

    # a pause of the tracer (format 1.3): its gap is not idle; the busy share is of the rest
    paused = os.path.join(d, "paused.ctr")
    scen.write(paused, "before", 10, pause_after=4)
    rc, doc, err = diff_json(before, paused)
    s = doc["summary"]
    span = hb["gpu_busy_ns"] + hb["gpu_idle_ns"]
    unrec = s["gpu_unrecorded_ns"]["after"]
    check(rc == 0 and s["gpu_unrecorded_ns"]["before"] == 0 and unrec > 40 * US and
          s["gpu_idle_ns"]["after"] == hb["gpu_idle_ns"] - unrec and
          abs(s["gpu_busy_pct"]["after"] - 100 * hb["gpu_busy_ns"] / (span - unrec)) < 0.01 and
          all(r["status"] == "same" for r in doc["kernels"]), f"paused: {s}")
    rc, out, err = run(before, paused)
    check("GPU time not recorded (tracer paused)" in out, "text: the unrecorded line")
    rc, out, err = run(before, after)
    check("not recorded" not in out, "text: no unrecorded line without pauses")

    # --threshold: k_noise (3% slower) becomes slower at 2%
    rc, doc, err = diff_json("--threshold", "2", before, after)
    noise = [r["status"] for r in doc["kernels"] if r["name"] == "k_noise(float*)"]
    check(rc == 0 and noise == ["slower"], f"--threshold 2: {noise}")
    check(got_rows(doc, "kernels") == want_rows(eb, ea, "kernels", thr=2.0), "--threshold 2 rows")

    # --by api, --by range
    rc, doc, err = diff_json("--by", "api", before, after)
    check(rc == 0 and "kernels" not in doc and got_rows(doc, "apis") == want_rows(eb, ea, "apis"),
          f"--by api: {doc and got_rows(doc, 'apis')}")
    check([(r["name"], r["status"]) for r in doc["apis"]][:1] == [("cudaMemcpyAsync", "slower")],
          "--by api: the copies' calls got slower")
    rc, doc, err = diff_json("--by", "range", before, after)
    rng = [(r["name"], r["status"], r["total_before_ns"], r["gpu_before_ns"] > 0) for r in doc["ranges"]]
    check(rc == 0 and got_rows(doc, "ranges") == want_rows(eb, ea, "ranges") and
          rng == [("new_phase", "added", 0, False), ("old_phase", "removed", 1000 * US, True),
                  ("step", "same", 9000 * US, True)], f"--by range: {rng}")

    # --per-range step: 10 steps against 20 compare per step, like the 10-step run
    rc, doc, err = diff_json("--per-range", "step", before, after20)
    ea20, ha20 = scen.expected(pa20)
    check(rc == 0 and got_rows(doc, "kernels") == want_rows(eb, ea20, "kernels", 10, 20) and
          [r[:2] for r in got_rows(doc, "kernels")] == [r[:2] for r in want_rows(eb, ea, "kernels")],
          f"--per-range: {got_rows(doc, 'kernels')}")
    check(doc["before"]["instances"] == 10 and doc["after"]["instances"] == 20 and
          doc["options"]["per_range"] == "step", "--per-range instances")
    check(doc["summary"]["kernel_gpu_ns"]["after"] == ha20["kernel_gpu_ns"] // 20 and
          doc["summary"]["api_calls"]["before"] == hb["api_calls"] // 10, "--per-range headline")
    rc, doc, err = diff_json(before, after20)
    check(all(r["status"] != "same" for r in doc["kernels"]), "without --per-range 20 steps differ")
    rc, out, err = run("--per-range", "nope", before, after)
    check(rc == 2 and out == "" and err.count("\n") == 1 and "no NVTX range 'nope'" in err,
          f"--per-range without the range: {rc} {err!r}")

    # --limit: rows cut per table, counts whole
    rc, doc, err = diff_json("--limit", "2", before, after)
    check(rc == 0 and [r["name"] for r in doc["kernels"]] == ["cublasSgemm_v2", "k_fast(float*)"]
          and sum(doc["counts"]["kernels"].values()) == 8 and len(doc["memcpy"]) == 2, "--limit 2")

    # CSV: the same rows as JSON
    rc, out, err = run("--format", "csv", before, after)
    blocks = [list(csv.reader(io.StringIO(b))) for b in out.strip().split("\n\n")]
    check(rc == 0 and len(blocks) == 5 and [b[1][0] for b in blocks] ==
          ["summary", "kernels", "memcpy", "gemms", "inputs"], f"csv blocks: {[b[:2] for b in blocks]}")
    kh = blocks[1][0]
    check(kh[:8] == ["table", "status", "name", "calls_before", "calls_after", "total_before_ns",
                     "total_after_ns", "delta_ns"] and kh[12] == "mangled", f"csv header {kh}")
    got = [(r[2], r[1], int(r[3]), int(r[4]), int(r[5]), int(r[6]), int(r[7])) for r in blocks[1][1:]]
    check(got == want_rows(eb, ea, "kernels"), f"csv kernels {got}")
    check(all(len(r) == len(b[0]) for b in blocks for r in b), "csv rows as wide as headers")
    summ = {r[1]: r[2:] for r in blocks[0][1:]}
    check(summ["kernel_launches"][:3] == [str(hb["kernel_launches"]), str(ha["kernel_launches"]),
                                          str(ha["kernel_launches"] - hb["kernel_launches"])],
          f"csv summary {summ['kernel_launches']}")
    rc, out, err = run("--format", "csv", "--per-range", "step", before, after20)
    rows = list(csv.reader(io.StringIO(out.split("\n\n")[1])))
    gone = [r for r in rows if r[2] == "k_gone()"][0]
    check(gone[3:5] == ["2", "0"] and [r for r in rows if r[2] == "k_new()"][0][3:5] == ["0", "1"],
          f"csv per step calls {gone}")

    # Text: headline and aligned tables
    rc, out, err = run(before, after)
    lines = out.splitlines()
    check(rc == 0 and lines[0] == f"cutrace diff: BEFORE {before} (1 file) -> AFTER {after} (1 file)",
          f"text first line {lines[:1]}")
    check("GPU kernels (GPU time): 3 slower, 1 faster, 1 added, 1 removed, 2 same" in out and
          "GEMMs (GPU time): 1 added, 1 removed" in out, "text titles with counts")
    krows = [l for l in lines if l.strip().startswith(("slower", "faster", "added", "removed", "same"))]
    check(krows and krows[0].split()[:2] == ["slower", "+500.000"] and krows[0].endswith("cublasSgemm_v2"),
          f"text first kernel row {krows[:1]}")
    gone = [l for l in krows if l.endswith("k_gone()")][0]
    check(gone.split()[:4] == ["removed", "-100.000", "us", "-100.0%"] and " - " in gone, f"text removed {gone!r}")
    slow = [l for l in krows if "k_slow(float*)" in l]
    check(len(slow) == 1 and slow[0].endswith("k_slow(float*)  [regs 32 -> 128, occ 50 -> 25 %]"),
          f"text k_slow row with its attribute change {slow}")
    ends = {len(l) - len(l.split()[-1]) for l in krows[:8] if "(" in l.split()[-1] or l.split()[-1].startswith("k_")}
    check(len(ends) == 1, f"text names aligned in one column {ends}")

    # A DIR of two processes (before twice): calls and times double, merged rows
    both = os.path.join(d, "both")
    os.mkdir(both)
    scen.write(os.path.join(both, "a.ctr"), "before", 10, pid=1)
    scen.write(os.path.join(both, "b.ctr"), "before", 10, pid=2)
    rc, doc, err = diff_json(before, both)
    kern = {r["name"]: (r["calls_before"], r["calls_after"]) for r in doc["kernels"]}
    check(rc == 0 and kern["k_same(float*)"] == (10, 20) and len(doc["after"]["inputs"]) == 2,
          f"dir of two processes: {kern}")

    # Bad options and usage: one line, status 2, nothing on stdout
    for bad in (["--format", "xml"], ["--by", "stack"], ["--limit", "x"], ["--threshold", "-1"],
                ["--threshold", "abc"], ["--bogus"], ["--per-range"], ["--format"]):
        rc, out, err = run(*bad, before, after)
        check(rc == 2 and out == "" and err.count("\n") == 1 and err.startswith("cutrace diff:"),
              f"bad option {bad}: {rc} {err!r}")
    for args in ([before], [], [before, after, after]):
        rc, out, err = run(*args)
        check(rc == 2 and out == "" and err.count("\n") == 1 and "BEFORE and AFTER" in err,
              f"paths {len(args)}: {rc} {err!r}")
    rc, out, err = run("--help")
    check(rc == 0 and out.startswith("usage: cutrace diff"), "--help")
    rc, out, err = tooltest.run(cutrace, "--help")
    check(" diff " in out, "cutrace --help lists diff")

    # Damaged inputs: a truncated file is partial (1) and still compared; unreadable ones 2
    big = os.path.join(d, "big.ctr")
    subprocess.run([gentrace, "--mixed", big, "20000", "300", "16384"], check=True)
    raw = open(big, "rb").read()
    cut = os.path.join(d, "cut.ctr")
    open(cut, "wb").write(raw[: len(raw) // 2])
    rc, doc, err = diff_json(big, cut)
    vadd = [r for r in doc["kernels"] if r["name"].startswith("vadd")][0] if doc else {}
    check(rc == 1 and err.count("\n") == 1 and "cut.ctr" in err and "partial" in err and
          doc["status"] == "partial" and doc["after"]["inputs"][0]["status"] == "partial" and
          vadd["calls_before"] == 20000 and 1000 < vadd["calls_after"] < 20000 and
          vadd["status"] == "faster", f"truncated AFTER: {rc} {err!r} {vadd}")
    rc, out, err = run(big, cut)
    check(rc == 1 and "GPU kernels" in out, "truncated: text still printed")
    empty, foreign = os.path.join(d, "empty.ctr"), os.path.join(d, "foreign.ctr")
    open(empty, "wb").close()
    open(foreign, "w").write("{\"not\": \"a trace\"}\n")
    for path, what in ((empty, "empty"), (foreign, "not a cutrace trace")):
        rc, out, err = run(before, path)
        check(rc == 2 and out == "" and what in err and os.path.basename(path) in err and
              err.count("\n") == 1, f"{what}: {rc} {err!r}")
    rc, out, err = run(os.path.join(d, "missing"), after)
    check(rc == 2 and out == "" and err.count("\n") == 1 and "No such file" in err, f"missing: {err!r}")
    nodir = os.path.join(d, "nothing")
    os.mkdir(nodir)
    rc, out, err = run(before, nodir)
    check(rc == 2 and out == "" and err.count("\n") == 1, f"dir without traces: {rc} {err!r}")
    mixed = os.path.join(d, "mixed")
    os.mkdir(mixed)
    os.link(after, os.path.join(mixed, "a.ctr"))
    open(os.path.join(mixed, "b.ctr"), "w").write("junk")
    allbad = os.path.join(d, "allbad")
    os.mkdir(allbad)
    os.link(empty, os.path.join(allbad, "a.ctr"))
    os.link(foreign, os.path.join(allbad, "b.ctr"))
    rc, out, err = run(allbad, after)
    check(rc == 2 and out == "" and err.count("\n") == 3 and
          err.splitlines()[-1] == f"cutrace diff: BEFORE ({allbad}): no readable trace",
          f"a DIR of unreadable files: {rc} {err!r}")
    rc, doc, err = diff_json(before, mixed)
    check(rc == 1 and doc and doc["status"] == "partial" and
          [i["status"] for i in doc["after"]["inputs"]] == ["clean", "unreadable"] and
          got_rows(doc, "kernels") == want_rows(eb, ea, "kernels"),
          f"a readable file beside a foreign one: {rc} {err!r}")

finish()
