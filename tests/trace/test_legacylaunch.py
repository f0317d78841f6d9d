#!/usr/bin/env python3
"""The launch API of CUDA 1.x-3.x (cuLaunch, cuLaunchGrid, cuLaunchGridAsync, reached
through cuGetProcAddress) end to end on the simulated GPU (programs/legacylaunch.cu:
three launches and one that fails, listed there). Before 2026-12-07 these kernels were
not seen at all.

Asserted: each call is one outermost API record (DRIVER flag) with its result and a
LAUNCH record naming its kernel with its grid (1 x 1, 4 x 3, 5 x 1, 1 x 1, 2 x 1) and the
block shape and dynamic shared memory set earlier on the function with cuFuncSetBlockShape
and cuFuncSetSharedSize (remembered by the tracer since 2026-12-07; the failed launch's
function had none: 0 x 0 x 0; a refused shape changes nothing; a later shape replaces the
earlier one); the ones that succeeded have kernel attributes and an occupancy record for
their block and shared memory (attr != 0), the failed one none (attr 0); the ones that
succeeded have a kernel GPU record (cuLaunchGridAsync's on its stream, the others on the
legacy stream), the failed one none; `cutrace report --format json` lists the three
kernels (old_one twice).

usage: test_legacylaunch.py SIM_DIR CUTRACE LIBTRACE LEGACYLAUNCH
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
tmp = scratch_dir("cutrace-legacylaunch-")
API_DRIVER, GPU_KERNEL, INVALID_VALUE = 0x10, 1, 1
# (entry point, kernel, grid x, grid y, block, shared memory, result, legacy stream)
PLANTED = [("cuLaunch", "old_one", 1, 1, (64, 2, 1), 0, 0, True),
           ("cuLaunchGrid", "old_grid", 4, 3, (32, 1, 1), 128, 0, True),
           ("cuLaunchGridAsync", "old_async", 5, 1, (128, 1, 1), 0, 0, False),
           ("cuLaunchGrid", "old_bare", 1, 1, (0, 0, 0), 0, INVALID_VALUE, True),
           ("cuLaunchGrid", "old_one", 2, 1, (256, 1, 1), 64, 0, True)]

path = record_one_file(cutrace, libtrace, sim_dir, os.path.join(tmp, "legacylaunch"), [program],
                       "legacylaunch: ok", {})
if path:
    recs, names = raw_records(cutrace, path)
    apis = sorted((r for r in recs if r["kind"] == "api"
                   and names.get(r["name"]) in ("cuLaunch", "cuLaunchGrid", "cuLaunchGridAsync")),
                  key=lambda a: a["begin_ns"])
    launches = {r["corr"]: r for r in recs if r["kind"] == "launch"}
    gpus = {r["corr"]: r for r in recs if r["kind"] == "gpu"}
    check(len(apis) == len(PLANTED), f"{len(apis)} legacy launch calls, planted {len(PLANTED)}")
    occupancy = [r for r in recs if r["kind"] == "occupancy"]
    for a, (name, kernel, gx, gy, block, shmem, result, legacy) in zip(apis, PLANTED):
        tag = f"{name} of {kernel}"
        check(names.get(a["name"]) == name and a["depth"] == 0 and a["result"] == result
              and a["flags"] & API_DRIVER,
              f"{tag}: {names.get(a['name'])} depth {a['depth']} result {a['result']} flags {a['flags']:#x}")
        l = launches.get(a["corr"])
        got = l and (names.get(l["kernel"]), l["grid_x"], l["grid_y"], l["grid_z"], l["block_x"],
                     l["block_y"], l["block_z"], l["shmem"])
        check(got == (kernel, gx, gy, 1, *block, shmem),
              f"{tag}: LAUNCH (kernel grid block shmem) {got}, want {(kernel, gx, gy, 1, *block, shmem)}")
        if l and result:
            check(l["attr"] == 0, f"{tag}: a failed launch has attributes {l['attr']}")
        elif l:
            occ = [o for o in occupancy if o["attr"] == l["attr"]
                   and o["block_threads"] == block[0] * block[1] * block[2]
                   and o["dyn_smem"] == shmem]
            check(l["attr"] != 0 and occ, f"{tag}: attr {l['attr']}, occupancy for its block {occ}")
        g = gpus.get(a["corr"])
        if result:
            check(g is None, f"{tag}: a failed launch has a GPU record {g}")
        else:
            check(g is not None and g["type"] == GPU_KERNEL and (g["stream"] == 0) == legacy
                  and g["stream"] == a["stream"], f"{tag}: GPU record {g} (API stream {a['stream']})")
    p = subprocess.run([cutrace, "report", "--format", "json", path], capture_output=True,
                       text=True, timeout=60)
    check(p.returncode == 0, f"report: status {p.returncode}: {p.stderr}")
    rows = json.loads(p.stdout).get("kernels", []) if p.returncode == 0 else []
    got = sorted((r["name"], r["calls"]) for r in rows)
    check(got == [("old_async", 1), ("old_grid", 1), ("old_one", 2)], f"report kernels {got}")
sys.exit(finish())
