#!/usr/bin/env python3
"""The bundled workloads, shared and static cudart, traced on a REAL GPU.

usage: test_real_gpu.py CUTRACE WORKLOADS_DIR [REAL_PROGRAMS SIM_PROGRAMS SIM_DIR]

Skipped (exit 77) unless `nvidia-smi -L` lists a GPU. Runs each workload with the
real CUDA stack (no simulator on LD_LIBRARY_PATH), untraced and under
`cutrace record`, and checks from `cutrace report --format json` and `cutrace dump`:
- the traced run exits as the untraced one did, and the trace ends clean with no
  dropped records;
- every kernel the program launches itself is there, by name, as many times as
  docs/workloads.md says (the `_static` builds reach the driver through nvcc's
  static runtime, which only the driver-level hooks see);
- every cuBLAS / cuBLASLt call is there with at least one kernel of its own
  (inner_timed: each kernel timed one by one), and no GEMM is timed twice;
- every timed call has exactly one GPU record, and every GPU record a
  duration between 0 and 10 s;
- the program's own device allocations are in the report's allocs table (format 1.5
  ALLOC records), at least as many as it makes and releases, no release unmatched:
  for the `_static` builds this checks that nvcc's static runtime allocates through
  the driver entry points the driver-level hooks wrap (cuMemAlloc_v2, cuMemFree_v2),
  which only a real GPU can show;
- kernel attributes (format 1.6): every launch of the program's own kernels and of the
  cuBLAS kernels names its function's attributes (report JSON `attributes.launches` =
  calls), each configuration with resident blocks per SM >= 1 and a theoretical
  occupancy in (0, 100] %, the DEVICE record's SM limits known, and the graph's kernel
  nodes' attributes in the graphs table: what the real runtime's cudaFuncGetAttributes on
  a cudaKernel_t, the static runtime's CUfunction/CUkernel handles and cuBLAS's own
  kernels answer, which the simulator cannot show.
With REAL_PROGRAMS (the build's tests/gpu), SIM_PROGRAMS (its tests/trace/programs) and
SIM_DIR (its tests/sim), the test programs of entry points written from the headers
alone (batch copies, prefetches, discards, 3-D peer copies, stream memory operations,
array copies, event records, 3-D sets and stream callbacks, captures into the program's
graphs and graph uploads, complex, typed-operand, grouped and legacy cuBLAS GEMMs:
tests/trace/programs/batch.cu, valuewait.cu, arrays.cu, streamops.cu, evrec.cu, setcb.cu,
capgraph.cu and gemm_more.cu) also run on the real GPU, untraced and traced
(`batch_real`, `batch_real_static`, `arrays_real_static` and `evrec_real_static` with
nvcc's static cudart, `valuewait_real`, `arrays_real`, `streamops_real`, `evrec_real`,
`setcb_real`, `capgraph_real`, `gemm_more_real`), and their twins built for the simulator
(`batch_static`, `arrays_static` and `evrec_static` with the simulated runtime linked in,
the others with a shared one) traced on the simulator, whose traces the e2e tests check
against planted answers (polls.cu, graphedit.cu, legacylaunch.cu and decompress.cu are
left out: a planted 20 ms kernel, module images only the simulator loads, decompression
without its buffers or valid input):
- the traced run exits, prints and complains exactly as the untraced one (handles
  aside): the wrappers pass the real driver's arguments and results through;
- every call of those entry points is in the trace, with the same result as on the
  simulator and the same MEMOP fields (bytes, kind, count, value, memory kinds) or GEMM
  fields (shape, transposes, batch, types; gemm_more: only its GEMM calls, since real
  cuBLAS makes sets and copies of its own): the
  wrappers read CUDA 13's real structures as the simulator's tests say they should;
  where the real driver answers differently from the simulator (a call the simulator
  refuses and the driver accepts), the difference is printed as a finding of its own;
  `arrays_real_static` is compared by the bytes its successful calls moved per
  direction and memory kinds instead (nvcc's static cudart chooses the driver calls of
  its array copies; different entry points are printed as a finding); `evrec_real_static`
  by the number of event records and their results, its entry points a finding where
  they differ.
Not timings: those are for scripts/gpu-check and docs/performance.md.
"""
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from cttest import SKIP, check, finish, scratch  # noqa: E402

API_TIMED, API_INNER_TIMED = 0x4, 0x20

