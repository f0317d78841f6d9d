"""A planted trace for dump --chrome/--perfetto's flows and nesting (tracewrite.py),
used by test_perfetto.py.

Flows (thread FLOWS): a launch with its kernel (a flow), a launch captured into a graph
(CT_API_CAPTURED, no GPU record: no flow), a launch whose GPU record was lost (a DROP
record follows: no flow), a synchronous copy whose GPU work ends before the call
returns (its activity is delivered first: a flow), and allocation calls (ALLOC detail,
no GPU work: no flow).

Nesting (thread NEST): slices of one track that begin in the same ns, written by the
tracer in the order they end (inner first):
    cudaMemcpy [t, t+10 us] depth 0, its driver call cuMemcpyHtoD_v2 [t, t+5 us] depth 1
    cudaMalloc [t2, t2+8 us] depth 0, cuMemAlloc_v2 [t2, t2+8 us] depth 1 (same end)
    NVTX ranges outer [t3, t3+40 us] depth 0, inner [t3, t3+20 us] depth 1
    cudaMemcpyAsync [t4, t4+10 us] depth 0 around cuMemcpyHtoDAsync_v2 [t4, t4+8 us]
    depth 1 around cuMemcpyHtoD_v2 [t4, t4+8 us] depth 2 (same end: by depth), then
    cuStreamQuery [t4+8.5, t4+9 us] depth 1 (its own begin: stays after them)
NESTED lists them as (name, begin, end, parent name) with the parent each must have.

Waiting (Perfetto's flow queue): the launch whose GPU record was lost stops waiting for
its flow's end once a slice 2 s later is written: LATE_FLOWS (thread FLOWS) and then
LATE_NEST (thread NEST), 3 s after it, come after it in the file."""
from tracewrite import TraceWriter

US = 1000
T0 = 10**9
PID, FLOWS, NEST = 500, 500, 501
TIMED, CAPTURED, DRIVER = 0x4, 0x2, 0x10
DEVICE = 1  # CT_ALLOC_DEVICE
MEMCPY_HTOD = 1  # ct_memop kind: HtoD

# flows: corr -> 1 when the call's flow is drawn (its GPU work is in the trace)
FLOW_CORRS = {1: 1, 2: 0, 3: 0, 4: 1, 5: 0}

T_NEST = T0 + 500 * US
NESTED = [
    ("cudaMemcpy", T_NEST, T_NEST + 10 * US, None),
    ("cuMemcpyHtoD_v2", T_NEST, T_NEST + 5 * US, "cudaMemcpy"),
    ("cudaMalloc", T_NEST + 20 * US, T_NEST + 28 * US, None),
    ("cuMemAlloc_v2", T_NEST + 20 * US, T_NEST + 28 * US, "cudaMalloc"),
    ("outer", T_NEST + 40 * US, T_NEST + 80 * US, None),
    ("inner", T_NEST + 40 * US, T_NEST + 60 * US, "outer"),
    ("cudaMemcpyAsync", T_NEST + 90 * US, T_NEST + 100 * US, None),
    ("cuMemcpyHtoDAsync_v2", T_NEST + 90 * US, T_NEST + 98 * US, "cudaMemcpyAsync"),
    ("cuMemcpyHtoD_v2", T_NEST + 90 * US, T_NEST + 98 * US, "cuMemcpyHtoDAsync_v2"),
    ("cuStreamQuery", T_NEST + 98500, T_NEST + 99 * US, "cudaMemcpyAsync"),
]


LATE_FLOWS = T0 + 3 * 10**9
LATE_NEST = LATE_FLOWS + 10 * US


class _Moved:
    """A TraceWriter whose records are moved shift ns later and to pid + dpid (its
    threads too)."""

    def __init__(self, w, shift, dpid):
        self.w, self.shift, self.dpid = w, shift, dpid

    def string(self, text):
        return self.w.string(text)

    def add(self, record, **f):
        for k in ("begin_ns", "end_ns", "start_ns", "first_ns", "last_ns"):
            if f.get(k):
                f[k] += self.shift
        for k in ("tid", "pid"):
            if f.get(k):
                f[k] += self.dpid
        self.w.add(record, **f)


