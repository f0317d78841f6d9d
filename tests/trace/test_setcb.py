#!/usr/bin/env python3
"""3-D sets and stream callbacks end to end on the simulated GPU (programs/setcb.cu).
Before 2026-12-07 neither cudaMemset3D nor cudaMemset3DAsync had a runtime hook, and
the driver calls libcudart makes for them are passed through untraced (the runtime's
own wrapper is expected to be the span): their GPU work was invisible under a shared
libcudart.

Asserted: each 3-D set is one outermost API record with a MEMOP record (kind memset,
bytes = the extent's width x height x depth, 2048 and 1536, its value, async 0 / 1) and
one GPU record of type memset on its call's stream; `cutrace report --format json`'s
memory table has one memset row of 2 calls and 3584 bytes; cudaStreamAddCallback and
cuStreamAddCallback (DRIVER flag) are one API record each on the stream, no GPU record.

usage: test_setcb.py SIM_DIR CUTRACE LIBTRACE SETCB
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cttest import check, finish, require_built, scratch_dir  # noqa: E402
from harness import record_one_file  # noqa: E402
from rawdump import raw_records  # noqa: E402

sim_dir, cutrace, libtrace, program = sys.argv[1:5]
require_built(os.path.join(sim_dir, "libcuda.so.1"), libtrace, cutrace, program)
tmp = scratch_dir("cutrace-setcb-")
API_DRIVER, GPU_MEMSET, MEMOP_MEMSET = 0x10, 3, 5
# entry point: (bytes, value, async)
SETS = {"cudaMemset3D": (2048, 1, 0), "cudaMemset3DAsync": (1536, 2, 1)}
CALLBACKS = ["cudaStreamAddCallback", "cuStreamAddCallback"]

path = record_one_file(cutrace, libtrace, sim_dir, os.path.join(tmp, "setcb"), [program],
                       "setcb: ok", {})
if path:
    recs, names = raw_records(cutrace, path)
    apis = {}
    for r in recs:
        if r["kind"] == "api":
            apis.setdefault(names.get(r["name"]), []).append(r)
    memops = {r["corr"]: r for r in recs if r["kind"] == "memop"}
    gpus = {r["corr"]: r for r in recs if r["kind"] == "gpu"}
    for name, (size, value, is_async) in SETS.items():
        got = apis.get(name, [])
        if not check(len(got) == 1, f"{name}: {len(got)} API records, want 1"):
            continue
        a = got[0]
        m, g = memops.get(a["corr"]), gpus.get(a["corr"])
        check(a["depth"] == 0 and a["result"] == 0, f"{name}: depth {a['depth']} result {a['result']}")
        check(m is not None and (m["field_kind"], m["bytes"], m["value"], m["async"])
              == (MEMOP_MEMSET, size, value, is_async),
              f"{name}: MEMOP {m}, want memset of {size} bytes, value {value}, async {is_async}")
        check(g is not None and g["type"] == GPU_MEMSET and g["stream"] == a["stream"],
              f"{name}: GPU record {g} (want a memset on stream {a['stream']})")
    set_stream = apis.get("cudaMemset3DAsync", [{}])[0].get("stream")
    for name in CALLBACKS:
        got = apis.get(name, [])
        if check(len(got) == 1, f"{name}: {len(got)} API records, want 1"):
            a = got[0]
            check(a["result"] == 0 and a["stream"] == set_stream and a["corr"] not in gpus
                  and bool(a["flags"] & API_DRIVER) == (name == "cuStreamAddCallback"),
                  f"{name}: {a} (want stream {set_stream}, no GPU record)")

    p = subprocess.run([cutrace, "report", "--format", "json", path], capture_output=True,
                       text=True, timeout=60)
    check(p.returncode == 0, f"report: status {p.returncode}: {p.stderr}")
    rows = json.loads(p.stdout).get("memcpy", []) if p.returncode == 0 else []
    sets = [r for r in rows if r.get("kind") == "memset"]
    check(len(sets) == 1 and sets[0]["count"] == 2 and sets[0]["bytes"] == 3584,
          f"report memset rows {sets} (want 2 calls, 3584 bytes)")
sys.exit(finish())
