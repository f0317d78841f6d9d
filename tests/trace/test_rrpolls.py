#!/usr/bin/env python3
"""A host polling three targets round-robin (programs/rrpolls.cu), traced on the simulated
GPU: phase 1 cudaEventQuery on three events recorded after 100, 150 and 200 ms kernels on
three streams, e0, e1, e2, e0, ... until all are ready; phase 2 the driver's cuStreamQuery
on the three streams the same way. A fourth stream D sits idle between two rr_short
kernels for each whole round.

Asserted: the program's own result is unchanged (it checks every answer it saw); each
phase is THREE outermost API records of its entry point, one per target (before
2026-12-07: one per poll, tens of thousands), each with a POLL record whose `polls` is
the program's count of that target's not-ready answers + 1 (the counts add up to every
poll the program made), result 0, spanning its own kernel's end (within 50 us: GPU times
are mapped); the stream queries carry their stream's id, the driver's the DRIVER flag;
`cutrace report --format json`: 3 calls of each entry point with all their polls, and as
its time the union of the three spins (the thread's time, counted once: not their sum);
`--by callsite`: the same in its CPU time;
`cutrace gaps --format json`: stream D's idle is caused by sync (the thread was
polling), none of the polling time host_wait (a host stall elsewhere may be). With
`fork` (a sequence open when the thread forks): the parent's file has it as one record
with all its polls, the child's none.

usage: test_rrpolls.py SIM_DIR CUTRACE LIBTRACE RRPOLLS
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cttest import check, finish, require_built, scratch_dir  # noqa: E402
from harness import (chrome_events, gap_time_within, partly_overlapping,  # noqa: E402
                     perfetto_slices, record_one_file_out, union_ns)
from rawdump import kernel_identifier, raw_records  # noqa: E402



sim_dir, cutrace, libtrace, program = sys.argv[1:5]
require_built(os.path.join(sim_dir, "libcuda.so.1"), libtrace, cutrace, program)
tmp = scratch_dir("cutrace-rrpolls-")
API_DRIVER, GPU_KERNEL = 0x10, 1
SLACK_NS = 50_000
PHASES = ["cudaEventQuery", "cuStreamQuery"]
LONGS = ["rr_long0", "rr_long1", "rr_long2"]

# The long kernels outlast any stall of a loaded machine between a launch and the first
# poll of its target (each record must begin before its kernel ends): 100, 150, 200 ms
# (10, 15, 20 ms left a stall only 10 ms). The program spins through them.
env = {"SIMCUDA_KERNEL_US": "default=5,rr_long0=100000,rr_long1=150000,rr_long2=200000"}
data = os.path.join(tmp, "rrpolls")
path, out = record_one_file_out(cutrace, libtrace, sim_dir, data, [program], "rrpolls: ok", env)
words = out.split()
if not check(len(words) == 8 and words[:2] == ["rrpolls:", "ok"], f"traced run printed {out!r}"):
    path = None
if path:
    counts = [int(w) for w in words[2:]]
    recs, names = raw_records(cutrace, path)
    poll_of = {r["corr"]: r["polls"] for r in recs if r["kind"] == "poll"}
    gpus = [r for r in recs if r["kind"] == "gpu" and r["type"] == GPU_KERNEL]
    longs = {}
    for g in sorted(gpus, key=lambda g: g["start_ns"]):
        longs.setdefault(kernel_identifier(names.get(g["name"], "")), []).append(g)
    check(all(len(longs.get(k, [])) == 2 for k in LONGS),
          f"long kernels {[(k, len(longs.get(k, []))) for k in LONGS]}, want 2 of each")
    for phase, name in enumerate(PHASES):
        recs_p = sorted((a for a in recs if a["kind"] == "api" and names.get(a["name"]) == name),
                        key=lambda a: a["begin_ns"])
        want = counts[3 * phase:3 * phase + 3]
        check(len(recs_p) == 3, f"{name}: {len(recs_p)} records, want 3 (one per target)")
        # the first round polls the targets in order: records by begin are targets 0, 1, 2
        got = [poll_of.get(a["corr"], 1) for a in recs_p]
        check(got == [n + 1 for n in want],
              f"{name}: polls per record {got[:6]}{' ...' if len(got) > 6 else ''}, the program "
              f"saw {want} not ready + 1 ready each")
        for a in recs_p[:3]:
            check(a["depth"] == 0 and a["result"] == 0
                  and bool(a["flags"] & API_DRIVER) == (name == "cuStreamQuery"),
                  f"{name}: depth {a['depth']} result {a['result']} flags {a['flags']:#x}")
        # each record ends at its own target's answer, after its kernel's end
        if len(recs_p) == 3 and all(len(longs.get(k, [])) == 2 for k in LONGS):
            for a, k in zip(recs_p, LONGS):
                g = longs[k][phase]
                check(a["begin_ns"] <= g["end_ns"] <= a["end_ns"] + SLACK_NS,
                      f"{name}: span {a['begin_ns']}..{a['end_ns']} does not cover {k}'s end {g['end_ns']}")
                if name == "cuStreamQuery":
                    check(a["stream"] == g["stream"], f"{name}: stream {a['stream']}, {k}'s {g['stream']}")

    p = subprocess.run([cutrace, "report", "--format", "json", path], capture_output=True,
                       text=True, timeout=60)
    rows = {r["name"]: r for r in json.loads(p.stdout).get("apis", [])} if p.returncode == 0 else {}
    apis = [a for a in recs if a["kind"] == "api"]
    for phase, name in enumerate(PHASES):
        r = rows.get(name, {})
        check(r.get("calls") == 3 and r.get("polls") == sum(counts[3 * phase:3 * phase + 3]) + 3
              and r.get("errors") == 0, f"report json {name}: {r}")
        # its time is the thread's: the union of the three overlapping spins, not their sum
        spans = [(a["begin_ns"], a["end_ns"]) for a in apis if names.get(a["name"]) == name]
        want, summed = union_ns(spans), sum(e - b for b, e in spans)
        check(r.get("total_ns") == want and want < summed,
              f"report json {name}: total_ns {r.get('total_ns')}, want the union of its records "
              f"{want} (their sum {summed})")
    # --by callsite (the queries have no stack: in `without_stack`): the same, other calls whole
    p = subprocess.run([cutrace, "report", "--by", "callsite", "--format", "json", path],
                       capture_output=True, text=True, timeout=60)
    without = json.loads(p.stdout).get("without_stack", {}) if p.returncode == 0 else {}
    outer = [a for a in apis if a["depth"] == 0 and not a["stack"]]
    want = sum(a["end_ns"] - a["begin_ns"] for a in outer if names.get(a["name"]) not in PHASES)
    want += sum(union_ns([(a["begin_ns"], a["end_ns"]) for a in outer if names.get(a["name"]) == n])
                for n in PHASES)
    check(without.get("calls") == len(outer) and without.get("cpu_ns") == want,
          f"report --by callsite json: without_stack {without}, want {len(outer)} calls, cpu_ns "
          f"{want} (query spins counted once per thread)")
    p = subprocess.run([cutrace, "gaps", "--format", "json", "--top", "1000", path],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, f"gaps: {p.stderr}")
    doc = json.loads(p.stdout) if p.returncode == 0 else {}
    shorts = [g for g in gpus if kernel_identifier(names.get(g["name"], "")) == "rr_short"]
    stream_d = shorts[0]["stream"] if shorts else None
    rows = [r for r in doc.get("streams", []) if r.get("stream") == stream_d]
    if check(len(rows) == 1, f"gaps json: stream {stream_d} rows {rows}"):
        idle = rows[0].get("idle", {})
        # host_wait while the thread polled: none (a loaded host stalling between the
        # sync and the next phase's launch makes a host_wait gap rightly: 1.9 ms once)
        polling = gap_time_within(doc.get("stream_gaps", []), stream_d, "host_wait",
                                  [(a["begin_ns"], a["end_ns"]) for a in apis
                                   if names.get(a["name"]) in PHASES])
        check(idle.get("sync_ns", 0) >= 350_000_000 and polling < 1_000_000,
              f"stream D's idle: {idle}, {polling} ns of its host_wait gaps while polling "
              f"(want >= 350 ms sync, < 1 ms host_wait in the polls)")
    # dump --chrome: the thread's track nests (docs/dump.md): the three overlapping records
    # of a phase must not partly overlap as slices (a later one starts at the earlier end)
    events = chrome_events(cutrace, path, os.path.join(tmp, "rrpolls.json"), "rrpolls")
    tracks = {}
    for ev in events or []:
        if ev.get("ph") == "X" and ev.get("name") in PHASES:
            tracks.setdefault((ev["pid"], ev["tid"]), []).append((ev["ts"], ev["ts"] + ev["dur"]))
    partial = [pair for slices in tracks.values() for pair in partly_overlapping(slices)]
    check(events is not None and sum(len(v) for v in tracks.values()) == 6 and not partial,
          f"dump --chrome: {sum(len(v) for v in tracks.values())} query slices (want 6), "
          f"partly overlapping: {partial[:3]}")
    # dump --perfetto writes begin/end pairs: partly overlapping slices were paired
    # wrongly there (the first spin got the last one's end); each must end at its record's
    pf = perfetto_slices(cutrace, path, os.path.join(tmp, "rrpolls.pftrace"), PHASES)
    if pf:
        got, problems = [g[:2] for g in pf[0]], pf[1]
        begin_of = {a["end_ns"]: a["begin_ns"] for a in recs
                    if a["kind"] == "api" and names.get(a["name"]) in PHASES}
        wrong = [g for g in got if g[1] not in begin_of or begin_of[g[1]] > g[0]]
        check(not problems and len(got) == 6 and not wrong,
              f"dump --perfetto: query slices {got}: {wrong} match no record (its end, starting "
              f"at or after its begin); records (begin, end) {sorted(begin_of.items(), key=lambda x: x[1])}; "
              f"{problems[:3]}")

# `rrpolls fork`: a sequence open at fork() is the parent's: the child (one
# cudaDeviceSynchronize, then exit) must not write it at its first traced call.
# The program checks that its first query is not ready: rr_long0 lasts 1 s so that no
# stall of a loaded machine between its launch and that query ends it (10 ms failed
# alone once in 3 under load). It costs 1 s of wall time, no CPU: the child's
# synchronisation sleeps until the kernel's end, then the parent's next poll is ready.
FORK_KERNEL_US = 1_000_000
data = os.path.join(tmp, "rrpolls-fork")
p = subprocess.run([cutrace, "record", "-q", "-o", data, "--", program, "fork"],
                   env=dict(os.environ, LD_LIBRARY_PATH=sim_dir, CUTRACE_PRELOAD=libtrace,
                            SIMCUDA_KERNEL_US=f"default=5,rr_long0={FORK_KERNEL_US}"),
                   capture_output=True, text=True, timeout=120)
words = p.stdout.split()
if check(p.returncode == 0 and words[:3] == ["rrpolls:", "fork", "ok"] and len(words) == 4,
         f"fork run: status {p.returncode}, {p.stdout!r} {p.stderr[-300:]!r}"):
    files = sorted(os.listdir(data))
    if check(len(files) == 2, f"fork run: two trace files (parent, child), found {files}"):
        queries = {}
        for f in files:
            recs, names = raw_records(cutrace, os.path.join(data, f))
            polls = {r["corr"]: r["polls"] for r in recs if r["kind"] == "poll"}
            queries[f] = [polls.get(a["corr"], 1) for a in recs
                          if a["kind"] == "api" and names.get(a["name"]) == "cudaEventQuery"]
        got = sorted(queries.values())
        check(got == [[], [int(words[3]) + 1]],
              f"fork run: cudaEventQuery polls per file {queries}, want none in the child, one "
              f"record of {int(words[3]) + 1} polls in the parent")
sys.exit(finish())