# workload: (arguments, {kernel name substring: exact count}, {GEMM entry point: calls});
# "name(" matches the demangled kernel, never a cuBLAS kernel named after an epilogue
CASES = {
    "matmul_add": (["64", "3", "1"], {"bias_add(": 4}, {"cublasSgemm_v2": 4}),
    "linear": (["16", "64", "32", "3"], {}, {"cublasLtMatmul": 3}),
    "mlp": (["16", "64", "3"], {"relu(": 6}, {"cublasSgemm_v2": 6, "cublasLtMatmul": 3}),
    "launch_loop": (["1000"], {"tiny(": 1001}, {}),
    "multistream": (["3", "5"], {"ms_produce(": 5, "ms_consume(": 10}, {}),
    "threads": (["2", "3"], {"thread_work(": 6}, {}),
    "legacy_launch": (["3"], {"legacy_kernel(": 3}, {}),
    # a graph launch is one activity (its kernels are not timed one by one)
    "capture": (["2"], {"cudaGraphLaunch": 2}, {}),
}
# workload: (cudaMalloc calls it makes, their bytes at least) with CASES' arguments
ALLOCS = {"matmul_add": (5, 4 * 64 * 64 * 4 + 64 * 4)}


def real_gpu():
    """True when nvidia-smi lists at least one GPU."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    p = subprocess.run([smi, "-L"], capture_output=True, text=True)
    return p.returncode == 0 and "GPU" in p.stdout


def dump_records(cutrace, trace):
    """Records of `cutrace dump` by kind, each a dict of its integer fields."""
    p = subprocess.run([cutrace, "dump", trace], capture_output=True, text=True, timeout=300)
    out = {}
    for line in p.stdout.splitlines():
        parts = line.split()
        if not parts or parts[0] in ("string",):
            continue
        rec = {}
        for kv in parts[1:]:
            k, _, v = kv.partition("=")
            try:
                rec[k] = int(v)
            except ValueError:
                rec[k] = v
        out.setdefault(parts[0], []).append(rec)
    return p.returncode, out


def check_attributes(label, doc, kernels, gemms):
    """Format 1.6 kernel attributes of the report's rows (docstring, last point)."""
    rows = [k for k in doc["kernels"] if any(p in k["name"] for p in kernels if p.endswith("("))]
    if gemms:
        rows += [k for k in doc["kernels"] if k.get("launched_by")]
    for k in rows:
        a = k.get("attributes") or {}
        configs = a.get("configs", [])
        check(a.get("launches") == k["calls"] and configs and
              all(c["blocks_per_sm"] is not None and c["blocks_per_sm"] >= 1 and
                  c["occupancy_pct"] is not None and 0 < c["occupancy_pct"] <= 100 and
                  c["block_threads"] >= 1 for c in configs),
              f"{label}: attributes of {k['name'][:80]} ({k['calls']} calls): {a}")
    for g in doc.get("graphs", []):
        for t in g.get("top_kernels", []):
            a = t.get("attributes") or {}
            check(a.get("blocks_per_sm") is not None and a["blocks_per_sm"] >= 1,
                  f"{label}: graph kernel node attributes of {t['name'][:80]}: {a}")


