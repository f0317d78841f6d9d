#!/usr/bin/env python3
"""The tracer's own stack-capture cost, placed honestly, end to end on the simulated GPU
(programs/stackcost.cu: 5 bursts of 64 launches, each ended by a device synchronise,
with the host asleep 20 ms outside CUDA between bursts; it prints each sleep's
CLOCK_MONOTONIC interval, the clock of the trace).

Recorded with call stacks on (launches), twice: plainly, and with every timed capture
sleeping 1 ms inside the tracer (CUTRACE_TEST_STACKS_DELAY_NS: captures made slow, so
that the estimated capture time of a period is far longer than its bursts) and periods
of 30 ms (CUTRACE_FLUSH_MS, so that periods end after the sleeps). Planted answers:
- no TRACER "stacks" record covers any part of a sleep (the estimate of a period is
  placed among its captures, never over time the thread spent away from the tracer);
- the records count every capture: their amounts add up to the launches (320);
- `cutrace gaps`: the device gap around each sleep is caused by host_wait, not tracer.
The old placement (the estimate as one block ending at the capture that closed the
period) covered the sleeps in the slow run and made gaps blame the tracer.

And a process that never uses CUDA never loads the unwinder: `cat /proc/self/maps` run
under `cutrace record` maps libtrace.so but neither libunwind nor liblzma; with
CUTRACE_ALL_PROCESSES=1 (its file opened at start-up) it loads them at start, as a
process with CUDA linked in does.

usage: test_stackcost.py SIM_DIR CUTRACE LIBTRACE STACKCOST
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cttest import check, finish, require_built, scratch_dir  # noqa: E402
from harness import record_one_file_out  # noqa: E402
from rawdump import raw_records  # noqa: E402

sim_dir, cutrace, libtrace, program = sys.argv[1:5]
require_built(os.path.join(sim_dir, "libcuda.so.1"), libtrace, cutrace, program)
tmp = scratch_dir("cutrace-stackcost-")
LAUNCHES = 5 * 64


def run(label, env_extra):
    path, out = record_one_file_out(cutrace, libtrace, sim_dir, os.path.join(tmp, label),
                                    [program], "stackcost: ok",
                                    dict(CUTRACE_STACKS="launches", **env_extra))
    if not path:
        return
    sleeps = [tuple(int(v) for v in line.split()[1:3]) for line in out.splitlines()
              if line.startswith("SLEEP ")]
    check(len(sleeps) == 4, f"{label}: 4 sleeps printed, got {sleeps}")
    recs, names = raw_records(cutrace, path)
    stacks = [r for r in recs if r["kind"] == "tracer" and names.get(r["what"]) == "stacks"]
    check(stacks and sum(r["amount"] for r in stacks) == LAUNCHES,
          f"{label}: TRACER stacks records count {sum(r['amount'] for r in stacks)} captures, "
          f"{LAUNCHES} launches made")
    for r in stacks:
        for a, b in sleeps:
            over = min(r["end_ns"], b) - max(r["begin_ns"], a)
            check(over <= 0, f"{label}: TRACER stacks [{r['begin_ns']}, {r['end_ns']}] "
                  f"covers {over} ns of the program's sleep [{a}, {b}]")
    p = subprocess.run([cutrace, "gaps", "--format", "json", "--top", "10000", "--min-gap", "1",
                        path], capture_output=True, text=True, timeout=120)
    doc = json.loads(p.stdout) if p.returncode == 0 else {}
    check(p.returncode == 0, f"{label}: gaps status {p.returncode}: {p.stderr[-400:]}")
    gaps = doc.get("gaps", [])
    for a, b in sleeps:
        around = [g for g in gaps if g["start_ns"] <= a and g["end_ns"] >= b]
        check(len(around) == 1 and around[0]["cause"] == "host_wait",
              f"{label}: the gap around the sleep [{a}, {b}]: "
              f"{[(g['start_ns'], g['end_ns'], g['cause']) for g in around]} (want host_wait)")


def own_maps(label, env_extra):
    """`cat /proc/self/maps` under `cutrace record`: (status, what cat printed)."""
    env = dict(os.environ, LD_LIBRARY_PATH=sim_dir, CUTRACE_PRELOAD=libtrace, **env_extra)
    for k in ("LD_PRELOAD", "CUTRACE_OUTPUT", "CUTRACE_STACKS", "CUTRACE_ALL_PROCESSES"):
        env.pop(k, None)
    env.update(env_extra)
    p = subprocess.run([cutrace, "record", "-q", "-o", os.path.join(tmp, label), "--", "cat",
                        "/proc/self/maps"], env=env, capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout


rc, maps = own_maps("nocuda", {})
check(rc == 0 and "libtrace" in maps and "libunwind" not in maps and "liblzma" not in maps,
      f"no CUDA: status {rc}, libtrace mapped {'libtrace' in maps}, libunwind "
      f"{'libunwind' in maps}, liblzma {'liblzma' in maps} (want neither)")
rc, maps = own_maps("all", {"CUTRACE_ALL_PROCESSES": "1"})
check(rc == 0 and "libunwind" in maps, f"every process traced: status {rc}, libunwind mapped "
      f"{'libunwind' in maps} (want it, set up at start-up)")

run("plain", {})
run("slow", {"CUTRACE_TEST_STACKS_DELAY_NS": "1000000", "CUTRACE_FLUSH_MS": "30"})
finish()
