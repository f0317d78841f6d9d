"""A planted trace of library calls timed by the kernels they launch (format 1.1,
CT_API_INNER_TIMED), next to an older-style GEMM timed as one activity, inside nested
NVTX ranges on two threads: what cutrace report and dump --chrome must make of it.

write(path, n) writes n iterations and returns the plan: every GPU activity
(corr, name, stream, start, end, parent corr or 0) and every range with the corrs of
the work launched inside it. Iteration i starts at t = 1 s + i * 100 us:

main thread (tid 300), stream 7:
  range "layer" [t, t+60us] depth 0 holding range "matmul" [t+1, t+20] depth 1:
    cublasSgemm_v2 128x256x64 [t+2, t+12], INNER_TIMED, launching through the driver
      cuLaunchKernel [t+3, t+5]  -> k_main(float*)   10 us
      cuLaunchKernel [t+6, t+8]  -> k_splitk(float*)  2 us
    (even i: k_main ran at once and its GPU record precedes the GEMM's API record;
     odd i: both kernels run after the call returned)
  __cudaLaunchKernel [t+22, t+25] -> relu(float*, int) 3 us, after k_splitk and the call
  cublasGemmEx 512^3 f16 [t+62, t+66], an older-style GEMM timed as one activity
  (CT_GPU_GEMM [t+66, t+71], 5 us), outside any range
worker thread (tid 301), stream 8:
  range "worker_mm" [t+1, t+30] depth 0:
    cublasLtMatmul 64x64x64 bias epilogue [t+2, t+10], INNER_TIMED
      cuLaunchKernel [t+3, t+5] -> lt_kernel(float const*) 7 us at [t+10, t+17]
"""
from tracewrite import TraceWriter

US = 1000
INNER_TIMED, TIMED, DRIVER = 0x20, 0x4, 0x10


