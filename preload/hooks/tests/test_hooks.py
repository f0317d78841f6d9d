#!/usr/bin/env python3
"""Tests of libtrace.so's interception half on the simulated CUDA stack.

usage: test_hooks.py SIM_DIR LIBTRACE HK_READ HK_APP HK_PTSZ HK_SHIM   (or --skip)

HK_ONLY=<name> runs the cases whose name contains it; HK_CHAIN=1 runs every case with
CUTRACE_EVENT_CHAIN=1.

Each case runs a real nvcc-built program (hk_app.cu / hk_ptsz.cu) without and with
LD_PRELOAD=libtrace.so, requires identical output and exit status, then checks the
trace against what the program is known to do (names, counts, streams, sizes,
shapes, flags) and, where the simulator writes its truth file, the GPU times.
"""
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "tests", "lib"))
from cttest import check, finish, HkTrace as Trace, scratch  # noqa: E402

# format.h constants
API_PTSZ, API_CAPTURED, API_TIMED, API_UNTIMED = 0x1, 0x2, 0x4, 0x8
API_INNER_TIMED = 0x20
STREAM_NON_BLOCKING, STREAM_PER_THREAD, STREAM_LEGACY = 0x1, 0x2, 0x4
GPU_KERNEL, GPU_MEMCPY, GPU_MEMSET, GPU_GEMM, GPU_GRAPH = 1, 2, 3, 4, 5
H2D, D2H, D2D, MEMSET = 1, 2, 3, 5
DEVICE, PINNED, PAGEABLE, MANAGED = 1, 2, 3, 4

class Runner:
    def __init__(self, sim, lib, reader):
        self.sim, self.lib, self.reader = sim, lib, reader

    def env(self, extra, traced, outdir, preload_after=None):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("CUTRACE_", "SIMCUDA_")) and k != "LD_PRELOAD"}
        env["LD_LIBRARY_PATH"] = self.sim + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
        env["CUTRACE_QUIET"] = "1"
        if os.environ.get("HK_CHAIN") == "1":  # run every case with event chaining
            env["CUTRACE_EVENT_CHAIN"] = "1"
        env.update(extra)
        preload = ([self.lib] if traced else []) + ([preload_after] if preload_after else [])
        if preload:
            env["LD_PRELOAD"] = ":".join(preload)
        if traced:
            env["CUTRACE_OUTPUT"] = outdir
        return env

    def run(self, argv, extra=None, traced=True, preload_after=None):
        """Runs argv (preload_after: a library preloaded after libtrace.so); returns
        (status, output, Trace or None)."""
        with scratch("hk_") as tmp:
            outdir = os.path.join(tmp, "out")
            p = subprocess.run(argv, env=self.env(extra or {}, traced, outdir, preload_after),
                               capture_output=True, text=True, timeout=300)
            trace = None
            if traced:
                files = sorted(os.listdir(outdir)) if os.path.isdir(outdir) else []
                if check(len(files) == 1, f"{argv}: one trace file expected, found {files}"):
                    r = subprocess.run([self.reader, os.path.join(outdir, files[0])], capture_output=True,
                                       text=True, timeout=300)
                    check(r.returncode == 0, f"hk_read failed: {r.stderr}")
                    trace = Trace(r.stdout)
                    check(trace.damaged is False, f"{argv}: trace damaged")
                    check(len(trace.of("end")) == 1, f"{argv}: no END record")
            return p.returncode, p.stdout + p.stderr, trace

    def compare(self, argv, extra=None, preload_after=None):
        """Runs without and with the tracer; requires identical output and status."""
        rc0, out0, _ = self.run(argv, extra, traced=False, preload_after=preload_after)
        rc1, out1, trace = self.run(argv, extra, traced=True, preload_after=preload_after)
        check(rc0 == rc1, f"{argv[1:]}: exit status {rc0} untraced, {rc1} traced")
        check(out0 == out1, f"{argv[1:]}: output differs:\n--- untraced\n{out0}--- traced\n{out1}")
        print(f"  {' '.join(os.path.basename(a) for a in argv)}: exit {rc1}, {out1.strip().splitlines()[-1:]}")
        return rc1, out1, trace


def check_timed_pairs(t, label):
    """Every API record flagged TIMED has exactly one GPU record (same corr, same
    stream, not before the call began), and no other API record has one."""
    gpus = t.by_corr("gpu")
    for a in t.of("api"):
        g = gpus.get(a["corr"], [])
        if a["flags"] & API_TIMED:
            if check(len(g) == 1, f"{label}: corr {a['corr']} ({t.name(a['name'])}) timed but {len(g)} GPU records"):
                check(g[0]["stream"] == a["stream"], f"{label}: corr {a['corr']} GPU stream differs from the call's")
                check(g[0]["start_ns"] >= a["begin_ns"], f"{label}: corr {a['corr']} GPU start before the call")
                check(g[0]["end_ns"] >= g[0]["start_ns"], f"{label}: corr {a['corr']} GPU end before start")
        else:
            check(not g, f"{label}: corr {a['corr']} ({t.name(a['name'])}) not timed but has a GPU record")


