#!/usr/bin/env python3
"""cutrace steps when GPU work comes late (planted, tracewrite.py): a late kernel that
overlaps an on-time one is counted once in its step's GPU work and device busy time.

Thread 10, six NVTX "step" ranges of 99 ms, 100 ms apart (times in ms from T0). Each
step launches A (call at +1, GPU +10..+50 on stream 7) and synchronizes (+80..+85). Step
0 also launches B (call at
+2, GPU 20..60 on stream 8, under A): B's GPU record is the file's last record, 500 ms
behind, delivered late (past the model's first 20 ms window) when step 0's union was
long folded. Step 3 launches C (call at +2, GPU 320..360 on stream 8): its GPU record
comes 130 ms behind (after step 4's synchronize, once step 4's A was delivered),
delivered late when step 3 was folded too. Both steps: 50 ms of GPU work and of device busy time (the union
10..60), not 80 (before 2026-12-07: 80, the late kernel counted on top of what it
overlaps; GPU work past the step's wall time is possible that way). The same records in
time order give the same JSON.

A kernel queued past its step's end, the step's last work, that comes after the step was
swept is counted in its GPU work also when the step's union is freed (10 s later) before
the end (before 2026-12-07 08:00 it was dropped unfolded).

usage: test_steps_late.py CUTRACE"""
import json
import os
import subprocess
import sys

import tooltest  # noqa: F401 (puts tests/lib on the path)
from tooltest import check, finish, scratch
from tracewrite import TraceWriter

cutrace = sys.argv[1]
PID, TID, T0, MS = 31, 10, 10**9, 10**6
TIMED = 0x4
STEPS = 6


def late_trace(path, in_time_order):
    w = TraceWriter()
    w.add("process", pid=PID, start_ns=T0)
    w.add("device", device=0, name=w.string("GPU"), cc_major=9, sm_count=132)
    launch, step = w.string("cudaLaunchKernel"), w.string("step")
    sync = w.string("cudaStreamSynchronize")
    names = {k: w.string(f"_Z1{k}v") for k in "ABC"}
    records = []  # (written at, kind, fields)
    corr = [0]

    def kernel(name, call_ms, gpu_ms, stream, written=None):
        corr[0] += 1
        c, b = corr[0], T0 + call_ms * MS
        records.append((b + 5000, "launch", dict(corr=c, kernel=names[name], grid_x=1, grid_y=1,
                                                 grid_z=1, block_x=32, block_y=1, block_z=1)))
        records.append((b + 5000, "api", dict(tid=TID, name=launch, begin_ns=b, end_ns=b + 5000,
                                              corr=c, stream=stream, flags=TIMED)))
        start, end = T0 + gpu_ms[0] * MS, T0 + gpu_ms[1] * MS
        at = end + 50000 if written is None or in_time_order else T0 + written * MS
        records.append((at, "gpu", dict(corr=c, stream=stream, start_ns=start, end_ns=end,
                                        type=1, name=names[name])))

    for s in range(STEPS):
        t = 100 * s
        kernel("A", t + 1, (t + 10, t + 50), 7)
        if s == 0:
            kernel("B", t + 2, (t + 20, t + 60), 8, written=100 * STEPS + 10)
        if s == 3:
            kernel("C", t + 2, (t + 20, t + 60), 8, written=t + 190)
        b = T0 + (t + 80) * MS
        records.append((b + 5 * MS, "api", dict(tid=TID, name=sync, begin_ns=b, end_ns=b + 5 * MS,
                                                corr=1000 + s, stream=7)))
        records.append((T0 + (t + 99) * MS, "range", dict(tid=TID, name=step, begin_ns=T0 + t * MS,
                                                         end_ns=T0 + (t + 99) * MS, depth=0)))
    records.sort(key=lambda r: r[0])
    for _, kind, fields in records:
        w.add(kind, **fields)
    w.add("end", records=0, end_ns=T0 + (100 * STEPS + 20) * MS)
    w.save(path)