def check_case(cutrace, program, args, kernels, gemms, tmp):
    label = f"{os.path.basename(program)} {' '.join(args)}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUTRACE_", "SIMCUDA_"))}
    env.pop("LD_PRELOAD", None)
    plain = subprocess.run([program] + args, env=env, capture_output=True, text=True, timeout=120)
    if not check(plain.returncode == 0, f"{label}: untraced exit {plain.returncode}: {plain.stderr.strip()[-300:]}"):
        return
    trace = os.path.join(tmp, os.path.basename(program) + ".data")
    traced = subprocess.run([cutrace, "record", "-q", "-o", trace, "--", program] + args, env=env,
                            capture_output=True, text=True, timeout=180)
    check(traced.returncode == 0, f"{label}: traced exit {traced.returncode}: {traced.stderr.strip()[-300:]}")
    rep = subprocess.run([cutrace, "report", "--format", "json", trace], capture_output=True, text=True,
                         timeout=300)
    if not check(rep.returncode == 0, f"{label}: report failed: {rep.stderr.strip()[-300:]}"):
        return
    doc = json.loads(rep.stdout)
    check(doc.get("status") == "clean", f"{label}: trace status {doc.get('status')}")
    for pattern, want in kernels.items():
        got = sum(k["calls"] for k in doc["kernels"] if pattern in k["name"])
        check(got == want, f"{label}: {got} x {pattern}, want {want}")
    for api, want in gemms.items():
        rows = [g for g in doc["gemms"] if g["api"] == api]
        calls = sum(g["calls"] for g in rows)
        check(calls == want, f"{label}: {calls} {api} calls, want {want}")
        check(all(g["inner_timed"] == g["calls"] and g["kernels"] >= g["calls"] for g in rows),
              f"{label}: {api} not timed through its own kernels: "
              f"{[(g['calls'], g['kernels'], g['inner_timed']) for g in rows]}")
    if gemms:
        lib = sum(k["calls"] for k in doc["kernels"] if k.get("launched_by"))
        check(lib >= sum(gemms.values()), f"{label}: {lib} kernels launched by library calls")
    check_attributes(label, doc, kernels, gemms)
    want = ALLOCS.get(os.path.basename(program).replace("_static", ""))
    if want:
        dev = [r for r in doc.get("allocs", []) if r["kind"] == "device"]
        allocs, nbytes = sum(r["allocs"] for r in dev), sum(r["bytes"] for r in dev)
        frees = sum(r["frees"] for r in dev)  # cuBLAS may keep its workspace to the end
        check(allocs >= want[0] and nbytes >= want[1] and frees >= want[0] and
              all(r["unmatched_frees"] == 0 for r in dev),
              f"{label}: device allocations {dev}, want at least {want}, released, all matched")
    rc, recs = dump_records(cutrace, trace)
    if not check(rc == 0, f"{label}: dump failed"):
        return
    limits = [(d.get("max_threads_per_sm"), d.get("warp_size"), d.get("regs_per_sm"),
               d.get("smem_per_sm"), d.get("max_blocks_per_sm")) for d in recs.get("device", [])]
    check(limits and all(all(v and v > 0 for v in l) for l in limits),
          f"{label}: DEVICE SM limits {limits}")
    drops = sum(d.get("count", 0) for d in recs.get("drop", []))
    check(drops == 0, f"{label}: {drops} records dropped")
    gpu_by_corr = {}
    for g in recs.get("gpu", []):
        gpu_by_corr.setdefault(g["corr"], []).append(g)
        check(0 <= g["end_ns"] - g["start_ns"] < 10**10, f"{label}: GPU record corr {g['corr']} lasts "
              f"{g['end_ns'] - g['start_ns']} ns")
    timed = [a for a in recs.get("api", []) if a.get("flags", 0) & API_TIMED]
    missing = [a["corr"] for a in timed if len(gpu_by_corr.get(a["corr"], [])) != 1]
    check(not missing, f"{label}: {len(missing)} of {len(timed)} timed calls without exactly one GPU record")
    inner = [a["corr"] for a in recs.get("api", []) if a.get("flags", 0) & API_INNER_TIMED]
    check(not any(c in gpu_by_corr for c in inner), f"{label}: a call timed through its kernels has its own GPU record")
    print(f"  {label}: exit {traced.returncode}, {sum(k['calls'] for k in doc['kernels'])} kernels, "
          f"{len(recs.get('gpu', []))} GPU records")


# test programs whose entry points only the simulator has seen: real build, simulator
# twin, and the entry points compared besides the calls with a MEMOP record (name
# substrings; GEMMS: only those, with their GEMM records)
STREAM_MEMOPS = ("StreamWriteValue", "StreamWaitValue", "StreamBatchMemOp")
PROGRAMS = [("batch_real", "batch", STREAM_MEMOPS), ("batch_real_static", "batch_static", STREAM_MEMOPS),
            ("valuewait_real", "valuewait", STREAM_MEMOPS), ("arrays_real", "arrays", STREAM_MEMOPS),
            ("arrays_real_static", "arrays_static", STREAM_MEMOPS),
            ("streamops_real", "streamops", STREAM_MEMOPS),
            ("evrec_real", "evrec", ("EventRecord",)), ("evrec_real_static", "evrec_static", ("EventRecord",)),
            ("setcb_real", "setcb", ("AddCallback",)),
            ("capgraph_real", "capgraph", ("BeginCapture", "EndCapture", "GraphUpload")),
            ("gemm_more_real", "gemm_more", ("gemm", "Gemm"))]
