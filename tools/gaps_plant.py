"""A planted one-thread trace for the tests of `cutrace gaps` (test_gaps_inside.py,
test_gaps_overlap.py): process PID, device 0, stream 1, thread 77; calls and 100 us
kernels at the times a test gives, written in end order by save()."""
from tracewrite import TraceWriter

US = 1000
TIMED = 0x4  # CT_API_TIMED


class GapPlant:
    def __init__(self, pid, cmdline, thread_name):
        self.w = w = TraceWriter()
        w.add("process", pid=pid, ppid=1, start_ns=10**9, realtime_ns=1700000000 * 10**9,
              host=w.string("host"), cmdline=w.string(cmdline))
        w.add("device", device=0, name=w.string("GPU"), cc_major=9, sm_count=132, mem_bytes=80 << 30)
        w.add("thread", tid=77, name=w.string(thread_name), start_ns=10**9)
        w.add("stream", stream=1, handle=0x101, device=0, flags=1)
        self.records = []
        self.corr = 0

    def api(self, name, begin, end, flags=TIMED):
        """An outermost call of thread 77 on stream 1; returns its corr."""
        self.corr += 1
        self.records.append((end, 0, "api", dict(tid=77, name=self.w.string(name), begin_ns=begin, end_ns=end,
                                                  corr=self.corr, device=0, stream=1, flags=flags)))
        return self.corr

    def kernel(self, t):
        """A 100 us kernel at t, its 2 us launch call ending 1 us before it; returns its end."""
        w = self.w
        c = self.api("cudaLaunchKernel", t - 3 * US, t - US)
        self.records.append((t - US, 1, "launch", dict(corr=c, kernel=w.string("_Z4stepPf"), grid_x=1, grid_y=1,
                                                        grid_z=1, block_x=32, block_y=1, block_z=1)))
        self.records.append((t + 100 * US, 2, "gpu", dict(corr=c, device=0, stream=1, start_ns=t, end_ns=t + 100 * US,
                                                          type=1, name=w.string("_Z4stepPf"))))
        return t + 100 * US

    def save(self, path):
        for _, _, kind, fields in sorted(self.records, key=lambda r: (r[0], r[1])):
            self.w.add(kind, **fields)
        self.w.add("end", records=0, drops=0, end_ns=10**10)
        self.w.save(path)