def queued_past_step_trace(path, gap_ms):
    """Step 0 (0..99) launches A (GPU 10..50, stream 7) and K (call at +2, GPU 150..160 on
    stream 8: it starts after step 0's interval ended, and comes after step 0 was swept);
    step 1 (100..199) launches A; step 2 begins gap_ms after step 0. K is step 0's last
    work: its union is freed once step 2's work comes 10 s later, with K still unfolded."""
    w = TraceWriter()
    w.add("process", pid=PID, start_ns=T0)
    w.add("device", device=0, name=w.string("GPU"), cc_major=9, sm_count=132)
    launch, step = w.string("cudaLaunchKernel"), w.string("step")
    names = {k: w.string(f"_Z1{k}v") for k in "AK"}
    records = []

    def kernel(name, c, call_ms, gpu_ms, stream):
        b = T0 + call_ms * MS
        records.append((b + 5000, "launch", dict(corr=c, kernel=names[name], grid_x=1, grid_y=1,
                                                 grid_z=1, block_x=32, block_y=1, block_z=1)))
        records.append((b + 5000, "api", dict(tid=TID, name=launch, begin_ns=b, end_ns=b + 5000,
                                              corr=c, stream=stream, flags=TIMED)))
        records.append((T0 + gpu_ms[1] * MS + 50000, "gpu",
                        dict(corr=c, stream=stream, start_ns=T0 + gpu_ms[0] * MS,
                             end_ns=T0 + gpu_ms[1] * MS, type=1, name=names[name])))

    for i, t in enumerate((0, 100, gap_ms)):
        kernel("A", 2 * i + 1, t + 1, (t + 10, t + 50), 7)
        if i == 0:
            kernel("K", 2, t + 2, (150, 160), 8)
        records.append((T0 + (t + 99) * MS, "range", dict(tid=TID, name=step, begin_ns=T0 + t * MS,
                                                         end_ns=T0 + (t + 99) * MS, depth=0)))
    records.sort(key=lambda r: r[0])
    for _, kind, fields in records:
        w.add(kind, **fields)
    w.add("end", records=0, end_ns=T0 + (gap_ms + 200) * MS)
    w.save(path)


def steps_json(path):
    p = subprocess.run([cutrace, "steps", "--format", "json", path], capture_output=True,
                       text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


with scratch("cutrace-steps-late-") as d:
    path = os.path.join(d, "x.ctr")  # one name for both: the JSON names the file
    late_trace(path, True)
    rc_on_time, on_time, _ = steps_json(path)
    late_trace(path, False)
    rc, out, err = steps_json(path)
    check(rc == 0 and err == "", f"late: status {rc}, stderr {err!r}")
    steps = json.loads(out)["processes"][0]["steps"] if rc == 0 else []
    want = [50 * MS if s in (0, 3) else 40 * MS for s in range(STEPS)]
    check([s["gpu_work_ns"] for s in steps] == want,
          f"late: GPU work per step, each kernel once: {[s['gpu_work_ns'] for s in steps]}")
    check([s["device_busy_ns"] for s in steps] == want,
          f"late: device busy per step, each kernel once: {[s['device_busy_ns'] for s in steps]}")
    check(all(s["device_busy_ns"] <= s["time_ns"] for s in steps), "late: busy within each step")
    check(rc_on_time == 0 and on_time == out,
          f"late: the same JSON as the records in time order (status {rc_on_time})")
    # K (10 ms) counted in step 0's work whether or not its union was freed before the end
    for gap_ms in (300, 11000):
        queued_past_step_trace(path, gap_ms)
        rc, out, err = steps_json(path)
        steps = json.loads(out)["processes"][0]["steps"] if rc == 0 else []
        check(rc == 0 and [s["gpu_work_ns"] for s in steps] == [50 * MS, 40 * MS, 40 * MS],
              f"queued past its step, next step {gap_ms} ms on: GPU work per step "
              f"{[s['gpu_work_ns'] for s in steps]} (status {rc}, stderr {err!r})")
finish()
