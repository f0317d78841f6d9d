#!/usr/bin/env python3
"""Tests of libtrace.so's driver-level interception on the simulated CUDA stack.

usage: test_driver.py SIM_DIR LIBTRACE HK_READ DT_APP DT_SHIM DT_LOCAL [MATMUL_ADD]

Each case runs a program without and with LD_PRELOAD=libtrace.so, requires the
same stdout and exit status, and checks the trace (read with hk_read) against what
the program is known to do: launches by name and entry point, the per-thread form,
copies, the stacking of a second preload, and for matmul_add (cuBLAS) the GEMM's
inner kernel as a named driver-level child with no duplicated span.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "tests", "lib"))
from cttest import check, finish, HkTrace, scratch  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vmm_case import case_vmm  # noqa: E402
from alloc_case import case_alloc  # noqa: E402

API_TIMED, API_DRIVER = 0x4, 0x10
GPU_KERNEL = 1


class Trace(HkTrace):
    """hk_read's output (cttest.HkTrace) and the kernel names launched by a call."""

    def kernel_of(self, corr):
        return [self.name(r["kernel"]) for r in self.of("launch") if r["corr"] == corr]


def run(sim, preload, reader, argv, traced, extra=None):
    with scratch("dt_") as tmp:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("CUTRACE_", "SIMCUDA_")) and k != "LD_PRELOAD"}
        env["LD_LIBRARY_PATH"] = sim
        env["CUTRACE_OUTPUT"] = os.path.join(tmp, "out")
        env.update(extra or {})
        if preload:
            env["LD_PRELOAD"] = ":".join(preload)
        p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
        trace = None
        if traced:
            out = env["CUTRACE_OUTPUT"]
            files = sorted(os.listdir(out)) if os.path.isdir(out) else []
            if check(len(files) == 1, f"{argv}: one trace file expected, found {files}"):
                r = subprocess.run([reader, os.path.join(out, files[0])], capture_output=True,
                                   text=True, timeout=300)
                check(r.returncode == 0, f"hk_read failed: {r.stderr}")
                trace = Trace(r.stdout)
        return p.returncode, p.stdout, p.stderr, trace


def compare(ctx, argv, before=(), after=(), extra=None):
    sim, lib, reader = ctx
    rc0, out0, err0, _ = run(sim, list(before) + list(after), reader, argv, False, extra)
    rc1, out1, err1, t = run(sim, list(before) + [lib] + list(after), reader, argv, True, extra)
    label = " ".join(os.path.basename(a) for a in argv)
    check(rc0 == 0, f"{label}: untraced exit {rc0}: {err0}")
    timing = re.compile(r"[0-9.]+ ms/iter")  # measured, so it differs run to run
    out0, out1 = timing.sub("T ms/iter", out0), timing.sub("T ms/iter", out1)
    check(rc0 == rc1 and out0 == out1, f"{label}: traced run differs: {rc1} {out1!r} vs {out0!r}")
    print(f"  {label}: exit {rc1}, {out1.strip()}")
    return t, err0, err1


def launches(t, entry, kernel):
    """API records of entry point `entry` whose LAUNCH names `kernel`."""
    return [a for a in t.apis(entry) if t.kernel_of(a["corr"]) == [kernel]]


def check_driver_launches(t, label, entry, kernel, n, timed=True):
    got = launches(t, entry, kernel)
    check(len(got) == n, f"{label}: {len(got)} {entry} of {kernel}, want {n}")
    for a in got:
        check(a["flags"] & API_DRIVER, f"{label}: {entry} not flagged DRIVER")
        check(a["depth"] == 0 and a["result"] == 0, f"{label}: {entry} depth {a['depth']} result {a['result']}")
    # format 1.6: each launch names its function's KERNEL_ATTR record (the simulator's
    # defaults: 32 registers, no static shared memory), and its shape has an OCCUPANCY
    attrs = {r["id"]: r for r in t.of("kernel_attr")}
    shapes = {(o["attr"], o["block_threads"], o["dyn_smem"]) for o in t.of("occupancy")}
    launch_of = {r["corr"]: r for r in t.of("launch")}
    for a in got:
        r = launch_of.get(a["corr"], {})
        k = attrs.get(r.get("attr"), {})
        check(t.name(k.get("name", 0)) == kernel and k.get("regs") == 32 and
              (r["attr"], r["block_x"] * r["block_y"] * r["block_z"], r["shmem"]) in shapes,
              f"{label}: {entry} of {kernel}: launch {r}, attributes {k}, shapes {shapes}")
    if timed:
        gpus = {g["corr"]: g for g in t.of("gpu")}
        timed_n = sum(1 for a in got if a["flags"] & API_TIMED and a["corr"] in gpus
                      and gpus[a["corr"]]["type"] == GPU_KERNEL)
        check(timed_n == n, f"{label}: {timed_n} of {n} {kernel} launches timed on the GPU")


