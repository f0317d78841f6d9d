"""A planted distributed job for the tools' rank tests (test_ranks_tools.py): three ranks,
one file each plus a second file for rank 0 (a fork child) and the launcher's file (no
rank, no GPU work), written with tracewrite.py. Per iteration i (t = 1 s + i * 1 ms) on
device 0 of each rank, stream 1 runs a "gemm" kernel and stream 2 the all-reduce right
after it, inside an NVTX range "step":

    rank 0: gemm [t, t+300us]        all-reduce [t+300, t+900]   comm 600 us
    rank 1: gemm [t+200, t+500]      all-reduce [t+500, t+900]   comm 400 us (starts late)
    rank 2: gemm [t, t+800]          all-reduce [t+800, t+900]   comm 100 us (the slow one)

Rank 0's child (pid 105) runs one kernel [1 s, 1 s + 100 us]. So, over ITERS iterations:
rank 0 busy 900 * ITERS + 100 us of (ITERS - 1) ms + 900 us + 100 us observed, rank 1
busy 700 * ITERS of (ITERS - 1) ms + 700 us, rank 2 busy 900 * ITERS of (ITERS - 1) ms
+ 900 us; comm is all exposed. Rank 1 is the most idle, rank 2 the one the others waited
for (the least communication time).
"""
import os

from tracewrite import TraceWriter

US = 1000
T0 = 10**9
ITERS = 4
TIMED = 0x4
HOSTS = {0: "node0", 1: "node0", 2: "node1"}
PIDS = {0: 100, 1: 101, 2: 102}
CHILD_PID = 105
LAUNCHER_PID = 99
PLAN = {0: (0, 300, 900), 1: (200, 500, 900), 2: (0, 800, 900)}  # gemm begin, comm begin, end


class Planted:
    """One trace file being written."""

    def __init__(self, pid, host, rank=None, pci=None):
        self.w, self.s, self.corr, self.pid = TraceWriter(), {}, 0, pid
        w = self.w
        w.add("process", pid=pid, ppid=1, start_ns=T0 - 1000 * US,
              realtime_ns=1700000000 * 10**9, host=self.str(host), cmdline=self.str("./train"))
        if rank is not None:
            w.add("job", known=0x1f, rank=rank, world_size=3, local_rank=rank % 2,
                  local_world_size=2, node_rank=rank // 2, source=self.str("RANK"),
                  job_id=self.str("job7"))
        w.add("thread", tid=pid, name=self.str("main"), start_ns=T0 - 1000 * US)
        if pci:
            w.add("device", device=0, name=self.str("H100"), cc_major=9, sm_count=132,
                  mem_bytes=80 << 30, pci_bus_id=self.str(pci))
            for st in (1, 2):
                w.add("stream", stream=st, handle=0x100 + st, device=0, flags=1)

    def str(self, v):
        if v not in self.s:
            self.s[v] = self.w.string(v)
        return self.s[v]

    def kernel(self, name, stream, b, e):
        self.corr += 1
        c = self.corr
        self.w.add("api", tid=self.pid, name=self.str("cudaLaunchKernel"), begin_ns=b - 5 * US,
                   end_ns=b - 4 * US, corr=c, device=0, stream=stream, flags=TIMED)
        self.w.add("launch", corr=c, kernel=self.str(name), grid_x=1, grid_y=1, grid_z=1,
                   block_x=32, block_y=1, block_z=1)
        self.w.add("gpu", corr=c, device=0, stream=stream, start_ns=b, end_ns=e, type=1,
                   name=self.str(name))

    def save(self, path):
        self.w.add("end", records=0, drops=0, end_ns=T0 + 10 * 1000 * US)
        self.w.save(path)


def rank_file(rank, pid):
    return f"rank-{rank}.{HOSTS[rank]}.{pid}.ctr"


def write(directory):
    """Writes the job's five files into directory; returns their names in sorted order."""
    os.makedirs(directory, exist_ok=True)
    names = []
    for rank, (g, c, e) in PLAN.items():
        p = Planted(PIDS[rank], HOSTS[rank], rank, "0000:%02x:00.0" % (0x18 + rank))
        for i in range(ITERS):
            t = T0 + i * 1000 * US
            p.kernel("_Z4gemmPf", 1, t + g * US, t + c * US)
            p.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 2, t + c * US, t + e * US)
            p.w.add("range", tid=p.pid, name=p.str("step"), begin_ns=t - 10 * US,
                    end_ns=t + 950 * US, depth=0)  # written when popped
        names.append(rank_file(rank, PIDS[rank]))
        p.save(os.path.join(directory, names[-1]))
    child = Planted(CHILD_PID, HOSTS[0], 0, "0000:18:00.0")
    child.kernel("_Z4gemmPf", 1, T0, T0 + 100 * US)
    names.append(rank_file(0, CHILD_PID))
    child.save(os.path.join(directory, names[-1]))
    launcher = Planted(LAUNCHER_PID, "node0")
    names.append(f"node0.{LAUNCHER_PID}.ctr")
    launcher.save(os.path.join(directory, names[-1]))
    return sorted(names)
