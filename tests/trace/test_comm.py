#!/usr/bin/env python3
"""Communication against compute, end to end on the simulated GPU (programs/comm.cu):
compute_gemm (40 us) on stream 1 and an NCCL-named all-reduce (30 us) launched right
after it on stream 2 overlap; an NCCL-named broadcast (10 us) after both is exposed.
`cutrace gaps` must report, for device 0, comm kernels = 2 per iteration, and comm,
overlap and exposed times equal to what the trace's own GPU records give (interval
unions computed here), with a real overlap (> 0) and real exposed time (>= the
broadcasts' 10 us each).

usage: test_comm.py SIM_DIR CUTRACE LIBTRACE COMM_PROGRAM
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from cttest import check, finish, require_built, scratch_dir  # noqa: E402
from rawdump import raw_records  # noqa: E402

sim_dir, cutrace, libtrace, program = sys.argv[1:5]
require_built(os.path.join(sim_dir, "libcuda.so.1"), libtrace, cutrace, program)
ITERS = 6
tmp = scratch_dir("cutrace-comm-")
env = dict(os.environ, LD_LIBRARY_PATH=sim_dir, CUTRACE_PRELOAD=libtrace,
           SIMCUDA_KERNEL_US="compute_gemm=40,AllReduce=30,Broadcast=10")
for k in ("LD_PRELOAD", "CUTRACE_OUTPUT"):
    env.pop(k, None)
data = os.path.join(tmp, "comm.data")
p = subprocess.run([cutrace, "record", "-q", "-o", data, "--", program, str(ITERS)], env=env,
                   capture_output=True, text=True, timeout=120)
check(p.returncode == 0 and "comm: ok" in p.stdout, f"traced comm: {p.returncode} {p.stderr[-300:]}")
files = [f for f in os.listdir(data) if f.endswith(".ctr")] if os.path.isdir(data) else []
if not check(len(files) == 1, f"one trace file: {files}"):
    sys.exit(finish())
path = os.path.join(data, files[0])
recs, strings = raw_records(cutrace, path)


def union(ivs):
    out = []
    for s, e in sorted(ivs):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def total(ivs):
    return sum(e - s for s, e in ivs)


kernels = [(strings.get(r["name"], ""), r["start_ns"], r["end_ns"]) for r in recs
           if r["kind"] == "gpu" and r["type"] == 1]
comm = union([(s, e) for n, s, e in kernels if "nccl" in n.lower()])
compute = union([(s, e) for n, s, e in kernels if "nccl" not in n.lower()])
both = union([(s, e) for _, s, e in kernels])
want_overlap = total(comm) + total(compute) - total(both)
check(len(kernels) == 3 * ITERS, f"{len(kernels)} kernel GPU records, want {3 * ITERS}")
p = subprocess.run([cutrace, "gaps", "--format", "json", path], capture_output=True, text=True,
                   timeout=120)
doc = json.loads(p.stdout) if p.returncode == 0 else {}
got = next((d["comm"] for d in doc.get("devices", []) if d["device"] == 0), {})
want = {"kernels": 2 * ITERS, "comm_ns": total(comm), "overlap_ns": want_overlap,
        "exposed_ns": total(comm) - want_overlap}
check(got == want, f"gaps comm {got}, from the GPU records {want}")
check(want_overlap > 0 and want["exposed_ns"] >= 10000 * ITERS,
      f"the program should overlap and expose communication: {want}")
sys.exit(finish())
