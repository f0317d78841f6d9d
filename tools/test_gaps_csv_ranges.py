#!/usr/bin/env python3
"""cutrace gaps --format csv: the columns `range` and `callsite` (docs/gaps.md, "CSV") on a
planted trace whose answers are known.

Plant (pid 400, one thread, device 0, stream 7; host us after T0), in the NVTX range
"epoch" (depth 0, [0, E]): kernel 1 at [10, 20]; kernel 2 at [100, 110], launched at
stack node 1 (pc 0x401000): the gap [20, 100] is ended in "epoch" and no inner range;
then STEPS ranges "step" (depth 1), each around one launch at stack node 2 (pc
0x402000) whose kernel ends a gap in "step"; "epoch" closes after them, STEPS (more than
1024) ranges after the first gap. After E, a launch without a stack ends a gap outside
any range.

Checked, for the device and the stream row of each gap: range "epoch" and call site
"0x401000" for the first, "step" and "0x402000" for every step's, both empty for the
last; every row's range is the nvtx_range of the ending call's row in `dump --csv`
(joined on pid and correlation); the same rows when at most 16 gaps may wait
(CUTRACE_GAPS_HOLD_MAX=16: the first gap's row takes "epoch" from the long ranges of the
first pass) and none said to be written without its range; the same rows from standard
input (`-`, copied to a temporary file for the first pass); the header's last columns.
A second plant: a row waiting for its thread's range while another thread's gaps fill the
queue and its own thread makes no call is written without its range when 16 may wait,
and stderr says so (1 row); with the default room, it has it.

usage: test_gaps_csv_ranges.py CUTRACE
"""
import csv
import io
import os
import subprocess
import sys

from tracewrite import TraceWriter
import tooltest
from tooltest import check, finish, scratch

cutrace = sys.argv[1]
US, T0, PID, STREAM = 1000, 10**9, 400, 7
STEPS = 1100
E = 200 + 20 * STEPS + 100  # "epoch" closes


def write(path):
    """The plant above; records in the order the tracer would write them (by time)."""
    w = TraceWriter()
    w.add("process", pid=PID, ppid=1, start_ns=T0, host=w.string("node1"),
          cmdline=w.string("./app"))
    w.add("thread", tid=PID, name=w.string("main"), start_ns=T0)
    w.add("stack", id=1, parent=0, pc=0x401000)
    w.add("stack", id=2, parent=0, pc=0x402000)
    api, kname = w.string("cudaLaunchKernel"), w.string("_Z4workPf")
    epoch, step = w.string("epoch"), w.string("step")
    timed = []  # (write time us, kind, fields)
    kernels = [(10, 20, 0), (100, 110, 1)]
    kernels += [(200 + 20 * k + 6, 200 + 20 * k + 10, 2) for k in range(STEPS)]
    kernels += [(E + 100, E + 110, 0)]
    for corr, (s, e, stack) in enumerate(kernels, 1):
        b = s - 6
        timed.append((b + 4, "launch", dict(corr=corr, kernel=kname, grid_x=1, grid_y=1, grid_z=1,
                                            block_x=32, block_y=1, block_z=1)))
        timed.append((b + 4, "api", dict(tid=PID, name=api, begin_ns=T0 + b * US,
                                         end_ns=T0 + (b + 4) * US, corr=corr, stream=STREAM,
                                         flags=0x4, stack=stack)))
        timed.append((e, "gpu", dict(corr=corr, stream=STREAM, start_ns=T0 + s * US,
                                     end_ns=T0 + e * US, type=1, name=kname)))
    for k in range(STEPS):
        t = 200 + 20 * k
        timed.append((t + 15, "range", dict(tid=PID, name=step, begin_ns=T0 + t * US,
                                            end_ns=T0 + (t + 15) * US, depth=1)))
    timed.append((E, "range", dict(tid=PID, name=epoch, begin_ns=T0, end_ns=T0 + E * US, depth=0)))
    for _, kind, fields in sorted(timed, key=lambda x: x[0]):  # stable: launch before api
        w.add(kind, **fields)
    w.add("end", records=0, drops=0, end_ns=T0 + (E + 200) * US)
    w.save(path)


def write_two_threads(path):
    """Thread 500 in its range "wait" (from 0, closing last) launches on stream 7 at [5, 8]
    and [15, 18] (its call at 12: the device gap [8, 15] waits for "wait"); thread 501,
    without ranges, launches B_KERNELS kernels on stream 8 at [B_EVERY k, B_EVERY k + 10],
    a gap before each: their rows queue behind the waiting one while thread 500 makes no
    call."""
    w = TraceWriter()
    w.add("process", pid=PID, ppid=1, start_ns=T0, host=w.string("node1"),
          cmdline=w.string("./app"))
    api, kname, wait = w.string("cudaLaunchKernel"), w.string("_Z4workPf"), w.string("wait")
    kernels = [(500, 7, 5, 8), (500, 7, 15, 18)]
    kernels += [(501, 8, B_EVERY * k, B_EVERY * k + 10) for k in range(1, B_KERNELS + 1)]
    timed = []
    for corr, (tid, stream, s, e) in enumerate(kernels, 1):
        b = s - 3
        timed.append((b + 2, "api", dict(tid=tid, name=api, begin_ns=T0 + b * US,
                                         end_ns=T0 + (b + 2) * US, corr=corr, stream=stream,
                                         flags=0x4)))
        timed.append((e, "gpu", dict(corr=corr, stream=stream, start_ns=T0 + s * US,
                                     end_ns=T0 + e * US, type=1, name=kname)))
    end = B_EVERY * B_KERNELS + 1000
    timed.append((end, "range", dict(tid=500, name=wait, begin_ns=T0, end_ns=T0 + end * US,
                                     depth=0)))
    for _, kind, fields in sorted(timed, key=lambda x: x[0]):
        w.add(kind, **fields)
    w.add("end", records=0, drops=0, end_ns=T0 + (end + 100) * US)
    w.save(path)


