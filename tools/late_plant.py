"""A planted trace (tracewrite.py) of writer rounds, the last of them seconds late: the
preload's writer thread was starved, and its next round drained every thread's buffer
up to one snapshot, buffer after buffer (preload/core/writer_pass.c: ctp_writer_pass).
So the poller's GPU records of more than 2 s land first, then thread 11's records, then
thread 10's detail, API and RANGE records of the calls that caused them: each call's
MEMOP/LAUNCH and API record comes seconds of trace time after its GPU record (past the
model's old 2 s wait for a call, which then emitted the copies as "memcpy" with no
direction and 0 bytes: seen under load in test_setcb and test_diff).

late_rounds_file(path, layout) writes pid 21:
  thread 10, STEPS NVTX ranges "step" of STEP_NS each, on stream 7: a 4 MiB HtoD copy
    (pinned, async), a 1 MiB memset, LAUNCHES kernels 10 ms apart, a 4 MiB DtoH copy,
    cudaStreamSynchronize until the last of them ends, then 30 ms on the host;
  thread 11: a kernel on stream 8 every 50 ms.
Every record is written (into its thread's buffer) when it ends; a GPU record 50 us
after its work ends (the poller). layout "rounds": rounds every 10 ms until STARVE_AT,
then one round for the rest (the starved writer); in each round the poller's records,
thread 11's, thread 10's. layout "time": every record in the order written (one
thread, no rounds). layout "other_first": one round with thread 11's records first,
then the poller's, then thread 10's (seen at 05:27 on 2026-12-07 in nvtx_kernels:
a worker's records 100 ms past the main thread's calls). layout "orphan": as "time" without the API and MEMOP records of
the first step's DtoH copy (corr ORPHAN_CORR): its GPU record has no call in the file.
Returns the number of calls.
"""
from tracewrite import TraceWriter

PID, TID, OTHER_TID = 21, 10, 11
MIB = 1 << 20
TIMED = 0x4
GPU_KERNEL, GPU_MEMCPY, GPU_MEMSET = 1, 2, 3
H2D, D2H, MEMSET, DEVICE_MEM, PINNED = 1, 2, 5, 1, 2
START = 10**9
MS = 10**6
STEPS, LAUNCHES = 3, 100
STEP_NS = 1100 * MS
STARVE_AT = START + STEP_NS  # the starved round holds steps 2 and 3
ORPHAN_CORR = 103


def late_rounds_file(path, layout):
    w = TraceWriter()
    w.add("process", pid=PID, start_ns=START)
    names = {n: w.string(n) for n in ("cudaLaunchKernel", "cudaMemcpyAsync", "cudaMemsetAsync",
                                      "cudaStreamSynchronize", "step", "_Z4stepv", "_Z5otherv")}
    records = []  # (written at, source: 0 poller, 1 thread 11, 2 thread 10, kind, fields)
    corr = [0]
    skip = set()

    def call(tid, name, begin, dur, stream, gpu=None, detail=None):
        corr[0] += 1
        c = corr[0]
        end = begin + dur
        source = 2 if tid == TID else 1
        if c not in skip:
            if detail:
                records.append((end, source, detail[0], dict(corr=c, **detail[1])))
            records.append((end, source, "api", dict(tid=tid, name=names[name], begin_ns=begin,
                                                     end_ns=end, corr=c, stream=stream,
                                                     flags=TIMED if gpu else 0)))
        if gpu:
            gtype, gstart, gdur, gname = gpu
            records.append((gstart + gdur + 50000, 0, "gpu",
                            dict(corr=c, stream=stream, start_ns=gstart, end_ns=gstart + gdur,
                                 type=gtype, name=gname)))
        return end

    def launch_detail(kernel):
        return ("launch", dict(kernel=names[kernel], grid_x=8, grid_y=1, grid_z=1, block_x=128,
                               block_y=1, block_z=1))

    def copy_detail(kind, nbytes, src, dst):
        return ("memop", dict(bytes=nbytes, kind=kind, src_mem=src, dst_mem=dst, **{"async": 1}))

    if layout == "orphan":
        skip.add(ORPHAN_CORR)
    gpu_free = START
    for s in range(STEPS):
        t0 = START + s * STEP_NS
        t = t0 + 1000

        def queued(dur):
            nonlocal gpu_free
            start = max(gpu_free, t + 20000)
            gpu_free = start + dur
            return start

        t = call(TID, "cudaMemcpyAsync", t, 5000, 7, (GPU_MEMCPY, queued(400000), 400000, 0),
                 copy_detail(H2D, 4 * MIB, PINNED, DEVICE_MEM))
        t = call(TID, "cudaMemsetAsync", t + 1000, 4000, 7, (GPU_MEMSET, queued(100000), 100000, 0),
                 ("memop", dict(bytes=MIB, kind=MEMSET, src_mem=0, dst_mem=DEVICE_MEM,
                                **{"async": 1}, value=0)))
        for i in range(LAUNCHES):
            t = call(TID, "cudaLaunchKernel", t0 + 2 * MS + i * 10 * MS, 5000, 7,
                     (GPU_KERNEL, queued(900000), 900000, names["_Z4stepv"]),
                     launch_detail("_Z4stepv"))
        t = call(TID, "cudaMemcpyAsync", t + 1000, 5000, 7, (GPU_MEMCPY, queued(400000), 400000, 0),
                 copy_detail(D2H, 4 * MIB, DEVICE_MEM, PINNED))
        t = call(TID, "cudaStreamSynchronize", t + 1000, gpu_free + 10000 - t - 1000, 7)
        end = t + 30 * MS
        records.append((end, 2, "range", dict(tid=TID, name=names["step"], begin_ns=t0,
                                              end_ns=end, depth=0)))
    other_free = START
    for i in range((STEPS * STEP_NS) // (50 * MS)):
        t = START + 3 * MS + i * 50 * MS
        start = max(other_free, t + 30000)
        other_free = start + 2 * MS
        call(OTHER_TID, "cudaLaunchKernel", t, 6000, 8,
             (GPU_KERNEL, start, 2 * MS, names["_Z5otherv"]), launch_detail("_Z5otherv"))

    if layout == "rounds":
        def round_of(written):
            return written // (10 * MS) if written < STARVE_AT else 1 << 62
        records.sort(key=lambda r: (round_of(r[0]), r[1], r[0]))
    elif layout == "other_first":
        # one round, thread 11's buffer drained first: its records run seconds past the
        # GPU records and calls of thread 10 that follow (the model released them first)
        records.sort(key=lambda r: ((1, 0, 2).index(r[1]), r[0]))
    else:
        records.sort(key=lambda r: r[0])
    for _, _, kind, fields in records:
        w.add(kind, **fields)
    last = max(r[0] for r in records)
    w.add("end", records=0, end_ns=last + MS)
    w.save(path)
    return corr[0]