def write(path, n, pid=300):
    w = TraceWriter()
    s = {k: w.string(v) for k, v in {
        "host": "gen-host", "cmd": "./inner", "dev": "cutrace simulated GPU", "main": "main",
        "worker": "worker", "sgemm": "cublasSgemm_v2", "gemmex": "cublasGemmEx",
        "lt": "cublasLtMatmul", "cu": "cuLaunchKernel", "rt": "__cudaLaunchKernel",
        "k_main": "_Z6k_mainPf", "k_splitk": "_Z8k_splitkPf", "relu": "_Z4reluPfi",
        "lt_kernel": "_Z9lt_kernelPKf", "layer": "layer", "matmul": "matmul",
        "worker_mm": "worker_mm"}.items()}
    w.add("process", pid=pid, ppid=1, start_ns=10**9, realtime_ns=1700000000 * 10**9,
          host=s["host"], cmdline=s["cmd"])
    w.add("device", device=0, name=s["dev"], cc_major=9, sm_count=132, mem_bytes=141 << 30)
    main, worker = pid, pid + 1
    w.add("thread", tid=main, name=s["main"], start_ns=10**9)
    w.add("thread", tid=worker, name=s["worker"], start_ns=10**9)
    w.add("stream", stream=7, handle=0x5007, flags=1)
    w.add("stream", stream=8, handle=0x5008, flags=1)
    plan = {"activities": [], "ranges": [], "n": n}
    corr = 0

    def nxt():
        nonlocal corr
        corr += 1
        return corr

    def gpu(c, name, stream, b, e, typ=1, parent=0):
        w.add("gpu", corr=c, stream=stream, start_ns=b, end_ns=e, type=typ,
              name=s[name] if typ == 1 else 0)
        plan["activities"].append({"corr": c, "name": name, "stream": stream, "start": b,
                                   "end": e, "parent": parent})

    def child(tid, parent, b, e, kernel, stream):
        c = nxt()
        w.add("api", tid=tid, name=s["cu"], begin_ns=b, end_ns=e, corr=c, stream=stream,
              depth=1, flags=TIMED | DRIVER, parent=parent)
        w.add("launch", corr=c, kernel=s[kernel], grid_x=64, grid_y=1, grid_z=1, block_x=128,
              block_y=1, block_z=1)
        return c

    for i in range(n):
        t = 10**9 + i * 100 * US
        # main thread
        p = nxt()
        c1 = child(main, p, t + 3 * US, t + 5 * US, "k_main", 7)
        c2 = child(main, p, t + 6 * US, t + 8 * US, "k_splitk", 7)
        early = i % 2 == 0
        k1 = (t + 3500, t + 13500) if early else (t + 14 * US, t + 24 * US)
        k2 = (k1[1], k1[1] + 2 * US)
        if early:
            gpu(c1, "k_main", 7, *k1, parent=p)
        w.add("api", tid=main, name=s["sgemm"], begin_ns=t + 2 * US, end_ns=t + 12 * US,
              corr=p, stream=7, flags=INNER_TIMED)
        w.add("gemm", corr=p, m=128, n=256, k=64, batch=1, compute_type=68)
        r = nxt()
        w.add("api", tid=main, name=s["rt"], begin_ns=t + 22 * US, end_ns=t + 25 * US, corr=r,
              stream=7, flags=TIMED)
        w.add("launch", corr=r, kernel=s["relu"], grid_x=32, grid_y=1, grid_z=1, block_x=256,
              block_y=1, block_z=1)
        w.add("range", tid=main, name=s["matmul"], begin_ns=t + 1 * US, end_ns=t + 20 * US,
              depth=1)
        w.add("range", tid=main, name=s["layer"], begin_ns=t, end_ns=t + 60 * US, depth=0)
        plan["ranges"].append({"name": "matmul", "tid": main, "begin": t + US,
                               "end": t + 20 * US, "corrs": [c1, c2]})
        plan["ranges"].append({"name": "layer", "tid": main, "begin": t, "end": t + 60 * US,
                               "corrs": [c1, c2, r]})
        x = nxt()
        w.add("api", tid=main, name=s["gemmex"], begin_ns=t + 62 * US, end_ns=t + 66 * US,
              corr=x, stream=7, flags=TIMED)
        w.add("gemm", corr=x, m=512, n=512, k=512, batch=1, atype=2, btype=2, ctype=2,
              compute_type=68)
        # worker thread
        q = nxt()
        c3 = child(worker, q, t + 3 * US, t + 5 * US, "lt_kernel", 8)
        w.add("api", tid=worker, name=s["lt"], begin_ns=t + 2 * US, end_ns=t + 10 * US, corr=q,
              stream=8, flags=INNER_TIMED)
        w.add("gemm", corr=q, m=64, n=64, k=64, batch=1, compute_type=68, epilogue=2)
        w.add("range", tid=worker, name=s["worker_mm"], begin_ns=t + US, end_ns=t + 30 * US,
              depth=0)
        plan["ranges"].append({"name": "worker_mm", "tid": worker, "begin": t + US,
                               "end": t + 30 * US, "corrs": [c3]})
        # GPU records, as the poller writes them
        if not early:
            gpu(c1, "k_main", 7, *k1, parent=p)
        gpu(c2, "k_splitk", 7, *k2, parent=p)
        relu_start = max(k2[1], t + 25 * US)
        gpu(r, "relu", 7, relu_start, relu_start + 3 * US)
        gpu(c3, "lt_kernel", 8, t + 10 * US, t + 17 * US, parent=q)
        gpu(x, "cublasGemmEx", 7, t + 66 * US, t + 71 * US, typ=4)
    w.add("end", records=0, end_ns=10**9 + n * 100 * US)
    w.save(path)
    return plan


def expected_report(n):
    """The report's rows for n iterations: kernels {name: (calls, total_ns, launched_by)},
    gemms {(api, m, n, k): (calls, total_ns, kernels, inner_timed)}, apis {(name, inner):
    calls}, ranges {name: (calls, kernels, gpu_ns)}."""
    return {
        "kernels": {"k_main(float*)": (n, 10 * US * n, "cublasSgemm_v2"),
                    "k_splitk(float*)": (n, 2 * US * n, "cublasSgemm_v2"),
                    "relu(float*, int)": (n, 3 * US * n, None),
                    "cublasGemmEx": (n, 5 * US * n, None),
                    "lt_kernel(float const*)": (n, 7 * US * n, "cublasLtMatmul")},
        "gemms": {("cublasSgemm_v2", 128, 256, 64): (n, 12 * US * n, 2 * n, n),
                  ("cublasGemmEx", 512, 512, 512): (n, 5 * US * n, n, 0),
                  ("cublasLtMatmul", 64, 64, 64): (n, 7 * US * n, n, n)},
        "apis": {("cublasSgemm_v2", False): n, ("cublasGemmEx", False): n,
                 ("cublasLtMatmul", False): n, ("__cudaLaunchKernel", False): n,
                 ("cuLaunchKernel", True): 3 * n},
        "ranges": {"matmul": (n, 2 * n, 12 * US * n), "layer": (n, 3 * n, 15 * US * n),
                   "worker_mm": (n, n, 7 * US * n)},
        "gpu_total_ns": 27 * US * n,
    }
