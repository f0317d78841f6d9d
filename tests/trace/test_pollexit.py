#!/usr/bin/env python3
"""Spins of queries left open at a thread's or the process's exit, and spins cut by an NVTX
range's push and pop (programs/pollexit.cu), traced on the simulated GPU.

`pollexit exit N` (planted: N = 1000; the kernels outlast the run): thread A exits after N
not-ready cudaEventQuery polls, thread W sleeps after N + 1 not-ready cuStreamQuery polls
(driver) and main returns from main after N + 2 not-ready cudaEventQuery polls. Asserted:
each thread (by the tids the program printed) has exactly one record of its entry point,
result 600 (not ready), with a POLL record of its planted number of polls (before
2026-12-07 evening all three were lost); `cutrace report --format json` counts 2N + 2
cudaEventQuery polls and N + 1 cuStreamQuery polls, no errors.

`pollexit nvtx`: events e0, e1 (300 and 400 ms kernels) polled in turn, 3 rounds, then 4
rounds inside nvtxRangePushA("inside") ... nvtxRangePop(), then until both are ready.
Asserted: six cudaEventQuery records, polls per record in begin order 3, 3, 4, 4 (result
600) and the program's after-pop counts + 1 (result 0); the first two end before the
range begins, the middle two lie inside it, the last two begin after it ends (a spin
never straddles a range's edge); in `dump --chrome` the thread's range and query slices
nest (none partly overlaps another); in `dump --perfetto` each query slice and the range
end at their records' ends (begin/end pairs matched right) with no reader problems.

`pollexit pause` (--capture=profiler; e0's kernel 1 s, to outlast the handoffs between
the threads on a loaded machine): thread T polls e0 3 times, main pauses tracing
(cudaProfilerStop), T polls 4 times, main resumes (cudaProfilerStart), T polls until
ready. Asserted: T's cudaEventQuery records are [3 polls, 600] ending before the pause
begins and [the program's after-restart count + 1, 0] beginning after it ends (before,
the first spin went on after the pause: one record of both windows' polls across it).
`pollexit quiet`: the same without T's polls while paused (only main's
cudaProfilerStop and cudaProfilerStart come between T's third and fourth poll): the
same two records (before 2026-12-07 late: one spin across the pause).

`pollexit steps`: 3 NVTX "step" ranges, each polling three events (5, 8, 11 ms kernels)
in turn until ready. Asserted: `cutrace steps --format json` has 3 steps; each step's
`cuda_ns` is the sum of its other calls' spans plus the UNION of its query records
(computed from the raw records: the spins overlap), `sync_ns` that union, both exactly,
and `cuda_ns` at most the step's time (summed, the spins were ~2.5x the step).

`pollexit abort` (--capture=profiler): thread T's spin of 3 cudaEventQuery polls, thread
U's of 3 driver cuStreamQuery polls and V's of 3 cudaEventQuery polls are open when main
pauses tracing; T then launches a kernel (<<<>>>), U records an event through the driver
and V begins a capture through the driver (a call whose state is kept while paused), all
while paused; main aborts (no exit flush). Asserted: T's and V's [cudaEventQuery, 3 polls,
600] and U's [cuStreamQuery, 3, 600] are in the trace (before session 15, 2026-12-07, a launch or another call reached while paused
passed by the open spin: lost here).

`pollexit duration` (--duration 1; e0's kernel 2 s): main polls e0 until ready. Asserted:
one cudaEventQuery record, not ready, of at most the program's not-ready polls, ending no
later than the duration's PAUSE begins (before session 15, 2026-12-07: one record of every poll, the
answer included, ending about 1 s after the recording's end).

usage: test_pollexit.py SIM_DIR CUTRACE LIBTRACE POLLEXIT
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cttest import check, finish, require_built, scratch_dir  # noqa: E402
from harness import (chrome_events, partly_overlapping, perfetto_slices,  # noqa: E402
                     record_one_file_out, union_ns)
from rawdump import raw_records  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))

sim_dir, cutrace, libtrace, program = sys.argv[1:5]
require_built(os.path.join(sim_dir, "libcuda.so.1"), libtrace, cutrace, program)
tmp = scratch_dir("cutrace-pollexit-")
API_DRIVER, NOT_READY = 0x10, 600
N = 1000


def queries(recs, names, wanted):
    """The API records of the entry points in wanted, by begin, each with its polls."""
    polls = {r["corr"]: r["polls"] for r in recs if r["kind"] == "poll"}
    out = [dict(a, polls=polls.get(a["corr"], 1)) for a in recs
           if a["kind"] == "api" and names.get(a["name"]) in wanted]
    return sorted(out, key=lambda a: a["begin_ns"])


# ---- spins open at a thread's exit and at the process's exit
env = {"SIMCUDA_KERNEL_US": "default=5,px_long0=1000000,px_long1=1000000,px_long2=1000000"}
path, out = record_one_file_out(cutrace, libtrace, sim_dir, os.path.join(tmp, "exit"),
                                [program, "exit", str(N)], "pollexit: exit ok", env)
words = out.split()
if path and check(len(words) == 6, f"exit run printed {out!r}"):
    tid_a, tid_w, tid_m = (int(w) for w in words[3:6])
    recs, names = raw_records(cutrace, path)
    got = {}
    for a in queries(recs, names, ("cudaEventQuery", "cuStreamQuery")):
        got.setdefault(a["tid"], []).append((names[a["name"]], a["polls"], a["result"],
                                             bool(a["flags"] & API_DRIVER)))
    want = {tid_a: [("cudaEventQuery", N, NOT_READY, False)],
            tid_w: [("cuStreamQuery", N + 1, NOT_READY, True)],
            tid_m: [("cudaEventQuery", N + 2, NOT_READY, False)]}
    for tid, label in ((tid_a, "thread A (exited mid-spin)"),
                       (tid_w, "thread W (alive mid-spin at process exit)"),
                       (tid_m, "main (returned from main mid-spin)")):
        check(got.get(tid) == want[tid],
              f"{label}: records (entry point, polls, result, driver) {got.get(tid)}, want {want[tid]}")
    p = subprocess.run([cutrace, "report", "--format", "json", path], capture_output=True,
                       text=True, timeout=60)
    rows = {r["name"]: r for r in json.loads(p.stdout).get("apis", [])} if p.returncode == 0 else {}
    for name, polls in (("cudaEventQuery", 2 * N + 2), ("cuStreamQuery", N + 1)):
        r = rows.get(name, {})
        check(r.get("polls") == polls and r.get("errors") == 0,
              f"report json {name}: {r}, want {polls} polls, no errors")

# ---- spins cut by an NVTX push and pop
env = {"SIMCUDA_KERNEL_US": "default=5,px_long0=300000,px_long1=400000"}  # outlast 14 polls under load
path, out = record_one_file_out(cutrace, libtrace, sim_dir, os.path.join(tmp, "nvtx"),
                                [program, "nvtx"], "pollexit: nvtx ok", env)
words = out.split()
if path and check(len(words) == 5, f"nvtx run printed {out!r}"):
    after = [int(w) for w in words[3:5]]
    recs, names = raw_records(cutrace, path)
    q = queries(recs, names, ("cudaEventQuery",))
    ranges = [r for r in recs if r["kind"] == "range" and names.get(r["name"]) == "inside"]
    got = [(a["polls"], a["result"]) for a in q]
    want = [(3, NOT_READY), (3, NOT_READY), (4, NOT_READY), (4, NOT_READY),
            (after[0] + 1, 0), (after[1] + 1, 0)]
    check(got == want, f"nvtx: cudaEventQuery records (polls, result) by begin {got}, want {want}")
    if check(len(ranges) == 1 and len(q) == 6, f"nvtx: {len(ranges)} ranges 'inside', {len(q)} queries"):
        rb, re_ = ranges[0]["begin_ns"], ranges[0]["end_ns"]
        where = ["before" if a["end_ns"] <= rb else "inside" if rb <= a["begin_ns"] and a["end_ns"] <= re_
                 else "after" if a["begin_ns"] >= re_ else "straddles" for a in q]
        check(where == ["before"] * 2 + ["inside"] * 2 + ["after"] * 2,
              f"nvtx: query records against the range {rb}..{re_}: {where}")
    # dump --chrome: the thread's track nests (the range and the query slices)
    events = chrome_events(cutrace, path, os.path.join(tmp, "nvtx.json"), "nvtx")
    slices = [(ev["ts"], ev["ts"] + ev["dur"], ev["name"]) for ev in events or []
              if ev.get("ph") == "X" and ev.get("name") in ("cudaEventQuery", "inside")]
    partial = partly_overlapping(slices)
    check(events is not None and len(slices) == 7 and not partial,
          f"dump --chrome: {len(slices)} range and query slices (want 7), partly overlapping: "
          f"{partial[:3]}")
    # dump --perfetto: begin/end pairs; a partly overlapping pair would be matched wrongly
    pf = perfetto_slices(cutrace, path, os.path.join(tmp, "nvtx.pftrace"), ("cudaEventQuery", "inside"))
    if pf:
        (got, problems), ends = pf, {a["end_ns"]: a["begin_ns"] for a in q}
        ends.update({r["end_ns"]: r["begin_ns"] for r in ranges})
        wrong = [g for g in got if g[1] not in ends or ends[g[1]] > g[0]]
        check(not problems and len(got) == 7 and not wrong,
              f"dump --perfetto: slices {got}: {wrong} match no record's end; {problems[:3]}")

# ---- steps: a step's CUDA time counts its thread's overlapping spins once
env = {"SIMCUDA_KERNEL_US": "default=5,px_long0=5000,px_long1=8000,px_long2=11000"}
path, out = record_one_file_out(cutrace, libtrace, sim_dir, os.path.join(tmp, "steps"),
                                [program, "steps"], "pollexit: steps ok", env)
if path:
    recs, names = raw_records(cutrace, path)
    ranges = sorted((r for r in recs if r["kind"] == "range" and names.get(r["name"]) == "step"),
                    key=lambda r: r["begin_ns"])
    p = subprocess.run([cutrace, "steps", "--format", "json", path], capture_output=True,
                       text=True, timeout=60)
    doc = json.loads(p.stdout) if p.returncode == 0 else {}
    steps = (doc.get("processes") or [{}])[0].get("steps", [])
    if check(len(steps) == 3 and len(ranges) == 3, f"steps: {len(steps)} steps, {len(ranges)} ranges, "
             f"status {p.returncode} {p.stderr[-200:]!r}"):
        for r, s in zip(ranges, steps):
            calls = [a for a in recs if a["kind"] == "api" and a["depth"] == 0 and a["tid"] == r["tid"]
                     and r["begin_ns"] <= a["begin_ns"] <= r["end_ns"]]
            spins = [(a["begin_ns"], a["end_ns"]) for a in calls
                     if names.get(a["name"]) == "cudaEventQuery"]
            other = sum(a["end_ns"] - a["begin_ns"] for a in calls
                        if names.get(a["name"]) != "cudaEventQuery")
            want = other + union_ns(spins)
            check(s.get("cuda_ns") == want and s.get("sync_ns") == union_ns(spins)
                  and want <= s.get("time_ns", 0) and len(spins) >= 3,
                  f"steps: step {s.get('step')} cuda_ns {s.get('cuda_ns')} sync_ns {s.get('sync_ns')} "
                  f"time_ns {s.get('time_ns')}, want cuda_ns {want} (other calls {other} + the union "
                  f"of {len(spins)} spins {union_ns(spins)}; their sum {sum(e - b for b, e in spins)})")

# ---- a spin open when tracing pauses ends at its last poll before the pause: whether
# the thread polls while tracing is paused (`pause`) or not (`quiet`: only another
# thread's cudaProfilerStop/Start come between its polls)
for mode in ("pause", "quiet"):
    data = os.path.join(tmp, mode)
    p = subprocess.run([cutrace, "record", "-q", "--capture=profiler", "-o", data, "--", program, mode],
                       env=dict(os.environ, LD_LIBRARY_PATH=sim_dir, CUTRACE_PRELOAD=libtrace,
                                SIMCUDA_KERNEL_US="default=5,px_long0=1000000,px_long1=5000"),
                       capture_output=True, text=True, timeout=120)
    words = p.stdout.split()
    files = sorted(os.listdir(data)) if os.path.isdir(data) else []
    if not check(p.returncode == 0 and words[:3] == ["pollexit:", mode, "ok"] and len(words) == 4
                 and len(files) == 1, f"{mode} run: status {p.returncode}, {p.stdout!r}, files {files}, "
                 f"{p.stderr[-300:]!r}"):
        continue
    recs, names = raw_records(cutrace, os.path.join(data, files[0]))
    q = queries(recs, names, ("cudaEventQuery",))
    got = [(a["polls"], a["result"]) for a in q]
    want = [(3, NOT_READY), (int(words[3]) + 1, 0)]
    check(got == want, f"{mode}: cudaEventQuery records (polls, result) {got}, want {want}")
    pauses = sorted({(r["begin_ns"], r["end_ns"]) for r in recs
                     if r["kind"] == "pause" and r["end_ns"]})
    # the second pause is the program's (the first: from the start to cudaProfilerStart)
    if check(len(pauses) == 2 and len(q) == 2, f"{mode}: pauses {pauses}, {len(q)} queries"):
        pb, pe = pauses[1]
        check(q[0]["end_ns"] <= pb and q[1]["begin_ns"] >= pe,
              f"{mode}: records {[(a['begin_ns'], a['end_ns']) for a in q]} against the pause {pb}..{pe}")

# ---- spins open when a launch or a driver call comes while tracing is paused: written
# then, as they stand (the process then aborts: no exit flush writes what is still open)
data = os.path.join(tmp, "abort")
p = subprocess.run([cutrace, "record", "-q", "--capture=profiler", "-o", data, "--", program, "abort"],
                   env=dict(os.environ, LD_LIBRARY_PATH=sim_dir, CUTRACE_PRELOAD=libtrace,
                            SIMCUDA_KERNEL_US="default=5,px_long0=1000000,px_long1=1000000"),
                   capture_output=True, text=True, timeout=120)
words = p.stdout.split()
files = sorted(os.listdir(data)) if os.path.isdir(data) else []
if check(p.returncode != 0 and words[:3] == ["pollexit:", "abort", "ok"] and len(words) == 6
         and len(files) == 1, f"abort run: status {p.returncode}, {p.stdout!r}, files {files}, "
         f"{p.stderr[-300:]!r}"):
    tid_t, tid_u, tid_v = int(words[3]), int(words[4]), int(words[5])
    recs, names = raw_records(cutrace, os.path.join(data, files[0]))
    got = {}
    for a in queries(recs, names, ("cudaEventQuery", "cuStreamQuery")):
        got.setdefault(a["tid"], []).append((names[a["name"]], a["polls"], a["result"]))
    for tid, want, label in ((tid_t, [("cudaEventQuery", 3, NOT_READY)], "T (launch <<<>>> while paused)"),
                             (tid_u, [("cuStreamQuery", 3, NOT_READY)], "U (driver cuEventRecord while paused)"),
                             (tid_v, [("cudaEventQuery", 3, NOT_READY)], "V (driver capture begun while paused)")):
        check(got.get(tid) == want, f"abort: thread {label}: records {got.get(tid)}, want {want}")

# ---- a spin open when CUTRACE_DURATION ends: it ends at its last poll before the end of
# the recording (the polls after it are not counted, nor the answer)
data = os.path.join(tmp, "duration")
p = subprocess.run([cutrace, "record", "-q", "--duration", "1", "-o", data, "--", program, "duration"],
                   env=dict(os.environ, LD_LIBRARY_PATH=sim_dir, CUTRACE_PRELOAD=libtrace,
                            SIMCUDA_KERNEL_US="default=5,px_long0=2000000,px_long1=5000"),
                   capture_output=True, text=True, timeout=120)
words = p.stdout.split()
files = sorted(os.listdir(data)) if os.path.isdir(data) else []
if check(p.returncode == 0 and words[:3] == ["pollexit:", "duration", "ok"] and len(words) == 4
         and len(files) == 1, f"duration run: status {p.returncode}, {p.stdout!r}, files {files}, "
         f"{p.stderr[-300:]!r}"):
    recs, names = raw_records(cutrace, os.path.join(data, files[0]))
    q = queries(recs, names, ("cudaEventQuery",))
    pauses = [r for r in recs if r["kind"] == "pause" and names.get(r["why"]) == "duration"]
    got = [(a["result"], 1 <= a["polls"] <= int(words[3])) for a in q]
    check(got == [(NOT_READY, True)], f"duration: cudaEventQuery records (result, 1 <= polls <= "
          f"{words[3]} not-ready answers) {got}, want one not ready")
    if check(len(pauses) >= 1 and len(q) == 1, f"duration: {len(pauses)} duration pauses, {len(q)} queries"):
        check(q[0]["end_ns"] <= pauses[0]["begin_ns"],
              f"duration: the spin ends at {q[0]['end_ns']}, after the recording's end {pauses[0]['begin_ns']}")
sys.exit(finish())
