#!/usr/bin/env python3
"""Every CSV output of the cutrace commands follows one convention (docs/report.md,
"CSV"): RFC 4180 with CRLF line ends, a header row first, one table per block; a command
with several tables writes blocks separated by one empty line, each block's first column
`table` naming its table in the header's place of every row; `--tables NAME` gives one
block, a plain table that pandas.read_csv and DuckDB read as it is.

Loads each output with Python's csv module and checks: the bytes end every line with
CRLF (no bare LF, no bare CR outside quoted fields), every row of a block has its
header's width, table names as said, and one block where one table was asked for.
Inputs: the planted trace holding every record kind (planted_all.py), two copies of it
(--per-process), and diff_scenario.py's BEFORE/AFTER pair.

usage: test_csv_all.py CUTRACE
"""
import csv
import io
import os
import shutil
import subprocess
import sys

import diff_scenario
import planted_all
from tracewrite import TraceWriter
import tooltest
from tooltest import check, finish, scratch

cutrace = sys.argv[1]
REPORT_TABLES = ["kernels", "apis", "memcpy", "gemms", "graphs", "streams", "allocs"]


def lines_end_crlf(out):
    """True when every line of out (bytes) ends with CRLF, quoted fields aside."""
    quoted = False
    prev = b""
    for i in range(len(out)):
        c = out[i:i + 1]
        if c == b'"':
            quoted = not quoted
        elif not quoted and c == b"\n" and prev != b"\r":
            return False
        elif not quoted and prev == b"\r" and c != b"\n":
            return False
        prev = c
    return out.endswith(b"\r\n") and not quoted


def blocks_of(text):
    """The blocks of a CSV text (lists of rows), split at empty lines."""
    blocks, cur = [], []
    for row in csv.reader(io.StringIO(text, newline="")):
        if not row:
            if cur:
                blocks.append(cur)
            cur = []
        else:
            cur.append(row)
    if cur:
        blocks.append(cur)
    return blocks


def check_csv(label, args, multi, one_block=False, want_tables=None):
    """Runs cutrace ARGS and checks its CSV. multi: blocks have a `table` column.
    Returns the blocks (lists of rows, header first)."""
    p = subprocess.run([cutrace, *args], capture_output=True, timeout=120)
    if not check(p.returncode == 0, f"{label}: exit {p.returncode}: {p.stderr[-300:]!r}"):
        return []
    out = p.stdout
    check(len(out) > 0, f"{label}: some output")
    check(lines_end_crlf(out), f"{label}: every line ends with CRLF:\n{out[:300]!r}")
    try:
        text = out.decode("utf-8")
    except UnicodeDecodeError as e:
        check(False, f"{label}: not UTF-8: {e}")
        return []
    blocks = blocks_of(text)
    check(len(blocks) >= 1, f"{label}: a header row")
    if one_block:
        check(len(blocks) == 1, f"{label}: one block, got {len(blocks)}: "
              f"{[b[0][:2] for b in blocks]}")
    names = []
    for b in blocks:
        header, rows = b[0], b[1:]
        check(len(set(header)) == len(header), f"{label}: header names unique: {header}")
        bad = [r for r in rows if len(r) != len(header)]
        check(not bad, f"{label}: rows as wide as their header ({len(header)}): {bad[:2]}")
        if multi:
            check(header[0] == "table", f"{label}: first column 'table': {header[:3]}")
            tnames = {r[0] for r in rows}
            check(len(tnames) <= 1, f"{label}: one table per block: {tnames}")
            names.append(rows[0][0] if rows else None)
    if want_tables is not None:
        check(names == want_tables, f"{label}: tables {names}, want {want_tables}")
    return blocks


