#!/usr/bin/env python3
"""A host polling the GPU instead of blocking (programs/polls.cu), traced on the simulated
GPU: three phases each poll B's 100 ms kernel pl_long until it is done while stream A sits
idle between two pl_short kernels: cudaEventQuery (busy spin), cudaStreamQuery (100 us
sleeps between polls), the driver's cuEventQuery (busy spin).

Asserted: the program's own result is unchanged (it checks every answer it saw: not
ready, then success); each phase is ONE outermost API record of its entry point with a POLL
record (format 1.12) whose `polls` is the program's count of not-ready answers + 1 (the ready one),
result 0, spanning pl_long's end (the wait covered; within 50 us: GPU times are mapped), the driver's flagged DRIVER and
the stream query on B's stream; `cutrace report --format json` has one call and those
polls per row, the text table '(N polls)'; `cutrace gaps --format json`: stream A's idle
is caused by sync (the thread was polling), none of the polling time host_wait (a host
stall elsewhere may be).

With `static` (POLLS built with the simulated runtime linked in, as nvcc's default static
cudart): the runtime's queries reach the driver from the program, so the three records
are cuEventQuery, cuStreamQuery, cuEventQuery (DRIVER), the same checks otherwise.

usage: test_polls.py SIM_DIR CUTRACE LIBTRACE POLLS [static]
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cttest import check, finish, require_built, scratch_dir  # noqa: E402
from harness import chrome_events, gap_time_within, record_one_file_out  # noqa: E402
from rawdump import kernel_identifier, raw_records  # noqa: E402

sim_dir, cutrace, libtrace, program = sys.argv[1:5]
static = sys.argv[5:] == ["static"]
require_built(os.path.join(sim_dir, "libcuda.so.1"), libtrace, cutrace, program)
tmp = scratch_dir("cutrace-polls-")
API_DRIVER, GPU_KERNEL = 0x10, 1
SLACK_NS = 50_000
PHASES = ["cudaEventQuery", "cudaStreamQuery", "cuEventQuery"]
if static:  # the runtime linked in: its queries reach the driver's entry points from the program
    PHASES = ["cuEventQuery", "cuStreamQuery", "cuEventQuery"]

# pl_long outlasts any stall of a loaded machine between its launch and the first poll
# (the program checks one poll saw it busy; each record must begin well before its end;
# A's gaps are sync while the polls fill more than half of them): 100 ms. Before
# 2026-12-07: 20 ms, and each record had to span 15 ms (a 5 ms stall failed it).
LONG_MS = 100
env = {"SIMCUDA_KERNEL_US": f"default=5,pl_long={LONG_MS * 1000}"}
data = os.path.join(tmp, "polls")
path, out = record_one_file_out(cutrace, libtrace, sim_dir, data, [program], "polls: ok", env)
words = out.split()
# the program checked every answer it saw (not ready, then success): unchanged by tracing
if not check(len(words) == 5 and words[:2] == ["polls:", "ok"], f"traced run printed {out!r}"):
    path = None
if path:
    counts = [int(w) for w in words[2:]]
    recs, names = raw_records(cutrace, path)
    apis = [r for r in recs if r["kind"] == "api"]
    poll_of = {r["corr"]: r["polls"] for r in recs if r["kind"] == "poll"}
    for a in apis:
        a["polls"] = poll_of.get(a["corr"], 0)
    gpus = [r for r in recs if r["kind"] == "gpu" and r["type"] == GPU_KERNEL]
    longs = sorted((g for g in gpus if kernel_identifier(names.get(g["name"], "")) == "pl_long"),
                   key=lambda g: g["start_ns"])
    check(len(longs) == 3, f"{len(longs)} pl_long kernels, want 3")
    polls_seen = {}
    queries = sorted((a for a in apis if "Query" in names.get(a["name"], "")), key=lambda a: a["begin_ns"])
    check([names.get(a["name"]) for a in queries] == PHASES,
          f"query records {[names.get(a['name']) for a in queries]}, want one per phase {PHASES}")
    for i, (name, a) in enumerate(zip(PHASES, queries)):
        if names.get(a["name"]) != name:
            continue
        polls_seen[name] = polls_seen.get(name, 0) + a.get("polls", 0)
        check(a["depth"] == 0 and a["result"] == 0, f"{name}: depth {a['depth']} result {a['result']}")
        check(bool(a["flags"] & API_DRIVER) == (not name.startswith("cuda")),
              f"{name}: flags {a['flags']:#x}")
        check(counts[i] > 0 and a.get("polls") == counts[i] + 1,
              f"phase {i + 1} {name}: polls {a.get('polls')}, the program saw {counts[i]} not ready + 1 ready")
        if len(longs) == 3:
            g = longs[i]
            # the kernel's end is mapped from GPU clocks: within 50 us of the ready answer;
            # the record begins at the first poll, a quarter of the kernel or more before its
            # end (not at a late poll: a loaded host's polls can be ms apart): true unless
            # the host stalled 75 ms before its first poll (44 ms seen, test_greenctx)
            check(a["begin_ns"] + LONG_MS * 250_000 <= g["end_ns"] <= a["end_ns"] + SLACK_NS,
                  f"{name}: span {a['begin_ns']}..{a['end_ns']} does not cover pl_long's end {g['end_ns']}")
            if name == "cudaStreamQuery":
                check(a["stream"] == g["stream"], f"{name}: stream {a['stream']}, pl_long's {g['stream']}")

    p = subprocess.run([cutrace, "report", "--format", "json", path], capture_output=True,
                       text=True, timeout=60)
    rows = {r["name"]: r for r in json.loads(p.stdout).get("apis", [])} if p.returncode == 0 else {}
    for name in set(PHASES):
        r = rows.get(name, {})
        check(r.get("calls") == PHASES.count(name) and r.get("polls") == polls_seen.get(name)
              and r.get("errors") == 0, f"report json {name}: {r}")
    p = subprocess.run([cutrace, "report", path], capture_output=True, text=True, timeout=60)
    for name in set(PHASES):
        check(f"{name} ({polls_seen.get(name)} polls)" in p.stdout, f"report text lacks '{name} (N polls)'")

    events = chrome_events(cutrace, path, os.path.join(tmp, "polls.json"), "chrome") or []
    spins = sorted((ev for ev in events if ev.get("ph") == "X" and "Query" in ev.get("name", "")),
                   key=lambda ev: ev.get("ts", 0))
    check([(ev["name"], ev.get("args", {}).get("polls")) for ev in spins] ==
          [(name, n + 1) for name, n in zip(PHASES, counts)],
          f"dump --chrome: query slices {[(ev['name'], ev.get('args', {}).get('polls')) for ev in spins]}")
    p = subprocess.run([cutrace, "gaps", "--format", "json", "--top", "1000", path],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, f"gaps: {p.stderr}")
    doc = json.loads(p.stdout) if p.returncode == 0 else {}
    shorts = sorted((g for g in gpus if kernel_identifier(names.get(g["name"], "")) == "pl_short"),
                    key=lambda g: g["start_ns"])
    stream_a = shorts[0]["stream"] if shorts else None
    rows = [r for r in doc.get("streams", []) if r.get("stream") == stream_a]
    if check(len(rows) == 1, f"gaps json: stream {stream_a} rows {rows}"):
        idle = rows[0].get("idle", {})
        # host_wait while the thread polled (a loaded host may stall elsewhere: that is
        # host_wait rightly, and was 1.9 ms once in rrpolls)
        polling = gap_time_within(doc.get("stream_gaps", []), stream_a, "host_wait",
                                  [(a["begin_ns"], a["end_ns"]) for a in queries])
        check(idle.get("sync_ns", 0) >= 3 * LONG_MS * 1_000_000 and polling < 1_000_000,
              f"stream A's idle: {idle}, {polling} ns of its host_wait gaps while polling "
              f"(want >= {3 * LONG_MS} ms sync, < 1 ms host_wait in the polls)")
sys.exit(finish())
