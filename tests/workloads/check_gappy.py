#!/usr/bin/env python3
"""Runs gappy on the simulated GPU and checks the plan it prints.

usage: check_gappy.py SIM_DIR GAPPY

Runs GAPPY with LD_LIBRARY_PATH=SIM_DIR, LD_BIND_NOW=1 and the SIMCUDA_KERNEL_US
value docs/workloads.md gives, then checks: exit 0; no loader or gappy warning;
the `simulator SIMCUDA_KERNEL_US=` line names that same value; every line
follows the grammar of docs/workloads.md; the phases come in the documented
order with begin <= end; the planted items are the documented ones; and each
phase lasted at least what the simulator's model makes it last (the simulator
really waits, so these are lower bounds from the plan, never speed limits).

Then, from the simulator's ground truth (SIMCUDA_TRUTH_FILE: one line per
finished operation, `KIND NAME STREAM DEVICE ENQUEUE_NS START_NS END_NS`), the
operation counts per kernel, stream and copy direction, and the planted gaps on
the main stream, which must each be at least as long as the plan guarantees
whatever the host's load: 19980 us each in host_wait (a sleep of 20000 us
follows each 20 us gappy_short launch), 1980 us in sync and other_stream
(gappy_short is enqueued on main before the 2000 us gappy_long on side, and the next main work cannot
start before gappy_long ends).
Every gap found on main is printed per phase, for whoever writes a gaps test.
Exits 77 when SIM_DIR has no simulated libcuda.so.1.
"""
import os
import re
import sys

from simrun import driver_missing, run_on_sim

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import cttest  # noqa: E402

KERNEL_US = "gappy_tiny=1,gappy_short=20,gappy_work=100,gappy_long=2000"
PHASES = ["warmup", "busy", "host_wait", "sync", "other_stream", "pageable", "launch_bound",
          "sync_little_work"]
# (kind, phase, key=value pairs that must be present) for every planted item.
PLANTED = [
    ("expect", "busy", {"stream": "main", "max_gap_us": "50"}),
    ("gap", "host_wait", {"cause": "host_wait", "count": "4", "dur_us": "19980"}),
    ("gap", "sync", {"cause": "sync", "count": "3", "dur_us": "1980"}),
    ("gap", "other_stream", {"cause": "other_stream", "count": "3", "dur_us": "1980"}),
    ("finding", "pageable", {"kind": "pageable_copy", "count": "8", "bytes": "1048576"}),
    ("finding", "launch_bound", {"kind": "launch_bound", "count": "200", "kernel": "gappy_tiny"}),
    ("gap", "launch_bound", {"cause": "launch_overhead", "count": "199", "max_dur_us": "50"}),
    ("finding", "sync_little_work", {"kind": "sync_little_work", "count": "20", "work_us": "20"}),
]
# Least wall time of each phase, in microseconds, implied by the plan.
MIN_PHASE_US = {
    "busy": 10 * 100,
    "host_wait": 4 * 20000,
    "sync": 3 * 2000,
    "other_stream": 3 * (2000 + 100),
    "sync_little_work": 20 * 20,
}
LINE = re.compile(r"^(gappy plan=1 .*|simulator SIMCUDA_KERNEL_US=\S+|gappy done|"
                  r"phase name=\w+ (begin|end)_ns=\d+|(planted (gap|finding)|expect none)( \w+=\S+)+)$")


# Operations the plan issues: (kind, name substring, stream) -> count, where
# stream is "main" (the legacy default stream, handle 0x0) or "side".
TRUTH_COUNTS = {
    ("kernel", "gappy_work", "main"): 10 + 3,
    ("kernel", "gappy_short", "main"): 1 + 5 + 3 + 3 + 4 + 20,
    ("kernel", "gappy_short", "side"): 1,
    ("kernel", "gappy_long", "side"): 3 + 3,
    ("kernel", "gappy_tiny", "main"): 200,
    ("memcpy", "HtoD", "main"): 4,
    ("memcpy", "DtoH", "main"): 4,
}
# Least duration of each planted gap on main, by phase: (count, least us).
TRUTH_GAPS = {"host_wait": (4, 19980), "sync": (3, 1980), "other_stream": (3, 1980)}


def fields(line):
    """The key=value pairs of one plan line, as a dict."""
    return dict(part.split("=", 1) for part in line.split() if "=" in part)


