#!/usr/bin/env python3
"""cutrace gaps --format csv (docs/gaps.md, "CSV") on planted traces of known gaps.

Plant (pid 300, device 0, host ns after T0 in us): stream 1 runs kernels at [100,110],
[150,160] and [300,320], stream 2 one at [200,230]: the device is idle [110,150],
[160,200], [230,300]; stream 1 [110,150], [160,300]; stream 2 never (one activity).
Then four synchronous pageable copies on stream 1 at [340,345], [360,365], [380,385],
[400,405] (gaps between them on the device and stream 1; findings pageable_copy and
sync_copy).
A second file (pid 301, rank 3 of a JOB record) has one gap, [20,90].

Checked: the block `gaps` has exactly these rows (scope, stream, start_ns, end_ns,
dur_ns, pid, rank), each with the cause, ending entry point and its thread that `gaps
--format json --top 10000` gives the same gap, and the ending call's correlation (the
planted operation that starts at the gap's end), which joins the row to its call's row of
`dump --csv` (same pid, correlation, entry point and tid); the block `findings` equals JSON's findings (kind,
what, count, saving_ns, adds_ns, fix) in order; --tables gaps / findings write one
block; --min-gap 45us keeps the gaps of at least 45 us; --summary, --top and --tables
without csv are one line and status 2; CRLF line ends.

usage: test_gaps_csv.py CUTRACE
"""
import csv
import io
import json
import os
import subprocess
import sys

from tracewrite import TraceWriter
import tooltest
from tooltest import check, finish, scratch

cutrace = sys.argv[1]
US, T0 = 1000, 10**9


def write(path, pid, kernels, rank=None):
    """kernels: [(stream, start_us, end_us)], each launched by a call ending 2 us before;
    a stream given as ("copy", stream): a synchronous pageable HtoD cudaMemcpy instead."""
    w = TraceWriter()
    w.add("process", pid=pid, ppid=1, start_ns=T0, host=w.string("node1"),
          cmdline=w.string("./app"))
    if rank is not None:
        w.add("job", known=31, rank=rank, world_size=4, local_rank=rank, local_world_size=4,
              node_rank=0)
    w.add("thread", tid=pid, name=w.string("main"), start_ns=T0)
    api, kname, copy = w.string("cudaLaunchKernel"), w.string("_Z4workPf"), w.string("cudaMemcpy")
    for corr, (stream, s, e) in enumerate(kernels, 1):
        b = T0 + (s - 6) * US
        if isinstance(stream, tuple):  # a synchronous copy: its call lasts until it ends
            stream = stream[1]
            w.add("memop", corr=corr, bytes=1 << 20, kind=1, src_mem=3, dst_mem=1)
            w.add("api", tid=pid, name=copy, begin_ns=b, end_ns=T0 + (e + 1) * US, corr=corr,
                  stream=stream, flags=0x4)
            w.add("gpu", corr=corr, stream=stream, start_ns=T0 + s * US, end_ns=T0 + e * US,
                  type=2)
            continue
        w.add("launch", corr=corr, kernel=kname, grid_x=1, grid_y=1, grid_z=1, block_x=32,
              block_y=1, block_z=1)  # a detail record comes before its API record
        w.add("api", tid=pid, name=api, begin_ns=b, end_ns=b + 4 * US, corr=corr, stream=stream,
              flags=0x4)  # CT_API_TIMED: its GPU work is timed
        w.add("gpu", corr=corr, stream=stream, start_ns=T0 + s * US, end_ns=T0 + e * US, type=1,
              name=kname)
    w.add("end", records=0, drops=0, end_ns=T0 + 400 * US)
    w.save(path)


def run(*args):
    """cutrace ARGS: (status, stdout, stderr)."""
    return tooltest.run(cutrace, *args)


def blocks(text):
    out, cur = [], []
    for row in csv.reader(io.StringIO(text, newline="")):
        if not row:
            out.append(cur)
            cur = []
        else:
            cur.append(row)
    out.append(cur)
    return [[dict(zip(b[0], r)) for r in b[1:]] for b in out if b], [b[0] for b in out if b]


def span(a, b):
    return (T0 + a * US, T0 + b * US)


