#!/usr/bin/env python3
"""Copies to, from and between CUDA arrays, end to end on the simulated GPU
(programs/arrays.cu: twenty-four planted calls, listed there).

Built twice: with the simulated libcudart.so (the runtime's array copies are the spans,
the driver calls they make only forward) and with the simulated runtime linked in
statically (only the driver-level hooks see its calls: each runtime array copy is one
cuMemcpy3D_v2 / cuMemcpy3DAsync_v2 with CU_MEMORYTYPE_ARRAY sides, the 3-D batch a
cuMemcpy3DBatchAsync_v2, as cuGetProcAddress gives them at 13000). Both builds call the
driver's array copies themselves (cuMemcpyHtoA_v2 ... from cuGetProcAddress_v2, two of
them in their _ptsz / _ptds forms) and cuMemcpy2D_v2 into an array. Asserted exactly, for
each call: one outermost API record of its entry point (DRIVER flag at the driver level,
PTSZ flag on the per-thread forms) with its result, one MEMOP record (bytes, kind,
memory types, async, count: an array is device memory, a 3-D copy's extent counted in the
array's elements times their size) and, for a call that succeeded, one GPU memcpy record
on the call's stream that covers the simulator's operations of that call (truth log: one
line per copy, its direction the MEMOP's); the failing call (past the array's last row)
keeps cudaErrorInvalidValue / CUDA_ERROR_INVALID_VALUE and has no GPU record and no
truth line; the two calls into a capturing stream are flagged CT_API_CAPTURED, with their
MEMOP (a 3-D copy's bytes in the array's elements: the descriptor asked during the
capture) and no GPU record. The program's output is the same traced and untraced. `cutrace report
--format json`: the memory operations table's rows (count and bytes per direction and
memory types, GPU time the sum of the GPU records); `dump --chrome`: the copies' slices.

usage: test_arrays.py SIM_DIR CUTRACE LIBTRACE ARRAYS ARRAYS_STATIC
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cttest import check, finish, require_built, scratch_dir  # noqa: E402
from harness import chrome_events, read_truth, record_one_file  # noqa: E402
from rawdump import raw_records  # noqa: E402

sim_dir, cutrace, libtrace, shared_prog, static_prog = sys.argv[1:6]
require_built(os.path.join(sim_dir, "libcuda.so.1"), libtrace, cutrace, shared_prog, static_prog)
tmp = scratch_dir("cutrace-arrays-")
API_PTSZ, API_CAPTURED, API_DRIVER = 0x1, 0x2, 0x10
INVALID_VALUE = 1  # cudaErrorInvalidValue and CUDA_ERROR_INVALID_VALUE
H2D, D2H, D2D, P2P = 1, 2, 3, 6
DEVICE, PINNED, PAGEABLE = 1, 2, 3
DIRECTION = {H2D: "HtoD", D2H: "DtoH", D2D: "DtoD", P2P: "DtoD"}  # the simulator's names
REPORT_KIND = {H2D: "HtoD", D2H: "DtoH", D2D: "DtoD", P2P: "PtoP"}
EDGE_NS = 200000  # clock conversion and a loaded machine (as test_batch)

# (runtime or driver name, its driver call in the static build, per-thread, bytes, kind,
#  src, dst, async, count, simulator operations, result)
PLANTED = [
    ("cudaMemcpy2DToArrayAsync", "cuMemcpy3DAsync_v2", 0, 32768, H2D, PINNED, DEVICE, 1, 0, 1, 0),
    ("cudaMemcpy2DArrayToArray", "cuMemcpy3D_v2", 0, 8192, D2D, DEVICE, DEVICE, 0, 0, 1, 0),
    ("cudaMemcpy2DFromArrayAsync", "cuMemcpy3DAsync_v2", 0, 32768, D2H, DEVICE, PINNED, 1, 0, 1, 0),
    ("cudaMemcpyToArray", "cuMemcpy3D_v2", 0, 2048, H2D, PAGEABLE, DEVICE, 0, 0, 1, 0),
    ("cudaMemcpyFromArrayAsync", "cuMemcpy3DAsync_v2", 0, 4096, D2D, DEVICE, DEVICE, 1, 0, 1, 0),
    ("cudaMemcpyArrayToArray", "cuMemcpy3D_v2", 0, 1024, D2D, DEVICE, DEVICE, 0, 0, 1, 0),
    ("cudaMemcpy2DToArray_ptds", "cuMemcpy3D_v2_ptds", 1, 1024, H2D, PINNED, DEVICE, 0, 0, 1, 0),
    ("cudaMemcpy3DAsync", "cuMemcpy3DAsync_v2", 0, 512, H2D, PINNED, DEVICE, 1, 0, 1, 0),
    ("cudaMemcpy3DBatchAsync", "cuMemcpy3DBatchAsync_v2", 0, 2304, D2D, DEVICE, DEVICE, 1, 2, 2, 0),
    ("cuMemcpyHtoA_v2", "cuMemcpyHtoA_v2", 0, 8192, H2D, PAGEABLE, DEVICE, 0, 0, 1, 0),
    ("cuMemcpyHtoAAsync_v2_ptsz", "cuMemcpyHtoAAsync_v2_ptsz", 1, 4096, H2D, PINNED, DEVICE, 1, 0,
     1, 0),
    ("cuMemcpyAtoHAsync_v2", "cuMemcpyAtoHAsync_v2", 0, 16384, D2H, DEVICE, PINNED, 1, 0, 1, 0),
    ("cuMemcpyAtoD_v2", "cuMemcpyAtoD_v2", 0, 2048, D2D, DEVICE, DEVICE, 0, 0, 1, 0),
    ("cuMemcpyDtoA_v2_ptds", "cuMemcpyDtoA_v2_ptds", 1, 1024, D2D, DEVICE, DEVICE, 0, 0, 1, 0),
    ("cuMemcpyAtoA_v2", "cuMemcpyAtoA_v2", 0, 4096, D2D, DEVICE, DEVICE, 0, 0, 1, 0),
    ("cuMemcpyAtoH_v2", "cuMemcpyAtoH_v2", 0, 512, D2H, DEVICE, PAGEABLE, 0, 0, 1, 0),
    ("cuMemcpy2D_v2", "cuMemcpy2D_v2", 0, 1024, H2D, PINNED, DEVICE, 0, 0, 1, 0),
    ("cudaMemcpy2DToArray", "cuMemcpy3D_v2", 0, 4096, H2D, PINNED, DEVICE, 0, 0, 0, INVALID_VALUE),
    ("cudaMemcpyFromArray", "cuMemcpy3D_v2", 0, 1024, D2H, DEVICE, PAGEABLE, 0, 0, 1, 0),
    ("cudaMemcpy2DFromArray", "cuMemcpy3D_v2", 0, 512, D2D, DEVICE, DEVICE, 0, 0, 1, 0),
    ("cudaMemcpyToArrayAsync", "cuMemcpy3DAsync_v2", 0, 2048, H2D, PINNED, DEVICE, 1, 0, 1, 0),
    ("cudaMemcpy3DPeerAsync", "cuMemcpy3DPeerAsync", 0, 1024, P2P, DEVICE, DEVICE, 1, 0, 1, 0),
    ("cudaMemcpy2DToArrayAsync", "cuMemcpy3DAsync_v2", 0, 2048, H2D, PINNED, DEVICE, 1, 0, 0, 0),
    ("cudaMemcpy3DAsync", "cuMemcpy3DAsync_v2", 0, 512, H2D, PINNED, DEVICE, 1, 0, 0, 0),
]
CAPTURED = {len(PLANTED) - 2, len(PLANTED) - 1}  # made into a capturing stream


def is_driver(name):
    return name.startswith("cu") and not name.startswith("cuda")


def planted_names(static):
    return {p[1] if static else p[0] for p in PLANTED}


def check_call(tag, api, planted, memop, gpu, mine, captured):
    """One planted call: its API record, MEMOP record, GPU record against its truth lines
    (a captured call: flagged CT_API_CAPTURED, no GPU record, no truth line)."""
    _, _, ptsz, nbytes, kind, src, dst, is_async, count, ops, result = planted
    check(api["depth"] == 0 and api["result"] == result,
          f"{tag}: depth {api['depth']}, result {api['result']}, planted {result}")
    check(bool(api["flags"] & API_PTSZ) == bool(ptsz), f"{tag}: flags {api['flags']:#x}")
    check(bool(api["flags"] & API_CAPTURED) == captured, f"{tag}: flags {api['flags']:#x}")
    if check(memop is not None, f"{tag}: no MEMOP record"):
        got = (memop["bytes"], memop["field_kind"], memop["src_mem"], memop["dst_mem"],
               memop["async"], memop["count"])
        want = (nbytes, kind, src, dst, is_async, count)
        check(got == want, f"{tag}: MEMOP (bytes, kind, src, dst, async, count) {got}, "
              f"planted {want}")
    if result or captured:
        check(gpu is None and not mine, f"{tag}: a failed or captured call with GPU record {gpu}, "
              f"simulator operations {mine}")
        return
    if not check(gpu is not None and gpu["type"] == 2, f"{tag}: no GPU memcpy record {gpu}"):
        return
    check(gpu["stream"] == api["stream"], f"{tag}: GPU stream {gpu['stream']}, call's "
          f"{api['stream']}")
    if not check(len(mine) == ops and all(t["kind"] == "memcpy" and t["name"] == DIRECTION[kind]
                                          for t in mine),
                 f"{tag}: simulator operations {mine}, planted {ops} x {DIRECTION[kind]}"):
        return
    first, last = mine[0]["start_ns"], max(t["end_ns"] for t in mine)
    # a call of one operation that returned after it started is dated at the return
    latest = max(first, api["end_ns"]) if count == 0 else first
    check(api["begin_ns"] - EDGE_NS <= gpu["start_ns"] <= latest + EDGE_NS,
          f"{tag}: GPU start {gpu['start_ns'] - first} ns from the first operation's, "
          f"{gpu['start_ns'] - api['begin_ns']} ns after the call began")
    check(last - EDGE_NS <= gpu["end_ns"] <= max(last, api["end_ns"]) + EDGE_NS,
          f"{tag}: GPU end {gpu['end_ns'] - last} ns from the last operation's, "
          f"{gpu['end_ns'] - api['end_ns']} ns from the call's end")


def check_report(label, path, calls, gpus):
    """report's memory table: one row per (direction, memory types), as planted."""
    p = subprocess.run([cutrace, "report", "--format", "json", path], capture_output=True,
                       text=True, timeout=60)
    if not check(p.returncode == 0, f"{label}: report: {p.stderr}"):
        return
    names = {1: "device", 2: "pinned", 3: "pageable"}
    rows = {(r["kind"], r["src"], r["dst"]): r for r in json.loads(p.stdout)["memcpy"]}
    want = {}
    for api, planted in calls:
        if planted[10] or not planted[9]:  # failed, captured
            continue
        key = (REPORT_KIND[planted[4]], names[planted[5]], names[planted[6]])
        count, nbytes, ns = want.get(key, (0, 0, 0))
        g = gpus.get(api["corr"], {"start_ns": 0, "end_ns": 0})
        want[key] = (count + 1, nbytes + planted[3], ns + g["end_ns"] - g["start_ns"])
    got = {k: (r["count"], r["bytes"], r["total_ns"]) for k, r in rows.items()}
    check(got == want, f"{label}: report's memory rows {got}, planted {want}")