def case_kernels(run, app):
    n = 20
    rc, _, t = run.compare([app, "kernels", str(n)], {"SIMCUDA_KERNEL_US": "default=5,k_alpha=30,k_beta=20"})
    if not check(rc == 0 and t, "kernels: run failed"):
        return
    launches = {r["corr"]: r for r in t.of("launch")}
    apis = {a["corr"]: a for a in t.of("api")}
    streams = {s["stream"]: s for s in t.of("stream")}
    seen = {}
    for corr, l in launches.items():
        a = apis.get(corr)
        if not check(a is not None, f"kernels: LAUNCH corr {corr} without its API record"):
            continue
        key = (t.name(l["kernel"]), t.name(a["name"]), (l["grid_x"], l["grid_y"], l["grid_z"]),
               (l["block_x"], l["block_y"], l["block_z"]), l["shmem"], a["stream"])
        seen[key] = seen.get(key, 0) + 1
    beta_stream = [s for s in streams.values() if s["flags"] & STREAM_NON_BLOCKING]
    check(len(beta_stream) == 1, f"kernels: one non-blocking stream expected, STREAM records {list(streams.values())}")
    check(0 in streams and streams[0]["flags"] & STREAM_LEGACY, "kernels: no STREAM record for the legacy stream")
    sid = beta_stream[0]["stream"] if beta_stream else -1
    want = {
        ("_Z7k_alphaPfi", "__cudaLaunchKernel", (2, 3, 1), (64, 2, 1), 128, 0): n,
        ("_Z6k_betai", "__cudaLaunchKernel", (4, 1, 1), (32, 1, 1), 0, sid): n,
        ("_Z7k_gammai", "cudaLaunchKernel", (5, 1, 1), (96, 1, 1), 0, sid): 1,
        ("_Z7k_gammai", "cudaLaunchKernelExC", (6, 1, 1), (32, 4, 1), 256, sid): 1,
        ("_Z7k_gammai", "cudaLaunchCooperativeKernel", (7, 1, 1), (32, 1, 1), 0, 0): 1,
    }
    check(seen == want, f"kernels: launches seen {seen}, expected {want}")
    check_timed_pairs(t, "kernels")
    timed = [a for a in t.of("api") if a["flags"] & API_TIMED]
    check(len(timed) == 2 * n + 3, f"kernels: {len(timed)} timed launches, expected {2 * n + 3}")
    for g in t.of("gpu"):
        l = launches.get(g["corr"])
        check(l is not None and g["name"] == l["kernel"] and g["type"] == GPU_KERNEL,
              f"kernels: GPU record {g} does not match its LAUNCH")
    check(all(a["depth"] == 0 for a in t.of("api")), "kernels: nested depth on plain runtime calls")
    dev = t.of("device")
    check(len(dev) == 1 and t.name(dev[0]["name"]) and dev[0]["sm_count"] > 0,
          f"kernels: DEVICE record missing or empty: {dev}")


def case_no_timing(run, app):
    """CUTRACE_GPU_TIMING=0: CPU spans only; every GPU operation is flagged untimed."""
    rc, _, t = run.compare([app, "kernels", "5"], {"CUTRACE_GPU_TIMING": "0"})
    if not check(rc == 0 and t, "no timing: run failed"):
        return
    launches = [a for a in t.of("api") if t.name(a["name"]).startswith(("__cudaLaunch", "cudaLaunch"))]
    check(len(launches) == 13 and all(a["flags"] & API_UNTIMED and not a["flags"] & API_TIMED for a in launches),
          "no timing: launches not flagged untimed")
    check(not t.of("gpu") and not t.of("clock"), "no timing: GPU or CLOCK records written")


def case_bad_knobs(run, app):
    """A bad CUTRACE_GPU_TIMING / CUTRACE_EVENT_CHAIN: one line each and the default;
    CUTRACE_QUIET silences them for any value but 0/no (docs/preload.md, Environment)."""
    bad = {"CUTRACE_GPU_TIMING": "2", "CUTRACE_EVENT_CHAIN": "yes"}
    _, plain, _ = run.run([app, "kernels", "2"], traced=False)
    expected = ["cutrace: CUTRACE_EVENT_CHAIN='yes' is not 0 or 1; using 0",
                "cutrace: CUTRACE_GPU_TIMING='2' is not 0 or 1; using 1"]
    for quiet, lines in (("0", expected), ("no", expected), ("yes", []), ("1", [])):
        rc, out, t = run.run([app, "kernels", "2"], dict(bad, CUTRACE_QUIET=quiet))
        said = sorted(l for l in out.splitlines() if l.startswith("cutrace:"))
        check(rc == 0 and said == lines, f"bad knobs, CUTRACE_QUIET={quiet}: said {said}, expected {lines}")
        check(t is not None and len(t.of("gpu")) > 0, f"bad knobs, CUTRACE_QUIET={quiet}: GPU timing not on")
        check(sorted(l for l in out.splitlines() if not l.startswith("cutrace:")) == sorted(plain.splitlines()),
              f"bad knobs, CUTRACE_QUIET={quiet}: the program's output changed")


