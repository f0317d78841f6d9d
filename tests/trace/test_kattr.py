#!/usr/bin/env python3
"""Kernel attributes and theoretical occupancy (format 1.6), end to end on the simulated
GPU (programs/kattr.cu).

SIMCUDA_KERNEL_ATTRS plants heavy = 96 registers, 12288 bytes of static shared memory,
64 bytes of local memory per thread, and light = 36 registers, 2048, 0. The simulator's
occupancy calculator (tests/sim/driver/occupancy.c: compute capability 9.0 limits) then
answers, per launch shape (resident blocks per SM, theoretical occupancy = blocks x
warps / 64):
  heavy 256 threads, 0 dynamic:      registers: 96 x 32 = 3072 per warp, 16384 / 3072 = 5
                                     warps per sub-partition, 20 per SM, / 8 warps = 2
                                     (warps 8, shared 233472 / 13312 = 17)      -> 2, 25 %
  heavy 128 threads, 16384 dynamic:  registers 20 / 4 = 5 (warps 16, shared 233472 /
                                     29696 = 7)                                 -> 5, 31.25 %
  light 1024 threads:                36 x 32 = 1152 rounded up to 1280 per warp, 16384 /
                                     1280 = 12 per sub-partition, 48 per SM, / 32 = 1;
                                     warps 64 / 32 = 2                          -> 1, 50 %
  light 96 threads:                  registers 48 / 3 = 16 (warps 21; without the
                                     rounding to 256 it would be 56 / 3 = 18)   -> 16, 75 %
Asserted exactly, with the shared runtime (runtime launches: cudaFuncGetAttributes and
cudaOccupancyMaxActiveBlocksPerMultiprocessor) and the static one (driver launches:
cuFuncGetAttribute and cuOccupancyMaxActiveBlocksPerMultiprocessor): one KERNEL_ATTR
record per kernel with the planted values, one OCCUPANCY record per shape, every LAUNCH
naming its kernel's record; the report's JSON attributes (configurations by launches,
ranges) and text columns; dump --chrome's args with Kineto's names and meanings (blocks
per SM = grid blocks / 132 SMs, warps per SM, est. achieved occupancy %), and the same
args on dump --perfetto's kernel slices. With the
shared runtime, light's first launch comes with a runtime error pending: the tracer
leaves it alone (the program checks cudaGetLastError) and that launch has no
attributes (attr 0): 3 of light's 4 launches of 1024 threads are known there, 4 in the static build.

`kattr errors` (both builds): launches that fail (too many threads, first and after the
kernel is known; no kernel), and a failed launch's error left pending across a good
launch of a new shape; after each, what the launch returned and what
cudaPeekAtLastError and cudaGetLastError say: the same lines with and without the
tracer, and the planted ones (EXPECTED_ERRORS). The trace: one KERNEL_ATTR (third), its
OCCUPANCY of 64 threads, and of 96 in the static build only (shared: that launch had an
error pending, so the runtime was not asked), no attributes on a failed launch.

usage: test_kattr.py SIM_DIR CUTRACE LIBTRACE KATTR KATTR_STATIC
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

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import perfetto_read  # noqa: E402

sim_dir, cutrace, libtrace, shared_prog, static_prog = sys.argv[1:6]
require_built(os.path.join(sim_dir, "libcuda.so.1"), libtrace, cutrace, shared_prog, static_prog)
tmp = scratch_dir("cutrace-kattr-")

PLANTED = {"heavy": (96, 12288, 64), "light": (36, 2048, 0)}
ENV = {"SIMCUDA_KERNEL_ATTRS": "heavy=96:12288:64,light=36:2048:0"}
# (kernel, block threads, dynamic smem) -> (grid blocks, launches, resident blocks, occupancy %)
SHAPES = {("heavy", 256, 0): (264, 3, 2, 25.0), ("heavy", 128, 16384): (132, 2, 5, 31.25),
          ("light", 1024, 0): (1024, 4, 1, 50.0), ("light", 96, 0): (66, 1, 16, 75.0)}
SMS, MAX_THREADS = 132, 2048


def check_records(label, path, shared):
    recs, strings = raw_records(cutrace, path)
    attrs = {r["id"]: r for r in recs if r["kind"] == "kernel_attr"}
    names = {i: kernel_identifier(strings.get(a["name"], "?")) for i, a in attrs.items()}
    check(sorted(names.values()) == ["heavy", "light"], f"{label}: KERNEL_ATTR of {names}")
    for i, a in attrs.items():
        want = PLANTED.get(names[i])
        got = (a["regs"], a["static_smem"], a["local_bytes"])
        check(got == want, f"{label}: {names[i]} attributes {got}, want {want}")
        want_dyn = 48 * 1024 - want[1] if want else None
        check(a["max_threads"] == 1024 and a["max_dyn_smem"] == want_dyn,
              f"{label}: {names[i]} max threads {a['max_threads']}, max dynamic {a['max_dyn_smem']}")
    occ = {(names.get(o["attr"]), o["block_threads"], o["dyn_smem"]): o["blocks_per_sm"]
           for o in recs if o["kind"] == "occupancy"}
    want_occ = {k: v[2] for k, v in SHAPES.items()}
    check(occ == want_occ, f"{label}: OCCUPANCY records {occ}, want {want_occ}")
    check(sum(1 for r in recs if r["kind"] == "occupancy") == 4, f"{label}: 4 OCCUPANCY records")
    launches = [r for r in recs if r["kind"] == "launch"]
    unknown = [r for r in launches if r["attr"] == 0]
    check(len(launches) == 10, f"{label}: {len(launches)} launches")
    check(len(unknown) == (1 if shared else 0), f"{label}: {len(unknown)} launches without attributes")
    if shared and unknown:
        u = unknown[0]
        check(kernel_identifier(strings.get(u["kernel"], "")) == "light" and u["block_x"] == 1024,
              f"{label}: the launch without attributes is {u}")
    for r in launches:
        if r["attr"]:
            k = kernel_identifier(strings.get(r["kernel"], ""))
            check(names.get(r["attr"]) == k, f"{label}: launch of {k} names attributes of {names.get(r['attr'])}")
    dev = [r for r in recs if r["kind"] == "device"]
    check(len(dev) == 1 and (dev[0]["max_threads_per_sm"], dev[0]["warp_size"], dev[0]["regs_per_sm"],
                             dev[0]["smem_per_sm"], dev[0]["max_blocks_per_sm"]) == (2048, 32, 65536, 233472, 32),
          f"{label}: DEVICE limits {dev}")
    # 1.6: the CUDA versions (the simulator's driver and shared runtime say 13000; a static
    # runtime has no symbol the tracer can ask: 0)
    want_versions = (13000, 13000 if shared else 0)
    check(len(dev) == 1 and (dev[0]["driver_version"], dev[0]["runtime_version"]) == want_versions,
          f"{label}: DEVICE versions {dev}, want {want_versions}")
    p = subprocess.run([cutrace, "info", path], capture_output=True, text=True, timeout=120)
    want_line = "  cuda           driver 13.0, runtime %s\n" % ("13.0" if shared else "unknown")
    check(want_line in p.stdout and "  device 0       cutrace simulated GPU (sm 9.0, 132 SMs" in p.stdout,
          f"{label}: info's cuda and device lines:\n{p.stdout}")


def check_report(label, path, shared):
    p = subprocess.run([cutrace, "report", "--format", "json", path], capture_output=True,
                       text=True, timeout=120)
    check(p.returncode == 0, f"{label}: report json status {p.returncode}: {p.stderr[-300:]}")
    rows = {kernel_identifier(k["name"]): k for k in json.loads(p.stdout or "{}").get("kernels", [])}
    for kernel, (regs, static, local) in PLANTED.items():
        a = (rows.get(kernel) or {}).get("attributes") or {}
        shapes = [(s, v) for s, v in SHAPES.items() if s[0] == kernel]
        known = sum(v[1] for _, v in shapes) - (1 if shared and kernel == "light" else 0)
        configs = []
        for (_, threads, dyn), (_, n, blocks, pct) in shapes:
            if shared and kernel == "light" and threads == 1024:
                n -= 1
            configs.append({"launches": n, "regs": regs, "smem_static": static, "smem_dynamic": dyn,
                            "local_bytes": local, "block_threads": threads, "blocks_per_sm": blocks,
                            "occupancy_pct": pct})
        configs.sort(key=lambda c: -c["launches"])
        pcts = [c["occupancy_pct"] for c in configs]
        smems = [static + c["smem_dynamic"] for c in configs]
        want = {"launches": known, "regs_min": regs, "regs_max": regs, "smem_min": min(smems),
                "smem_max": max(smems), "occupancy_pct_min": min(pcts),
                "occupancy_pct_max": max(pcts), "more_configs": False, "configs": configs}
        check(a == want, f"{label}: report attributes of {kernel}:\n  {a}\n  want {want}")
    p = subprocess.run([cutrace, "report", path], capture_output=True, text=True, timeout=120)
    # text: Regs, Smem (static + dynamic: a range), Occ % (a range), then the name
    cells = {}
    for ln in p.stdout.splitlines():
        tokens = ln.split()
        for at, t in enumerate(tokens):
            if at >= 3 and (t.startswith("heavy(") or t.startswith("light(")):
                cells[t.split("(")[0]] = tokens[at - 3:at]
    check(cells.get("heavy") == ["96", "12288-28672", "25-31"], f"{label}: text cells of heavy {cells}")
    check(cells.get("light") == ["36", "2048", "50-75"], f"{label}: text cells of light {cells}")


def kernel_events(label, path, shared):
    """The kernel slices of dump --chrome, and the same of dump --perfetto: (name, args)."""
    p = subprocess.run([cutrace, "dump", "--chrome", path], capture_output=True, text=True,
                       timeout=120)
    check(p.returncode == 0, f"{label}: dump --chrome status {p.returncode}: {p.stderr[-300:]}")
    doc = json.loads(p.stdout or "{}")
    events = [e for e in doc.get("traceEvents", []) if e.get("cat") == "kernel"]
    props = doc.get("deviceProperties", [{}])
    got = {k: props[0].get(k) for k in ("numSms", "maxThreadsPerMultiprocessor", "warpSize",
                                         "regsPerMultiprocessor", "sharedMemPerMultiprocessor")}
    check(got == {"numSms": 132, "maxThreadsPerMultiprocessor": 2048, "warpSize": 32,
                  "regsPerMultiprocessor": 65536, "sharedMemPerMultiprocessor": 233472},
          f"{label}: deviceProperties {got}")
    # the CUDA versions of the DEVICE records, as Kineto's top-level keys (check_records)
    got = (doc.get("cuda_driver_version"), doc.get("cuda_runtime_version"))
    check(got == (13000, 13000 if shared else None), f"{label}: Kineto's version keys {got}")
    pf = os.path.join(tmp, label + ".pftrace")
    with open(pf, "wb") as out:
        q = subprocess.run([cutrace, "dump", "--perfetto", path], stdout=out, timeout=120)
    check(q.returncode == 0, f"{label}: dump --perfetto status {q.returncode}")
    slices = [s for s in perfetto_read.read(pf).slices if s.get("cat") == "kernel"]
    return events, slices


ATTR_ARGS = ("registers per thread", "shared memory", "static shared memory", "dynamic shared memory",
             "local memory per thread", "resident blocks per SM", "blocks per SM", "warps per SM",
             "est. achieved occupancy %", "theoretical occupancy %")


def check_chrome(label, path, shared):
    events, slices = kernel_events(label, path, shared)
    # Perfetto: the same args (its doubles exact, JSON's with 3 decimals), slice for slice
    def norm(args):
        return {k: round(args[k], 3) if isinstance(args.get(k), float) else args.get(k)
                for k in ATTR_ARGS}
    same = [(e.get("name"), norm(e["args"])) for e in events]
    pf = [(s.get("name"), norm(s["args"])) for s in slices]
    check(sorted(map(repr, same)) == sorted(map(repr, pf)),
          f"{label}: perfetto kernel args differ from chrome's:\n  {pf[:2]}\n  {same[:2]}")
    check(len(events) == 10, f"{label}: {len(events)} kernel slices")
    seen = {}
    for e in events:
        a = e.get("args", {})
        kernel = kernel_identifier(e.get("name", ""))
        if "registers per thread" not in a:
            seen.setdefault("without", 0)
            seen["without"] += 1
            continue
        threads, dyn = a["block"][0] * a["block"][1] * a["block"][2], a["dynamic shared memory"]
        grid, _, blocks, pct = SHAPES[(kernel, threads, dyn)]
        regs, static, local = PLANTED[kernel]
        per_sm = grid / SMS
        achieved = int(0.5 + 100.0 * min(per_sm, blocks) * threads / MAX_THREADS)
        want = {"registers per thread": regs, "shared memory": static + dyn,
                "static shared memory": static, "dynamic shared memory": dyn,
                "local memory per thread": local, "resident blocks per SM": blocks,
                "blocks per SM": round(per_sm, 3), "warps per SM": round(per_sm * threads / 32, 3),
                "est. achieved occupancy %": achieved, "theoretical occupancy %": round(pct, 3)}
        got = {k: a.get(k) for k in want}
        check(got == want, f"{label}: chrome args of {kernel} {threads}:\n  {got}\n  want {want}")
        seen[(kernel, threads)] = seen.get((kernel, threads), 0) + 1
    return seen


EXPECTED_ERRORS = """\
errors: first launch, 2048 threads -> cudaErrorInvalidConfiguration, peek cudaErrorInvalidConfiguration, last cudaErrorInvalidConfiguration, then cudaSuccess
errors: 64 threads -> cudaSuccess, peek cudaSuccess, last cudaSuccess, then cudaSuccess
errors: known kernel, 2048 threads -> cudaErrorInvalidConfiguration, peek cudaErrorInvalidConfiguration, last cudaErrorInvalidConfiguration, then cudaSuccess
errors: no kernel -> cudaErrorInvalidDeviceFunction, peek cudaErrorInvalidDeviceFunction, last cudaErrorInvalidDeviceFunction, then cudaSuccess
errors: pending cudaErrorInvalidConfiguration
errors: 96 threads, an error pending -> cudaSuccess, peek cudaErrorInvalidConfiguration, last cudaErrorInvalidConfiguration, then cudaSuccess
errors: <<<1, 3000>>> -> peek cudaErrorInvalidConfiguration, last cudaErrorInvalidConfiguration, then cudaSuccess
errors: synchronize -> cudaSuccess, last cudaSuccess
kattr: ok
"""


def check_errors(label, prog, shared):
    """`kattr errors` with and without the tracer: the same lines, the planted ones, and
    the failed launches' records without attributes."""
    env = dict(os.environ, LD_LIBRARY_PATH=sim_dir, CUTRACE_PRELOAD=libtrace)
    for k in ("LD_PRELOAD", "CUTRACE_OUTPUT"):
        env.pop(k, None)
    plain = subprocess.run([prog, "errors"], env=env, capture_output=True, text=True, timeout=60)
    data = os.path.join(tmp, label + "-errors")
    traced = subprocess.run([cutrace, "record", "-q", "-o", data, "--", prog, "errors"], env=env,
                            capture_output=True, text=True, timeout=60)
    check(plain.returncode == 0 and plain.stdout == EXPECTED_ERRORS,
          f"{label} errors, untraced: status {plain.returncode}:\n{plain.stdout}{plain.stderr[-300:]}")
    check(traced.returncode == 0 and traced.stdout == plain.stdout,
          f"{label} errors, traced: status {traced.returncode}:\n{traced.stdout}{traced.stderr[-300:]}")
    files = sorted(os.listdir(data)) if os.path.isdir(data) else []
    if not check(len(files) == 1, f"{label} errors: one trace file, found {files}"):
        return
    recs, strings = raw_records(cutrace, os.path.join(data, files[0]))
    names = {r["id"]: kernel_identifier(strings.get(r["name"], "?"))
             for r in recs if r["kind"] == "kernel_attr"}
    check(sorted(names.values()) == ["third"], f"{label} errors: KERNEL_ATTR of {names}")
    occ = sorted((names.get(o["attr"]), o["block_threads"]) for o in recs if o["kind"] == "occupancy")
    want = [("third", 64)] + ([] if shared else [("third", 96)])
    check(occ == want, f"{label} errors: OCCUPANCY of {occ}, want {want}")
    calls = {r["corr"]: r for r in recs if r["kind"] == "api"}
    for r in recs:
        if r["kind"] == "launch" and r["attr"]:
            api = calls.get(r["corr"], {})
            check(api.get("result", 0) == 0 and r["block_x"] in (64, 96),
                  f"{label} errors: a launch with attributes: {r} {api}")


for label, prog, shared in (("shared", shared_prog, True), ("static", static_prog, False)):
    check_errors(label, prog, shared)
    path = record_one_file(cutrace, libtrace, sim_dir, os.path.join(tmp, label), [prog],
                           "kattr: ok", ENV)
    if not path:
        continue
    check_records(label, path, shared)
    check_report(label, path, shared)
    seen = check_chrome(label, path, shared)
    want = {("heavy", 256): 3, ("heavy", 128): 2, ("light", 1024): 3 if shared else 4, ("light", 96): 1}
    if shared:
        want["without"] = 1
    check(seen == want, f"{label}: chrome slices with attributes {seen}, want {want}")

sys.exit(finish())
