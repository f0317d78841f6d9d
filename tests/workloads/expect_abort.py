#!/usr/bin/env python3
"""Runs a program that must die of SIGABRT on the simulated CUDA stack.

usage: expect_abort.py SIM_DIR PROGRAM [ARGS...]

Passes when PROGRAM (run with LD_LIBRARY_PATH=SIM_DIR, LD_BIND_NOW=1) is killed
by SIGABRT after printing a line containing "aborting" (so it got as far as it
should), and the loader printed no "no version information" warning.
Exits 77 when SIM_DIR has no simulated libcuda.so.1.
"""
import signal
import sys

from simrun import driver_missing, run_on_sim


def main(argv):
    if len(argv) < 3:
        print("usage: expect_abort.py SIM_DIR PROGRAM [ARGS...]")
        return 2
    sim_dir = argv[1]
    if driver_missing(sim_dir):
        return 77
    result = run_on_sim(argv[2:], sim_dir, timeout=30)
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    if "no version information" in result.stderr:
        print("FAIL: loader warned about missing version information")
        return 1
    if result.returncode != -signal.SIGABRT:
        print("FAIL: exit status %d, want death by SIGABRT" % result.returncode)
        return 1
    if "aborting" not in result.stdout:
        print("FAIL: no 'aborting' line before the abort")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
