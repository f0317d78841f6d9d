#!/usr/bin/env python3
"""A trace of format 1.5 (before kernel attributes) reads as it did: the same planted
launches written with the 1.5 schema (no KERNEL_ATTR / OCCUPANCY kinds, LAUNCH without
`attr`, DEVICE without the SM limits) and with the 1.6 one plus attributes, then:
- 1.5: `dump --chrome` kernel args are exactly the pre-1.6 set (`shared memory` the
  dynamic part), deviceProperties have no SM limits, `report --format json` has
  "attributes": null, the text table "-" in Regs, Smem and Occ %, `info` says 1.5;
- 1.6: the same launches get the attribute args, a report configuration and the limits.

usage: test_kattr_old.py CUTRACE
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib"))
from cttest import check, finish, scratch  # noqa: E402
from tracewrite import TraceWriter  # noqa: E402

cutrace = sys.argv[1]
T0, US = 10**9, 1000
OLD_ARGS = {"correlation", "device", "stream", "api", "grid", "block", "shared memory"}


def as_1_5(w):
    """w's schema as format 1.5 wrote it: the 1.6 kinds and trailing fields left out."""
    s = w.schema
    for kind in ("kernel_attr", "occupancy"):
        del s[kind]
    for kind, n in (("launch", 9), ("device", 8), ("graph_kernel", 3)):
        s[kind] = (s[kind][0], s[kind][1][:n])
    w.version = (1, 5)


def write(path, new):
    w = TraceWriter()
    if not new:
        as_1_5(w)
    w.add("process", pid=7, ppid=1, start_ns=T0, host=w.string("h"))
    dev = dict(device=0, name=w.string("GPU"), cc_major=9, sm_count=132)
    if new:
        dev.update(max_threads_per_sm=2048, warp_size=32, regs_per_sm=65536, smem_per_sm=233472,
                   max_blocks_per_sm=32)
        w.add("kernel_attr", id=1, name=w.string("_Z1kv"), regs=64, static_smem=1024)
        w.add("occupancy", attr=1, device=0, block_threads=128, dyn_smem=512, blocks_per_sm=8)
    w.add("device", **dev)
    for i in range(3):
        t = T0 + (i + 1) * 100 * US
        w.add("api", tid=7, name=w.string("cudaLaunchKernel"), begin_ns=t, end_ns=t + 2 * US,
              corr=i + 1, flags=4)
        launch = dict(corr=i + 1, kernel=w.string("_Z1kv"), grid_x=264, grid_y=1, grid_z=1,
                      block_x=128, block_y=1, block_z=1, shmem=512)
        if new:
            launch["attr"] = 1
        w.add("launch", **launch)
        w.add("gpu", corr=i + 1, start_ns=t + 5 * US, end_ns=t + 25 * US, type=1, name=w.string("_Z1kv"))
    w.add("end", records=12)
    w.save(path)


def run(*args):
    p = subprocess.run([cutrace, *args], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout


with scratch("cutrace-kattr-old-") as d:
    for new in (False, True):
        label = "1.6" if new else "1.5"
        path = os.path.join(d, label + ".ctr")
        write(path, new)
        rc, out = run("info", path)
        # the new trace is written as the writer writes today
        version = "%d.%d" % TraceWriter().version if new else "1.5"
        check(rc == 0 and f"format         {version}" in out, f"{label}: info {out[:200]!r}")
        rc, out = run("dump", "--chrome", path)
        doc = json.loads(out) if rc == 0 else {}
        kernels = [e["args"] for e in doc.get("traceEvents", []) if e.get("cat") == "kernel"]
        props = (doc.get("deviceProperties") or [{}])[0]
        if not new:
            check(len(kernels) == 3 and all(set(a) == OLD_ARGS and a["shared memory"] == 512
                                            for a in kernels), f"1.5: chrome kernel args {kernels}")
            check(set(props) == {"id", "name", "totalGlobalMem", "computeMajor", "computeMinor",
                                 "numSms"}, f"1.5: deviceProperties {props}")
        else:
            # 8 resident blocks of 4 warps on a 64-warp SM: 50 %; the grid gives 2 blocks
            # per SM, so Kineto's estimate is 2 x 128 / 2048 = 12.5 -> 13 (rounded)
            want = {"registers per thread": 64, "shared memory": 1536, "blocks per SM": 2.0,
                    "warps per SM": 8.0, "est. achieved occupancy %": 13,
                    "theoretical occupancy %": 50.0, "resident blocks per SM": 8}
            check(len(kernels) == 3 and all({k: a.get(k) for k in want} == want for a in kernels),
                  f"1.6: chrome kernel args {kernels[:1]}, want {want}")
            check(props.get("maxThreadsPerMultiprocessor") == 2048, f"1.6: deviceProperties {props}")
        rc, out = run("report", "--format", "json", path)
        rows = json.loads(out)["kernels"] if rc == 0 else []
        attrs = rows[0].get("attributes", "absent") if rows else "absent"
        if not new:
            check(len(rows) == 1 and attrs is None, f"1.5: report attributes {attrs}")
        else:
            check(attrs and attrs["launches"] == 3 and attrs["configs"][0]["occupancy_pct"] == 50.0,
                  f"1.6: report attributes {attrs}")
        rc, out = run("report", path)
        row = [ln.split() for ln in out.splitlines() if ln.rstrip().endswith("k()")]
        want_cells = ["-", "-", "-"] if not new else ["64", "1536", "50"]
        check(rc == 0 and len(row) == 1 and row[0][-4:-1] == want_cells,
              f"{label}: text row {row}, want {want_cells} before the name")

sys.exit(finish())
