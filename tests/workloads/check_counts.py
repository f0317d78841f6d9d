#!/usr/bin/env python3
"""Checks what each workload issues against docs/workloads.md, from the
simulator's ground truth.

usage: check_counts.py SIM_DIR PROGRAM...

Runs each PROGRAM (its basename picks the case below) with small arguments on
the simulated stack (LD_LIBRARY_PATH=SIM_DIR, LD_BIND_NOW=1) and
SIMCUDA_TRUTH_FILE set, then counts the truth log's operations by kind, name
and stream ("s0" = the legacy default stream, handle 0x0; "own" = any other)
and compares them with the documented counts. Every operation must match one
expected row; programs not listed here are refused. crasher must die of
SIGABRT, every other program exit 0. Exits 77 when SIM_DIR has no simulated
libcuda.so.1.
"""
import os
import signal
import sys

from simrun import driver_missing, run_on_sim

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import cttest  # noqa: E402

# name: (arguments, [(kind, name substring, stream class, count), ...]).
# Rows are tried in order; the first that matches an operation counts it.
CASES = {
    "matmul_add": (["64", "3", "1"], [
        ("kernel", "bias_add", "s0", 4), ("kernel", "gemm", "s0", 4),
        ("memcpy", "HtoD", "s0", 3), ("memcpy", "DtoH", "s0", 2)]),
    "linear": (["16", "64", "32", "3"], [
        ("kernel", "bias_f32", "own", 3), ("memcpy", "HtoD", "s0", 3), ("memcpy", "DtoH", "s0", 1)]),
    "mlp": (["16", "64", "3"], [
        ("kernel", "relu_", "own", 3), ("kernel", "_nn_", "own", 6), ("kernel", "relu", "own", 6),
        ("memset", "", "s0", 6), ("memcpy", "HtoD", "s0", 5), ("memcpy", "DtoH", "s0", 5)]),
    "multistream": (["3", "5"], [
        ("kernel", "ms_produce", "own", 5), ("kernel", "ms_consume", "own", 10),
        ("memcpy", "DtoD", "own", 10), ("memset", "", "own", 5), ("memset", "", "s0", 3),
        ("memcpy", "DtoH", "s0", 2)]),
    "threads": (["2", "3"], [
        ("kernel", "thread_work", "own", 6), ("memset", "", "own", 2), ("memcpy", "DtoH", "own", 2)]),
    "launch_loop": (["10"], [("kernel", "tiny", "s0", 11)]),
    "ptds": (["2", "3"], [
        ("kernel", "ptds_work", "own", 6), ("memset", "", "own", 2), ("memcpy", "DtoH", "own", 2)]),
    "capture": (["2"], [
        ("kernel", "capture_step", "own", 8), ("memset", "", "own", 2), ("memset", "", "s0", 1),
        ("memcpy", "DtoH", "s0", 2)]),
    "legacy_launch": (["3"], [
        ("kernel", "legacy_kernel", "own", 3), ("memset", "", "own", 1), ("memcpy", "DtoH", "s0", 1)]),
    "forker": (["2"], [
        ("kernel", "fork_work", "s0", 4), ("memset", "", "s0", 2), ("memcpy", "DtoH", "s0", 2)]),
    "crasher": (["2"], [("kernel", "crash_work", "s0", 2)]),
    "api_loop": (["10", "0"], [
        ("kernel", "api_loop_empty", "own", 20), ("kernel", "gemm", "own", 20),
        ("memcpy", "DtoD", "own", 20), ("memset", "", "s0", 2)]),
}


def count_operations(truth_path, rows, problems, name):
    """Counts the truth log's operations against rows; appends mismatches."""
    counts = [0] * len(rows)
    with open(truth_path) as truth:
        for line in truth:
            parts = line.split()
            if len(parts) != 7:
                problems.append("%s: truth line outside the format: %r" % (name, line))
                continue
            kind, op_name, stream = parts[0], parts[1], "s0" if int(parts[2], 16) == 0 else "own"
            for i, (want_kind, pattern, want_stream, _count) in enumerate(rows):
                if kind == want_kind and pattern in op_name and stream == want_stream:
                    counts[i] += 1
                    break
            else:
                problems.append("%s: unexpected operation %s %s on %s" % (name, kind, op_name, stream))
    for (kind, pattern, stream, want), got in zip(rows, counts):
        if got != want:
            problems.append("%s: %d x %s %s on %s, want %d" % (name, got, kind, pattern or "*", stream, want))


def check_program(sim_dir, program, problems):
    """Runs one workload and checks its exit and its operations."""
    name = os.path.basename(program)
    if name not in CASES:
        problems.append("%s: no expected counts for this program" % name)
        return
    args, rows = CASES[name]
    with cttest.scratch("check_counts.") as tmp:
        truth_path = os.path.join(tmp, "truth")
        result = run_on_sim([program] + args, sim_dir, SIMCUDA_TRUTH_FILE=truth_path, SIMCUDA_KERNEL_US=None)
        want_status = -signal.SIGABRT if name == "crasher" else 0
        if result.returncode != want_status:
            problems.append("%s %s: exit status %d, want %d; stderr: %s"
                            % (name, " ".join(args), result.returncode, want_status, result.stderr.strip()))
            return
        if not os.path.exists(truth_path):
            problems.append("%s: the simulator wrote no truth log" % name)
            return
        before = len(problems)
        count_operations(truth_path, rows, problems, name)
        if len(problems) == before:
            print("%s %s: %d operations as documented" % (name, " ".join(args), sum(r[3] for r in rows)))


def main(argv):
    if len(argv) < 3:
        print("usage: check_counts.py SIM_DIR PROGRAM...")
        return 2
    sim_dir = argv[1]
    if driver_missing(sim_dir):
        cttest.skip(f"no simulated libcuda.so.1 in {sim_dir}")
    problems = []
    for program in argv[2:]:
        check_program(sim_dir, program, problems)
    for problem in problems:
        cttest.check(False, problem)
    return cttest.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
