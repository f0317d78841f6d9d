#!/usr/bin/env python3
"""cutrace gaps: a stream held by a wait on a memory value (cuStreamWaitValue32_v2,
cuStreamBatchMemOp_v2) is `other_stream`, not `other` (planted traces).

Thread 77, device 0, times from t0:
  stream 1: kernel a [10, 5010] us; cuStreamWaitValue32_v2 on stream 1 (call [7, 8] us);
            kernel b launched at [9, 10] us, runs [20010, 25010]: the gap [5010, 20010]
            was fed (b queued before the GPU went idle) and nothing on another stream
            ended near 20010 (the value was written by the host: nothing in the trace)
            -> other_stream;
  stream 2: kernel c [30, 5030]; kernel d launched at [31, 32] us, runs [20030, 25030]
            with no wait between: the same fed gap -> other (the rule is the wait's);
  stream 3: kernel e [40, 40040]; cuStreamWaitValue32_v2 on stream 3, then a copy on
            stream 3 (call [43, 44], runs [40040, 40060]), then kernel f on stream 3
            (call [45, 46]) runs [60040, 61040]: the call before f on its stream is the
            copy, so the gap [40060, 60040] is other (the wait preceded the copy, not f);
            it is the device's only gap (e keeps the device busy until 40040).
A second trace holds the same stream-1 sequence with cuStreamBatchMemOp_v2 as the wait
and no MEMOP record (a file before format 1.9: a batch is taken for a wait); a third
with the batch's MEMOP (kind stream_ops 10, 2 operations) counting one wait: the same;
a fourth whose MEMOP counts no wait (writes only, 12 bytes): no wait, stream 1's gap is
`other` like stream 2's, and the text lists no wait of a stream on another stream.
A fifth holds cuWaitExternalSemaphoresAsync as the wait, without a MEMOP record (a file
before format 1.10, known by its name): stream 1's gap is `external_wait`, listed among
the waits on external semaphores, not among the waits on another stream.

usage: test_gaps_valuewait.py CUTRACE
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib"))
from cttest import check, finish, scratch_dir  # noqa: E402
from tracewrite import TraceWriter  # noqa: E402

US = 1000
TIMED, DRIVER = 0x4, 0x10
STREAM_OPS = 10  # CT_MEMOP_STREAM_OPS
T0 = 10**9
cutrace = sys.argv[1]
tmp = scratch_dir("cutrace-valuewait-")


class Planted:
    def __init__(self):
        self.w = TraceWriter()
        self.s = {}
        self.corr = 0
        w = self.w
        w.add("process", pid=77, ppid=1, start_ns=T0, host=self.str("host"))
        w.add("device", device=0, name=self.str("GPU"), cc_major=9, sm_count=132)
        w.add("thread", tid=77, name=self.str("main"), start_ns=T0)
        for st in (1, 2, 3):
            w.add("stream", stream=st, handle=0x100 + st, device=0, flags=1)

    def str(self, v):
        if v not in self.s:
            self.s[v] = self.w.string(v)
        return self.s[v]

    def call(self, name, stream, b, e, flags, waits=None):
        self.corr += 1
        if waits is not None:  # a batch's MEMOP (format 1.9), before its call as the writer has it
            self.w.add("memop", corr=self.corr, bytes=12 if waits == 0 else 4, kind=STREAM_OPS,
                       count=2, value=waits, **{"async": 1})
        self.w.add("api", tid=77, name=self.str(name), begin_ns=T0 + b, end_ns=T0 + e,
                   corr=self.corr, stream=stream, flags=flags)
        return self.corr

    def kernel(self, name, stream, call_at, start, end):
        c = self.call("cudaLaunchKernel", stream, call_at, call_at + US, TIMED)
        self.w.add("launch", corr=c, kernel=self.str(name), grid_x=1, grid_y=1, grid_z=1,
                   block_x=32, block_y=1, block_z=1)
        self.w.add("gpu", corr=c, stream=stream, start_ns=T0 + start, end_ns=T0 + end, type=1,
                   name=self.str(name))

    def copy(self, stream, call_at, start, end):
        c = self.call("cudaMemcpyAsync", stream, call_at, call_at + US, TIMED)
        self.w.add("memop", corr=c, bytes=4096, kind=1, src_mem=2, dst_mem=1, **{"async": 1})
        self.w.add("gpu", corr=c, stream=stream, start_ns=T0 + start, end_ns=T0 + end, type=2)

    def save(self, path):
        self.w.add("end", records=0, drops=0, end_ns=T0 + 10**8)
        self.w.save(path)


def stream_gaps(path):
    p = subprocess.run([cutrace, "gaps", "--format", "json", path], capture_output=True,
                       text=True, timeout=60)
    check(p.returncode == 0, f"gaps json on {path}: {p.returncode} {p.stderr}")
    try:
        return json.loads(p.stdout)
    except ValueError:
        return {}


def write(path, wait_name, waits):
    p = Planted()
    p.kernel("_Z1av", 1, 0, 10 * US, 5010 * US)
    p.call(wait_name, 1, 7 * US, 8 * US, DRIVER, waits)
    p.kernel("_Z1bv", 1, 9 * US, 20010 * US, 25010 * US)
    p.kernel("_Z1cv", 2, 20 * US, 30 * US, 5030 * US)
    p.kernel("_Z1dv", 2, 31 * US, 20030 * US, 25030 * US)
    p.kernel("_Z1ev", 3, 38 * US, 40 * US, 40040 * US)
    p.call(wait_name, 3, 41 * US, 42 * US, DRIVER, waits)
    p.copy(3, 43 * US, 40040 * US, 40060 * US)
    p.kernel("_Z1fv", 3, 45 * US, 60040 * US, 61040 * US)
    p.save(path)


CAUSES = ("host_wait", "launch_overhead", "sync", "alloc", "other_stream", "tracer", "other", "external_wait")


def idle(entry, cause, ns):
    """entry's idle split: ns of cause, nothing else."""
    return {f"{c}_ns": ns if c == cause else 0 for c in CAUSES}