def case_timing(run, app):
    """GPU times against the simulator's truth, with a clock offset and drift."""
    bursts, pause_ms = 10, 100
    with scratch("hk_truth_") as tmp:
        truth_path = os.path.join(tmp, "truth.txt")
        extra = {"SIMCUDA_KERNEL_US": "default=5,k_alpha=200,k_beta=100", "SIMCUDA_CLOCK_OFFSET_US": "7500",
                 "SIMCUDA_CLOCK_DRIFT_PPM": "50", "SIMCUDA_TRUTH_FILE": truth_path}
        rc, _, t = run.run([app, "paced", str(bursts), str(pause_ms)], extra)
        truth = [line.split() for line in open(truth_path)] if os.path.exists(truth_path) else []
    if not check(rc == 0 and t and truth, "timing: run failed or no truth file"):
        return
    apis = {a["corr"]: a for a in t.of("api")}
    by_name = {}
    for g in t.of("gpu"):
        if g["type"] == GPU_KERNEL:
            by_name.setdefault(t.name(g["name"]), []).append(g)
    queued_err, idle_err, dur_err, first_launch = [], [], [], set()
    for name in ("_Z7k_alphaPfi", "_Z6k_betai"):
        real = sorted(((int(x[4]), int(x[5]), int(x[6])) for x in truth if x[0] == "kernel" and x[1] == name),
                      key=lambda x: x[1])
        ours = sorted(by_name.get(name, []), key=lambda g: g["start_ns"])
        if not check(len(real) == len(ours) == bursts * (4 if "alpha" in name else 2),
                     f"timing: {name}: {len(ours)} GPU records, {len(real)} in the truth file"):
            continue
        for i, ((enqueue, start, end), g) in enumerate(zip(real, ours)):
            es, ee = g["start_ns"] - start, g["end_ns"] - end
            if start > enqueue + 1000:  # queued behind earlier work: times come from events alone
                queued_err += [abs(es), abs(ee)]
                dur_err.append(abs((g["end_ns"] - g["start_ns"]) - (end - start)))
            else:  # idle stream: only bounded by the launch call (the start event
                # completed before the kernel was submitted; the poller dates it at the
                # call's return, which the kernel cannot precede)
                a = apis[g["corr"]]
                idle_err.append(abs(es))
                check(a["begin_ns"] - 20000 <= g["start_ns"] <= a["end_ns"] + 20000,
                      f"timing: {name} #{i} starts outside its launch call ({es} ns from the truth)")
                check(abs(ee) <= 20000 or ee > 0, f"timing: {name} #{i} end {ee} ns off")
    check(len(queued_err) >= bursts * 4, f"timing: too few queued kernels to judge ({len(dur_err)})")
    if queued_err:
        check(max(queued_err) <= 20000, f"timing: queued kernels' start/end off by up to {max(queued_err)} ns")
        check(max(dur_err) <= 2000, f"timing: durations off by up to {max(dur_err)} ns")
    clocks = t.of("clock")
    check(len(clocks) >= 3, f"timing: {len(clocks)} CLOCK records over {bursts * pause_ms} ms (re-anchoring)")
    if len(clocks) >= 2:
        a, b = clocks[0], clocks[-1]
        off = lambda c: c["offset_ns"] - (1 << 64) if c["offset_ns"] >= 1 << 63 else c["offset_ns"]
        ppm = (off(b) - off(a)) / (b["host_ns"] - a["host_ns"]) * 1e6
        check(30 <= ppm <= 70, f"timing: anchors give a drift of {ppm:.1f} ppm, simulator has 50")
    else:
        ppm = float("nan")
    print(f"  timing: {len(dur_err)} queued kernels: start/end error max {max(queued_err or [0])} ns, "
          f"duration error max {max(dur_err or [0])} ns; {len(idle_err)} idle-stream starts: median error "
          f"{statistics.median(idle_err or [0]):.0f} ns; {len(clocks)} anchors, drift {ppm:.1f} ppm")