def write(path, shift=0, dpid=0):
    """Writes the scenario; shift: every time that many ns later, dpid: pid and tids
    that much higher (another process)."""
    base = TraceWriter()
    w = _Moved(base, shift, dpid)
    s = {k: w.string(k) for k in (
        "host", "./order", "GPU", "main", "nest", "cudaLaunchKernel", "cudaMemcpy",
        "cuMemcpyHtoD_v2", "cudaMalloc", "cuMemAlloc_v2", "_Z4stepv", "outer", "inner",
        "cudaStreamSynchronize", "cudaMemcpyAsync", "cuMemcpyHtoDAsync_v2", "cuStreamQuery")}
    w.add("process", pid=PID, ppid=1, start_ns=T0, realtime_ns=1700000000 * 10**9,
          host=s["host"], cmdline=s["./order"])
    w.add("device", device=0, name=s["GPU"], cc_major=9, sm_count=132, mem_bytes=141 << 30)
    w.add("thread", tid=FLOWS, name=s["main"], start_ns=T0)
    w.add("thread", tid=NEST, name=s["nest"], start_ns=T0)
    w.add("stream", stream=7, handle=0x5007, flags=1)

    def launch(corr, t, flags):
        w.add("api", tid=FLOWS, name=s["cudaLaunchKernel"], begin_ns=t, end_ns=t + 3 * US,
              corr=corr, stream=7, flags=flags)
        w.add("launch", corr=corr, kernel=s["_Z4stepv"], grid_x=1, grid_y=1, grid_z=1,
              block_x=32, block_y=1, block_z=1)

    t = T0 + 10 * US
    launch(1, t, TIMED)
    launch(2, t + 10 * US, CAPTURED)
    launch(3, t + 20 * US, TIMED)
    # a synchronous copy: its GPU work ends before the call returns
    w.add("api", tid=FLOWS, name=s["cudaMemcpy"], begin_ns=t + 30 * US, end_ns=t + 40 * US,
          corr=4, stream=7, flags=TIMED)
    w.add("memop", corr=4, kind=MEMCPY_HTOD, bytes=4096, src_mem=2, dst_mem=1, **{"async": 0})
    w.add("api", tid=FLOWS, name=s["cudaMalloc"], begin_ns=t + 50 * US, end_ns=t + 52 * US,
          corr=5, flags=0)
    w.add("alloc", corr=5, ptr=0x7000, bytes=1 << 20, kind=DEVICE, release=0)
    w.add("gpu", corr=1, stream=7, start_ns=t + 5 * US, end_ns=t + 9 * US, type=1,
          name=s["_Z4stepv"])
    # corr 3's GPU record was lost
    w.add("drop", tid=0, count=1, first_ns=t + 25 * US, last_ns=t + 25 * US)
    w.add("gpu", corr=4, stream=7, start_ns=t + 32 * US, end_ns=t + 38 * US, type=2, name=0)

    # nesting: records in the order the tracer writes them, at each call's end
    def call(corr, name, b, e, depth, parent=0, flags=0):
        w.add("api", tid=NEST, name=s[name], begin_ns=b, end_ns=e, corr=corr, depth=depth,
              parent=parent, flags=flags | (DRIVER if name.startswith("cu") and
                                            not name.startswith("cuda") else 0))

    b = T_NEST
    call(11, "cuMemcpyHtoD_v2", b, b + 5 * US, 1, parent=10)
    call(10, "cudaMemcpy", b, b + 10 * US, 0)
    b += 20 * US
    call(13, "cuMemAlloc_v2", b, b + 8 * US, 1, parent=12)
    call(12, "cudaMalloc", b, b + 8 * US, 0)
    b += 20 * US
    w.add("range", tid=NEST, name=s["inner"], begin_ns=b, end_ns=b + 20 * US, depth=1)
    w.add("range", tid=NEST, name=s["outer"], begin_ns=b, end_ns=b + 40 * US, depth=0)
    b += 50 * US
    call(16, "cuMemcpyHtoD_v2", b, b + 8 * US, 2, parent=14)
    call(15, "cuMemcpyHtoDAsync_v2", b, b + 8 * US, 1, parent=14)
    call(17, "cuStreamQuery", b + 8500, b + 9 * US, 1, parent=14)
    call(14, "cudaMemcpyAsync", b, b + 10 * US, 0)
    # 3 s later: one call on each thread
    w.add("api", tid=FLOWS, name=s["cudaStreamSynchronize"], begin_ns=LATE_FLOWS,
          end_ns=LATE_FLOWS + 5 * US, corr=20, stream=7)
    w.add("api", tid=NEST, name=s["cudaStreamSynchronize"], begin_ns=LATE_NEST,
          end_ns=LATE_NEST + 5 * US, corr=21, stream=7)
    w.add("end", records=0, drops=1, end_ns=LATE_NEST + 100 * US)
    base.save(path)
