#!/usr/bin/env python3
"""Stream queues (tools/queues.c: report's streams table, dump --chrome --queues) when a
GPU record comes late (planted, tracewrite.py).

Thread 10 launches K0..K9 on stream 7 (calls at 1.0, 1.1, ... 1.9 ms), run back to back
from 2 ms, 10 ms each (K2: 22..32 ms); then K10..K12 at 200 ms, which find the queue
empty. K2's GPU record is written at 80 ms, after K3..K5's: the model delivers it late
(past its first 20 ms window). It takes its place in the queue by end: the depth after
each end is the same as with the records in time order (9 after K0's end, 8, 7 after
K2's at 32 ms, ... 0); before 2026-12-07 it stayed queued until K5 ended (depth 4 at
K2's end, told after 62 ms: the queue overstated by one from 32 to 62 ms). K2's own depth
(report) is 3, as in time order. Also: a late operation that ended before the latest call
began is not queued at all.

usage: test_queues_late.py CUTRACE"""
import json
import os
import subprocess
import sys

import tooltest  # noqa: F401 (puts tests/lib on the path)
from tooltest import check, finish, scratch
from tracewrite import TraceWriter

cutrace = sys.argv[1]
PID, TID, T0, US, MS = 41, 10, 10**9, 1000, 10**6
TIMED = 0x4


def queue_trace(path, in_time_order, late_ms=80):
    w = TraceWriter()
    w.add("process", pid=PID, start_ns=T0)
    w.add("device", device=0, name=w.string("GPU"), cc_major=9, sm_count=132)
    launch, kname = w.string("cudaLaunchKernel"), w.string("_Z1kv")
    records = []

    def kernel(c, call_us, gpu_ms, written_ms=None):
        b = T0 + call_us * US
        records.append((b + 50 * US, "launch", dict(corr=c, kernel=kname, grid_x=1, grid_y=1,
                                                     grid_z=1, block_x=32, block_y=1, block_z=1)))
        records.append((b + 50 * US, "api", dict(tid=TID, name=launch, begin_ns=b,
                                                 end_ns=b + 50 * US, corr=c, stream=7,
                                                 flags=TIMED)))
        start, end = T0 + gpu_ms * MS, T0 + (gpu_ms + 10) * MS
        at = end + 50 * US if written_ms is None or in_time_order else T0 + written_ms * MS
        records.append((at, "gpu", dict(corr=c, stream=7, start_ns=start, end_ns=end, type=1,
                                        name=kname)))

    for i in range(10):
        kernel(1 + i, 1000 + 100 * i, 2 + 10 * i, late_ms if i == 2 else None)
    for i in range(3):
        kernel(11 + i, 200000 + 100 * i, 202 + 10 * i)
    records.sort(key=lambda r: r[0])
    for _, kind, fields in records:
        w.add(kind, **fields)
    w.add("end", records=0, end_ns=T0 + 300 * MS)
    w.save(path)


def counters(chrome_json):
    """The stream 7 queue counter: [(ms after T0, depth)], the last value of each time."""
    last = {}
    for e in json.load(open(chrome_json))["traceEvents"]:
        if e.get("ph") == "C" and e.get("name") == "stream 7 queue":
            last[round(float(e["ts"]) * 1000 - T0) / MS] = list(e["args"].values())[0]
    return sorted(last.items())


def run(d, in_time_order, late_ms=80):
    path = os.path.join(d, "q.ctr")
    queue_trace(path, in_time_order, late_ms)
    chrome = os.path.join(d, "q.json")
    p = subprocess.run([cutrace, "dump", "--chrome", "--queues", "-o", chrome, path],
                       capture_output=True, text=True, timeout=60)
    r = subprocess.run([cutrace, "report", "--format", "json", path], capture_output=True,
                       text=True, timeout=60)
    streams = json.loads(r.stdout).get("streams", []) if r.returncode == 0 else []
    depth = streams[0]["queue_depth"] if streams else {}
    return p.returncode, p.stderr + r.stderr, counters(chrome) if p.returncode == 0 else [], depth


with scratch("cutrace-queues-late-") as d:
    rc, err, on_time, depth_on_time = run(d, True)
    check(rc == 0 and not err, f"time order: status {rc}, {err!r}")
    after = [(ts, v) for ts, v in on_time if ts >= 10]
    check([v for _, v in after] == [9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 2, 1, 0],
          f"time order: the depth after each end, then the second burst: {after}")
    rc, err, late, depth = run(d, False)
    check(rc == 0 and not err, f"late: status {rc}, {err!r}")
    late_after = [(ts, v) for ts, v in late if ts >= 10]
    check(late_after == after, f"late: the depth after each end as in time order: {late_after}")
    # depths found by the calls: 1..10 and 1..3 in time order (avg 61 / 13); late, K3 did
    # not see K2 (3), K2 itself 3 (K0 and K1 ahead of it), K4..K9 5..10 (avg 60 / 13)
    check(depth.get("max") == depth_on_time.get("max") == 10 and depth.get("avg") == 4.62,
          f"late: depths found, K2's 3: {depth} vs {depth_on_time}")

    # K2's record written at 250 ms, after the second burst's calls began: it ended long
    # before (32 ms), so it is not queued again (before: depth 5 told at 62 ms... and it
    # stayed queued past K12's end)
    rc, err, late, depth = run(d, False, late_ms=250)
    check(rc == 0 and not err, f"very late: status {rc}, {err!r}")
    tail = [v for ts, v in late if ts >= 200]
    check(tail and tail[-1] == 0 and max(tail) <= 3,
          f"very late: the second burst's queue empties, K2 not in it: {late}")
finish()
