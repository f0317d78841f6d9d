#!/usr/bin/env python3
"""Batches of decompressions by the copy engines (cuMemBatchDecompressAsync, +_ptsz;
format 1.11) end to end on the simulated GPU (programs/decompress.cu: three calls on one
stream between the kernels dc_before and dc_after, listed there).

Asserted: each call is one outermost API record (DRIVER flag, PTSZ on the per-thread
form) with its result on the kernels' stream and one MEMOP record of kind decompress
(13): count its operations (3, 1, 1), bytes what they write (13312, 2048; 0 for the
failed call, whose array is not read), memory types device, async 1; the two calls that
succeeded have a GPU record (type memcpy) on that stream between dc_before and dc_after,
the failed one none; `cutrace report --format json` has one memory row of kind
decompress, 2 calls and 15360 bytes; `cutrace info` reads the file as format 1.11.

usage: test_decompress.py SIM_DIR CUTRACE LIBTRACE DECOMPRESS
"""
import json
import re
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cttest import check, finish, require_built, scratch_dir  # noqa: E402
from harness import record_one_file  # noqa: E402
from rawdump import kernel_identifier, raw_records  # noqa: E402

sim_dir, cutrace, libtrace, program = sys.argv[1:5]
require_built(os.path.join(sim_dir, "libcuda.so.1"), libtrace, cutrace, program)
tmp = scratch_dir("cutrace-decompress-")
API_PTSZ, API_DRIVER = 0x1, 0x10
GPU_KERNEL, GPU_MEMCPY, MEMOP_DECOMPRESS, MEM_DEVICE = 1, 2, 13, 1
INVALID_VALUE = 1  # CUDA_ERROR_INVALID_VALUE
# (entry point, result, count, bytes)
PLANTED = [("cuMemBatchDecompressAsync", 0, 3, 13312),
           ("cuMemBatchDecompressAsync_ptsz", 0, 1, 2048),
           ("cuMemBatchDecompressAsync", INVALID_VALUE, 1, 0)]

path = record_one_file(cutrace, libtrace, sim_dir, os.path.join(tmp, "decompress"), [program],
                       "decompress: ok", {})
if path:
    recs, names = raw_records(cutrace, path)
    apis = sorted((r for r in recs if r["kind"] == "api"
                   and names.get(r["name"], "").startswith("cuMemBatchDecompressAsync")),
                  key=lambda a: a["begin_ns"])
    memops = {r["corr"]: r for r in recs if r["kind"] == "memop"}
    gpus = {r["corr"]: r for r in recs if r["kind"] == "gpu"}
    kernels = {kernel_identifier(names.get(g["name"], "")): g for g in gpus.values()
               if g["type"] == GPU_KERNEL}
    before, after = kernels.get("dc_before"), kernels.get("dc_after")
    check(before is not None and after is not None, f"kernels {sorted(kernels)}")
    check(len(apis) == len(PLANTED), f"{len(apis)} decompression calls, planted {len(PLANTED)}")
    for i, (a, (name, result, count, size)) in enumerate(zip(apis, PLANTED)):
        tag = f"call {i + 1} ({name})"
        check(names.get(a["name"]) == name and a["depth"] == 0 and a["result"] == result,
              f"{tag}: {names.get(a['name'])} depth {a['depth']} result {a['result']}")
        check(bool(a["flags"] & API_DRIVER) and bool(a["flags"] & API_PTSZ) == name.endswith("_ptsz"),
              f"{tag}: flags {a['flags']:#x}")
        check(before is not None and a["stream"] == before["stream"],
              f"{tag}: stream {a['stream']}, the kernels' {before and before['stream']}")
        m = memops.get(a["corr"])
        got = m and (m["field_kind"], m["count"], m["bytes"], m["src_mem"], m["dst_mem"], m["async"])
        check(got == (MEMOP_DECOMPRESS, count, size, MEM_DEVICE, MEM_DEVICE, 1),
              f"{tag}: MEMOP (kind count bytes src dst async) {got}")
        g = gpus.get(a["corr"])
        if result:
            check(g is None, f"{tag}: a failed call has a GPU record {g}")
        elif check(g is not None and g["type"] == GPU_MEMCPY, f"{tag}: GPU record {g}"):
            check(g["stream"] == a["stream"] and before and after
                  and before["end_ns"] <= g["start_ns"] <= g["end_ns"] <= after["start_ns"],
                  f"{tag}: GPU record {g} not on its stream between dc_before {before} and "
                  f"dc_after {after}")

    p = subprocess.run([cutrace, "report", "--format", "json", path], capture_output=True,
                       text=True, timeout=60)
    check(p.returncode == 0, f"report: status {p.returncode}: {p.stderr}")
    rows = json.loads(p.stdout).get("memcpy", []) if p.returncode == 0 else []
    rows = [r for r in rows if r.get("kind") == "decompress"]
    check(len(rows) == 1 and rows[0]["count"] == 2 and rows[0]["bytes"] == 15360
          and (rows[0]["src"], rows[0]["dst"]) == ("device", "device"),
          f"report decompress rows {rows} (want 2 calls, 15360 bytes, device -> device)")
    p = subprocess.run([cutrace, "info", path], capture_output=True, text=True, timeout=60)
    check(p.returncode == 0 and re.search(r"\b1\.1[1-9]\b", p.stdout), f"info: {p.stdout[:300]!r}")
sys.exit(finish())