def run(label, program):
    data = os.path.join(tmp, label)
    truth_path = os.path.join(tmp, label + ".truth")
    path = record_one_file(cutrace, libtrace, sim_dir, data, [program], "arrays: ok",
                           {"SIMCUDA_TRUTH_FILE": truth_path})
    if not path:
        return
    p = subprocess.run([program], env=dict(os.environ, LD_LIBRARY_PATH=sim_dir),
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 0 and "arrays: ok" in p.stdout and "18: cudaErrorInvalidValue" in p.stdout,
          f"{label}: untraced run: {p.stdout!r} {p.stderr!r}")
    static = label == "static"
    truth = [t for t in read_truth(truth_path) if t["kind"] == "memcpy"]
    recs, names = raw_records(cutrace, path)
    wanted = planted_names(static)
    apis = sorted((r for r in recs if r["kind"] == "api" and names.get(r["name"]) in wanted),
                  key=lambda a: a["begin_ns"])
    check(len(apis) == len(PLANTED), f"{label}: {len(apis)} calls of the array copies, planted "
          f"{len(PLANTED)}: {[names.get(a['name']) for a in apis]}")
    check(len(truth) == sum(p[9] for p in PLANTED),
          f"{label}: the simulator ran {len(truth)} copies")
    memops = {r["corr"]: r for r in recs if r["kind"] == "memop"}
    gpus = {r["corr"]: r for r in recs if r["kind"] == "gpu"}
    for i, (api, planted) in enumerate(zip(apis, PLANTED)):
        want = planted[1] if static else planted[0]
        tag = f"{label}: call {i + 1} ({want})"
        name = names.get(api["name"])
        check(name == want, f"{tag}: entry point {name}")
        check(bool(api["flags"] & API_DRIVER) == is_driver(want), f"{tag}: flags {api['flags']:#x}")
        mine, truth = truth[:planted[9]], truth[planted[9]:]
        check_call(tag, api, planted, memops.get(api["corr"]), gpus.get(api["corr"]), mine,
                   i in CAPTURED)
    check_report(label, path, list(zip(apis, PLANTED)), gpus)
    events = chrome_events(cutrace, path, os.path.join(tmp, label + ".json"), label) or []
    slices = [e["name"] for e in events if e.get("cat") == "gpu_memcpy" and e.get("ph") == "X"]
    check(len(slices) == sum(1 for p in PLANTED if p[9]),
          f"{label}: chrome memcpy slices {slices}")


run("shared", shared_prog)
run("static", static_prog)
sys.exit(finish())
