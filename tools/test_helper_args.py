#!/usr/bin/env python3
"""The helper binaries that write planted traces (cutrace-gentrace, cutrace-plantrace,
test-stacks-gen) never take an option for the name of the file to write: --help and -h
print a usage on stdout (status 0), an unknown option, a missing or bad value, a missing
or extra operand is one line on stderr (status 2), and none of them writes a file; the
valid forms still write their trace, options before or after FILE, as --name=V too.

usage: test_helper_args.py GENTRACE PLANTRACE STACKS_GEN
"""
import os
import subprocess
import sys

from tooltest import check, finish, scratch

gentrace, plantrace, stacks_gen = (os.path.abspath(a) for a in sys.argv[1:4])


def run(cwd, *args):
    p = subprocess.run(list(args), cwd=cwd, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


with scratch("cutrace-helper-args-") as d:
    for exe in (gentrace, plantrace, stacks_gen):
        name = os.path.basename(exe)
        for h in ("--help", "-h"):
            rc, out, err = run(d, exe, h)
            check(rc == 0 and out.startswith("usage: ") and not err,
                  f"{name} {h}: status {rc}, stdout {out[:60]!r}, stderr {err!r}")
            rc, out, err = run(d, exe, "x.ctr", "2", h)
            check(rc == 0 and out.startswith("usage: "), f"{name} x.ctr 2 {h}: status {rc}")
        check(os.listdir(d) == [], f"{name} --help wrote {os.listdir(d)}")

    bad = [
        (gentrace, ["--bogus", "x.ctr", "10"], "unknown option '--bogus'"),
        (gentrace, ["x.ctr", "10", "--loop"], "unknown option '--loop'"),
        (gentrace, [], "needs the FILE to write"),
        (gentrace, ["x.ctr"], "takes FILE N [CHUNK_BYTES]"),
        (gentrace, ["x.ctr", "ten"], "N takes a number, not 'ten'"),
        (gentrace, ["--mixed", "x.ctr", "5", "-3"], "unknown option '-3'"),
        (gentrace, ["--mixed", "x.ctr", "5", "1", "4096", "9"], "--mixed takes FILE ITERATIONS"),
        (gentrace, ["x.ctr", "5", "1", "2", "3", "4"], "too many arguments at '4'"),
        (gentrace, ["--ranged", "x.ctr", "10", "2"], "--ranged takes FILE N STEP_CALLS OUTER"),
        (gentrace, ["--ranged", "x.ctr", "10", "2", "7"], "OUTER takes 0 or 1"),
        (gentrace, ["--drops", "--mixed", "x.ctr", "10"], "takes one of --drops, --mixed, --ranged"),
        (plantrace, ["--bogus"], "unknown option '--bogus'"),
        (plantrace, ["x.ctr", "--pid"], "--pid needs a value"),
        (plantrace, ["x.ctr", "--loop", "many"], "--loop takes a number, not 'many'"),
        (plantrace, ["x.ctr", "--loop=-1"], "--loop takes a number, not '-1'"),
        (plantrace, ["x.ctr", "y.ctr"], "too many arguments at 'y.ctr'"),
        (plantrace, ["--loop", "3"], "needs the FILE to write"),
        (stacks_gen, ["--bogus"], "usage: test-stacks-gen"),
        (stacks_gen, ["x.ctr", "weird"], "usage: test-stacks-gen"),
    ]
    for exe, args, want in bad:
        name = os.path.basename(exe)
        rc, out, err = run(d, exe, *args)
        check(rc == 2 and not out and want in err and err.count("\n") == 1,
              f"{name} {args}: status {rc}, stderr {err!r}, want {want!r}")
        check(os.listdir(d) == [], f"{name} {args} wrote {os.listdir(d)}")

    # the valid forms still write their trace
    good = [
        (gentrace, ["a.ctr", "10"]),
        (gentrace, ["b.ctr", "10", "4096"]),
        (gentrace, ["c.ctr", "--drops", "1000"]),
        (gentrace, ["--mixed", "d.ctr", "3", "77"]),
        (gentrace, ["--ranged", "e.ctr", "30", "10", "1", "4096"]),
        (gentrace, ["--", "f.ctr", "5"]),
        (plantrace, ["--loop", "3", "g.ctr", "--pid=9"]),
        (plantrace, ["h.ctr"]),
    ]
    for exe, args in good:
        rc, out, err = run(d, exe, *args)
        path = [a for a in args if a.endswith(".ctr")][0]
        check(rc == 0 and os.path.getsize(os.path.join(d, path)) > 0,
              f"{os.path.basename(exe)} {args}: status {rc}, stderr {err!r}")
    rc, out, err = run(d, plantrace, "--loop", "3", "i.ctr", "--pid=9")
    check(rc == 0 and out.startswith("{"), f"plantrace still prints its answers: {out[:40]!r}")
    check(sorted(os.listdir(d)) == [c + ".ctr" for c in "abcdefghi"], f"files {os.listdir(d)}")

finish()
