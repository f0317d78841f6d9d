"""End to end: `cutrace gaps --format csv` gives every gap row the NVTX range and the call
site of the call that ended it (columns `range` and `callsite`), on a CUDA C program
built with -g (programs/gapranges.cu) traced on the simulated GPU with its launches'
stacks. Planted: in each "epoch" range a gap ended by launch_epoch, whose range
("epoch") closes 1100 "step" ranges later; gaps ended by launch_step inside "step";
gaps ended by launch_free outside any range. Asserted: every row's range is the
nvtx_range `dump --csv` gives the ending call's row (joined on pid and correlation),
the planted rows' ranges and call sites (lines marked `CALLSITE:`), and the same rows
when at most 16 gaps may wait for their range (CUTRACE_GAPS_HOLD_MAX: the waiting gaps
then take their range from the first pass's long ranges), none written without it.

usage: test_gapranges.py SIM_DIR CUTRACE LIBTRACE PROGRAM_DIR SOURCE
"""
import csv
import io
import os
import re
import subprocess
import sys

import harness
from cttest import callsite_markers

h = harness.Harness(sys.argv)
source = h.extra[0]
EPOCHS, STEPS, PAUSE_US = 2, 1100, 3000
lines = callsite_markers(source)
h.check(set(lines) == {"launch_first", "launch_epoch", "launch_step", "launch_free"},
        f"markers in {source}: {lines}")
site_line = {n: fn for fn, n in lines.items()}

rc, out, err, data, _ = h.record("gapranges", [str(EPOCHS), str(STEPS), str(PAUSE_US)],
                                 kernel_us="default=50")
if not h.check(rc == 0 and "gapranges ok" in out, f"record: status {rc}, {out!r}, {err[-400:]!r}"):
    h.finish()


def table(*args, env=None):
    """A cutrace command's CSV output as a list of dicts, and its stderr."""
    p = subprocess.run([h.cutrace, *args], capture_output=True, text=True, timeout=180,
                       env=dict(os.environ, **(env or {})))
    h.check(p.returncode == 0, f"cutrace {args}: status {p.returncode}: {p.stderr}")
    return list(csv.DictReader(io.StringIO(p.stdout, newline=""))), p.stderr


gaps, gaps_err = table("gaps", "--format", "csv", "--tables", "gaps", data)
calls, _ = table("dump", "--csv", data)
h.check(gaps and list(gaps[0])[-2:] == ["range", "callsite"],
        f"the last columns: {list(gaps[0])[-2:] if gaps else None}")
h.check("without knowing" not in gaps_err, f"stderr: {gaps_err}")

# the join: every row's range is the ending call's nvtx_range in dump --csv
joined = {}
for r in calls:
    if r["correlation"]:
        joined.setdefault((r["pid"], r["correlation"]), set()).add(r["nvtx_range"])
ended = [g for g in gaps if g["correlation"]]
h.check(len(ended) > 2 * EPOCHS * (STEPS // 100), f"{len(ended)} rows with an ending call")
for g in ended:
    want = joined.get((g["pid"], g["correlation"]))
    if not h.check(want is not None and len(want) == 1 and g["range"] in want,
                   f"gap at {g['start_ns']} ({g['scope']} {g['stream']}): range {g['range']!r}, "
                   f"dump --csv {want}"):
        break

# the call sites: each row's, one of the marked launches; the planted rows' ranges
site_re = re.compile(r"^(\w+)\(float\*\) \(gapranges\.cu:(\d+)\)$")
expect_range = {"launch_first": "epoch", "launch_epoch": "epoch", "launch_step": "step",
                "launch_free": ""}
long_gaps = {fn: 0 for fn in lines}
for g in ended:
    m = site_re.match(g["callsite"])
    fn = site_line.get(int(m.group(2))) if m else None
    if not h.check(fn is not None and m.group(1) == fn,
                   f"gap at {g['start_ns']}: call site {g['callsite']!r}"):
        break
    h.check(g["range"] == expect_range[fn],
            f"gap at {g['start_ns']} ended at {fn}: range {g['range']!r}, planted {expect_range[fn]!r}")
    pause = PAUSE_US if fn != "launch_step" else PAUSE_US // 10
    if g["scope"] == "device" and int(g["dur_ns"]) >= pause * 800:
        long_gaps[fn] += 1
# each planted pause is a gap at least that long (a loaded machine may add longer ones)
h.check(long_gaps["launch_epoch"] == EPOCHS and long_gaps["launch_free"] == EPOCHS
        and long_gaps["launch_step"] >= EPOCHS * (STEPS // 100),
        f"planted device gaps by call site: {long_gaps}")

# JSON's largest gaps: ending_call's callsite is the CSV row's (no nested calls). Not
# its range: JSON's is found from the last 1,024 ranges of the thread when the gap is
# classified, which a loaded machine can put after more than 1,024 "step" ranges closed
# (docs/gaps.md, "The call that ended a gap"); the CSV's is exact.
rc, doc, err = h.cutrace_json("gaps", "--format", "json", "--top", "10", data)
h.check(rc == 0 and doc, f"gaps --format json: status {rc}: {err}")
by_gap = {(g["scope"], g["stream"] or None, int(g["start_ns"]), int(g["end_ns"])): g for g in gaps}
listed = (doc or {}).get("gaps", []) + (doc or {}).get("stream_gaps", [])
h.check(len(listed) == 20, f"{len(listed)} largest gaps in JSON")
for j in listed:
    stream = None if j["scope"] == "device" else str(j["stream"])
    row = by_gap.get((j["scope"], stream, j["start_ns"], j["end_ns"]))
    c = j.get("ending_call") or {}
    h.check(row is not None and c.get("callsite") == row["callsite"],
            f"JSON gap at {j['start_ns']} ({j['scope']}): callsite {c.get('callsite')!r}; CSV "
            f"{row and row['callsite']}")

# with at most 16 gaps waiting, the same rows (the long range "epoch" known from the
# first pass), none without their range
small, small_err = table("gaps", "--format", "csv", "--tables", "gaps", data,
                         env={"CUTRACE_GAPS_HOLD_MAX": "16"})
h.check(small == gaps, f"CUTRACE_GAPS_HOLD_MAX=16: {sum(a != b for a, b in zip(small, gaps))} "
        f"rows differ of {len(gaps)} ({len(small)})")
h.check("without knowing" not in small_err, f"CUTRACE_GAPS_HOLD_MAX=16: stderr {small_err}")

h.finish()