# programs compared by their entry points' names alone: on the real stack cuBLAS makes
# calls of its own (sets, copies) outside any GEMM, which the simulated one does not
GEMMS = {"gemm_more_real"}
# twins whose runtime chooses the driver calls (nvcc's static cudart against the simulated
# runtime linked in): the same number of calls with the same results, different entry
# points a finding (evrec: cuEventRecord or cuEventRecordWithFlags for each runtime call)
NAMES_MAY_DIFFER = {"evrec_real_static"}
# twins compared by what moved rather than call by call: nvcc's static cudart makes its
# array copies with driver calls of its own choosing (libcudart.so.13 asks
# cuGetProcAddress for cuMemcpy2DUnaligned, cuMemcpy2DAsync, cuMemcpy3D(Async) and no
# cuMemcpyHtoA ...; the simulated runtime makes each one cuMemcpy3D(Async)), perhaps
# several for one call
BY_TOTALS = {"arrays_real_static"}
MEMOP_FIELDS = ("bytes", "kind", "count", "value", "src_mem", "dst_mem", "async")
GEMM_FIELDS = ("m", "n", "k", "batch", "transa", "transb", "atype", "btype", "ctype", "compute_type",
               "epilogue")


def scrub(text):
    """Output with handles and addresses (which differ from run to run) masked."""
    return re.sub(r"0x[0-9a-fA-F]+|\(nil\)", "ADDR", text)


def program_calls(cutrace, trace, names=STREAM_MEMOPS, by_memop=True):
    """The trace's outermost API calls that carry a MEMOP record (by_memop) or whose entry
    point's name contains one of names, in call order: (entry point, result, MEMOP
    fields, or the tuple of its GEMM records' fields, or None), and the number of
    dropped records."""
    p = subprocess.run([cutrace, "dump", trace], capture_output=True, text=True, timeout=300)
    strings, apis, memops, gemms, drops = {}, [], {}, {}, 0
    for line in p.stdout.splitlines():
        m = re.match(r'string id=(\d+) "(.*)"$', line)
        if m:
            strings[int(m.group(1))] = m.group(2)
            continue
        kind, _, rest = line.partition(" ")
        rec = {k: int(v) for k, v in re.findall(r"(\w+)=(-?\d+)(?=\s|$)", rest)}
        if kind == "api" and rec.get("depth") == 0:
            apis.append(rec)
        elif kind == "memop":
            memops[rec["corr"]] = tuple(rec.get(f) for f in MEMOP_FIELDS)
        elif kind == "gemm":
            gemms.setdefault(rec["corr"], []).append(tuple(rec.get(f) for f in GEMM_FIELDS))
        elif kind == "drop":
            drops += rec.get("count", 0)
    calls = []
    for a in sorted(apis, key=lambda a: a["begin_ns"]):
        name = strings.get(a["name"], "?")
        if (by_memop and a["corr"] in memops) or any(n in name for n in names):
            fields = memops.get(a["corr"]) or tuple(gemms.get(a["corr"], ())) or None
            calls.append((name, a["result"], fields))
    return p.returncode, calls, drops


def memop_totals(calls):
    """Bytes moved by the calls that succeeded, by (kind, src_mem, dst_mem) of their
    MEMOP records."""
    totals = {}
    for _, result, memop in calls:
        if result == 0 and memop:
            fields = dict(zip(MEMOP_FIELDS, memop))
            key = (fields["kind"], fields["src_mem"], fields["dst_mem"])
            totals[key] = totals.get(key, 0) + fields["bytes"]
    return totals


def check_totals(label, calls, sim_calls):
    """A BY_TOTALS program: the same bytes in each direction and between the same memory
    kinds on the real GPU as on the simulator; different entry points are findings."""
    names, sim_names = [c[0] for c in calls], [c[0] for c in sim_calls]
    if names != sim_names:
        print(f"  {label}: finding: entry points on the real GPU {names}, on the simulator "
              f"{sim_names}")
    got, want = memop_totals(calls), memop_totals(sim_calls)
    if check(bool(want) and got == want, f"{label}: bytes by (kind, src, dst) {got} on the "
             f"real GPU, {want} on the simulator"):
        print(f"  {label}: {len(calls)} calls, the same bytes by direction and memory as on "
              f"the simulator")


