#!/usr/bin/env python3
"""cutrace gaps: a stream gap ended by a kernel held behind another stream's is caused by
other_stream even when the GPU records were written out of end order, on a planted trace.

Device 0, thread 77: stream 1 runs a 5 ms producer; stream 2 a 300 us warm-up kernel,
then a consumer launched during the warm-up (the GPU held it: a cross-stream wait) that
starts 1 ns before the producer's end (two streams' mapped times differ by an event's
resolution). The records are written as the tracer wrote them in a loaded run of
test_greenctx.py (flaky2's, 2026-12-07): producer, warm-up, consumer; the producer's end
came before the warm-up's earlier one, both written over 20 ms after the program's last
call ended, so the reader delivers them late, in file order. Before this test the device's ring of recent ends
was searched as if ordered by end: it missed the producer and said `other`. Again with
the records in end order (the same answer).

usage: test_gaps_ends_order.py CUTRACE
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
TIMED = 0x4  # CT_API_TIMED
T0 = 10**9
cutrace = sys.argv[1]
tmp = scratch_dir("cutrace-endsorder-")


def planted(path, in_end_order):
    w = TraceWriter()
    w.add("process", pid=93, ppid=1, start_ns=T0, realtime_ns=1700000000 * 10**9,
          host=w.string("host"), cmdline=w.string("./greenish"))
    w.add("device", device=0, name=w.string("GPU"), cc_major=9, sm_count=132, mem_bytes=80 << 30)
    w.add("thread", tid=77, name=w.string("greenish"), start_ns=T0)
    for s in (1, 2):
        w.add("stream", stream=s, handle=0x100 + s, device=0, flags=1)
    gpus = []
    # (stream, name, call begin, kernel start, kernel end)
    for corr, (s, name, call, start, end) in enumerate(
            [(1, "_Z8producerPf", T0, T0 + 100 * US, T0 + 5100 * US),
             (2, "_Z4warmPf", T0 + 200 * US, T0 + 300 * US, T0 + 600 * US),
             (2, "_Z8consumerPf", T0 + 400 * US, T0 + 5100 * US - 1, T0 + 5105 * US)], 1):
        w.add("launch", corr=corr, kernel=w.string(name), grid_x=1, grid_y=1, grid_z=1,
              block_x=32, block_y=1, block_z=1)
        w.add("api", tid=77, name=w.string("cudaLaunchKernel"), begin_ns=call, end_ns=call + 10 * US,
              corr=corr, device=0, stream=s, flags=TIMED)
        gpus.append(dict(corr=corr, device=0, stream=s, start_ns=start, end_ns=end, type=1,
                         name=w.string(name)))
    # the thread's last calls, their records before the GPU records as the poller wrote
    # them 30 ms late: the reader has released the sync (after every kernel's end) by
    # then, so it delivers the kernels late, in file order
    for corr, (name, begin, end) in enumerate([("cudaDeviceSynchronize", 5110, 5200),
                                               ("cudaFree", 34900, 35000)], 4):
        w.add("api", tid=77, name=w.string(name), begin_ns=T0 + begin * US, end_ns=T0 + end * US,
              corr=corr, device=0, stream=0, flags=0)
    if in_end_order:
        gpus.sort(key=lambda g: g["end_ns"])
    for g in gpus:
        w.add("gpu", **g)
    w.add("end", records=0, drops=0, end_ns=T0 + 10**7)
    w.save(path)


for in_end_order in (False, True):
    path = os.path.join(tmp, f"ends{int(in_end_order)}.93.ctr")
    planted(path, in_end_order)
    p = subprocess.run([cutrace, "gaps", "--format", "json", path], capture_output=True, text=True,
                       timeout=60)
    check(p.returncode == 0, f"gaps: {p.stderr}")
    doc = json.loads(p.stdout) if p.returncode == 0 else {}
    rows = [(g["cause"], g["end_ns"]) for g in doc.get("stream_gaps", [])
            if g.get("ended_by", {}).get("mangled") == "_Z8consumerPf"]
    check(rows == [("other_stream", T0 + 5100 * US - 1)],
          f"{'end order' if in_end_order else 'written order'}: the stream gap ended by the consumer: "
          f"{rows}, want [('other_stream', {T0 + 5100 * US - 1})]")
sys.exit(finish())
