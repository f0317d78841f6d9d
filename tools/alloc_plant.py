"""Planted traces with format 1.5 ALLOC records (tracewrite.py), shared by the tests of
report's memory allocations table (test_alloc_report.py) and of the allocations in
dump --chrome/--perfetto (test_alloc_chrome.py): first_file (pid 7: peaks, unmatched
releases, a reused pointer, a failing call, driver-level calls, two devices),
second_file (pid 8: its release of the first file's pointer stays unmatched),
kinds_file (pid 9: VMM handles, kind vmm, and a kind no reader knows yet),
old_file (format 1.4: no ALLOC kind), split_file (pid 10: ALLOC records apart from their
API records)."""
from tracewrite import TraceWriter

MIB, KIB = 1 << 20, 1 << 10
DEVICE, PINNED, MANAGED, VMM, FUTURE = 1, 2, 3, 6, 9
A, B, C, D, M, P, X = 0x10000, 0x20000, 0x30000, 0x40000, 0x50000, 0x60000, 0x99000


class Calls:
    """API records of one thread, each 1 us long and 10 us apart, with their ALLOC records."""

    def __init__(self, w, pid, t0):
        self.w, self.pid, self.t, self.corr = w, pid, t0, 1

    def call(self, name, ptr=0, nbytes=0, kind=DEVICE, release=0, device=0, result=0, dur=1000):
        w = self.w
        w.add("api", tid=self.pid, name=w.string(name), begin_ns=self.t, end_ns=self.t + dur,
              corr=self.corr, device=device, result=result,
              flags=0x10 if name.startswith("cu") and not name.startswith("cuda") else 0)
        if ptr and not result:
            w.add("alloc", corr=self.corr, ptr=ptr, bytes=nbytes, kind=kind, release=release)
        self.corr += 1
        self.t += 10000


def first_file(path):
    w = TraceWriter()
    w.add("process", pid=7, start_ns=10**9)
    c = Calls(w, 7, 10**9 + 1000)
    c.call("cudaMalloc", A, 1 * MIB)
    c.call("cudaMalloc", B, 2 * MIB)                  # live 3 MiB: the device row's peak
    c.call("cudaFree", A, release=1)
    c.call("cudaMalloc", C, 4 * MIB, device=1)         # device 1's own row
    c.call("cudaFree", X, release=1)                  # never allocated: unmatched
    c.call("cudaMallocManaged", M, 512 * KIB, kind=MANAGED)
    c.call("cudaFree", M, release=1)                  # released in the managed row
    c.call("cudaMalloc", B, 1 * MIB)                  # B again, unreleased: 2 MiB forgotten
    c.call("cudaMalloc", result=2)                    # failed: no ALLOC record, not counted
    c.call("cudaMallocHost", P, 64 * KIB, kind=PINNED)  # never released
    c.call("cuMemAlloc_v2", D, 256, dur=3000)
    c.call("cuMemFree_v2", D, release=1, dur=5000)
    w.add("end", records=0, end_ns=c.t)
    w.save(path)


def kinds_file(path):
    """cuMemCreate / cuMemRelease of two handles (kind vmm, the handle as ptr), and an
    allocation of kind 9, unknown to this reader: its own row, named "?"."""
    w = TraceWriter()
    w.add("process", pid=9, start_ns=10**9)
    c = Calls(w, 9, 10**9 + 1000)
    c.call("cuMemCreate", 0x1111, 2 * MIB, kind=VMM)
    c.call("cuMemCreate", 0x2222, 2 * MIB, kind=VMM)   # live 4 MiB: the peak
    c.call("cuMemRelease", 0x1111, kind=VMM, release=1)
    c.call("cuMemCreate", result=2)                    # failed: no ALLOC record
    c.call("cuMemFutureAlloc", 0x3333, 3 * MIB, kind=FUTURE)
    w.add("end", records=0, end_ns=c.t)
    w.save(path)


def second_file(path):
    """Another process: its release of B (the first file's pointer) is unmatched."""
    w = TraceWriter()
    w.add("process", pid=8, start_ns=10**9)
    c = Calls(w, 8, 10**9 + 1000)
    c.call("cudaMalloc", A, 8 * MIB)
    c.call("cudaFree", B, release=1)
    w.add("end", records=0, end_ns=c.t)
    w.save(path)


def old_file(path):
    w = TraceWriter()
    del w.schema["alloc"]
    w.version = (1, 4)
    w.add("process", pid=9, start_ns=10**9)
    Calls(w, 9, 10**9).call("cudaMalloc")
    w.save(path)


def split_file(path):
    """pid 10: a cudaMalloc of 1 MiB and its cudaFree, each ALLOC record written before
    its API record (as the preload writes them) and 30 ms of another thread's records
    between the two, past the reader's first 20 ms reorder window: the writer drained
    the thread's buffer between the records while the thread was preempted."""
    w = TraceWriter()
    w.add("process", pid=10, start_ns=10**9)
    t = 10**9 + 1000
    for corr, name, release in ((1, "cudaMalloc", 0), (2, "cudaFree", 1)):
        w.add("alloc", corr=corr, ptr=A, bytes=0 if release else MIB, kind=DEVICE, release=release)
        w.add("tracer", tid=11, what=w.string("unwinder"), begin_ns=t, end_ns=t + 30 * 10**6,
              amount=1)
        w.add("api", tid=10, name=w.string(name), begin_ns=t, end_ns=t + 500 * 1000, corr=corr)
        t += 40 * 10**6
    w.add("end", records=0, end_ns=t)
    w.save(path)
