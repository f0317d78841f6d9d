#!/usr/bin/env python3
"""cutrace gaps: communication kernels (NCCL) against compute kernels, on planted traces.

Per iteration i (t = 1 s + i * 1 ms), device 0:
  stream 1 (compute): gemm_k [t, t+100us], relu_k [t+150, t+250]
  stream 2 (comm):    ncclDevKernel_AllReduce_Sum_f32_RING_LL [t+50, t+200]
  stream 1:           a copy HtoD [t+300, t+400] (not a kernel: in neither union)
  stream 2:           ncclKernel_Broadcast [t+400, t+420] (alone: exposed)
so per iteration comm = 150 + 20 = 170 us, overlap with compute = 50 + 50 = 100 us,
exposed = 70 us, 2 comm kernels. Device 1 runs only compute kernels: no communication.
A second trace starts with RECENT_KERNELS + 44 = 300 compute kernels before the first
communication kernel, which overlaps the last of them: the lazily started unions must
still count that overlap (replayed recent kernels).

usage: test_gaps_comm.py CUTRACE
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
TIMED = 0x4
cutrace = sys.argv[1]
tmp = scratch_dir("cutrace-comm-")


class Planted:
    def __init__(self, pid=77):
        self.w = TraceWriter()
        self.s = {}
        self.corr = 0
        self.pid = pid
        w = self.w
        w.add("process", pid=pid, ppid=1, start_ns=10**9, realtime_ns=1700000000 * 10**9,
              host=self.str("host"), cmdline=self.str("./train"))
        for d in (0, 1):
            w.add("device", device=d, name=self.str("GPU"), cc_major=9, sm_count=132,
                  mem_bytes=80 << 30)
        w.add("thread", tid=pid, name=self.str("main"), start_ns=10**9)
        for st in (1, 2, 3):
            w.add("stream", stream=st, handle=0x100 + st, device=0 if st < 3 else 1, flags=1)

    def str(self, v):
        if v not in self.s:
            self.s[v] = self.w.string(v)
        return self.s[v]

    def kernel(self, name, stream, b, e, device=0):
        self.corr += 1
        c = self.corr
        self.w.add("api", tid=self.pid, name=self.str("cudaLaunchKernel"), begin_ns=b - 5 * US,
                   end_ns=b - 4 * US, corr=c, device=device, stream=stream, flags=TIMED)
        self.w.add("launch", corr=c, kernel=self.str(name), grid_x=1, grid_y=1, grid_z=1,
                   block_x=32, block_y=1, block_z=1)
        self.w.add("gpu", corr=c, device=device, stream=stream, start_ns=b, end_ns=e, type=1,
                   name=self.str(name))

    def copy(self, stream, b, e):
        self.corr += 1
        c = self.corr
        self.w.add("api", tid=self.pid, name=self.str("cudaMemcpyAsync"), begin_ns=b - 5 * US,
                   end_ns=b - 4 * US, corr=c, stream=stream, flags=TIMED)
        self.w.add("memop", corr=c, bytes=1 << 20, kind=1, src_mem=2, dst_mem=1, **{"async": 1})
        self.w.add("gpu", corr=c, stream=stream, start_ns=b, end_ns=e, type=2)

    def save(self, path):
        self.w.add("end", records=0, drops=0, end_ns=10**10)
        self.w.save(path)


def gaps_json(path):
    p = subprocess.run([cutrace, "gaps", "--format", "json", path], capture_output=True, text=True,
                       timeout=60)
    check(p.returncode == 0, f"gaps json on {path}: {p.returncode} {p.stderr}")
    try:
        return json.loads(p.stdout)
    except ValueError:
        return {}


N = 5
t0 = 10**9
p = Planted()
for i in range(N):
    t = t0 + i * 1000 * US
    p.kernel("_Z6gemm_kPf", 1, t, t + 100 * US)
    p.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 2, t + 50 * US, t + 200 * US)
    p.kernel("_Z6relu_kPf", 1, t + 150 * US, t + 250 * US)
    p.copy(1, t + 300 * US, t + 400 * US)
    p.kernel("ncclKernel_Broadcast", 2, t + 400 * US, t + 420 * US)
    p.kernel("_Z6relu_kPf", 3, t + 100 * US, t + 200 * US, device=1)
path = os.path.join(tmp, "comm.ctr")
p.save(path)
doc = gaps_json(path)
devs = {d["device"]: d for d in doc.get("devices", [])}
want = {"kernels": 2 * N, "comm_ns": 170 * US * N, "overlap_ns": 100 * US * N,
        "exposed_ns": 70 * US * N}
check(devs.get(0, {}).get("comm") == want, f"device 0 comm {devs.get(0, {}).get('comm')}, want {want}")
check(devs.get(1, {}).get("comm") == {"kernels": 0, "comm_ns": 0, "overlap_ns": 0, "exposed_ns": 0},
      f"device 1 (no communication) comm {devs.get(1, {}).get('comm')}")
text = subprocess.run([cutrace, "gaps", path], capture_output=True, text=True, timeout=60).stdout
rows = [line.split() for line in text.splitlines() if line.strip().startswith("77 ")]
comm_rows = [r for r in rows if len(r) == 10 and r[2] == str(2 * N)]
check(len(comm_rows) == 1 and "58.8%" in comm_rows[0] and "Communication (NCCL/NVSHMEM" in text,
      f"text communication table (want one row, 10 kernels, 58.8% overlapped):\n{text}")
finds = [f for f in doc.get("findings", []) if f["kind"] == "exposed_comm"]
check(len(finds) == 1 and finds[0]["device"] == 0 and finds[0]["count"] == 2 * N
      and finds[0]["gpu_ns"] == 70 * US * N and "overlap communication" in finds[0]["fix"],
      f"exposed_comm finding (350 us of a 4.42 ms span): {finds}")
summ = subprocess.run([cutrace, "gaps", "--summary", path], capture_output=True, text=True,
                      timeout=60).stdout
check("comm 850.000 us, 58.8% overlapped with compute" in summ and "exposed communication" in summ,
      f"summary: {summ}")

# The first communication kernel comes after 300 compute kernels and overlaps the last.
p = Planted()
for i in range(300):
    t = t0 + i * 10 * US
    p.kernel("_Z6gemm_kPf", 1, t, t + 5 * US)
last = t0 + 299 * 10 * US
p.kernel("ncclDevKernel_AllReduce", 2, last + 2 * US, last + 12 * US)
path = os.path.join(tmp, "late.ctr")
p.save(path)
doc = gaps_json(path)
comm = next((d["comm"] for d in doc.get("devices", []) if d["device"] == 0), {})
check(comm.get("comm_ns") == 10 * US and comm.get("overlap_ns") == 3 * US
      and comm.get("exposed_ns") == 7 * US,
      f"late first communication kernel: {comm}")
check(not [f for f in doc.get("findings", []) if f["kind"] == "exposed_comm"],
      f"7 us exposed of a 3 ms span is no finding: {doc.get('findings')}")

# Two ranks: the one whose all-reduces are shortest is the one the other waited for.
p = Planted(pid=78)
for i in range(N):
    t = t0 + i * 1000 * US
    p.kernel("_Z6gemm_kPf", 1, t, t + 190 * US)
    p.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 2, t + 190 * US, t + 200 * US)
slow = os.path.join(tmp, "rank1.ctr")
p.save(slow)
doc = gaps_json(os.path.join(tmp, "comm.ctr"))
check(doc.get("comm_straggler") is None, f"one communicating device: no straggler: {doc.get('comm_straggler')}")
p2 = subprocess.run([cutrace, "gaps", "--format", "json", os.path.join(tmp, "comm.ctr"), slow],
                    capture_output=True, text=True, timeout=60)
doc = json.loads(p2.stdout) if p2.returncode == 0 else {}
idx = doc.get("comm_straggler")
devs = doc.get("devices", [])
check(idx is not None and devs[idx]["pid"] == 78 and devs[idx]["device"] == 0,
      f"straggler {idx} among {[(d['pid'], d['device'], d['comm']['comm_ns']) for d in devs]}")
text = subprocess.run([cutrace, "gaps", os.path.join(tmp, "comm.ctr"), slow], capture_output=True,
                      text=True, timeout=60).stdout
check("likely straggler: device 0 of pid 78 spent the least time in communication kernels "
      "(50.000 us, up to 850.000 us elsewhere)" in text, f"straggler line:\n{text[-1500:]}")

# cutrace diff carries both into its headline.
p = subprocess.run([cutrace, "diff", "--format", "json", path, os.path.join(tmp, "comm.ctr")],
                   capture_output=True, text=True, timeout=60)
summary = json.loads(p.stdout).get("summary", {}) if p.returncode == 0 else {}
got = {k: (summary.get(k, {}).get("before"), summary.get(k, {}).get("after"))
       for k in ("comm_gpu_ns", "comm_exposed_ns")}
check(got == {"comm_gpu_ns": (10 * US, 170 * US * N), "comm_exposed_ns": (7 * US, 70 * US * N)},
      f"diff headline communication: {got} ({p.stderr.strip()})")
sys.exit(finish())