def case_triton(ctx, app):
    t, _, _ = compare(ctx, [app, "triton"])
    if t:
        check_driver_launches(t, "triton", "cuLaunchKernelEx", "triton_kernel", 20)
        check(all(r["shmem"] == 128 and r["grid_x"] == 8 and r["block_x"] == 64
                  for r in t.of("launch")), "triton: launch geometry")
        check(len(t.apis("cuCtxSynchronize")) == 1, "triton: cuCtxSynchronize span missing")


def case_linked(ctx, app):
    t, _, _ = compare(ctx, [app, "linked"])
    if t:
        check_driver_launches(t, "linked", "cuLaunchKernel", "linked_kernel", 10)
        memops = t.of("memop")
        kinds = sorted((m["kind"], m["bytes"]) for m in memops)
        check(kinds == [(1, 4096), (2, 4096), (5, 1024)], f"linked: copies/sets {kinds}")
        for name in ("cuMemcpyHtoD_v2", "cuMemcpyDtoH_v2", "cuMemsetD8_v2", "cuStreamSynchronize"):
            check(len(t.apis(name)) == 1, f"linked: {name} spans {len(t.apis(name))}")


def case_shapes(ctx, app):
    """2D/3D/peer copies, 16-bit and 2D sets, event waits, host functions and
    cuCtxSynchronize_v2: one DRIVER span each, copies and sets with their bytes
    and direction, each timed once on the GPU."""
    t, _, _ = compare(ctx, [app, "shapes"])
    if not t:
        return
    memops = {m["corr"]: m for m in t.of("memop")}
    gpus = {}
    for g in t.of("gpu"):
        gpus.setdefault(g["corr"], []).append(g)
    # entry point: (memop kind, bytes, src_mem, dst_mem, async, GPU type)
    want = {"cuMemcpy2D_v2": (1, 512, 3, 1, 0, 2), "cuMemcpy3D_v2": (2, 64, 1, 3, 0, 2),
            "cuMemcpyPeer": (6, 256, 1, 1, 0, 2), "cuMemsetD16_v2": (5, 128, 0, 1, 0, 3),
            "cuMemsetD2D32Async": (5, 128, 0, 1, 1, 3), "cuMemsetD2D8_v2": (5, 32, 0, 1, 0, 3)}
    for name, (kind, nbytes, src, dst, is_async, gtype) in want.items():
        spans = t.apis(name)
        if not check(len(spans) == 1, f"shapes: {len(spans)} {name} spans, want 1"):
            continue
        a = spans[0]
        check(a["flags"] & API_DRIVER and a["flags"] & API_TIMED and a["depth"] == 0,
              f"shapes: {name} flags {a['flags']:#x} depth {a['depth']}")
        m = memops.get(a["corr"])
        got = m and (m["kind"], m["bytes"], m["src_mem"], m["dst_mem"], m["async"])
        check(got == (kind, nbytes, src, dst, is_async), f"shapes: {name} memop {got}")
        g = gpus.get(a["corr"], [])
        check(len(g) == 1 and g[0]["type"] == gtype, f"shapes: {name} GPU records {g}")
    for name in ("cuStreamWaitEvent", "cuEventSynchronize", "cuLaunchHostFunc", "cuCtxSynchronize_v2",
                 "cuStreamSynchronize"):
        spans = t.apis(name)
        check(len(spans) == 1 and spans[0]["flags"] & API_DRIVER and spans[0]["result"] == 0
              and not gpus.get(spans[0]["corr"]), f"shapes: {name} spans {spans}")
    check_driver_launches(t, "shapes", "cuLaunchKernel", "after_kernel", 1)


