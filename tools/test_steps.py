#!/usr/bin/env python3
"""cutrace steps on planted traces (tracewrite.py), every number known.

Trace "profiler" (times in us from T0; thread 7, device 0, stream 0): six steps named
ProfilerStep#0..#5 (one range each, as torch.profiler names them) beginning at 0, 1000,
2000, 4000, 5000, 6600, each range 900 long; between them, two depth-0 ranges "data"
per step (12 instances: more frequent than any ProfilerStep#N name, yet the
ProfilerStep#* glob wins). Each step launches k1 (call at +10..+15, GPU +20, 200 long)
and k2 (call at +16..+18, GPU after k1, 100 long). Planted:
  step 2  k1 lasts 600 (so 1000 of GPU work; the next step begins 2000 after it):
          outlier, reasons: host_wait idle +700 (1300 vs the median 600), kernel k1 +400
  step 4  a cudaStreamSynchronize from +330 to +1500 (no GPU work to wait for):
          outlier, reasons: sync idle +1280, new sync calls +1170 (1 vs 0)
  step 0  cudaMalloc (+1..+5) and a 100 us HtoD copy (call +5..+9, GPU +100..+200,
          k1 after it): setup
  step 1  thread 8 launches k3 (call +50, GPU +100..+200 on stream 1, under k1): the
          step's only with --all-threads
Also: no NVTX range at all, and only 2 instances of one: no steps, one line, status 2
(beside a file with steps in a directory: status 1, partial);
two devices, the busier one seen second: it is the step device, its busy time the steps';
a generated mixed trace (cutrace-gentrace --mixed: one NVTX "step" per iteration): every
iteration a step; truncated: the steps before the damage, status 1.

usage: test_steps.py CUTRACE GENTRACE"""
import csv
import io
import json
import resource
import signal
import os
import subprocess
import sys

import tooltest  # noqa: F401 (puts tests/lib on the path)
from tooltest import check, finish, scratch_dir
from tracewrite import TraceWriter

cutrace, gentrace = sys.argv[1:3]
PID, US, T0 = 7, 1000, 10**9
BEGINS = [0, 1000, 2000, 4000, 5000, 6600]
tmp = scratch_dir("cutrace-steps-planted-")


def profiler_trace(path):
    w = TraceWriter()
    w.add("process", pid=PID, start_ns=T0)
    w.add("device", device=0, name=w.string("GPU"), cc_major=9, sm_count=132)
    w.add("thread", tid=PID, name=w.string("main"), start_ns=T0)
    launch, k1, k2 = w.string("cudaLaunchKernel"), w.string("_Z2k1v"), w.string("_Z2k2v")
    k3 = w.string("_Z2k3v")
    data = w.string("data")
    corr = 0

    def t(us):
        return T0 + us * US

    def call(name, b, e, **kw):
        w.add("api", tid=PID, name=w.string(name), begin_ns=t(b), end_ns=t(e), **kw)

    for i, b in enumerate(BEGINS):
        gpu = b + 20
        if i == 0:
            call("cudaMalloc", b + 1, b + 5)
            corr += 1
            call("cudaMemcpy", b + 5, b + 9, corr=corr, flags=4)
            w.add("memop", corr=corr, bytes=1 << 20, kind=1, src_mem=1, dst_mem=3)
            w.add("gpu", corr=corr, device=0, stream=0, start_ns=t(b + 100), end_ns=t(b + 200),
                  type=2)
            gpu = b + 200
        for name, dur, cb, ce in ((k1, 600 if i == 2 else 200, 10, 15), (k2, 100, 16, 18)):
            corr += 1
            w.add("api", tid=PID, name=launch, begin_ns=t(b + cb), end_ns=t(b + ce), corr=corr,
                  flags=4)
            w.add("launch", corr=corr, kernel=name, grid_x=1, grid_y=1, grid_z=1, block_x=1,
                  block_y=1, block_z=1)
            w.add("gpu", corr=corr, device=0, stream=0, start_ns=t(gpu), end_ns=t(gpu + dur),
                  type=1, name=name)
            gpu += dur
        if i == 4:
            call("cudaStreamSynchronize", b + 330, b + 1500)
        if i == 1:  # another thread (an autograd-like worker) launches k3 during step 1
            corr += 1
            w.add("api", tid=PID + 1, name=launch, begin_ns=t(b + 50), end_ns=t(b + 55), corr=corr,
                  flags=4)
            w.add("launch", corr=corr, kernel=k3, grid_x=1, grid_y=1, grid_z=1, block_x=1,
                  block_y=1, block_z=1)
            w.add("gpu", corr=corr, device=0, stream=1, start_ns=t(b + 100), end_ns=t(b + 200),
                  type=1, name=k3)
        w.add("range", tid=PID, name=w.string(f"ProfilerStep#{i}"), begin_ns=t(b),
              end_ns=t(b + (1500 if i == 4 else 900)), depth=0)
        for k in (0, 1):
            s = b + (1510 if i == 4 else 910) + 20 * k
            w.add("range", tid=PID, name=data, begin_ns=t(s), end_ns=t(s + 10), depth=0)
    w.add("end", records=0, end_ns=t(8000))
    w.save(path)


