"""A planted one-process trace (tracewrite.py) of GPU work launched by thread 77 on
device 0, streams 1 and 2, for the tests of work that ends long after its call
(test_gaps_latelong.py, test_gaps_longwork.py).

    p = Plant(pid)
    p.work(t, dur)                      # a kernel at t, its 2 us launch ending 1 us before
    p.work(t, dur, stream=2, api="cublasSgemm_v2", gtype=GPU_GEMM, name=None)
    p.save(path)                        # the records in the order their work ends
"""
from tracewrite import TraceWriter

US = 1000
MS = 1000 * US
B = 10**9
TIMED = 0x4  # CT_API_TIMED
CAPTURED = 0x2  # CT_API_CAPTURED
GPU_KERNEL, GPU_GEMM, GPU_GRAPH = 1, 4, 5


class Plant:
    def __init__(self, pid):
        self.w = w = TraceWriter()
        w.add("process", pid=pid, ppid=1, start_ns=B, realtime_ns=1700000000 * 10**9,
              host=w.string("host"), cmdline=w.string("./longkernel"))
        w.add("device", device=0, name=w.string("GPU"), cc_major=9, sm_count=132, mem_bytes=80 << 30)
        w.add("thread", tid=77, name=w.string("main"), start_ns=B)
        for s in (1, 2):
            w.add("stream", stream=s, handle=0x100 + s, device=0, flags=1)
        self.records = []  # (written at, order among equal times, kind, fields)
        self.corr = 0

    def work(self, t, dur, stream=1, flags=TIMED, gpu=True, api="cudaLaunchKernel", gtype=GPU_KERNEL,
             name="_Z4stepPf"):
        """GPU work at t lasting dur (a kernel, or gtype's record named name: None for
        none), its 2 us call ending 1 us before it; gpu False: its GPU record lost."""
        w = self.w
        self.corr += 1
        c = self.corr
        self.records.append((t - US, 0, "api", dict(tid=77, name=w.string(api), begin_ns=t - 3 * US,
                                                    end_ns=t - US, corr=c, device=0, stream=stream,
                                                    flags=flags)))
        if gtype == GPU_KERNEL:
            self.records.append((t - US, 1, "launch", dict(corr=c, kernel=w.string(name), grid_x=1, grid_y=1,
                                                            grid_z=1, block_x=32, block_y=1, block_z=1)))
        if gpu:
            self.records.append((t + dur, 2, "gpu", dict(corr=c, device=0, stream=stream, start_ns=t,
                                                         end_ns=t + dur, type=gtype,
                                                         name=w.string(name) if name else 0)))

    def save(self, path, end_ns=10**10):
        for _, _, kind, fields in sorted(self.records, key=lambda r: (r[0], r[1])):
            self.w.add(kind, **fields)
        self.w.add("end", records=0, drops=0, end_ns=end_ns)
        self.w.save(path)
