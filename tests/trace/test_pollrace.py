#!/usr/bin/env python3
"""Threads polling while the process exits (programs/pollexit.cu `race`), traced on the
simulated GPU, RUNS times: at exit the final flush writes the spins the other threads have
open while they go on polling and ending spins (poll.c claims each spin for one writer and
copies it under the owner's sequence lock).

`pollexit race 4 LOG` (px_long0 planted 30 us): 4 threads each launch, record an event and
poll it until ready, over and over, logging the return time (CLOCK_MONOTONIC, the clock of
the trace) and answer of every poll; main returns from main after each thread's third spin.
Asserted per run and thread (by the tids printed), from its cudaEventQuery records in begin
order against its log:
- no corr is written twice (a spin written by its thread and by the final flush);
- the records cover the log's polls in order, each beginning a spin (after the poll before
  it returned, before its first poll returned): none lost or doubled; only the spin the
  final flush wrote open may go on in the next record (the thread polls on after it,
  and what it writes before the core's last pass is in the file), from the next poll or
  the one after (a poll under way while the final flush copied is in neither);
- whole (not torn): a record of P polls ends after the spin's (P-1)-th poll returned and
  no later than its P-th returned (that poll's end), with that poll's answer (600 when the
  spin was still open), every poll before it not ready;
- at most one open record (result 600) before the thread's last, and at least its 3
  ended spins and the open one written.

usage: test_pollrace.py SIM_DIR CUTRACE LIBTRACE POLLEXIT [RUNS]
"""
import bisect
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import cttest  # noqa: E402
from harness import Harness  # noqa: E402
from rawdump import raw_records  # noqa: E402

h = Harness(sys.argv)
program = h.wdir
runs = int(h.extra[0]) if h.extra else 20
cttest.require_built(program)
THREADS, PART, NOT_READY = 4, 1 << 17, 600


def read_log(path):
    """Per thread: (tid, [(time, answer)...]) from the program's shared log."""
    with open(path, "rb") as f:
        data = f.read()
    out = []
    for i in range(THREADS):
        base = i * PART * 8
        tid, n = struct.unpack_from("<QQ", data, base)
        words = struct.unpack_from(f"<{2 * n}Q", data, base + 16)
        out.append((tid, list(zip(words[0::2], words[1::2]))))
    return out


def check_thread(run, tid, polls, recs):
    """The problems of one thread's records against its log (empty when none)."""
    times = [t for t, _ in polls]
    bad = []
    cursor = cut = 0  # the first poll no record covers yet; open records not the last
    for k, a in enumerate(recs):
        b, e, p, res = a["begin_ns"], a["end_ns"], a["polls"], a["result"]
        j = bisect.bisect_right(times, b)  # the first poll that returned after b
        where = f"run {run} tid {tid} record {k} (polls {p}, result {res}, {b}..{e})"
        spin_start = j == 0 or polls[j - 1][1] != NOT_READY
        after_cut = k > 0 and recs[k - 1]["result"] == NOT_READY
        # the next spin of the log; after the spin the final flush wrote open, the same
        # spin going on, from the next poll or the one after (a poll under way while it
        # copied: counted in neither)
        if not ((j == cursor and spin_start) or (after_cut and j in (cursor, cursor + 1))):
            bad.append(f"{where}: begins at poll {j} of the log, the records before cover "
                       f"up to poll {cursor - 1}")
        last = j + p - 1  # the poll that ended the record
        if p < 1 or last > len(polls) or (last == len(polls) and k != len(recs) - 1):
            bad.append(f"{where}: {p} polls from poll {j}, the log has {len(polls)}")
            break
        if p >= 2 and not times[last - 1] < e:
            bad.append(f"{where}: ends before its poll {p - 1} returned ({times[last - 1]}): torn")
        if last < len(polls):
            if not e <= times[last]:
                bad.append(f"{where}: ends after its poll {p} returned ({times[last]}): torn")
            if polls[last][1] != res:
                bad.append(f"{where}: result {res}, poll {p} answered {polls[last][1]}: torn")
        if any(r != NOT_READY for _, r in polls[j:min(last, len(polls))]):
            bad.append(f"{where}: a poll before its last was ready")
        cut += res == NOT_READY and k != len(recs) - 1
        cursor = last + 1
    if cut > 1:
        bad.append(f"run {run} tid {tid}: {cut} open records before its last (one final flush)")
    if len(recs) < 4 and not (len(recs) == 3 and recs[-1]["result"] == NOT_READY):
        bad.append(f"run {run} tid {tid}: {len(recs)} records, want its 3 ended spins and the open one")
    return bad


total_recs = total_open = 0
for run in range(runs):
    data, log = os.path.join(h.tmp, f"r{run}"), os.path.join(h.tmp, f"log{run}")
    p = subprocess.run([h.cutrace, "record", "-q", "-o", data, "--", program, "race", str(THREADS), log],
                       env=h.env("default=5,px_long0=30"), capture_output=True, text=True,
                       timeout=120)
    files = sorted(os.listdir(data)) if os.path.isdir(data) else []
    words = p.stdout.split()
    if not h.check(p.returncode == 0 and words[:3] == ["pollexit:", "race", "ok"]
                   and len(words) == 3 + THREADS and len(files) == 1,
                   f"run {run}: status {p.returncode}, {p.stdout!r}, files {files}, {p.stderr[-300:]!r}"):
        continue
    recs, names = raw_records(h.cutrace, os.path.join(data, files[0]))
    corrs = [r["corr"] for r in recs if r["kind"] == "api"]
    twice = sorted({c for c in corrs if corrs.count(c) > 1}) if len(set(corrs)) != len(corrs) else []
    h.check(not twice, f"run {run}: corrs written twice: {twice[:5]}")
    npolls = {r["corr"]: r["polls"] for r in recs if r["kind"] == "poll"}
    logs = dict(read_log(log))
    problems = []
    for tid in (int(w) for w in words[3:]):
        mine = sorted((dict(a, polls=npolls.get(a["corr"], 1)) for a in recs
                       if a["kind"] == "api" and a["tid"] == tid
                       and names.get(a["name"]) == "cudaEventQuery"), key=lambda a: a["begin_ns"])
        total_recs += len(mine)
        total_open += sum(1 for a in mine if a["result"] == NOT_READY)
        problems += check_thread(run, tid, logs.get(tid, []), mine)
    h.check(not problems, f"run {run}: {len(problems)} problem(s): {problems[:4]}")
print(f"{runs} runs: {total_recs} spin records checked against the logs, {total_open} written open "
      f"(by the final flush)")
h.finish()
