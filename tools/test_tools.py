#!/usr/bin/env python3
"""cutrace info/dump on a generated trace of known content, a truncated copy, and
files that are not traces: exact counts, exit statuses and messages."""
import os
import subprocess
import sys

cutrace, gentrace = sys.argv[1], sys.argv[2]
import tooltest
from tooltest import check, finish, scratch


def run(*args):
    return tooltest.run(cutrace, *args)


with scratch("cutrace-tools-") as d:
    full = os.path.join(d, "gen.4242.ctr")
    subprocess.run([gentrace, full, "50000", "16384"], check=True)

    rc, out, err = run("info", d)
    check(rc == 0, f"info exit {rc}: {err}")
    check("./launch_loop 1000" in out, "command line shown")
    check("records        150008" in out, "record count (5 strings + 2 + 3*50000 + end)")
    check("    api          50000" in out and "    gpu          50000" in out, "per-kind counts")
    check("end            clean" in out, "clean end")
    check("cutrace simulated GPU" in out, "device name")

    rc, out, err = run("dump", full)
    lines = out.splitlines()
    check(rc == 0 and len(lines) == 150008, f"dump lines {len(lines)} rc {rc}")
    check(lines[-2].startswith("gpu corr=50000 device=0 stream=0 start_ns=1200101000 "
                               "end_ns=1200103000 type=1 name=5"), "last gpu record exact")

    # Truncated: every record before the cut, exit 1, message with the file and offset.
    part = os.path.join(d, "part", "cut.ctr")
    os.mkdir(os.path.dirname(part))
    data = open(full, "rb").read()
    open(part, "wb").write(data[: len(data) * 2 // 3])
    rc, out, err = run("dump", part)
    check(rc == 1, f"truncated dump exit {rc}")
    check("cut.ctr: truncated" in err and "offset" in err, f"truncation message: {err!r}")
    n = len(out.splitlines())
    check(0 < n < 150008, f"prefix records {n}")
    corrs = [int(t[5:]) for l in out.splitlines() if l.startswith("api ")
             for t in l.split() if t.startswith("corr=")]
    check(corrs == list(range(1, len(corrs) + 1)), "a clean prefix of the launches")

    # Empty, foreign, missing.
    empty = os.path.join(d, "empty.ctr")
    open(empty, "wb").close()
    rc, out, err = run("info", empty)
    check(rc == 2 and "empty file" in err, f"empty: {rc} {err!r}")
    foreign = os.path.join(d, "foreign.ctr")
    open(foreign, "w").write("not a trace at all\n")
    rc, out, err = run("info", foreign)
    check(rc == 2 and "not a cutrace trace" in err, f"foreign: {rc} {err!r}")
    rc, out, err = run("info", os.path.join(d, "missing"))
    check(rc == 2 and "No such file" in err, f"missing: {rc} {err!r}")
    rc, out, err = run("info", "--bogus")
    check(rc == 2 and "unknown option" in err, "bad option")
    rc, out, err = run("frobnicate")
    check(rc == 2 and "unknown command" in err, "bad command")

finish()
