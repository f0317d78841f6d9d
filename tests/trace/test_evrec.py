#!/usr/bin/env python3
"""The program's own event records, end to end on the simulated GPU (programs/evrec.cu,
ITERS rounds of a launch, cudaEventRecord, cudaEventRecordWithFlags, a wait on a second
stream and cudaEventSynchronize), built with a shared runtime and with the simulated
runtime linked in statically (as nvcc's default static cudart: only the driver-level
hooks see its calls).

Asserted, for each build: ITERS event-record spans of each form, outermost, result 0,
on the kernels' stream (the launch records' stream), named cudaEventRecord /
cudaEventRecordWithFlags with the shared runtime (no cu* record: libcudart's driver
calls only forward) and cuEventRecord / cuEventRecordWithFlags with the DRIVER flag
with the static one (no cuda* record); no other event record, so none of the
tracer's own timing events (every kernel has its GPU record, so they were recorded);
`cutrace report --format json` lists the records in its API table, ITERS calls each,
no errors.

usage: test_evrec.py SIM_DIR CUTRACE LIBTRACE EVREC EVREC_STATIC
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cttest import check, finish, require_built, scratch_dir  # noqa: E402
from harness import record_one_file  # noqa: E402
from rawdump import kernel_identifier, raw_records  # noqa: E402

sim_dir, cutrace, libtrace, shared_prog, static_prog = sys.argv[1:6]
require_built(os.path.join(sim_dir, "libcuda.so.1"), libtrace, cutrace, shared_prog, static_prog)
tmp = scratch_dir("cutrace-evrec-")
API_DRIVER = 0x10
GPU_KERNEL = 1
ITERS = 5
FORMS = {"shared": ("cudaEventRecord", "cudaEventRecordWithFlags"),
         "static": ("cuEventRecord", "cuEventRecordWithFlags")}
ALL = {n for pair in FORMS.values() for n in pair} | {
    "cudaEventRecord_ptsz", "cudaEventRecordWithFlags_ptsz", "cuEventRecord_ptsz",
    "cuEventRecordWithFlags_ptsz"}

for build, prog in (("shared", shared_prog), ("static", static_prog)):
    path = record_one_file(cutrace, libtrace, sim_dir, os.path.join(tmp, build),
                           [prog, str(ITERS)], "evrec: ok", {})
    if not path:
        continue
    recs, names = raw_records(cutrace, path)
    apis = [r for r in recs if r["kind"] == "api"]
    launch_corrs = {r["corr"] for r in recs if r["kind"] == "launch"}
    streams = {a["stream"] for a in apis if a["corr"] in launch_corrs}
    check(len(streams) == 1, f"{build}: launches on streams {streams}, want one")
    kernels = [kernel_identifier(names.get(r["name"], "")) for r in recs
               if r["kind"] == "gpu" and r["type"] == GPU_KERNEL]
    check(kernels == ["evrec_step"] * ITERS, f"{build}: kernel GPU records {kernels}")
    seen = {}
    for a in apis:
        n = names.get(a["name"], "")
        if n in ALL:
            seen.setdefault(n, []).append(a)
    check(sorted(seen) == sorted(FORMS[build]),
          f"{build}: event record API names {sorted(seen)}, want {sorted(FORMS[build])}")
    for n in FORMS[build]:
        got = seen.get(n, [])
        check(len(got) == ITERS, f"{build}: {len(got)} {n} records, want {ITERS}")
        bad = [a for a in got if a["depth"] != 0 or a["result"] != 0 or a["stream"] not in streams
               or bool(a["flags"] & API_DRIVER) != (build == "static")]
        check(not bad, f"{build}: {n} records off (depth, result, stream {streams}, flags): {bad}")
    p = subprocess.run([cutrace, "report", "--format", "json", path], capture_output=True,
                       text=True, timeout=60)
    rep = json.loads(p.stdout) if p.returncode == 0 else {}
    check(p.returncode == 0, f"{build}: report status {p.returncode}: {p.stderr}")
    rows = {a["name"]: a for a in rep.get("apis", [])}
    for n in FORMS[build]:
        a = rows.get(n)
        check(a is not None and a["calls"] == ITERS and a["errors"] == 0,
              f"{build}: report apis row of {n}: {a}")
sys.exit(finish())