def case_graph(ctx, app):
    """Driver-level instantiation: API records (a failing one keeps its error), the
    inventory walked into a child graph, an exec update re-recording it under the
    same exec id, and every graph launch naming its exec."""
    t, _, _ = compare(ctx, [app, "graph"])
    if not t:
        return
    inst = t.apis("cuGraphInstantiateWithFlags")
    check(len(inst) == 2 and all(a["flags"] & API_DRIVER and a["depth"] == 0 for a in inst),
          f"graph: {len(inst)} cuGraphInstantiateWithFlags spans")
    check(sorted(a["result"] for a in inst) == [0, 1], f"graph: instantiate results {[a['result'] for a in inst]}")
    update, params = t.apis("cuGraphExecUpdate_v2"), t.apis("cuGraphInstantiateWithParams")
    check(len(update) == 1 and len(params) == 1, f"graph: {len(update)} update, {len(params)} params spans")
    graphs = {g["corr"]: g for g in t.of("graph")}
    ok = [a for a in inst if a["result"] == 0]
    check(len(graphs) == 3 and all(a["corr"] in graphs for a in ok + update + params),
          f"graph: GRAPH records {sorted(graphs)} for the successful calls")
    bad = [a for a in inst if a["result"]]
    check(all(a["corr"] not in graphs for a in bad), "graph: an inventory for the failed instantiate")
    if not (ok and update and params and all(a["corr"] in graphs for a in ok + update + params)):
        return
    g1, gu, g2 = graphs[ok[0]["corr"]], graphs[update[0]["corr"]], graphs[params[0]["corr"]]
    counts = (g1["nodes"], g1["kernels"], g1["memcpys"], g1["memsets"], g1["others"], g1["partial"])
    check(counts == (4, 3, 0, 1, 0, 0), f"graph: inventory with its child graph {counts}")
    check(gu["exec"] == g1["exec"] and gu["kernels"] == 3, "graph: update re-records the same exec")
    check(g2["exec"] != g1["exec"] and (g2["nodes"], g2["kernels"], g2["memsets"]) == (3, 2, 1),
          f"graph: the child graph's own exec {g2}")
    names = {}
    for k in t.of("graph_kernel"):
        if k["exec"] == g1["exec"]:
            names[t.name(k["name"])] = names.get(t.name(k["name"]), 0) + k["count"]
    check(names == {"graph_kernel": 2, "inner_kernel": 4}, f"graph: kernel names of the exec {names}")
    launches = t.apis("cuGraphLaunch")
    by_corr = {r["corr"]: r["exec"] for r in t.of("graph_launch")}
    execs = [by_corr.get(a["corr"]) for a in launches]
    check(execs == [g1["exec"]] * 3 + [g2["exec"]], f"graph: launches ran execs {execs}")


def xla_spans(t):
    """(runtime-level, driver-level) API records of dt_app xla's set, copy and sync."""
    names = ("Memset", "Memcpy", "StreamSynchronize")
    calls = [a for a in t.of("api") if any(n in t.name(a["name"]) for n in names)]
    return ([a for a in calls if not a["flags"] & API_DRIVER], [a for a in calls if a["flags"] & API_DRIVER])


def check_xla_ops(t, label, spans):
    """The set and the copy among spans have their MEMOP and one GPU record each."""
    memops = {m["corr"]: m for m in t.of("memop")}
    gpus = {g["corr"] for g in t.of("gpu")}
    for what, kind in (("Memset", 5), ("Memcpy", 2)):
        got = [a for a in spans if what in t.name(a["name"])]
        if check(len(got) == 1, f"{label}: {len(got)} {what} spans, want 1"):
            m = memops.get(got[0]["corr"])
            check(got[0]["depth"] == 0 and m and m["kind"] == kind and m["bytes"] == 2048
                  and got[0]["corr"] in gpus, f"{label}: {what} span {got[0]}, memop {m}")