with scratch("cutrace-gaps-csv-") as d:
    one, two = os.path.join(d, "one.ctr"), os.path.join(d, "two.ctr")
    copies = [(("copy", 1), a, a + 5) for a in (340, 360, 380, 400)]
    plans = {"300": [(1, 100, 110), (1, 150, 160), (2, 200, 230), (1, 300, 320)] + copies,
             "301": [(1, 10, 20), (1, 90, 95)]}
    write(one, 300, plans["300"])
    write(two, 301, plans["301"], rank=3)
    # the operation that ends a gap starts at its end: its call's correlation (1, 2, ...)
    corr_at = {(pid, T0 + s * US): str(c) for pid, plan in plans.items()
               for c, (_, s, _) in enumerate(plan, 1)}

    p = subprocess.run([cutrace, "gaps", "--format", "csv", one, two],
                                     capture_output=True)
    check(p.returncode == 0, f"gaps --format csv: exit {p.returncode}: {p.stderr!r}")
    raw = p.stdout
    check(raw.count(b"\n") == raw.count(b"\r\n") and raw.endswith(b"\r\n"),
          f"CRLF line ends: {raw[:200]!r}")
    bl, headers = blocks(raw.decode())
    gaps, findings = (bl + [[], []])[:2]
    check(len(headers) == 2 and headers[0][:1] == ["table"] and headers[1][:1] == ["table"],
          f"two blocks with a table column: {headers}")
    check(all(r["table"] == "gaps" for r in gaps) and all(r["table"] == "findings" for r in findings),
          "table names gaps, findings")

    got = sorted((r["pid"], r["rank"], r["scope"], r["stream"], int(r["start_ns"]),
                  int(r["end_ns"]), int(r["dur_ns"])) for r in gaps)
    want = []
    for pid, rank, scope, stream, (a, b) in [
            ("300", "", "device", "", span(110, 150)), ("300", "", "device", "", span(160, 200)),
            ("300", "", "device", "", span(230, 300)), ("300", "", "stream", "1", span(110, 150)),
            ("300", "", "stream", "1", span(160, 300)), ("301", "3", "device", "", span(20, 90)),
            ("301", "3", "stream", "1", span(20, 90))] + [
            ("300", "", scope, stream, span(a, b)) for a, b in ((320, 340), (345, 360), (365, 380),
                                                                 (385, 400))
            for scope, stream in (("device", ""), ("stream", "1"))]:
        want.append((pid, rank, scope, stream, a, b, b - a))
    want.sort()
    check(got == want, "gap rows = the planted gaps\n  got  " + "\n       ".join(map(str, got)) +
          "\n  want " + "\n       ".join(map(str, want)))

    # cause and ending entry point: as JSON says of the same gap
    rc, out, err = run("gaps", "--format", "json", "--top", "10000", one, two)
    doc = json.loads(out) if rc == 0 else {}
    js = {}
    for key in ("gaps", "stream_gaps"):
        for g in doc.get(key, []):
            js[(str(g["pid"]), g["scope"], g["start_ns"], g["end_ns"])] = g
    check(len(js) == len(want), f"JSON lists every gap too ({len(js)} of {len(want)})")
    for r in gaps:
        g = js.get((r["pid"], r["scope"], int(r["start_ns"]), int(r["end_ns"])))
        if not check(g is not None, f"JSON has the gap {r}"):
            continue
        check(r["cause"] == g["cause"] and r["ended_by"] == (g["ended_by"]["api"] or ""),
              f"cause and ending call as JSON: csv {r['cause']}/{r['ended_by']}, json "
              f"{g['cause']}/{g['ended_by']['api']}")
        if r["scope"] == "stream":
            check(int(r["stream"]) == g["stream"], f"stream as JSON: {r}")
        check(r["tid"] == str(g["ended_by"].get("tid", "")) == r["pid"],
              f"tid of the ending call as JSON ({g['ended_by'].get('tid')}) and planted: {r}")
        check(r["correlation"] == corr_at.get((r["pid"], int(r["end_ns"]))),
              f"correlation of the ending call: {r['correlation']}, planted "
              f"{corr_at.get((r['pid'], int(r['end_ns'])))}")
    want_f = [(f["kind"], f["what"] or "", str(f["count"]), str(f["saving_ns"]), str(f["adds_ns"]),
               f["fix"] or "") for f in doc.get("findings", [])]
    got_f = [(f["kind"], f["what"], f["count"], f["saving_ns"], f["adds_ns"], f["fix"])
             for f in findings]
    # the join with dump --csv: (pid, correlation) names the ending call's row
    rc, out, err = run("dump", "--csv", "--rows", "calls", one, two)
    calls = {(r["pid"], r["correlation"]): r for r in csv.DictReader(io.StringIO(out, newline=""))}
    joined = [r for r in gaps if (r["pid"], r["correlation"]) in calls and
              calls[(r["pid"], r["correlation"])]["name"] == r["ended_by"] and
              calls[(r["pid"], r["correlation"])]["tid"] == r["tid"]]
    check(len(joined) == len(gaps) > 0, f"gaps joined to dump --csv call rows: {len(joined)} of "
          f"{len(gaps)}")
    check(all(r["ended_by"] for r in gaps) and
          {r["ended_by"] for r in gaps} == {"cudaLaunchKernel", "cudaMemcpy"},
          f"every gap ended by a planted call: {sorted({r['ended_by'] for r in gaps})}")
    check(len(want_f) >= 2 and {"pageable_copy", "sync_copy"} <= {f[0] for f in want_f},
          f"the planted copies make findings: {want_f}")
    check(got_f == want_f, f"findings rows = JSON findings\n  got  {got_f}\n  want {want_f}")

    # one block each; --min-gap filters the rows
    for t, n in (("gaps", len(want)), ("findings", len(want_f))):
        rc, out, err = run("gaps", "--format", "csv", "--tables", t, one, two)
        b, h = blocks(out)
        check(rc == 0 and len(b) == 1 and len(b[0]) == n and all(r["table"] == t for r in b[0]),
              f"--tables {t}: one block of {n} rows: {rc} {err!r} {out[:300]!r}")
    rc, out, err = run("gaps", "--format", "csv", "--tables", "gaps", "--min-gap", "45us", one, two)
    b, h = blocks(out)
    got = sorted((int(r["start_ns"]), int(r["end_ns"])) for r in (b[0] if b else []))
    want45 = sorted((w[4], w[5]) for w in want if w[6] >= 45 * US)
    check(rc == 0 and got == want45, f"--min-gap 45us: {got}, want {want45}")

    # options that do not go with CSV: one line, status 2
    for args in (["--summary"], ["--top", "3"], ["--tables", "gaps,oops"]):
        rc, out, err = run("gaps", "--format", "csv", *args, one)
        check(rc == 2 and not out and err.count("\n") == 1, f"csv {args}: status 2, one line: "
              f"{rc} {err!r}")
    rc, out, err = run("gaps", "--tables", "gaps", one)
    check(rc == 2 and not out and err.count("\n") == 1 and "--format csv" in err,
          f"--tables without csv: status 2, one line: {rc} {err!r}")

finish()
