#!/usr/bin/env python3
"""A writer round that came seconds late (late_plant.py: the poller's GPU records of
steps 2 and 3, 2.2 s of trace time, land before thread 11's records and thread 10's
MEMOP/LAUNCH, API and RANGE records of the calls that made them, as a starved writer
thread drains buffer after buffer). Every command reads it exactly as the same records
written in time order: report (text, JSON, --by range), gaps (text, JSON, CSV,
--summary), steps (text, JSON), dump --csv, diff byte for byte, dump --chrome the same
events. Before, the model waited 2 s of trace time for a call and emitted 18 GPU
activities without theirs: copies as "unknown, 0 B", gaps "(call not in the trace)".
Then the bound is said when it is hit: with CUTRACE_JOIN_HOLD=1 (a wait ends once 2 s
of trace time passed and more than 1 event is held back) the 18 activities come without
their calls and every command that reads through the model says so on stderr; a copy
whose call is not in the file at all (a clean file) is said too.

usage: test_late_rounds.py CUTRACE"""
import json
import os
import shutil
import sys

import tooltest
from late_plant import late_rounds_file
from tooltest import check, finish, scratch

cutrace = sys.argv[1]
UNJOINED = "GPU activit"

COMMANDS = {
    "report.txt": ["report"], "report.json": ["report", "--format", "json"],
    "range.txt": ["report", "--by", "range"], "gaps.txt": ["gaps"],
    "gaps.json": ["gaps", "--format", "json"], "gaps.csv": ["gaps", "--format", "csv"],
    "gaps_summary.txt": ["gaps", "--summary"], "steps.txt": ["steps"],
    "steps.json": ["steps", "--format", "json"], "dump.csv": ["dump", "--csv"],
}


def outputs(d, layout, env=None):
    """{name: (status, stdout, stderr)} of every command on the layout's trace, read
    under one file name (x.ctr), plus dump --chrome's events sorted and diff's output."""
    path = os.path.join(d, "x.ctr")
    late_rounds_file(path, layout)
    out = {name: tooltest.run(cutrace, *args, path, env=env) for name, args in COMMANDS.items()}
    chrome = os.path.join(d, "chrome.json")
    rc, _, err = tooltest.run(cutrace, "dump", "--chrome", "-o", chrome, path, env=env)
    events = json.load(open(chrome))["traceEvents"] if rc == 0 else []
    out["chrome"] = (rc, sorted(json.dumps(e, sort_keys=True) for e in events), err)
    out["diff"] = tooltest.run(cutrace, "diff", path, path, env=env)
    return out


def memcpy_rows(report_json):
    doc = json.loads(report_json)
    return sorted((m["kind"], m["count"], m["bytes"]) for m in doc.get("memcpy", []))


with scratch("cutrace-late-rounds-") as d:
    on_time = outputs(d, "time")
    late = outputs(d, "rounds")
    for name, (rc, out, err) in on_time.items():
        check(rc == 0 and UNJOINED not in err, f"time order, {name}: status {rc}, stderr {err!r}")
        lrc, lout, lerr = late[name]
        check(lrc == 0 and lout == out and lerr == err,
              f"late round, {name}: the same output as in time order (status {lrc}, "
              f"stderr {lerr!r}, {len(lout)} vs {len(out)} bytes)")
    rows = memcpy_rows(late["report.json"][1])
    check(rows == [("DtoH", 3, 12 << 20), ("HtoD", 3, 12 << 20), ("memset", 3, 3 << 20)],
          f"late round: report's copies keep their direction and size: {rows}")

    # Another thread's buffer first, its records seconds past thread 10's calls: those
    # calls' GPU records come after later events went out (late), and still wait for
    # their calls (before: delivered at once, 22 without their call). Order aside (late
    # events go out as they come), the same activities, joined, as in time order.
    other = outputs(d, "other_first")
    for name in ("report.json", "gaps.json", "dump.csv", "steps.json"):
        rc, out, err = other[name]
        check(rc == 0 and UNJOINED not in err, f"other thread first, {name}: status {rc}, stderr {err!r}")
    rows = memcpy_rows(other["report.json"][1])
    check(rows == memcpy_rows(on_time["report.json"][1]),
          f"other thread first: report's copies keep their direction and size: {rows}")
    # dump --csv measures the file's lateness first and fixes its window to it: the very
    # table of time order, in end order (before 2026-12-07: the same rows, another order)
    check(other["dump.csv"][1] == on_time["dump.csv"][1],
          "other thread first: dump --csv writes the table of time order, byte for byte")

    # The bound hit (a hold of 1 event): said by every command, exit status unchanged.
    env = dict(os.environ, CUTRACE_JOIN_HOLD="1")
    held = outputs(d, "rounds", env)
    want = ("22 GPU activities shown without the call that made them (a copy then has no "
            "direction or size): 22 waited for it longer than the tools do (2 s of trace time "
            "and 1 events held: CUTRACE_JOIN_HOLD), 22 of those calls came later (up to 2.")
    for name, (rc, out, err) in held.items():
        if name == "range.txt":  # report --by range joins by corr in its own reader
            check(rc == 0 and out == late[name][1], f"hold 1, {name}: status {rc}, unchanged")
            continue
        check(rc == 0 and want in err, f"hold 1, {name}: status {rc}, says so: {err!r}")
    rows = memcpy_rows(held["report.json"][1])
    check(("unknown", 1, 0) in rows, f"hold 1: a copy without its call: {rows}")
    check("(call not in the trace)" in held["gaps.txt"][1], "hold 1: gaps without the call")

    # A copy whose call is not in the file (a clean file): said, at the end of the file.
    orphan = outputs(d, "orphan")
    for name in ("report.txt", "gaps.txt", "dump.csv", "steps.txt"):
        rc, out, err = orphan[name]
        check(rc == 0 and "1 GPU activity shown without the call that made it (a copy then has "
              "no direction or size): 1 had no call in the file" in err,
              f"orphan, {name}: status {rc}, says so: {err!r}")
finish()
