"""Planted traces for `cutrace diff` (tools/test_diff.py): a training-like loop of
`steps` NVTX ranges "step", each launching the same list of operations back to back on
stream 0 of device 0 (no two GPU activities overlap, so busy time is their sum).

BEFORE and AFTER differ in known ways (per step):

  kernel             before            after             status
  k_same(float*)     1 x 10 us         1 x 10 us         same
  k_slow(float*)     1 x 20 us         1 x 30 us         slower  (+10 us)
  k_fast(float*)     1 x 40 us         1 x 25 us         faster  (-15 us)
  k_gone()           2 x 5 us          -                 removed (-10 us)
  k_new()            -                 1 x 7 us          added   (+7 us)
  k_noise(float*)    1 x 100 us        1 x 103 us        same at 5% (slower at 2%)
  k_more(float*)     1 x 10 us         2 x 10 us         slower  (+10 us, calls)
  cublasSgemm_v2     256^3 30 us       512^3 80 us       slower as a kernel row;
                                                         GEMM rows: 256^3 removed, 512^3 added
  copies: HtoD pageable 1 MiB 50 us -> HtoD pinned 1 MiB 20 us (removed / added);
          DtoH device -> pinned 4 KiB 3 us both (same)
  API calls: __cudaLaunchKernel 2 us, cudaMemcpyAsync 4 us before / 6 us after,
          cublasSgemm_v2 8 us
  ranges: "step" 900 us each (same); "old_phase" (before) / "new_phase" (after) 100 us
  kernel attributes (format 1.6), k_slow only (32-thread blocks on a 2048-thread SM):
          32 registers, 32 resident blocks, 50 % before; 128 registers, 16 blocks, 25 % after;
          the other kernels have none (as in a trace before 1.6)

write(path, side, steps, pid) writes one trace and returns its plan: the list of
operations with their times, from which expected() sums the report's rows.
"""
from tracewrite import TraceWriter

US = 1000
T0 = 10**9
STEP = 1000 * US

KERNELS = {"k_same": "_Z6k_samePf", "k_slow": "_Z6k_slowPf", "k_fast": "_Z6k_fastPf",
           "k_gone": "_Z6k_gonev", "k_new": "_Z5k_newv", "k_noise": "_Z7k_noisePf",
           "k_more": "_Z6k_morePf"}
DEMANGLED = {"k_same": "k_same(float*)", "k_slow": "k_slow(float*)", "k_fast": "k_fast(float*)",
             "k_gone": "k_gone()", "k_new": "k_new()", "k_noise": "k_noise(float*)",
             "k_more": "k_more(float*)"}


def ops_of(side):
    """The operations of one step: (what, name, api, api_us, gpu_ns, extra)."""
    before = side == "before"
    k = lambda name, n, us: [("kernel", name, "__cudaLaunchKernel", 2, us * US, None)] * n  # noqa: E731
    ops = []
    ops += k("k_same", 1, 10)
    ops += k("k_slow", 1, 20 if before else 30)
    ops += k("k_fast", 1, 40 if before else 25)
    ops += k("k_gone", 2, 5) if before else k("k_new", 1, 7)
    ops += k("k_noise", 1, 100 if before else 103)
    ops += k("k_more", 1 if before else 2, 10)
    shape = 256 if before else 512
    ops.append(("gemm", "cublasSgemm_v2", "cublasSgemm_v2", 8, (30 if before else 80) * US, shape))
    copy_api_us = 4 if before else 6
    ops.append(("copy", "HtoD", "cudaMemcpyAsync", copy_api_us, (50 if before else 20) * US,
                (1, 3 if before else 2, 1, 1 << 20)))  # kind H2D, src pageable/pinned, dst device
    ops.append(("copy", "DtoH", "cudaMemcpyAsync", copy_api_us, 3 * US, (2, 1, 2, 4096)))
    return ops