def case_chain(run, app):
    """CUTRACE_EVENT_CHAIN=1: busy-stream launches start at the previous end event,
    and the times still match the simulator's truth."""
    bursts, n = 4, 25
    with scratch("hk_truth_") as tmp:
        truth_path = os.path.join(tmp, "truth.txt")
        extra = {"SIMCUDA_KERNEL_US": "default=5,k_beta=200", "SIMCUDA_CLOCK_OFFSET_US": "-3000",
                 "SIMCUDA_CLOCK_DRIFT_PPM": "50", "SIMCUDA_TRUTH_FILE": truth_path, "CUTRACE_EVENT_CHAIN": "1"}
        rc, out, t = run.run([app, "burst", str(bursts), str(n)], extra)
        truth = [line.split() for line in open(truth_path)] if os.path.exists(truth_path) else []
    if not check(rc == 0 and t and truth, f"chain: run failed: {out}"):
        return
    check_timed_pairs(t, "chain")
    chained = sum(r["amount"] for r in t.of("tracer") if t.name(r["what"]) == "chained")
    check(chained >= bursts * n // 2, f"chain: only {chained} of {bursts * n} launches chained")
    real = sorted(((int(x[4]), int(x[5]), int(x[6])) for x in truth if x[0] == "kernel" and "k_beta" in x[1]),
                  key=lambda x: x[1])
    ours = sorted((g for g in t.of("gpu") if g["type"] == GPU_KERNEL), key=lambda g: g["start_ns"])
    if not check(len(real) == len(ours) == bursts * n, f"chain: {len(ours)} GPU records, {len(real)} true"):
        return
    # Queued kernels whose launch call returned before they started: exact. One whose
    # call returned after its start (a host late inside the call, under load) is
    # dated at that return (TRACER chain_late; docs/preload.md): never before the
    # truth, never after the return.
    apis = {a["corr"]: a for a in t.of("api")}
    queued, durations, uncertain = [], [], 0
    for (q, s, e), g in zip(real, ours):
        if s <= q + 1000:
            continue
        returned = apis[g["corr"]]["end_ns"]
        if returned < s:
            queued.append(max(abs(g["start_ns"] - s), abs(g["end_ns"] - e)))
            durations.append(abs((g["end_ns"] - g["start_ns"]) - (e - s)))
        else:
            uncertain += 1
            check(s - 20000 <= g["start_ns"] <= returned + 20000,
                  f"chain: a kernel started at {s} dated {g['start_ns']}, its call returned at {returned}")
    check(queued and max(queued) <= 20000, f"chain: queued kernels off by up to {max(queued or [0])} ns")
    check(durations and max(durations) <= 2000, f"chain: durations off by up to {max(durations or [0])} ns")
    check(uncertain <= bursts * n // 4, f"chain: {uncertain} launch calls returned after their kernel started")
    print(f"  chain: {chained} of {bursts * n} launches chained; queued kernels within {max(queued or [0])} ns, "
          f"durations within {max(durations or [0])} ns; {uncertain} returned after their kernel started")
    # A wait on another stream's event between two launches: the second one must
    # not be dated at the first one's end.
    rounds = 10
    with scratch("hk_truth_") as tmp:
        truth_path = os.path.join(tmp, "truth.txt")
        extra = {"SIMCUDA_KERNEL_US": "default=5,k_beta=2000,k_alpha=5000", "SIMCUDA_TRUTH_FILE": truth_path,
                 "CUTRACE_EVENT_CHAIN": "1"}
        rc, out, t = run.run([app, "waits", str(rounds)], extra)
        truth = [line.split() for line in open(truth_path)] if os.path.exists(truth_path) else []
    if not check(rc == 0 and t and truth, f"chain waits: run failed: {out}"):
        return
    real = sorted((int(x[5]) for x in truth if x[0] == "kernel" and "k_beta" in x[1]))
    ours = sorted(g["start_ns"] for g in t.of("gpu") if t.name(g["name"]) == "_Z6k_betai")
    if check(len(real) == len(ours) == 2 * rounds, f"chain waits: {len(ours)} GPU records, {len(real)} true"):
        # the second launch of each round, queued behind the wait
        worst = max(abs(a - b) for a, b in list(zip(real, ours))[1::2])
        check(worst <= 20000, f"chain waits: a launch after a wait is off by {worst} ns")
        print(f"  chain across waits: starts within {worst} ns")


def case_copies(run, app):
    rc, _, t = run.compare([app, "copies"])
    if not check(rc == 0 and t, "copies: run failed"):
        return
    apis = {a["corr"]: a for a in t.of("api")}
    legacy = 0
    got = []
    for m in t.of("memop"):
        a = apis.get(m["corr"], {"name": 0, "stream": -1})
        got.append((t.name(a["name"]), m["bytes"], m["kind"], m["src_mem"], m["dst_mem"], m["async"], m["value"],
                    a["stream"] == legacy))
    want = [
        ("cudaMemcpy", 1 << 20, H2D, PAGEABLE, DEVICE, 0, 0, True),
        ("cudaMemcpy", 1 << 20, H2D, PINNED, DEVICE, 0, 0, True),
        ("cudaMemcpy", 524288, D2H, DEVICE, PAGEABLE, 0, 0, True),
        ("cudaMemcpy", 262144, D2D, DEVICE, DEVICE, 0, 0, True),
        ("cudaMemcpy", 4096, H2D, PINNED, DEVICE, 0, 0, True),
        ("cudaMemset", 65536, MEMSET, 0, DEVICE, 0, 0x5a, True),
        ("cudaMemcpy2D", 256 * 16, H2D, PINNED, DEVICE, 0, 0, True),
        ("cudaMemsetAsync", 8192, MEMSET, 0, DEVICE, 1, 0x11, False),
        ("cudaMemcpyAsync", 8192, D2H, DEVICE, PINNED, 1, 0, False),
        ("cudaMemcpy", 65536, D2D, DEVICE, MANAGED, 0, 0, True),
        ("cudaMemcpyToSymbol", 1024, H2D, PAGEABLE, DEVICE, 0, 0, True),
        ("cudaMemcpyFromSymbol", 1024, D2H, DEVICE, PAGEABLE, 0, 0, True),
        ("cudaMemset2D", 128 * 8, MEMSET, 0, DEVICE, 0, 0x22, True),
        ("cudaMemcpy3D", 256 * 4 * 2, H2D, PINNED, DEVICE, 0, 0, True),
        ("cudaMemcpy", 16, D2H, DEVICE, PAGEABLE, 0, 0, True),
    ]
    check(len(got) == len(want), f"copies: {len(got)} MEMOP records, expected {len(want)}")
    for i, (g, w) in enumerate(zip(got, want)):
        check(g == w, f"copies: #{i + 1} is {g}, expected {w}")
    check_timed_pairs(t, "copies")
    gpus = t.by_corr("gpu")
    for m in t.of("memop"):
        g = gpus.get(m["corr"], [])
        check(len(g) == 1 and g[0]["type"] == (GPU_MEMSET if m["kind"] == MEMSET else GPU_MEMCPY),
              f"copies: corr {m['corr']} has GPU records {g}")


def case_errors(run, app):
    rc, _, t = run.compare([app, "errors"])
    if not check(t is not None, "errors: no trace"):
        return
    launches = t.apis("__cudaLaunchKernel")
    results = [(a["result"], a["flags"] & (API_TIMED | API_UNTIMED)) for a in launches]
    # bad configuration (9), destroyed stream (400), then a good launch, timed
    check(results == [(9, 0), (400, 0), (0, API_TIMED)], f"errors: launch results/flags {results}")
    memcpy = t.apis("cudaMemcpy")
    check([a["result"] for a in memcpy] == [21], f"errors: cudaMemcpy results {[a['result'] for a in memcpy]}")
    check([a["result"] for a in t.apis("cudaMalloc")] == [2], "errors: cudaMalloc result")
    check([a["result"] for a in t.apis("cudaStreamSynchronize")] == [400], "errors: cudaStreamSynchronize result")
    check_timed_pairs(t, "errors")


def thread_accounting(t, threads, n, label):
    """Every record the launching threads emitted is present, or counted in a DROP."""
    pid = t.of("process")[0]["pid"]
    poller = {r["tid"] for r in t.of("thread") if t.name(r["name"]) == "cutrace-poller"}
    # the tracer's own threads by name: app threads carry TRACER records too (the
    # cost of their stack captures), so TRACER tids do not tell them apart
    tracer_tids = {r["tid"] for r in t.of("thread") if t.name(r["name"]).startswith("cutrace-")}
    launchers = {a["tid"] for a in t.apis("__cudaLaunchKernel")}
    drops = {}
    for d in t.of("drop"):
        drops[d["tid"]] = drops.get(d["tid"], 0) + d["count"]
    app_tids = (launchers | set(drops)) - {pid} - poller
    app_tids -= tracer_tids
    present = (sum(1 for r in t.of("thread") if r["tid"] in app_tids)
               + sum(1 for a in t.of("api") if a["tid"] in app_tids)
               + len(t.of("launch")) + len(t.of("stream")))
    dropped = sum(drops.get(x, 0) for x in app_tids)
    expected = threads * (2 * n + 3)  # THREAD, STREAM, n x (API + LAUNCH), cudaStreamSynchronize
    check(len(app_tids) == threads, f"{label}: {len(app_tids)} launching threads, expected {threads}")
    check(present + dropped == expected,
          f"{label}: {present} records present + {dropped} dropped != {expected} emitted")
    timed = [a for a in t.apis("__cudaLaunchKernel") if a["flags"] & API_TIMED]
    untimed = [a for a in t.apis("__cudaLaunchKernel") if a["flags"] & API_UNTIMED]
    gpu = t.of("gpu")
    corrs = [g["corr"] for g in gpu]
    check(len(corrs) == len(set(corrs)), f"{label}: duplicate GPU records")
    poller_drops = sum(drops.get(x, 0) for x in poller)
    if not drops:
        check(len(timed) + len(untimed) == threads * n, f"{label}: {len(timed)} timed + {len(untimed)} untimed")
        check(len(gpu) == len(timed), f"{label}: {len(gpu)} GPU records for {len(timed)} timed launches")
    else:
        check(len(gpu) + poller_drops >= len(timed) - sum(drops.values()),
              f"{label}: {len(gpu)} GPU records for {len(timed)} timed launches")
    print(f"  {label}: {present} records present, {dropped} dropped (counted), {len(gpu)} GPU records, "
          f"{len(untimed)} untimed")


def case_threads(run, app):
    threads, n = 8, 10000
    rc, out, t = run.compare([app, "threads", str(threads), str(n)], {"SIMCUDA_KERNEL_US": "default=1"})
    if check(rc == 0 and t, "threads: run failed"):
        thread_accounting(t, threads, n, "threads 8 x 10000")
    # A small buffer forces drops: they must be counted exactly. Without stacks: a
    # dropped TRACER "stacks" record (a thread's capture cost, one per flush period)
    # counts in DROP but is no record this accounting expects (seen under
    # ThreadSanitizer's slower runs, scripts/tsan, which end more periods).
    n = 3000
    rc, out, t = run.run([app, "threads", str(threads), str(n)],
                         {"SIMCUDA_KERNEL_US": "default=1", "CUTRACE_BUFFER_KB": "16",
                          "CUTRACE_STACKS": "off"})
    if check(rc == 0 and t, "threads (16 KiB buffers): run failed"):
        check(len(t.of("drop")) > 0, "threads (16 KiB buffers): expected drops")
        thread_accounting(t, threads, n, "threads 8 x 3000, 16 KiB buffers")


def case_capture(run, app):
    n = 5
    rc, out, t = run.compare([app, "capture", str(n)])
    check("end capture -> cudaSuccess" in out, "capture: the capture failed under the tracer")
    if not check(rc == 0 and t, "capture: run failed"):
        return
    pid = t.of("process")[0]["pid"]
    apis = [a for a in t.of("api") if a["tid"] == pid]
    begin = [i for i, a in enumerate(apis) if t.name(a["name"]) == "cudaStreamBeginCapture"]
    end = [i for i, a in enumerate(apis) if t.name(a["name"]) == "cudaStreamEndCapture"]
    if check(len(begin) == 1 and len(end) == 1, "capture: begin/end capture records"):
        inside = apis[begin[0] + 1:end[0]]
        names = [t.name(a["name"]) for a in inside]
        check(names == ["__cudaLaunchKernel"] * 3 + ["cudaMemsetAsync", "__cudaLaunchKernel"],
              f"capture: calls inside the capture {names}")
        check(all(a["flags"] & API_CAPTURED and not a["flags"] & API_TIMED for a in inside),
              "capture: calls inside the capture not flagged captured")
    gpus = t.by_corr("gpu")
    neighbour = [a for a in t.apis("__cudaLaunchKernel") if a["tid"] != pid]
    check(len(neighbour) == 20 and all(a["flags"] & API_TIMED and a["corr"] in gpus for a in neighbour),
          f"capture: the other thread's 20 launches during the capture not all timed ({len(neighbour)})")
    graphs = t.apis("cudaGraphLaunch")
    check(len(graphs) == n and all(a["flags"] & API_TIMED for a in graphs), f"capture: {len(graphs)} graph launches")
    gpus = t.by_corr("gpu")
    check(all(gpus.get(a["corr"], [{}])[0].get("type") == GPU_GRAPH for a in graphs), "capture: graph GPU records")
    check_timed_pairs(t, "capture")
    check("instantiate of no graph -> cudaErrorInvalidValue, last error cudaErrorInvalidValue" in out,
          "capture: the failing instantiate's error")
    check_inventories(t, graphs)


def check_inventories(t, launches):
    """capture: instantiate, update and instantiate-with-params are API records; each
    successful one has the graph's inventory (3 k_beta + k_alpha + a memset), the
    failing one none; the update keeps the exec id; every launch names that exec."""
    inst = t.apis("cudaGraphInstantiate")
    check(sorted(a["result"] for a in inst) == [0, 1], f"capture: instantiate results {[a['result'] for a in inst]}")
    update, params = t.apis("cudaGraphExecUpdate"), t.apis("cudaGraphInstantiateWithParams")
    check(len(update) == 1 and len(params) == 1 and update[0]["result"] == 0 and params[0]["result"] == 0,
          f"capture: {len(update)} update, {len(params)} instantiate-with-params records")
    for name in ("cuGraphInstantiateWithFlags", "cuGraphInstantiateWithParams", "cuGraphExecUpdate_v2"):
        check(not t.apis(name), f"capture: the runtime's {name} was traced a second time")
    graphs = {g["corr"]: g for g in t.of("graph")}
    ok = [a for a in inst if a["result"] == 0] + update + params
    if not check(len(graphs) == 3 and all(a["corr"] in graphs for a in ok),
                 f"capture: GRAPH records {sorted(graphs)}"):
        return
    for a in ok:
        g = graphs[a["corr"]]
        counts = (g["nodes"], g["kernels"], g["memcpys"], g["memsets"], g["others"], g["partial"])
        check(counts == (5, 4, 0, 1, 0, 0), f"capture: inventory of {t.name(a['name'])}: {counts}")
    first = graphs[inst[0]["corr"] if inst[0]["result"] == 0 else inst[1]["corr"]]["exec"]
    check(graphs[update[0]["corr"]]["exec"] == first and graphs[params[0]["corr"]]["exec"] != first,
          "capture: exec ids of the update and of the second exec")
    names = sorted((t.name(k["name"]), k["count"]) for k in t.of("graph_kernel") if k["exec"] == first)
    # the instantiation's and the update's inventories of the one exec
    check(names == [("_Z6k_betai", 3)] * 2 + [("_Z7k_alphaPfi", 1)] * 2, f"capture: kernel names of the exec {names}")
    by_corr = {r["corr"]: r["exec"] for r in t.of("graph_launch")}
    check([by_corr.get(a["corr"]) for a in launches] == [first] * len(launches),
          "capture: graph launches name their exec")


def case_blas(run, app):
    rc, _, t = run.compare([app, "blas"])
    if not check(rc == 0 and t, "blas: run failed"):
        return
    apis = {a["corr"]: a for a in t.of("api")}
    got = [(t.name(apis[g["corr"]]["name"]), g["m"], g["n"], g["k"], g["batch"], g["transa"], g["transb"],
            g["atype"], g["btype"], g["ctype"], g["compute_type"], g["epilogue"]) for g in t.of("gemm")]
    f32, c32 = 0, 68  # CUDA_R_32F, CUBLAS_COMPUTE_32F
    f64, c64 = 1, 70  # CUDA_R_64F, CUBLAS_COMPUTE_64F
    want = [
        ("cublasSgemm_v2", 64, 32, 16, 1, 1, 0, f32, f32, f32, c32, 0),
        ("cublasSgemm_v2_64", 20, 10, 5, 1, 0, 0, f32, f32, f32, c32, 0),
        ("cublasSgemmStridedBatched", 8, 12, 4, 3, 0, 1, f32, f32, f32, c32, 0),
        ("cublasGemmEx", 24, 16, 8, 1, 0, 0, f32, f32, f32, c32, 0),
        ("cublasGemmStridedBatchedEx", 16, 8, 4, 2, 0, 0, f32, f32, f32, c32, 0),
        ("cublasDgemm_v2", 10, 6, 4, 1, 0, 1, f64, f64, f64, c64, 0),
        ("cublasLtMatmul", 48, 40, 24, 1, 1, 0, f32, f32, f32, c32, 4),  # CUBLASLT_EPILOGUE_BIAS
        ("cublasSgemm", 12, 6, 3, 1, 0, 1, f32, f32, f32, c32, 0),
    ]
    check(got == want, f"blas: GEMM records {got}, expected {want}")
    gpus = t.by_corr("gpu")
    streams = {apis[g["corr"]]["stream"] for g in t.of("gemm")[:6]}
    check(len(streams) == 1 and 0 not in streams, f"blas: GEMMs not on the handle's stream: {streams}")
    # Each GEMM is timed through the kernel it launched (a depth-1 driver child whose
    # parent is the GEMM), and has no GPU record of its own.
    for g in t.of("gemm"):
        a = apis[g["corr"]]
        kids = [k for k in t.of("api") if k["depth"] == 1 and k.get("parent") == g["corr"]]
        check(a["flags"] & API_INNER_TIMED and not a["flags"] & (API_TIMED | API_UNTIMED)
              and g["corr"] not in gpus, f"blas: GEMM {t.name(a['name'])} flags {a['flags']:#x}, own GPU records {gpus.get(g['corr'])}")
        timed = [gpus[k["corr"]][0] for k in kids if k["flags"] & API_TIMED and k["corr"] in gpus]
        check(len(kids) == 1 and len(timed) == 1 and timed[0]["type"] == GPU_KERNEL
              and "gemm" in t.name(timed[0]["name"]),
              f"blas: GEMM {t.name(a['name'])}: children {kids}, timed {timed}")
    check_timed_pairs(t, "blas")


def case_ptsz(run, ptsz):
    n = 20
    rc, out, t = run.compare([ptsz, str(n)])
    if not check(rc == 0 and t, "ptsz: run failed"):
        return
    streams = {s["stream"]: s for s in t.of("stream")}
    launches = t.apis("__cudaLaunchKernel_ptsz")
    check(len(launches) == 2 * n, f"ptsz: {len(launches)} launches")
    per_thread = {}
    for a in launches:
        per_thread.setdefault(a["tid"], set()).add(a["stream"])
    check(len(per_thread) == 2 and all(len(s) == 1 for s in per_thread.values()),
          f"ptsz: streams per thread {per_thread}")
    for tid, ids in per_thread.items():
        sid = next(iter(ids))
        s = streams.get(sid, {})
        check(sid != 0 and s.get("flags", 0) & STREAM_PER_THREAD and s.get("owner_tid") == tid,
              f"ptsz: thread {tid} stream {sid}: {s}")
        for name in ("__cudaLaunchKernel_ptsz", "cudaMemsetAsync_ptsz", "cudaMemcpy_ptds",
                     "cudaStreamSynchronize_ptsz"):
            calls = [a for a in t.apis(name) if a["tid"] == tid]
            check(calls and all(a["flags"] & API_PTSZ and a["stream"] == sid for a in calls),
                  f"ptsz: {name} of thread {tid}: {calls[:2]}")
    check_timed_pairs(t, "ptsz")
    check(len(t.of("gpu")) == 2 * n + 4, f"ptsz: {len(t.of('gpu'))} GPU records, expected {2 * n + 4}")


def case_nesting(run, app, shim):
    """A library entry point that calls the runtime: one span, timed through its two
    depth-1 children (the runtime memset and the library's own kernel launch)."""
    rc, _, t = run.compare([app, "blas"], preload_after=shim)
    if not check(rc == 0 and t, "nesting: run failed"):
        return
    gemm = t.apis("cublasSgemm_v2")
    child = [a for a in t.apis("cudaMemsetAsync") if a["depth"] == 1]
    if not check(len(gemm) == 1 and len(child) == 1, f"nesting: {len(gemm)} GEMM calls, {len(child)} nested memsets"):
        return
    g, c = gemm[0], child[0]
    check(g["depth"] == 0 and g["flags"] & API_INNER_TIMED and not g["flags"] & API_TIMED,
          f"nesting: the GEMM is not an outermost call timed inside: {g}")
    check(g["begin_ns"] <= c["begin_ns"] <= c["end_ns"] <= g["end_ns"], "nesting: the child is outside its parent")
    check(c["flags"] & API_TIMED and c["stream"] == g["stream"] and c.get("parent") == g["corr"],
          f"nesting: the nested memset is not timed on the GEMM's stream as its child: {c}")
    gpus = t.by_corr("gpu")
    kids = [a for a in t.of("api") if a["depth"] == 1 and a.get("parent") == g["corr"]]
    check(len(kids) == 2 and all(a["corr"] in gpus for a in kids),
          f"nesting: children {kids}")
    check(g["corr"] not in gpus and len(gpus.get(c["corr"], [])) == 1
          and gpus[c["corr"]][0]["type"] == GPU_MEMSET, "nesting: GEMM timed itself, or the memset not once")
    check(any(m["corr"] == c["corr"] for m in t.of("memop")), "nesting: the nested memset lost its MEMOP record")
    check_timed_pairs(t, "nesting")


def case_memory(run, app):
    """Stream-ordered allocation, host registration, the app's event records and host
    functions: one span each, result 0, depth 0, never timed; the kernels around
    them still timed once each."""
    rc, out, t = run.compare([app, "memory"])
    if not check(rc == 0 and t and "host function calls 1" in out, f"memory: run failed ({rc}, {out!r})"):
        return
    for name in ("cudaMallocAsync", "cudaFreeAsync", "cudaHostRegister", "cudaHostUnregister",
                 "cudaEventRecord", "cudaEventRecordWithFlags", "cudaLaunchHostFunc"):
        spans = t.apis(name)
        check(len(spans) == 1 and spans[0]["result"] == 0 and spans[0]["depth"] == 0
              and not spans[0]["flags"] & (API_TIMED | API_UNTIMED),
              f"memory: {name} spans {spans}")
    check(len(t.apis("__cudaLaunchKernel")) == 2, "memory: the two launches")
    check_timed_pairs(t, "memory")


def case_devices(run, app):
    n = 4
    rc, _, t = run.compare([app, "devices", str(n)], {"SIMCUDA_DEVICES": "2"})
    if not check(rc == 0 and t, "devices: run failed"):
        return
    launches = t.apis("__cudaLaunchKernel")
    check([a["device"] for a in launches] == [1] * n + [0] * n, f"devices: launch devices {[a['device'] for a in launches]}")
    gpus = t.by_corr("gpu")
    check(all(gpus[a["corr"]][0]["device"] == a["device"] for a in launches if a["corr"] in gpus),
          "devices: GPU records on the wrong device")
    check(sorted(d["device"] for d in t.of("device")) == [0, 1], "devices: DEVICE records")
    check(sorted(c["device"] for c in t.of("clock"))[:1] == [0] and any(c["device"] == 1 for c in t.of("clock")),
          "devices: one clock timeline per device")
    # format 1.6: one KERNEL_ATTR record per device (another GPU may run other code), each
    # launch naming its own device's, whose OCCUPANCY says that device
    occ_device = {o["attr"]: o["device"] for o in t.of("occupancy")}
    detail = {r["corr"]: r for r in t.of("launch")}
    check(len(t.of("kernel_attr")) == 2 and
          all(occ_device.get(detail[a["corr"]]["attr"]) == a["device"] for a in launches),
          f"devices: attributes per device {t.of('kernel_attr')}, occupancy {occ_device}")
    check_timed_pairs(t, "devices")


def case_reset(run, app):
    n = 5
    rc, out, t = run.compare([app, "reset", str(n)])
    if not check(rc == 0 and t, "reset: run failed"):
        return
    reset = t.apis("cudaDeviceReset")
    if not check(len(reset) == 1, "reset: no cudaDeviceReset record"):
        return
    after = [a for a in t.apis("__cudaLaunchKernel") if a["begin_ns"] > reset[0]["end_ns"]]
    check(len(after) == n and all(a["flags"] & API_TIMED for a in after), "reset: launches after the reset not timed")
    check_timed_pairs(t, "reset")
    check(any(c["host_ns"] > reset[0]["end_ns"] for c in t.of("clock")), "reset: no new anchor after the reset")
    check(not any(t.name(r["what"]) == "gpu_lost" for r in t.of("tracer")), "reset: timings lost")


def main():
    if sys.argv[1:] == ["--skip"]:
        print("nvcc or the simulated CUDA stack is not available: skipped")
        return 77
    if len(sys.argv) != 7:
        print(__doc__)
        return 2
    sim, lib, reader, app, ptsz, shim = sys.argv[1:]
    run = Runner(sim, lib, reader)
    cases = [case_kernels, case_no_timing, case_bad_knobs, case_timing, case_chain, case_copies, case_errors, case_capture, case_blas, case_memory, case_devices, case_reset,
             case_threads]
    only = os.environ.get("HK_ONLY")
    for case in cases:
        if only and only not in case.__name__:
            continue
        print(case.__name__)
        case(run, app)
    if not only or only in "case_ptsz":
        print("case_ptsz")
        case_ptsz(run, ptsz)
    if not only or only in "case_nesting":
        print("case_nesting")
        case_nesting(run, app, shim)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