# (entry point, the waits its MEMOP counts: None = no MEMOP record)
for wait_name, waits in (("cuStreamWaitValue32_v2", None), ("cuStreamBatchMemOp_v2", None),
                         ("cuStreamBatchMemOp_v2", 1), ("cuStreamBatchMemOp_v2", 0),
                         ("cuWaitExternalSemaphoresAsync", None)):
    external = "ExternalSemaphores" in wait_name
    label = f"{wait_name} (MEMOP waits {waits})"
    path = os.path.join(tmp, f"{wait_name}.{waits}.ctr")
    write(path, wait_name, waits)
    doc = stream_gaps(path)
    streams = {s["stream"]: s for s in doc.get("streams", [])}
    want = {1: ("external_wait" if external else "other_stream" if waits != 0 else "other", 15000 * US),
            2: ("other", 15000 * US),
            3: ("other", 19980 * US)}
    for st, (cause, ns) in want.items():
        got = streams.get(st, {})
        check(got.get("gaps") == 1 and got.get("idle") == idle(got, cause, ns),
              f"{label}: stream {st}: gaps {got.get('gaps')}, idle {got.get('idle')}, "
              f"want one gap, {ns} ns {cause}")
    devs = doc.get("devices", [{}])
    check(len(devs) == 1 and devs[0].get("gaps") == 1
          and devs[0].get("idle") == idle(devs[0], "other", 19980 * US),
          f"{label}: device gaps {devs}")
    text = subprocess.run([cutrace, "gaps", path], capture_output=True, text=True, timeout=60).stdout
    listed = "Largest waits of a stream on another stream" in text and " on device 0 stream 1 at " in text
    check(listed == (waits != 0 and not external), f"{label}: text lists stream 1's wait: {listed}\n{text}")
    ext = " on device 0 stream 1 at " in text.partition("Largest waits of a stream on external semaphores")[2]
    check(ext == external, f"{label}: text lists stream 1's wait on external semaphores: {ext}\n{text}")

sys.exit(finish())
