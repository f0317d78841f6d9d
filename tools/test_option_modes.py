#!/usr/bin/env python3
"""No option is silently ignored (each command's page in docs/): an option that a
command does not take, or that does not apply to the output asked for, is one line on
stderr naming it, nothing on stdout, exit status 2.

Table-driven:
- every command x every option of the other commands' --help that its own --help does
  not list (report, gaps, steps, diff, dump, info, record, collect);
- options that a mode of a command does not take: raw dump with the export options
  (--no-gaps, --gap-min, --queues, --no-memory, -o, --rows, --split, --from/--to),
  dump --csv with the Chrome ones, dump --chrome with --rows, report --by range /
  callsite / stack with --tables, gaps --tables without csv, gaps csv with --summary or
  --top, gaps --summary with --format json, --top or --min-gap, steps --summary --format csv, diff
  --tables without csv or with a table of another --by;
- a value attached to a short option, -o=DIR and -oDIR (dump, record, collect): refused
  with the form to use ("-o takes its value as the next argument: -o DIR").

usage: test_option_modes.py CUTRACE
"""
import os
import re
import subprocess
import sys

import planted_all
from tracewrite import TraceWriter
from tooltest import check, finish, scratch

cutrace = sys.argv[1]
COMMANDS = ["report", "gaps", "steps", "diff", "dump", "info", "record", "collect"]


def run(args):
    """cutrace ARGS: (status, stdout, stderr); status None when it ran 20 s."""
    try:
        p = subprocess.run([cutrace, *args], capture_output=True, text=True, timeout=20,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None, "", "(ran 20 s)"
    return p.returncode, p.stdout, p.stderr


def options_of(cmd):
    """The options cmd --help lists (each on a line of its own, indented)."""
    rc, out, err = run([cmd, "--help"])
    opts = set(re.findall(r"^\s+(-[a-zA-Z]|--[a-z][a-z-]*)", out, re.M))
    if "--from" in opts:
        opts.add("--to")
    return opts


def refused(label, args, name):
    """Checks that cutrace ARGS is refused: status 2, one line naming name, no stdout."""
    rc, out, err = run(args)
    cmd = args[0]
    check(rc == 2 and out == "" and err.count("\n") == 1 and err.startswith(f"cutrace {cmd}: ")
          and name in err, f"{label}: {args}: status {rc}, stdout {out[:80]!r}, stderr {err!r}")


with scratch("cutrace-option-modes-") as d:
    trace = os.path.join(d, "all.ctr")
    planted_all.fill(TraceWriter()).save(trace)
    out_dir = os.path.join(d, "out")

    def operands(cmd):
        """What cmd is given after the option: traces, or a program for record."""
        if cmd == "record":
            return ["-o", out_dir, "--", "true"]
        if cmd == "collect":
            return ["-o", out_dir, "--once"]
        if cmd == "diff":
            return [trace, trace]
        return [trace]

    # every command against the other commands' options
    own = {c: options_of(c) for c in COMMANDS}
    check(all(own[c] for c in COMMANDS if c != "info"), f"options read from --help: {own}")
    every = set().union(*own.values())
    tried = 0
    for cmd in COMMANDS:
        for opt in sorted(every - own[cmd] - {"-h", "--help"}):
            refused(f"{cmd} does not take {opt}", [cmd, opt, *operands(cmd)], opt)
            tried += 1
    check(tried > 100, f"cross-command cases tried: {tried}")

    # options a mode does not take
    modes = [
        (["dump", "--no-gaps"], "--no-gaps"), (["dump", "--gap-min", "5"], "--gap-min"),
        (["dump", "--queues"], "--queues"), (["dump", "--no-memory"], "--no-memory"),
        (["dump", "-o", os.path.join(d, "x")], "-o"), (["dump", "--rows", "gpu"], "--rows"),
        (["dump", "--split", out_dir], "--split"), (["dump", "--from", "0"], "--from"),
        (["dump", "--to", "1s"], "--to"),
        (["dump", "--csv", "--no-gaps"], "--no-gaps"), (["dump", "--csv", "--gap-min", "5"], "--gap-min"),
        (["dump", "--csv", "--queues"], "--queues"), (["dump", "--csv", "--no-memory"], "--no-memory"),
        (["dump", "--csv", "--split", out_dir], "--split"), (["dump", "--csv", "--chrome"], "--chrome"),
        (["dump", "--csv", "--perfetto"], "--csv"), (["dump", "--chrome", "--rows", "gpu"], "--rows"),
        (["report", "--by", "range", "--tables", "kernels"], "--tables"),
        (["report", "--by", "callsite", "--tables", "kernels"], "--tables"),
        (["report", "--by", "stack", "--tables", "kernels"], "--tables"),
        (["gaps", "--tables", "gaps"], "--tables"),
        (["gaps", "--format", "json", "--tables", "gaps"], "--tables"),
        (["gaps", "--format", "csv", "--summary"], "--summary"),
        (["gaps", "--format", "csv", "--top", "3"], "--top"),
        (["gaps", "--summary", "--format", "json"], "--summary"),
        (["gaps", "--summary", "--top", "3"], "--top"),
        (["gaps", "--summary", "--min-gap", "5"], "--min-gap"),
        (["gaps", "--min-gap=1ms", "--summary"], "--min-gap"),
        (["steps", "--summary", "--format", "csv"], "--summary"),
        (["diff", "--tables", "kernels"], "--tables"),
        (["diff", "--format", "json", "--tables", "kernels"], "--tables"),
        (["diff", "--format", "csv", "--tables", "apis"], "apis"),
        # selection options a command or mode does not take (docs/report.md, Selecting)
        (["gaps", "--kernel", "k"], "--kernel"), (["gaps", "--stream", "1"], "--stream"),
        (["gaps", "--format", "json", "--kernel", "k"], "--kernel"),
        (["steps", "--kernel", "k"], "--kernel"), (["dump", "--device", "0"], "--device"),
        (["dump", "--stream", "1"], "--stream"), (["dump", "--kernel", "k"], "--kernel"),
    ]
    for args, name in modes:
        refused("mode", [*args, *operands(args[0])], name)

    # a value attached to -o
    for cmd in ("dump", "record", "collect"):
        for form in ("-o=" + out_dir, "-o" + out_dir):
            extra = ["--chrome"] if cmd == "dump" else []
            ops = [trace] if cmd == "dump" else (["--", "true"] if cmd == "record" else [])
            args = [cmd, *extra, form, *ops]
            rc, out, err = run(args)
            want = (f"cutrace {cmd}: -o takes its value as the next argument: -o {out_dir}, "
                    f"not '{form}' (try: cutrace {cmd} --help)\n")
            check(rc == 2 and out == "" and err == want, f"{args}: {rc} {err!r}")
    check(not os.path.exists(out_dir) and not os.path.exists("=" + out_dir),
          "nothing written by a refused command")

finish()