with scratch("cutrace-csv-all-") as d:
    trace = os.path.join(d, "all.ctr")
    planted_all.fill(TraceWriter()).save(trace)
    two = os.path.join(d, "two")
    os.mkdir(two)
    shutil.copy(trace, os.path.join(two, "a.ctr"))
    shutil.copy(trace, os.path.join(two, "b.ctr"))
    before, after = os.path.join(d, "before.ctr"), os.path.join(d, "after.ctr")
    diff_scenario.write(before, "before", 6)
    diff_scenario.write(after, "after", 6)

    # report: every table, and each one alone (one block)
    blocks = check_csv("report", ["report", "--format", "csv", trace], multi=True,
                       want_tables=REPORT_TABLES)
    for t in REPORT_TABLES:
        check_csv(f"report --tables {t}", ["report", "--format", "csv", "--tables", t, trace],
                  multi=True, one_block=True, want_tables=[t])
    check_csv("report --per-process", ["report", "--format", "csv", "--per-process", two],
              multi=True, want_tables=REPORT_TABLES * 2)
    # the same table of two processes is one block: pandas reads it whole
    b = check_csv("report --per-process --tables kernels",
                  ["report", "--format", "csv", "--per-process", "--tables", "kernels", two],
                  multi=True, one_block=True, want_tables=["kernels"])
    if b and blocks:
        check(len(b[0]) - 1 == 2 * (len(blocks[0]) - 1),
              f"report --per-process --tables kernels: both processes' rows in the block")
    # streams and allocs have a pid of their own: per process it is the one after `table`
    for t in ("streams", "allocs"):
        one = check_csv(f"report --tables {t}", ["report", "--format", "csv", "--tables", t,
                                                  os.path.join(two, "a.ctr")], multi=True)
        per = check_csv(f"report --per-process --tables {t}",
                        ["report", "--format", "csv", "--per-process", "--tables", t, two],
                        multi=True, one_block=True)
        if one and per:
            want = [r for r in one[0][1:]] * 2
            got = [r[:2] + r[3:] for r in per[0][1:]]  # without rank
            check(per[0][0][:4] == ["table", "pid", "rank", one[0][0][2]] and got == want,
                  f"{t} per process = each file's rows with a rank column:\n  got  {per[0]}"
                  f"\n  want {one[0]}")
    for by, name in (("range", "ranges"), ("callsite", "callsites"), ("stack", "stacks")):
        check_csv(f"report --by {by}", ["report", "--format", "csv", "--by", by, trace],
                  multi=True, one_block=True, want_tables=[name])
        b = check_csv(f"report --by {by} --per-process",
                      ["report", "--format", "csv", "--by", by, "--per-process", two], multi=True,
                      one_block=True, want_tables=[name])
        one = check_csv(f"report --by {by} a.ctr", ["report", "--format", "csv", "--by", by,
                                                     os.path.join(two, "a.ctr")], multi=True)
        if b and one:
            check(len(b[0]) - 1 == 2 * (len(one[0]) - 1),
                  f"report --by {by} --per-process: both processes' rows in the block")

    # diff: summary, the row tables, the inputs
    check_csv("diff", ["diff", "--format", "csv", before, after], multi=True,
              want_tables=["summary", "kernels", "memcpy", "gemms", "inputs"])
    for t in ("summary", "kernels", "memcpy", "gemms", "inputs"):
        check_csv(f"diff --tables {t}", ["diff", "--format", "csv", "--tables", t, before, after],
                  multi=True, one_block=True, want_tables=[t])
    check_csv("diff --tables gemms,summary",
              ["diff", "--format", "csv", "--tables", "gemms,summary", before, after],
              multi=True, want_tables=["summary", "gemms"])
    for by, name in (("api", "apis"), ("range", "ranges")):
        check_csv(f"diff --by {by}", ["diff", "--format", "csv", "--by", by, before, after],
                  multi=True, want_tables=["summary", name, "inputs"])
        check_csv(f"diff --by {by} --tables {name}",
                  ["diff", "--format", "csv", "--by", by, "--tables", name, before, after],
                  multi=True, one_block=True, want_tables=[name])

    # steps: one table, one row per step
    blocks = check_csv("steps", ["steps", "--format", "csv", before], multi=False, one_block=True)
    check(blocks and len(blocks[0]) == 7, f"steps: header and 6 steps: {len(blocks[0]) if blocks else 0}")

    # gaps: a row per gap, then the findings
    check_csv("gaps", ["gaps", "--format", "csv", trace], multi=True,
              want_tables=["gaps", "findings"])
    check_csv("gaps two files", ["gaps", "--format", "csv", two], multi=True)
    for t in ("gaps", "findings"):
        check_csv(f"gaps --tables {t}", ["gaps", "--format", "csv", "--tables", t, trace],
                  multi=True, one_block=True, want_tables=[t])

    # dump --csv: one table
    for rows in ("all", "gpu", "calls"):
        check_csv(f"dump --csv --rows {rows}", ["dump", "--csv", "--rows", rows, trace],
                  multi=False, one_block=True)

finish()