def check_output(stdout, problems):
    """Appends a problem for each way gappy's stdout departs from the plan."""
    lines = stdout.splitlines()
    for line in lines:
        if not LINE.match(line):
            problems.append("line outside the grammar: %r" % line)
    if "simulator SIMCUDA_KERNEL_US=" + KERNEL_US not in lines:
        problems.append("gappy does not name SIMCUDA_KERNEL_US=" + KERNEL_US)
    if not lines or lines[-1] != "gappy done":
        problems.append("last line is not 'gappy done'")
    edges = [fields(l) | {"edge": "begin" if "begin_ns" in l else "end"}
             for l in lines if l.startswith("phase ")]
    order = [e["name"] for e in edges if e["edge"] == "begin"]
    if order != PHASES:
        problems.append("phases %s, want %s" % (order, PHASES))
    begin, end = {}, {}
    for edge in edges:
        (begin if edge["edge"] == "begin" else end)[edge["name"]] = int(
            edge.get("begin_ns", edge.get("end_ns")))
    for name in PHASES:
        if name not in begin or name not in end or end[name] < begin[name]:
            problems.append("phase %s: bad or missing begin/end" % name)
        elif name in MIN_PHASE_US and end[name] - begin[name] < MIN_PHASE_US[name] * 1000:
            problems.append("phase %s lasted %.0f us, the model needs at least %d us"
                            % (name, (end[name] - begin[name]) / 1e3, MIN_PHASE_US[name]))
    planted = [l for l in lines if l.startswith("planted ") or l.startswith("expect ")]
    if len(planted) != len(PLANTED):
        problems.append("%d planted/expect lines, want %d" % (len(planted), len(PLANTED)))
    for line, (kind, phase, want) in zip(planted, PLANTED):
        got = fields(line)
        if line.split()[1] != ("none" if kind == "expect" else kind) or got.get("phase") != phase:
            problems.append("planted line %r: want a %s in phase %s" % (line, kind, phase))
        for key, value in want.items():
            if got.get(key) != value:
                problems.append("planted line %r: %s=%s, want %s" % (line, key, got.get(key), value))


def read_truth(path, problems):
    """The simulator's ground-truth operations, as dicts, in file order."""
    ops = []
    with open(path) as truth:
        for line in truth:
            parts = line.split()
            if len(parts) != 7:
                problems.append("truth line outside the format: %r" % line)
                continue
            kind, name, stream, _device, enqueue, start, end = parts
            ops.append({"kind": kind, "name": name, "stream": "main" if int(stream, 16) == 0 else "side",
                        "enqueue": int(enqueue), "start": int(start), "end": int(end)})
    return ops


def check_truth(ops, stdout, problems):
    """Checks the ground truth against the plan; prints the gaps on main."""
    for (kind, name, stream), want in TRUTH_COUNTS.items():
        got = sum(1 for op in ops if op["kind"] == kind and name in op["name"] and op["stream"] == stream)
        if got != want:
            problems.append("truth: %d %s %s on %s, want %d" % (got, kind, name, stream, want))
    windows = {}
    for line in stdout.splitlines():
        if line.startswith("phase "):
            f = fields(line)
            edge = "begin_ns" if "begin_ns" in f else "end_ns"
            windows.setdefault(f["name"], {})[edge] = int(f[edge])
    main_ops = sorted((op for op in ops if op["stream"] == "main"), key=lambda op: op["start"])
    for phase, window in windows.items():
        if "begin_ns" not in window or "end_ns" not in window:
            continue
        # The gap after each main op enqueued in the phase, up to the next main op
        # (the sync phase's last gap ends in the next phase).
        gaps = [(b["start"] - a["end"]) / 1e3 for a, b in zip(main_ops, main_ops[1:])
                if window["begin_ns"] <= a["enqueue"] <= window["end_ns"]]
        inside = [op for op in main_ops if window["begin_ns"] <= op["enqueue"] <= window["end_ns"]]
        big = sorted((g for g in gaps if g > 100), reverse=True)
        print("truth: phase %s: %d ops on main, gaps over 100 us: %s" % (
            phase, len(inside), " ".join("%.0f" % g for g in big) or "none"))
        if phase in TRUTH_GAPS:
            count, least_us = TRUTH_GAPS[phase]
            planted = sorted(gaps, reverse=True)[:count]
            if len(planted) < count or planted[-1] < least_us:
                problems.append("truth: phase %s: longest %d gaps on main %s us, want each >= %d us"
                                % (phase, count, ["%.0f" % g for g in planted], least_us))


def main(argv):
    if len(argv) != 3:
        print("usage: check_gappy.py SIM_DIR GAPPY")
        return 2
    sim_dir, gappy = argv[1], argv[2]
    if driver_missing(sim_dir):
        cttest.skip(f"no simulated libcuda.so.1 in {sim_dir}")
    truth_path = os.path.join(cttest.scratch_dir("check_gappy."), "truth")
    result = run_on_sim([gappy], sim_dir, SIMCUDA_KERNEL_US=KERNEL_US, SIMCUDA_TRUTH_FILE=truth_path)
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    problems = []
    if result.returncode != 0:
        problems.append("gappy exited %d" % result.returncode)
    if result.stderr.strip():
        problems.append("gappy wrote to stderr (loader or plan warning)")
    check_output(result.stdout, problems)
    if not os.path.exists(truth_path):
        problems.append("the simulator wrote no SIMCUDA_TRUTH_FILE")
    else:
        check_truth(read_truth(truth_path, problems), result.stdout, problems)
    for problem in problems:
        cttest.check(False, problem)
    return cttest.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