def case_xla(ctx, app):
    """A libcudart loaded RTLD_LOCAL and called through dlsym handles (XLA's stubs).
    Alone, its functions are found for our runtime wrappers (dlsym(RTLD_NEXT) cannot
    see them), so the lookups get the wrappers: one runtime-level span per call, no
    driver-level duplicate. Beside another libcudart in the global scope (a second
    copy, as with PyTorch and JAX in one process), its lookups stay unwrapped and its
    driver calls are traced at the driver level instead of taken for duplicates."""
    t, _, _ = compare(ctx, [app, "xla"])
    if t:
        rt, drv = xla_spans(t)
        check(len(rt) == 3 and not drv, f"xla: runtime spans {len(rt)}, driver-level duplicates {len(drv)}")
        check_xla_ops(t, "xla", rt)
    sim = ctx[0]
    with scratch("dt_xla_") as tmp:
        copy = os.path.join(tmp, "libcudart.so.13")
        with open(os.path.join(sim, "libcudart.so.13"), "rb") as src, open(copy, "wb") as dst:
            dst.write(src.read())
        t, _, _ = compare(ctx, [app, "xla", copy], after=[os.path.join(sim, "libcudart.so.13")])
        if t:
            rt, drv = xla_spans(t)
            check(not rt and len(drv) == 3, f"xla, second copy: runtime spans {len(rt)}, driver spans {len(drv)}")
            check_xla_ops(t, "xla, second copy", drv)


def case_extension(ctx, app):
    """A library using libcudart, loaded RTLD_LOCAL (a Python extension module): its
    calls reach our exported runtime wrappers first, which must find its libcudart
    (not in the global scope) and forward: same results as untraced, each call one
    runtime span, the memset timed."""
    ext = os.environ.get("DT_EXT")
    if not ext or not os.path.exists(ext):
        print("  (DT_EXT not built: skipped)")
        return
    t, _, _ = compare(ctx, [app, "extension", ext])
    if t:
        for name in ("cudaMalloc", "cudaMemset", "cudaDeviceSynchronize", "cudaFree"):
            spans = t.apis(name)
            check(len(spans) == 1 and spans[0]["result"] == 0, f"extension: {name} spans {spans}")
        gpus = {g["corr"] for g in t.of("gpu")}
        check(all(a["corr"] in gpus for a in t.apis("cudaMemset")), "extension: the memset timed")


def case_procaddr(ctx, app):
    t, _, _ = compare(ctx, [app, "procaddr"])
    if t:
        check_driver_launches(t, "procaddr", "cuLaunchKernel", "v1_kernel", 10)
        check_driver_launches(t, "procaddr", "cuLaunchKernel", "v2_kernel", 5)
        check_driver_launches(t, "procaddr", "cuLaunchKernel_ptsz", "pt_kernel", 5)
        check(all(a["flags"] & 0x1 for a in t.apis("cuLaunchKernel_ptsz")), "procaddr: _ptsz not flagged PTSZ")


def case_dlsym(ctx, app):
    t, _, _ = compare(ctx, [app, "dlsym"])
    if t:
        check_driver_launches(t, "dlsym", "cuLaunchKernel", "default_kernel", 3)


def case_stacking(ctx, app, shim):
    for before, after, label in (([shim], [], "shim before"), ([], [shim], "shim after")):
        t, err0, err1 = compare(ctx, [app, "linked"], before, after)
        check("dt_shim: 10 launches" in err0, f"{label}: untraced shim saw {err0.strip()!r}")
        check("dt_shim: 10 launches" in err1, f"{label}: traced shim saw {err1.strip()!r}")
        if t:
            check_driver_launches(t, label, "cuLaunchKernel", "linked_kernel", 10)


def case_hidden(ctx, app):
    t, _, err1 = compare(ctx, [app, "hidden"])
    check(err1.count("no CUDA call was intercepted") == 1, f"hidden: stderr {err1!r}")
    if t:
        whats = [t.name(r["what"]) for r in t.of("tracer")]
        check(whats.count("nothing_intercepted") == 1, "hidden: no TRACER nothing_intercepted")
    sim, lib, reader = ctx
    rc, _, err, t = run(sim, [lib], reader, [app, "hidden"], True, {"CUTRACE_QUIET": "1"})
    check(rc == 0 and "intercepted" not in err, f"hidden, quiet: exit {rc}, stderr {err!r}")
    if t:
        whats = [t.name(r["what"]) for r in t.of("tracer")]
        check(whats.count("nothing_intercepted") == 1, "hidden, quiet: no TRACER record")


def case_local(ctx, local):
    """libcuda only loaded RTLD_LOCAL (no -lcuda): the wrappers handed out by
    dlsym(handle) and cuGetProcAddress forward to what those lookups found, and
    our exported cuLaunchKernel found by RTLD_DEFAULT reaches the local libcuda."""
    t, _, _ = compare(ctx, [local, "triton"])
    if t:
        check_driver_launches(t, "local triton", "cuLaunchKernelEx", "triton_kernel", 20)
    t, _, _ = compare(ctx, [local, "procaddr"])
    if t:
        check_driver_launches(t, "local procaddr", "cuLaunchKernel_ptsz", "pt_kernel", 5)
        check_driver_launches(t, "local procaddr", "cuLaunchKernel", "v1_kernel", 10)
    t, _, _ = compare(ctx, [local, "default_local"])
    if t:
        check_driver_launches(t, "local RTLD_DEFAULT", "cuLaunchKernel", "local_kernel", 3)