def few_ranges_trace(path, ranges):
    w = TraceWriter()
    w.add("process", pid=PID, start_ns=T0)
    name = w.string("only")
    for i in range(ranges):
        w.add("range", tid=PID, name=name, begin_ns=T0 + i * 100 * US,
              end_ns=T0 + (i * 100 + 50) * US, depth=0)
    w.add("api", tid=PID, name=w.string("cudaLaunchKernel"), begin_ns=T0 + 10, end_ns=T0 + 20,
          corr=1, flags=4)
    w.add("gpu", corr=1, device=0, stream=0, start_ns=T0 + 30, end_ns=T0 + 90, type=1,
          name=w.string("_Z1kv"))
    w.add("end", records=0, end_ns=T0 + 10**6)
    w.save(path)


def run(*args):
    r = subprocess.run([cutrace, "steps", *args], capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout, r.stderr


prof = os.path.join(tmp, "profiler.ctr")
profiler_trace(prof)
rc, out, err = run("--format", "json", prof)
check(rc == 0 and err == "", f"profiler: status {rc}, stderr {err!r}")
p = json.loads(out)["processes"][0] if rc == 0 else {}
s = p.get("summary", {})
st = p.get("steps", [])
check(p.get("range") == "ProfilerStep#*" and p.get("how") == "ProfilerStep#* range"
      and p.get("chosen") is True and p.get("tid") == PID,
      f"chosen: {p.get('range')!r} {p.get('how')!r}")
check([x["time_ns"] for x in st] == [1000 * US, 1000 * US, 2000 * US, 1000 * US, 1600 * US,
                                     900 * US],
      f"step times {[x['time_ns'] for x in st]}")
check([x["begin_ns"] for x in st] == [b * US for b in BEGINS], f"begins {[x['begin_ns'] for x in st]}")
check([x["cpu_ns"] for x in st] == [900 * US] * 4 + [1500 * US, 900 * US], "cpu_ns")
check([x["gpu_work_ns"] for x in st] == [400 * US, 300 * US, 700 * US, 300 * US, 300 * US,
                                         300 * US], f"gpu work {[x['gpu_work_ns'] for x in st]}")
check(st and st[0]["gpu_start_ns"] == 100 * US and st[0]["gpu_span_ns"] == 400 * US
      and st[2]["gpu_span_ns"] == 700 * US, "gpu start/span")
check([x["kernels"] for x in st] == [2] * 6 and [x["copies"] for x in st] == [1] + [0] * 5,
      "kernels/copies")
check([x["cuda_calls"] for x in st] == [4, 2, 2, 2, 3, 2] and
      [x["syncs"] for x in st] == [0, 0, 0, 0, 1, 0], "cuda calls / syncs")
check(st and st[0]["cuda_ns"] == 15 * US and st[4]["sync_ns"] == 1170 * US, "cuda_ns / sync_ns")
check(all(x["top_kernel"]["name"] == "_Z2k1v" for x in st), "top kernel k1")
check([x["device_busy_ns"] for x in st] == [400 * US, 300 * US, 700 * US, 300 * US, 300 * US,
                                            300 * US], f"busy {[x['device_busy_ns'] for x in st]}")
# idle: from the end of a step's work to the next step's first GPU start (+20), split
# at the next step's begin; step 0's device idle begins with the copy (nothing before)
idle = [x["idle_ns"] for x in st]
check(idle == [500 * US, 700 * US, 1300 * US, 700 * US, 1300 * US, 20 * US], f"idle {idle}")
# causes: no call on the thread during the gaps (host_wait), but in step 4 it waited in
# cudaStreamSynchronize from 5330 to 6500 through the gap 5320..6620 (sync)
hw = [x["idle_by_cause"]["host_wait"] for x in st]
sy = [x["idle_by_cause"]["sync"] for x in st]
check(hw == [500 * US, 700 * US, 1300 * US, 700 * US, 20 * US, 0] and
      sy == [0, 0, 0, 0, 1280 * US, 20 * US], f"host_wait {hw}, sync {sy}")
check(s.get("median_ns") == 1000 * US and s.get("p90_ns") == 2000 * US and s.get("min_ns") == 900 * US
      and s.get("max_ns") == 2000 * US and s.get("mean_ns") == 7500 * US // 6
      and s.get("setup_ns") == 0, f"summary {s}")
outl = {o["step"]: o for o in s.get("outliers", [])}
check(sorted(outl) == [2, 4], f"outliers {sorted(outl)}")
if 2 in outl:
    r = [(x["kind"], x["what"], x["excess_ns"]) for x in outl[2]["reasons"]]
    # host_wait medians: [500 700 1300 700 20 0] -> 600
    check(r == [("idle", "host_wait", 700 * US), ("kernel", "_Z2k1v", 400 * US)], f"step 2 {r}")
if 4 in outl:
    r = [(x["kind"], x["what"], x["excess_ns"]) for x in outl[4]["reasons"]]
    check(r == [("idle", "sync", 1280 * US), ("calls", "sync", 1170 * US)], f"step 4 {r}")

# text: the same, one line per outlier
rc, out, err = run(prof)
check(rc == 0 and 'steps: 6 instances of NVTX range "ProfilerStep#*" (ProfilerStep#* range)' in out
      and "  step 2: 2.000 ms (2.00x): host_wait idle +700.000 us" in out
      and "  step 4: 1.600 ms (1.60x): sync idle +1.280 ms (1.280 ms vs 0 ns); new sync calls "
          "+1.170 ms CPU (1 vs 0 calls)" in out
      and "setup: step 0 took no longer than the median" in out, f"text:\n{out}")
# the table, printed row by row after a pass for the column widths: every right-aligned
# cell ends where its header does
lines = out.splitlines()
head = next((i for i, l in enumerate(lines) if l.startswith("   step ") or l.startswith("  step ")), -1)
rows = lines[head + 1:head + 7] if head >= 0 else []
ends = [lines[head].index(h) + len(h) for h in ("step", "begin", "time", "gpu span", "kernels")] if rows else []
check(len(rows) == 6 and [r.split()[0] for r in rows] == ["0", "1", "2*", "3", "4*", "5"] and
      all(r.endswith("  k1()") for r in rows) and
      all(r[e - 1] != " " and (e == len(r) or r[e] == " ") for r in rows for e in ends) and
      rows[2].split()[1:5] == ["2.000", "ms", "2.000", "ms"], f"text table:\n{out}")

# --range data: the 12 "data" ranges; --skip beyond the steps: nothing counted
rc, out, err = run("--format", "json", "--range", "data", prof)
check(rc == 0 and json.loads(out)["processes"][0]["summary"]["steps"] == 12, "--range data")
rc, out, err = run("--format", "json", "--skip", "99", prof)
check(rc == 0 and json.loads(out)["processes"][0]["summary"]["counted"] == 0, "--skip 99")

# --summary: the same summary, no rows; not in CSV
rc, out, err = run("--format", "json", "--summary", prof)
ps = json.loads(out)["processes"][0] if rc == 0 else {}
check(rc == 0 and "steps" not in ps and ps.get("summary") == s, "--summary json")
rc, out, err = run("--summary", prof)
check(rc == 0 and "  step " not in out.split("summary:")[0] and "  step 2: 2.000 ms" in out,
      f"--summary text:\n{out}")
rc, out, err = run("--summary", "--format", "csv", prof)
check(rc == 2 and out == "" and err.count("\n") == 1 and "no CSV form" in err, f"--summary csv {err!r}")

# --from/--to: the steps whose range overlaps [1.5 ms, 4.5 ms] after the PROCESS start: 1, 2, 3
rc, out, err = run("--format", "json", "--from", "1.5ms", "--to", "4.5ms", prof)
pw = json.loads(out)["processes"][0] if rc == 0 else {}
check(rc == 0 and pw.get("summary", {}).get("steps") == 3
      and [x["cpu_ns"] for x in pw["steps"]] == [900 * US] * 3, f"--from/--to: {rc} {err!r}")

# --all-threads: thread 8's k3 joins step 1 (inside busy time: nothing else changes)
rc, out, err = run("--format", "json", "--all-threads", prof)
pa = json.loads(out)["processes"][0] if rc == 0 else {}
sa = pa.get("steps", [])
check(rc == 0 and pa.get("work_of") == "all threads" and p.get("work_of") == "stepping thread"
      and [x["kernels"] for x in sa] == [2, 3, 2, 2, 2, 2]
      and [x["gpu_work_ns"] for x in sa] == [x["gpu_work_ns"] for x in st]
      and [x["gpu_span_ns"] for x in sa] == [x["gpu_span_ns"] for x in st]
      and [x["idle_by_cause"] for x in sa] == [x["idle_by_cause"] for x in st]
      and [x["cuda_calls"] for x in sa] == [x["cuda_calls"] for x in st],
      f"--all-threads: {rc} {err!r} {[x['kernels'] for x in sa]}")

# no steps
for n, tag in ((0, "none"), (2, "two")):
    path = os.path.join(tmp, f"{tag}.ctr")
    few_ranges_trace(path, n)
    rc, out, err = run(path)
    check(rc == 2 and out == "" and err.count("\n") == 1 and "no steps" in err
          and "nvtxRangePush" in err and "--range" in err, f"{tag}: {rc} {err!r}")
# a directory: each file on its own; the one without steps is named on stderr, status 1
# (partial: a file without steps beside one with steps, as report counts such files)
both = os.path.join(tmp, "both")
os.makedirs(both)
os.link(prof, os.path.join(both, "a.ctr"))
os.link(os.path.join(tmp, "none.ctr"), os.path.join(both, "b.ctr"))
rc, out, err = run("--format", "json", both)
procs = json.loads(out)["processes"] if out else []
check(rc == 1 and len(procs) == 1 and procs[0]["path"].endswith("a.ctr") and err.count("\n") == 1
      and "b.ctr: no steps" in err, f"directory: {rc} {len(procs)} {err!r}")

# two named: not chosen, but --range takes them
rc, out, err = run("--format", "json", "--range", "only", os.path.join(tmp, "two.ctr"))
check(rc == 0 and json.loads(out)["processes"][0]["summary"]["steps"] == 2, "--range only")

# two devices: device 0 runs one 10 us kernel in step 0 (the first device seen), device 1
# one in each step of 1000 us (500 us with 3 steps; 400 + 5 i us in step i of 40, most
# of whose rows go through the temporary file in the test build): the step device is 1,
# its busy time per step its kernel's, its idle time the rest of the interval (step 0:
# not before its first kernel; the last step: not after its last); device 0's kernel
# appears in no step's busy time. A third trace leaves device 1 idle in steps 10-19 (a
# call without GPU work in each step): the gap is handed over at step 20's kernel, when
# the test build has moved most of those steps' rows to the file (their patch rows).
def twodev_trace(path, n, busy_us, calls=False):
    w = TraceWriter()
    w.add("process", pid=PID, start_ns=T0)
    launch, kd0, kd1 = w.string("cudaLaunchKernel"), w.string("_Z2d0v"), w.string("_Z2d1v")
    it = w.string("it")
    w.add("api", tid=PID, name=launch, begin_ns=T0 + 1 * US, end_ns=T0 + 2 * US, corr=1, flags=4)
    w.add("gpu", corr=1, device=0, stream=0, start_ns=T0 + 5 * US, end_ns=T0 + 15 * US, type=1,
          name=kd0)
    for i in range(n):
        b = i * 1000
        if calls:
            w.add("api", tid=PID, name=w.string("cudaGetDevice"), begin_ns=T0 + (b + 10) * US,
                  end_ns=T0 + (b + 11) * US)
        if busy_us(i):
            w.add("api", tid=PID, name=launch, begin_ns=T0 + (b + 20) * US,
                  end_ns=T0 + (b + 25) * US, corr=2 + i, flags=4)
            w.add("gpu", corr=2 + i, device=1, stream=0, start_ns=T0 + (b + 100) * US,
                  end_ns=T0 + (b + 100 + busy_us(i)) * US, type=1, name=kd1)
        w.add("range", tid=PID, name=it, begin_ns=T0 + b * US, end_ns=T0 + (b + 900) * US, depth=0)
    w.add("end", records=0, end_ns=T0 + (n + 1) * 1000 * US)
    w.save(path)


for n, busy_us, calls in ((3, lambda i: 500, False), (40, lambda i: 400 + 5 * i, False),
                          (40, lambda i: 0 if 10 <= i < 20 else 400 + 5 * i, True)):
    twodev = os.path.join(tmp, "twodev.ctr" if n == 3 else f"twodev{n}{'c' if calls else ''}.ctr")
    twodev_trace(twodev, n, busy_us, calls)
    rc, out, err = run("--format", "json", twodev)
    p2 = json.loads(out)["processes"][0] if out else {}
    busy = [x["device_busy_ns"] for x in p2.get("steps", [])]
    idle = [x["idle_ns"] for x in p2.get("steps", [])]
    want_idle = [(900 - busy_us(0)) * US] + [(1000 - busy_us(i)) * US for i in range(1, n - 1)] + [100 * US]
    check(rc == 0 and p2.get("device") == 1 and busy == [busy_us(i) * US for i in range(n)]
          and idle == want_idle, f"two devices, {n} steps{' (idle 10-19)' if calls else ''}: {rc} {err!r} {p2.get('device')} {busy} {idle}")

# generated, 300 steps of 10 calls (cutrace-gentrace --ranged 3000 10 0: 3 us calls every
# 4 us, a 2 us kernel 5 us after each call begins, a range around every 10 calls ending
# 0.5 us after the 10th call, the next 1 us after it): each step 41 us (the last 43 us:
# its interval ends with its last kernel), CPU range 39.5 us, 10 kernels of 2 us (GPU
# span 38 us), 10 calls of 3 us; the device busy 20 us inside each interval (the
# previous step's last kernel runs in its first 2 us, its own last one in the next
# step's: the first step 18 us, the last 22 us), the rest idle "launch_overhead" but
# before the first kernel. More steps than the test build's 4 kept in memory.
ranged = os.path.join(tmp, "ranged.ctr")
subprocess.run([gentrace, "--ranged", ranged, "3000", "10", "0"], check=True)
rc, out, err = run("--format", "csv", ranged)
rows = list(csv.DictReader(io.StringIO(out))) if rc == 0 else []
bad = []
for i, r in enumerate(rows):
    first, last = i == 0, i == len(rows) - 1
    want = {"step": i, "time_ns": 43000 if last else 41000, "cpu_ns": 39500,
            "gpu_work_ns": 20000, "gpu_span_ns": 38000, "kernels": 10, "copies": 0,
            "device_busy_ns": 18000 if first else 22000 if last else 20000,
            "idle_launch_overhead_ns": 18000 if first else 21000, "idle_host_wait_ns": 0,
            "idle_sync_ns": 0, "cuda_calls": 10, "cuda_ns": 30000, "top_kernel_ns": 20000,
            "outlier": 0}
    got = {k: int(r[k]) for k in want}
    if got != want or r["top_kernel"] != "_Z5emptyv":
        bad.append((i, got, r["top_kernel"]))
check(rc == 0 and len(rows) == 300 and not bad,
      f"ranged: {rc} {err!r} {len(rows)} steps, wrong: {bad[:3]}")
# the temporary file failing (a 4 KiB file size limit, SIGXFSZ ignored): the rows stay
# in memory, the same output, nothing said
def small_files():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
lim = subprocess.run([cutrace, "steps", "--format", "csv", ranged], capture_output=True,
                     text=True, timeout=60, preexec_fn=small_files)
check((lim.returncode, lim.stdout, lim.stderr) == (0, out, ""),
      f"temporary file failing: {lim.returncode} {lim.stderr!r} same rows: {lim.stdout == out}")
rc, out, err = run("--format", "json", "--summary", ranged)
summ = json.loads(out)["processes"][0]["summary"] if rc == 0 else {}
check(summ.get("steps") == 300 and summ.get("median_ns") == 41000 and summ.get("max_ns") == 43000
      and summ.get("setup_ns") == 0 and summ.get("outliers") == [],
      f"ranged summary: {rc} {err!r} {summ}")

# step times spread over nine orders of magnitude, ties among them: the exact median
# (odd and even counts), p90 (nearest rank) and the median CPU range, as sorting them
# gives. The test build with 4 values in memory (cutrace-rows4) finds them by refining
# buckets over the steps (steps_summary.c), the default build by selection in memory.
def spread_trace(path, times):
    w = TraceWriter()
    w.add("process", pid=PID, start_ns=T0)
    name = w.string("it")
    begin = T0
    for t in times:
        w.add("range", tid=PID, name=name, begin_ns=begin, end_ns=begin + max(1, t // 2), depth=0)
        begin += t
    w.add("end", records=0, end_ns=begin + 10**6)
    w.save(path)


def nearest_rank(values, pct):
    v = sorted(values)
    return v[-(-len(v) * pct // 100) - 1]


def median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else v[n // 2 - 1] + (v[n // 2] - v[n // 2 - 1]) // 2


rng = __import__("random").Random(5)
pool = [1, 7, 2047, 2048, 2049, 2050, 4095, 4096, 10**6 + 1, 3 * 10**6, 5 * 10**9]
spread_times = [rng.choice(pool) if rng.random() < 0.4 else rng.randrange(1, 10**rng.randrange(1, 10))
                for _ in range(301)]
spread = os.path.join(tmp, "spread.ctr")
spread_trace(spread, spread_times)
real = spread_times[:-1] + [max(1, spread_times[-1] // 2)]  # the last step ends with its range
cpus = [max(1, t // 2) for t in spread_times]
for skip in (0, 1):
    rc, out, err = run("--format", "json", "--summary", "--skip", str(skip), spread)
    summ = json.loads(out)["processes"][0]["summary"] if rc == 0 else {}
    want = {"counted": 301 - skip, "median_ns": median(real[skip:]),
            "p90_ns": nearest_rank(real[skip:], 90), "min_ns": min(real[skip:]),
            "max_ns": max(real[skip:]), "median_cpu_ns": median(cpus[skip:])}
    got = {k: summ.get(k) for k in want}
    check(rc == 0 and got == want, f"spread --skip {skip}: {rc} {err!r} {got} want {want}")
# and every step's begin, time and CPU range (its span: read back from the temporary
# file in the test build)
rc, out, err = run("--format", "csv", spread)
rows = list(csv.DictReader(io.StringIO(out))) if rc == 0 else []
got = [(int(r["begin_ns"]), int(r["time_ns"]), int(r["cpu_ns"])) for r in rows]
want = [(sum(spread_times[:i]), real[i], cpus[i]) for i in range(len(spread_times))]
bad = [(i, g, w) for i, (g, w) in enumerate(zip(got, want)) if g != w]
check(rc == 0 and len(got) == len(want) and not bad, f"spread rows: {rc} {err!r} {len(got)} {bad[:3]}")

# generated: 20000 iterations, one step each; truncated: the steps before the damage
mixed = os.path.join(tmp, "mixed.ctr")
subprocess.run([gentrace, "--mixed", mixed, "20000", "300", "16384"], check=True)
rc, out, err = run("--format", "json", mixed)
check(rc == 0 and json.loads(out)["processes"][0]["summary"]["steps"] == 20000,
      f"mixed: {rc} {err!r}")
data = open(mixed, "rb").read()
cut = os.path.join(tmp, "cut.ctr")
open(cut, "wb").write(data[:len(data) // 2])
rc, out, err = run("--format", "json", cut)
steps_cut = json.loads(out)["processes"][0]["summary"]["steps"] if out else -1
check(rc == 1 and "partial result" in err and err.count("\n") == 1 and 1000 < steps_cut < 20000,
      f"truncated: status {rc}, {steps_cut} steps, {err!r}")

sys.exit(finish())