B_KERNELS, B_EVERY = 200, 20000  # 4 s: longer than the model's reorder window


def rows(*args, env=None):
    rc, out, err = tooltest.run(cutrace, *args, env=env)
    check(rc == 0, f"cutrace {args}: status {rc}: {err}")
    return list(csv.DictReader(io.StringIO(out, newline=""))), err


def check_piped(path, gaps):
    """From standard input (kept in a temporary file for the first pass): the same rows."""
    with open(path, "rb") as f:
        p = subprocess.run([cutrace, "gaps", "--format", "csv", "--tables", "gaps", "-"],
                           stdin=f, capture_output=True)
    piped = list(csv.DictReader(io.StringIO(p.stdout.decode(), newline="")))
    check(p.returncode == 0 and not p.stderr and piped == gaps,
          f"{os.path.basename(path)} from standard input: status {p.returncode}, {p.stderr!r}, "
          f"{sum(a != b for a, b in zip(piped, gaps))} rows differ of {len(gaps)} ({len(piped)})")


with scratch("cutrace-gaps-ranges-") as d:
    path = os.path.join(d, "ranges.ctr")
    write(path)
    gaps, err = rows("gaps", "--format", "csv", "--tables", "gaps", path)
    check(gaps and list(gaps[0])[-2:] == ["range", "callsite"],
          f"last columns {list(gaps[0])[-2:] if gaps else None}")
    check(not err, f"stderr: {err}")
    # the planted answers, by the ending call's correlation
    want = {2: ("epoch", "0x401000"), STEPS + 3: ("", "")}
    for k in range(STEPS):
        want[3 + k] = ("step", "0x402000")
    got = {}
    for g in gaps:
        got.setdefault(int(g["correlation"]), []).append((g["scope"], g["range"], g["callsite"]))
    check(sorted(got) == sorted(want), f"gaps ended by {len(got)} calls, planted {len(want)}: "
          f"{sorted(set(got) ^ set(want))[:10]}")
    bad = [(c, got.get(c), w) for c, w in want.items()
           if sorted(x[0] for x in got.get(c, [])) != ["device", "stream"]
           or any((x[1], x[2]) != w for x in got.get(c, []))]
    check(not bad, f"{len(bad)} calls' rows differ from the plant, first {bad[:3]}")

    # the join: each row's range is its ending call's nvtx_range in dump --csv
    calls, _ = rows("dump", "--csv", "--rows", "calls", path)
    by_corr = {(r["pid"], r["correlation"]): r["nvtx_range"] for r in calls}
    unjoined = [g for g in gaps if by_corr.get((g["pid"], g["correlation"])) != g["range"]]
    check(not unjoined, f"{len(unjoined)} rows whose range is not dump --csv's, first "
          f"{unjoined[:1]}")

    check_piped(path, gaps)

    # at most 16 gaps waiting: the same rows
    env = dict(os.environ, CUTRACE_GAPS_HOLD_MAX="16")
    small, err = rows("gaps", "--format", "csv", "--tables", "gaps", path, env=env)
    check(small == gaps, f"CUTRACE_GAPS_HOLD_MAX=16: {sum(a != b for a, b in zip(small, gaps))} "
          f"rows differ of {len(gaps)} ({len(small)})")
    check(not err, f"CUTRACE_GAPS_HOLD_MAX=16: stderr {err}")

    # a waiting row pushed out by another thread's rows while its thread made no call:
    # written without its range, and said; with room to wait, its range
    path = os.path.join(d, "threads.ctr")
    write_two_threads(path)
    gaps, err = rows("gaps", "--format", "csv", "--tables", "gaps", path)
    waited = [(g["scope"], g["range"]) for g in gaps if g["correlation"] == "2"]
    check(sorted(waited) == [("device", "wait"), ("stream", "wait")] and not err,
          f"thread 500's gap: {waited}, stderr {err!r}")
    check_piped(path, gaps)  # thread 500's one range comes last: found by the first pass
    others = [g for g in gaps if g["correlation"] != "2"]
    check(len(others) == 2 * B_KERNELS - 1 and all(g["range"] == "" for g in others),
          f"{len(others)} rows of thread 501, ranges {set(g['range'] for g in others)}")
    # the device row waits (found while thread 501's gaps are); the stream row is found
    # at the end (stream 7 has no later work), when "wait" is known
    small, err = rows("gaps", "--format", "csv", "--tables", "gaps", path, env=env)
    check(err.count("1 row written without knowing their NVTX range") == 1,
          f"CUTRACE_GAPS_HOLD_MAX=16 with two threads: stderr {err!r}")
    pushed = [g for g in small if g["correlation"] == "2" and g["scope"] == "device"]
    check([g for g in small if g not in pushed] == [g for g in gaps if g["correlation"] != "2"
                                                    or g["scope"] != "device"]
          and [g["range"] for g in pushed] == [""],
          "CUTRACE_GAPS_HOLD_MAX=16 with two threads: the other rows as before, thread 500's "
          f"device row without its range: {pushed}")

finish()