def case_matmul(ctx, matmul):
    t, _, err1 = compare(ctx, [matmul, "128", "3", "1"])
    check("intercepted" not in err1, "matmul_add: nothing_intercepted said wrongly")
    if not t:
        return
    gemms = [a for a in t.apis("cublasSgemm_v2") if a["depth"] == 0]
    inner = [a for a in t.of("api") if a["flags"] & API_DRIVER]
    check(len(gemms) == 4, f"matmul_add: {len(gemms)} cublasSgemm_v2 spans")
    check(len(inner) == len(gemms), f"matmul_add: {len(inner)} driver-level spans for {len(gemms)} GEMMs")
    for g in gemms:
        kids = [a for a in inner if a["tid"] == g["tid"] and g["begin_ns"] <= a["begin_ns"]
                and a["end_ns"] <= g["end_ns"]]
        if check(len(kids) == 1, f"matmul_add: GEMM corr {g['corr']} has {len(kids)} driver children"):
            k = kids[0]
            check(k["depth"] == 1 and t.name(k["name"]) == "cuLaunchKernel",
                  f"matmul_add: child {t.name(k['name'])} depth {k['depth']}")
            check(k.get("parent") == g["corr"] and g.get("parent") == 0,
                  f"matmul_add: child parent {k.get('parent')}, GEMM corr {g['corr']} parent {g.get('parent')}")
            names = t.kernel_of(k["corr"])
            check(len(names) == 1 and "gemm" in names[0], f"matmul_add: inner kernel named {names}")
            gpu = [r for r in t.of("gpu") if r["corr"] == k["corr"]]
            check(k["flags"] & API_TIMED and len(gpu) == 1 and gpu[0]["type"] == GPU_KERNEL
                  and t.name(gpu[0]["name"]) == names[0], f"matmul_add: inner kernel not timed once: {gpu}")
            check(g["flags"] & 0x20 and not g["flags"] & API_TIMED
                  and not any(r["corr"] == g["corr"] for r in t.of("gpu")),
                  f"matmul_add: GEMM corr {g['corr']} flags {g['flags']:#x} or timed itself")
    # the runtime's own launches are one span each (no driver-level twin)
    rt = [a for a in t.of("api") if "Launch" in t.name(a["name"]) and not a["flags"] & API_DRIVER]
    check(all(a["depth"] == 0 for a in rt), "matmul_add: runtime launch below another span")


def main():
    if len(sys.argv) < 7:
        print("usage: test_driver.py SIM_DIR LIBTRACE HK_READ DT_APP DT_SHIM DT_LOCAL [MATMUL_ADD]")
        return 2
    sim, lib, reader, app, shim, local = sys.argv[1:7]
    ctx = (sim, lib, reader)
    only = os.environ.get("DT_ONLY", "")
    cases = [("triton", lambda: case_triton(ctx, app)), ("linked", lambda: case_linked(ctx, app)),
             ("shapes", lambda: case_shapes(ctx, app)),
             ("alloc", lambda: case_alloc(ctx, app, compare, check)),
             ("vmm", lambda: case_vmm(ctx, app, compare, check)),
             ("xla", lambda: case_xla(ctx, app)),
             ("extension", lambda: case_extension(ctx, app)), ("graph", lambda: case_graph(ctx, app)),
             ("procaddr", lambda: case_procaddr(ctx, app)), ("dlsym", lambda: case_dlsym(ctx, app)),
             ("stacking", lambda: case_stacking(ctx, app, shim)),
             ("hidden", lambda: case_hidden(ctx, app)), ("local", lambda: case_local(ctx, local))]
    if len(sys.argv) > 7 and os.path.exists(sys.argv[7]):
        cases.append(("matmul", lambda: case_matmul(ctx, sys.argv[7])))
    for name, fn in cases:
        if only in name:
            print("case", name)
            fn()
    return finish()


if __name__ == "__main__":
    sys.exit(main())