def check_program(cutrace, program, twin, names, sim_dir, tmp):
    """One test program on the real GPU against itself untraced, and its twin built for
    the simulator traced there (the module docstring's second list)."""
    label = os.path.basename(program)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUTRACE_", "SIMCUDA_"))}
    env.pop("LD_PRELOAD", None)
    plain = subprocess.run([program], env=env, capture_output=True, text=True, timeout=120)
    real = os.path.join(tmp, label + ".real")
    traced = subprocess.run([cutrace, "record", "-q", "-o", real, "--", program], env=env,
                            capture_output=True, text=True, timeout=180)
    check((traced.returncode, scrub(traced.stdout), scrub(traced.stderr)) ==
          (plain.returncode, scrub(plain.stdout), scrub(plain.stderr)),
          f"{label}: traced run differs from the untraced one: exit {traced.returncode} vs "
          f"{plain.returncode}, output {scrub(traced.stdout + traced.stderr)[-300:]!r} vs "
          f"{scrub(plain.stdout + plain.stderr)[-300:]!r}")
    by_memop = label not in GEMMS
    rc, calls, drops = program_calls(cutrace, real, names, by_memop)
    check(rc == 0 and drops == 0 and calls, f"{label}: dump exit {rc}, {drops} dropped, {len(calls)} calls")
    sim = os.path.join(tmp, label + ".sim")
    sim_env = dict(env, LD_LIBRARY_PATH=sim_dir + (":" + env["LD_LIBRARY_PATH"]
                                                   if env.get("LD_LIBRARY_PATH") else ""))
    subprocess.run([cutrace, "record", "-q", "-o", sim, "--", twin], env=sim_env,
                   capture_output=True, text=True, timeout=180)
    _, sim_calls, _ = program_calls(cutrace, sim, names, by_memop)
    if label in BY_TOTALS:
        check_totals(label, calls, sim_calls)
        return
    got_names, sim_names = [c[0] for c in calls], [c[0] for c in sim_calls]
    if label in NAMES_MAY_DIFFER:
        if got_names != sim_names:
            print(f"  {label}: finding: entry points on the real GPU {got_names}, on the "
                  f"simulator {sim_names}")
        if not check(len(calls) == len(sim_calls), f"{label}: {len(calls)} calls on the real GPU "
                     f"{got_names}, {len(sim_calls)} on the simulator {sim_names}"):
            return
    elif not check(got_names == sim_names,
                   f"{label}: calls on the real GPU {got_names}, on the simulator {sim_names}"):
        return
    for i, (got, want) in enumerate(zip(calls, sim_calls)):
        if got[1] != want[1]:  # the real driver's own answer: a finding, not the tracer's fault
            print(f"  {label}: finding: call {i + 1} {got[0]} returns {got[1]} on the real GPU, "
                  f"{want[1]} on the simulator")
        elif got[1] == 0:
            check(got[2] == want[2], f"{label}: call {i + 1} {got[0]}: MEMOP {MEMOP_FIELDS} or "
                  f"GEMM {GEMM_FIELDS} {got[2]} on the real GPU, {want[2]} on the simulator")
    print(f"  {label}: exit {traced.returncode}, {len(calls)} calls "
          f"({sum(1 for c in calls if c[1] == 0)} succeeded) as on the simulator")


def main():
    if len(sys.argv) not in (3, 6):
        print(__doc__.split("\n\n")[1])
        return 2
    cutrace, workloads = sys.argv[1:3]
    real_dir, twin_dir, sim_dir = sys.argv[3:6] if len(sys.argv) == 6 else (None, None, None)
    if not real_gpu():
        print("skip: no real GPU (nvidia-smi -L lists none)")
        return SKIP
    with scratch("gpu_") as tmp:
        for name, (args, kernels, gemms) in CASES.items():
            for variant in (name, name + "_static"):
                program = os.path.join(workloads, variant)
                if os.path.exists(program):
                    check_case(cutrace, program, args, kernels, gemms, tmp)
        for name, twin, names in PROGRAMS if real_dir else []:
            program, twin = os.path.join(real_dir, name), os.path.join(twin_dir, twin)
            if os.path.exists(program) and os.path.exists(twin):
                check_program(cutrace, program, twin, names, sim_dir, tmp)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
