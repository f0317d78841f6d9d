#!/usr/bin/env python3
"""Checks that each workload handles its command line as documented.

usage: bad_args.py SIM_DIR PROGRAM...

For each PROGRAM: `-h` prints one `usage: NAME ...` line on stdout and exits 0;
bad values ('x', '0', '-5', an overflowing number, '12abc') and too many
arguments each print exactly one line on stderr, naming the program, and exit
2 without running anything (nothing on stdout). The programs run with
LD_LIBRARY_PATH=SIM_DIR; argument checking happens before any CUDA call, so the
simulated driver need not exist.
"""
import os
import sys

from simrun import run_on_sim

BAD_FIRST_ARGS = ["x", "0", "-5", "99999999999999999999999", "12abc", ""]


def check_program(program, sim_dir):
    """Returns the list of problems found with one program's argument handling."""
    name = os.path.basename(program)
    problems = []
    result = run_on_sim([program, "-h"], sim_dir, timeout=30)
    lines = result.stdout.splitlines()
    if result.returncode != 0 or len(lines) != 1 or not lines[0].startswith("usage: %s" % name):
        problems.append("%s -h: exit %d, stdout %r" % (name, result.returncode, result.stdout))
    takes_args = "[" in result.stdout
    cases = [[bad] for bad in BAD_FIRST_ARGS] if takes_args else [["1"]]
    cases.append(["1"] * 12)
    for args in cases:
        result = run_on_sim([program] + args, sim_dir, timeout=30)
        errors = result.stderr.splitlines()
        if (result.returncode != 2 or len(errors) != 1 or not errors[0].startswith(name + ": ")
                or result.stdout):
            problems.append("%s %r: exit %d, stderr %r, stdout %r"
                            % (name, args, result.returncode, result.stderr, result.stdout))
    print("%s: %d bad command lines refused" % (name, len(cases)))
    return problems


def main(argv):
    if len(argv) < 3:
        print("usage: bad_args.py SIM_DIR PROGRAM...")
        return 2
    problems = []
    for program in argv[2:]:
        problems += check_program(program, argv[1])
    for problem in problems:
        print("FAIL:", problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
