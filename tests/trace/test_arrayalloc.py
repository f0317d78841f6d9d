#!/usr/bin/env python3
"""CUDA array allocations and releases, end to end on the simulated GPU
(programs/arrayalloc.cu: twenty-one planted calls, listed there).

Built twice: with the simulated libcudart.so (the runtime's cudaMallocArray,
cudaMalloc3DArray, cudaMallocMipmappedArray, cudaFreeArray and cudaFreeMipmappedArray are
the spans, the driver calls they make only forward) and with the simulated runtime
linked in statically (only the driver-level hooks see its calls: each runtime array is
one cuArray3DCreate_v2, each mipmapped one cuMipmappedArrayCreate, each release a
cuArrayDestroy / cuMipmappedArrayDestroy, as cuGetProcAddress gives them; the failing
cudaMallocArray never reaches the driver). Both builds call the driver's own
cuArrayCreate_v2, cuArray3DCreate_v2, cuMipmappedArrayCreate and destroys. Asserted
exactly, for each call: one outermost API record of its entry point (DRIVER flag at the
driver level) with its result; for a call that succeeded, one ALLOC record of kind array
(7), release 0 or 1, bytes as planted (the element size x width x height x depth, a
mipmapped array's summed over its levels, a layered one's layers not shrinking; 0 for a
sparse array and for a release), ptr the handle, a release's
ptr the allocation's it names; none for a failed call, nor for cudaFreeArray(NULL).
`cutrace report --format json --tables allocs`: one row of kind "array" (allocations,
bytes, releases, peak and live bytes at the end as planted); `dump --chrome`: the
"array memory" counter's last value the live bytes at the end.

usage: test_arrayalloc.py SIM_DIR CUTRACE LIBTRACE ARRAYALLOC ARRAYALLOC_STATIC
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cttest import check, finish, require_built, scratch_dir  # noqa: E402
from harness import chrome_events, record_one_file  # noqa: E402
from rawdump import raw_records  # noqa: E402

sim_dir, cutrace, libtrace, shared_prog, static_prog = sys.argv[1:6]
require_built(os.path.join(sim_dir, "libcuda.so.1"), libtrace, cutrace, shared_prog, static_prog)
tmp = scratch_dir("cutrace-arrayalloc-")
API_DRIVER = 0x10
ARRAY = 7
INVALID_CHANNEL = 20  # cudaErrorInvalidChannelDescriptor
INVALID_HANDLE = 400  # CUDA_ERROR_INVALID_HANDLE

# (runtime or driver name, its driver call in the static build (None: none), bytes,
#  release (None: no ALLOC record), the planted call whose allocation a release names
#  (numbered from 1), result)
PLANTED = [
    ("cudaMallocArray", "cuArray3DCreate_v2", 32768, 0, None, 0),
    ("cudaMallocArray", "cuArray3DCreate_v2", 1000, 0, None, 0),
    ("cudaMalloc3DArray", "cuArray3DCreate_v2", 2048, 0, None, 0),
    ("cudaMalloc3DArray", "cuArray3DCreate_v2", 768, 0, None, 0),
    ("cudaMallocMipmappedArray", "cuMipmappedArrayCreate", 10880, 0, None, 0),
    ("cudaMallocMipmappedArray", "cuMipmappedArrayCreate", 18688, 0, None, 0),
    ("cudaMallocArray", None, 0, 0, None, INVALID_CHANNEL),
    ("cudaFreeArray", "cuArrayDestroy", 0, 1, 1, 0),
    ("cudaFreeArray", "cuArrayDestroy", 0, 1, 3, 0),
    ("cudaFreeMipmappedArray", "cuMipmappedArrayDestroy", 0, 1, 5, 0),
    ("cudaFreeArray", None, 0, None, None, 0),  # cudaFreeArray(NULL): nothing released
    ("cuArrayCreate_v2", "cuArrayCreate_v2", 4000, 0, None, 0),
    ("cuArray3DCreate_v2", "cuArray3DCreate_v2", 8192, 0, None, 0),
    ("cuMipmappedArrayCreate", "cuMipmappedArrayCreate", 126, 0, None, 0),
    ("cuArray3DCreate_v2", "cuArray3DCreate_v2", 1536, 0, None, 0),
    ("cuArrayDestroy", "cuArrayDestroy", 0, 1, 12, 0),
    ("cuArrayDestroy", "cuArrayDestroy", 0, 1, 13, 0),
    ("cuMipmappedArrayDestroy", "cuMipmappedArrayDestroy", 0, 1, 14, 0),
    ("cuArrayDestroy", "cuArrayDestroy", 0, 0, None, INVALID_HANDLE),
    ("cuMipmappedArrayCreate", "cuMipmappedArrayCreate", 960, 0, None, 0),  # layered
    ("cuArray3DCreate_v2", "cuArray3DCreate_v2", 0, 0, None, 0),  # sparse: 0 bytes
]
ALLOCATED = sum(p[2] for p in PLANTED)
LIVE_AT_END = 1000 + 768 + 18688 + 1536 + 960
# the live bytes' highest value: after call 6 (32768 + 1000 + 2048 + 768 + 10880 + 18688)
PEAK = 66152


def is_driver(name):
    return name.startswith("cu") and not name.startswith("cuda")


def planted_calls(static):
    """The planted calls the build makes, as (number, entry point, planted)."""
    calls = []
    for i, p in enumerate(PLANTED):
        name = p[1] if static else p[0]
        if name:
            calls.append((i + 1, name, p))
    return calls


def check_report(label, path, releases):
    p = subprocess.run([cutrace, "report", "--format", "json", "--tables", "allocs", path],
                       capture_output=True, text=True, timeout=60)
    if not check(p.returncode == 0, f"{label}: report: {p.stderr}"):
        return
    rows = {r["kind"]: r for r in json.loads(p.stdout).get("allocs", [])}
    allocations = sum(1 for p in PLANTED if p[3] == 0 and not p[5])
    got = {k: (r["allocs"], r["bytes"], r["frees"], r["freed_bytes"], r["unmatched_frees"],
               r["peak_live_bytes"], r["live_bytes_at_end"]) for k, r in rows.items()}
    want = {"array": (allocations, ALLOCATED, releases, ALLOCATED - LIVE_AT_END, 0, PEAK,
                      LIVE_AT_END)}
    check(got == want, f"{label}: report allocs {got}, planted {want}")


def check_chrome(label, path):
    events = chrome_events(cutrace, path, os.path.join(tmp, label + ".json"), label) or []
    counters = [e for e in events if e.get("ph") == "C" and e.get("name") == "array memory"]
    values = [list(e["args"].values())[0] for e in counters]
    check(values and values[-1] == LIVE_AT_END and max(values) == PEAK,
          f"{label}: chrome 'array memory' counter {values}")


def run(label, program):
    data = os.path.join(tmp, label)
    path = record_one_file(cutrace, libtrace, sim_dir, data, [program], "arrayalloc: ok", {})
    if not path:
        return
    static = label == "static"
    calls = planted_calls(static)
    recs, names = raw_records(cutrace, path)
    wanted = {name for _, name, _ in calls}
    apis = sorted((r for r in recs if r["kind"] == "api" and names.get(r["name"]) in wanted
                   and r["depth"] == 0), key=lambda a: a["begin_ns"])
    check(len(apis) == len(calls), f"{label}: {len(apis)} calls of the array entry points, "
          f"planted {len(calls)}: {[names.get(a['name']) for a in apis]}")
    allocs = {}
    for r in recs:
        if r["kind"] == "alloc":
            check(r["corr"] not in allocs, f"{label}: two ALLOC records of corr {r['corr']}")
            allocs[r["corr"]] = r
    check(len(allocs) == sum(1 for _, _, p in calls if not p[5] and p[3] is not None),
          f"{label}: {len(allocs)} ALLOC records, planted one per successful call")
    ptr_of = {}
    for (number, want, planted), api in zip(calls, apis):
        tag = f"{label}: call {number} ({want})"
        name = names.get(api["name"])
        check(name == want, f"{tag}: entry point {name}")
        check(bool(api["flags"] & API_DRIVER) == is_driver(want), f"{tag}: flags {api['flags']:#x}")
        check(api["result"] == planted[5], f"{tag}: result {api['result']}, planted {planted[5]}")
        a = allocs.get(api["corr"])
        if planted[5] or planted[3] is None:
            check(a is None, f"{tag}: a failed call or a release of NULL with ALLOC record {a}")
            continue
        if not check(a is not None, f"{tag}: no ALLOC record"):
            continue
        got = (a["field_kind"], a["release"], a["bytes"])
        check(got == (ARRAY, planted[3], planted[2]) and a["ptr"],
              f"{tag}: ALLOC (kind, release, bytes) {got}, ptr {a['ptr']}, planted "
              f"{(ARRAY, planted[3], planted[2])}")
        if planted[3]:
            check(a["ptr"] == ptr_of.get(planted[4]),
                  f"{tag}: releases {a['ptr']:#x}, call {planted[4]} allocated "
                  f"{ptr_of.get(planted[4])}")
        else:
            ptr_of[number] = a["ptr"]
    check_report(label, path, sum(1 for p in PLANTED if p[3] and not p[5]))
    check_chrome(label, path)


run("shared", shared_prog)
run("static", static_prog)
sys.exit(finish())