def write(path, side, steps, pid=100, pause_after=None):
    """pause_after=i: a PAUSE record (format 1.3) in the idle time after step i's work."""
    w = TraceWriter()
    s = {}

    def sid(text):
        if text not in s:
            s[text] = w.string(text)
        return s[text]

    w.add("process", pid=pid, ppid=1, start_ns=T0, host=sid("plant-host"), cmdline=sid("./train"))
    w.add("device", device=0, name=sid("cutrace simulated GPU"), cc_major=9, sm_count=132,
          max_threads_per_sm=2048, warp_size=32)
    regs, blocks = (32, 32) if side == "before" else (128, 16)
    w.add("kernel_attr", id=1, name=sid(KERNELS["k_slow"]), regs=regs, max_threads=1024)
    w.add("occupancy", attr=1, device=0, block_threads=32, dyn_smem=0, blocks_per_sm=blocks)
    w.add("thread", tid=pid, name=sid("main"), start_ns=T0)
    plan = {"ops": [], "ranges": []}
    corr = 0
    phase = "old_phase" if side == "before" else "new_phase"
    for i in range(steps):
        t = T0 + i * STEP
        cpu, gpu = t + 10 * US, t + 15 * US
        for what, name, api, api_us, dur, extra in ops_of(side):
            corr += 1
            b, e = cpu, cpu + api_us * US
            gs = max(gpu, e + US)
            ge = gs + dur
            flags = 0x4  # CT_API_TIMED
            w.add("api", tid=pid, name=sid(api), begin_ns=b, end_ns=e, corr=corr, flags=flags)
            if what == "kernel":
                if name == "k_slow":
                    w.add("launch", corr=corr, kernel=sid(KERNELS[name]), grid_x=1, block_x=32,
                          block_y=1, block_z=1, attr=1)
                else:
                    w.add("launch", corr=corr, kernel=sid(KERNELS[name]), grid_x=1, block_x=32)
                w.add("gpu", corr=corr, start_ns=gs, end_ns=ge, type=1, name=sid(KERNELS[name]))
            elif what == "gemm":
                w.add("gemm", corr=corr, m=extra, n=extra, k=extra, batch=1, compute_type=68)
                w.add("gpu", corr=corr, start_ns=gs, end_ns=ge, type=4, name=sid(api))
            else:
                kind, src, dst, nbytes = extra
                w.add("memop", corr=corr, bytes=nbytes, kind=kind, src_mem=src, dst_mem=dst,
                      **{"async": 1})
                w.add("gpu", corr=corr, start_ns=gs, end_ns=ge, type=2)
            plan["ops"].append({"what": what, "name": name, "api": api, "begin": b, "end": e,
                                "start": gs, "stop": ge, "extra": extra})
            cpu, gpu = e + US, ge + US
        w.add("range", tid=pid, name=sid(phase), begin_ns=t + 5 * US, end_ns=t + 105 * US, depth=1)
        w.add("range", tid=pid, name=sid("step"), begin_ns=t, end_ns=t + 900 * US, depth=0)
        plan["ranges"] += [(phase, 100 * US), ("step", 900 * US)]
        if i == pause_after:
            w.add("pause", begin_ns=t + 950 * US, end_ns=t + 990 * US, why=sid("delay"))
    w.save(path)
    return plan


def expected(plan):
    """The report's rows of a plan, keyed like `cutrace diff`'s labels:
    {table: {label: [calls, total_ns, aux]}} and the headline's exact values."""
    t = {"kernels": {}, "memcpy": {}, "gemms": {}, "apis": {}, "ranges": {}}

    def add(table, label, dur, aux=0):
        row = t[table].setdefault(label, [0, 0, 0])
        row[0] += 1
        row[1] += dur
        row[2] += aux

    mem = {1: "device", 2: "pinned", 3: "pageable"}
    for op in plan["ops"]:
        dur = op["stop"] - op["start"]
        add("apis", op["api"], op["end"] - op["begin"])
        if op["what"] == "kernel":
            add("kernels", DEMANGLED[op["name"]], dur)
        elif op["what"] == "gemm":
            add("kernels", "cublasSgemm_v2", dur)
            n = op["extra"]
            add("gemms", f"cublasSgemm_v2 {n}x{n}x{n} NN f32*f32->f32 32F", dur)
        else:
            kind, src, dst, nbytes = op["extra"]
            add("memcpy", f"{op['name']} {mem[src]} -> {mem[dst]}", dur, nbytes)
    for name, dur in plan["ranges"]:
        add("ranges", name, dur)
    ops = plan["ops"]
    head = {
        "wall_span_ns": max(o["stop"] for o in ops) - min(o["begin"] for o in ops),
        "gpu_busy_ns": sum(o["stop"] - o["start"] for o in ops),
        "gpu_idle_ns": (max(o["stop"] for o in ops) - min(o["start"] for o in ops)
                        - sum(o["stop"] - o["start"] for o in ops)),
        "kernel_gpu_ns": sum(r[1] for r in t["kernels"].values()),
        "kernel_launches": sum(r[0] for r in t["kernels"].values()),
        "memop_gpu_ns": sum(r[1] for r in t["memcpy"].values()),
        "bytes_copied": sum(r[2] for r in t["memcpy"].values()),
        "api_calls": len(ops),
        "api_cpu_ns": sum(o["end"] - o["begin"] for o in ops),
    }
    return t, head
