#!/usr/bin/env python3
"""cutrace steps, end to end on the simulated GPU (programs/steps.cu).

The program runs NVTX "init" once, then 9 iterations of NVTX "step" (each with two
nested "fwd" ranges, 4 launches of s_work of 40 ms, one cudaDeviceSynchronize).
Planted: step 0 allocates and copies 64 MiB synchronously (setup: a 419 ms copy at the
simulator's SIMCUDA_PAGEABLE_GBPS=0.16, not left to the host's memcpy), step 3 sleeps 600 ms
on the CPU before its launches (host_wait: 4.75x a 160 ms step), step 6's second s_work
lasts 200 ms (5x: the step 2x). On a loaded machine a synchronize can wake tens of ms
late (seen: 40 ms at load 6 on 2 cores), or the program's thread be preempted as long;
the plants are large enough that neither hides one nor lifts the median over one, and a
step they make an outlier must say so (its first reason sync or host_wait idle, and no
outlier without it).
A synchronize that returns more than 100 ms after the GPU finished (the simulator's truth
log) spoils the run: the idle it ends is `sync` (at load 8-17 step 3's 600 ms came out
as sync once); such a run is made again, at most 3 times, and the last judged as is.
Asserted exactly: the steps' busy and idle time by cause add up to the device's in
`cutrace gaps`; the chosen range ("step", most frequent outermost: not "fwd", which
is more frequent but nested, nor "init"), 9 steps, per-step kernel/copy/sync counts and
top kernel, the outliers {0, 3, 6} and the first-ranked cause of each (new alloc
or memcpy calls or the copy; host_wait idle; the s_work kernel), the setup's causes, --skip,
--outlier, globs, nested matches left out, CSV rows, text lines, and one-line errors
with status 2 for bad options and a range that matches nothing.

usage: test_steps.py SIM_DIR CUTRACE LIBTRACE STEPS_PROGRAM
"""
import csv
import io
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cttest import check, finish, require_built, scratch_dir  # noqa: E402
from harness import read_truth  # noqa: E402
from rawdump import raw_records  # noqa: E402

sim_dir, cutrace, libtrace, program = sys.argv[1:5]
require_built(os.path.join(sim_dir, "libcuda.so.1"), libtrace, cutrace, program)
tmp = scratch_dir("cutrace-steps-")
KERNEL_US = 40000  # a 160 ms step: a sync waking tens of ms late rarely makes an outlier
S_WORK = "_Z6s_workPf"

# the setup copy's 64 MiB at 0.16 GB/s: 419 ms on the GPU, whatever the host's memcpy takes
env = dict(os.environ, LD_LIBRARY_PATH=sim_dir, CUTRACE_PRELOAD=libtrace,
           SIMCUDA_KERNEL_US=f"s_work={KERNEL_US},default=20", SIMCUDA_PAGEABLE_GBPS="0.16")
for k in ("LD_PRELOAD", "CUTRACE_OUTPUT", "CUTRACE_CAPTURE", "CUTRACE_DELAY", "CUTRACE_DURATION"):
    env.pop(k, None)
SYNC_LATE_NS = 100_000_000  # a sync returning later than this after the GPU: load's doing
ATTEMPTS = 3


def late_syncs(data, truth_path):
    """The cudaDeviceSynchronize calls of the recorded run (its one trace file) that
    returned more than SYNC_LATE_NS after the simulator's truth shows the GPU done with
    every kernel launched before them: [(begin_ns, ms late)]."""
    files = os.listdir(data) if os.path.isdir(data) else []
    if len(files) != 1:
        return []
    recs, names = raw_records(cutrace, os.path.join(data, files[0]))
    truth = read_truth(truth_path)
    late = []
    for r in recs:
        if r["kind"] == "api" and r.get("depth") == 0 and names.get(r["name"]) == "cudaDeviceSynchronize":
            done = max((t["end_ns"] for t in truth if t["enqueue_ns"] < r["begin_ns"]), default=None)
            if done is not None and r["end_ns"] - done > SYNC_LATE_NS:
                late.append((r["begin_ns"], (r["end_ns"] - done) / 1e6))
    return late


for attempt in range(1, ATTEMPTS + 1):
    data = os.path.join(tmp, f"data{attempt}")
    truth_path = os.path.join(tmp, f"truth{attempt}")
    env["SIMCUDA_TRUTH_FILE"] = truth_path
    p = subprocess.run([cutrace, "record", "-q", "-o", data, "--", program, str(KERNEL_US)],
                       env=env, capture_output=True, text=True, timeout=120)
    if not check(p.returncode == 0 and "steps: ok" in p.stdout,
                 f"record: status {p.returncode}, {p.stdout!r}, {p.stderr[-400:]!r}"):
        sys.exit(finish())
    late = late_syncs(data, truth_path)
    if not late or attempt == ATTEMPTS:
        break
    print(f"run {attempt}: load spoiled it: syncs returned late {[f'{ms:.0f} ms' for _, ms in late]}; again")


def steps(*args):
    r = subprocess.run([cutrace, "steps", *args, data], capture_output=True, text=True,
                       timeout=60)
    return r.returncode, r.stdout, r.stderr


def steps_json(*args):
    rc, out, err = steps("--format", "json", *args)
    check(rc == 0 and err == "", f"steps {args}: status {rc}, stderr {err!r}")
    doc = json.loads(out)
    check(len(doc["processes"]) == 1, f"steps {args}: one process")
    return doc["processes"][0]


def reason_keys(reasons):
    return [(r["kind"], r["what"]) for r in reasons]


# ---- automatic choice, planted answers --------------------------------------------------
proc = steps_json()
summ, st = proc["summary"], proc["steps"]
check(proc["range"] == "step" and proc["chosen"] is True
      and proc["how"] == "most frequent outermost range",
      f"chosen range: {proc['range']!r} {proc['chosen']} {proc['how']!r}")
check(proc["status"] == "ok" and proc["device"] == 0 and proc["ignored_ranges"] == 0,
      f"status/device/ignored: {proc['status']} {proc['device']} {proc['ignored_ranges']}")
check(summ["steps"] == 9 and summ["counted"] == 9 and summ["skip"] == 0 and len(st) == 9,
      f"9 steps: {summ['steps']} {summ['counted']} {len(st)}")
STEP_KEYS = {"step", "warmup", "outlier", "begin_ns", "time_ns", "cpu_ns", "gpu_work_ns",
             "gpu_start_ns", "gpu_span_ns", "busy_pct", "device_busy_ns", "idle_ns",
             "idle_by_cause", "kernels", "copies", "sets", "copy_gpu_ns", "cuda_calls",
             "cuda_ns", "syncs", "sync_ns", "top_kernel"}
SUMMARY_KEYS = {"steps", "skip", "counted", "median_ns", "mean_ns", "p90_ns", "min_ns", "max_ns",
                "median_gpu_work_ns", "median_cpu_ns", "median_busy_pct", "setup_ns",
                "setup_reasons", "outlier_factor", "outliers"}
check(set(summ) == SUMMARY_KEYS, f"summary keys: {sorted(set(summ) ^ SUMMARY_KEYS)}")
for s in st:
    i = s["step"]
    check(set(s) == STEP_KEYS, f"step {i} keys: {sorted(set(s) ^ STEP_KEYS)}")
    check(s["kernels"] == 4 and s["syncs"] == 1 and s["sets"] == 0,
          f"step {i}: kernels {s['kernels']} syncs {s['syncs']} sets {s['sets']}")
    check(s["copies"] == (1 if i == 0 else 0), f"step {i}: copies {s['copies']}")
    # 4 launches, 1 sync (+ cudaMalloc and cudaMemcpy in step 0): the outermost calls
    check(s["cuda_calls"] == (7 if i == 0 else 5), f"step {i}: cuda_calls {s['cuda_calls']}")
    tk = s["top_kernel"]
    check(tk and tk["name"] == S_WORK and tk["demangled"] == "s_work(float*)" and tk["count"] == 4,
          f"step {i}: top kernel {tk}")
    check(set(s["idle_by_cause"]) == {"host_wait", "launch_overhead", "sync", "alloc",
                                      "other_stream", "tracer", "other", "external_wait"},
          f"step {i}: idle causes")
    check(s["idle_ns"] == sum(s["idle_by_cause"].values()), f"step {i}: idle sum")
    check(s["gpu_work_ns"] <= s["gpu_span_ns"] and s["device_busy_ns"] + s["idle_ns"] <= s["time_ns"],
          f"step {i}: work {s['gpu_work_ns']} span {s['gpu_span_ns']} busy {s['device_busy_ns']} "
          f"idle {s['idle_ns']} time {s['time_ns']}")
    if i + 1 < len(st):
        check(s["time_ns"] == st[i + 1]["begin_ns"] - s["begin_ns"],
              f"step {i}: time is the interval to the next step's begin")
check(all(st[6]["top_kernel"]["ns"] > s["top_kernel"]["ns"] for s in st if s["step"] != 6),
      "step 6 has the most kernel time (one kernel 5x)")
host_wait3 = st[3]["idle_by_cause"]["host_wait"]


def longest_gap():
    """The longest device gap, its cause, the truth's GPU idle around it and the launching
    thread's longest calls, each relative to the gap's start (for a failure message)."""
    r = subprocess.run([cutrace, "gaps", "--format", "json", "--top", "1", data],
                       capture_output=True, text=True)
    gap = (json.loads(r.stdout)["gaps"] or [None])[0] if r.returncode == 0 else None
    if gap is None:
        return f"no gap: {r.stderr!r}"
    a = gap["start_ns"]
    truth = read_truth(truth_path)
    done = max((t["end_ns"] for t in truth if t["start_ns"] <= a + 1_000_000), default=a)
    calls = [(c["name"], (c["begin_ns"] - a) // 1000, (c["end_ns"] - a) // 1000)
             for th in gap["threads"] if th["launching"] for c in th["longest_calls"]]
    return (f"longest gap {gap['dur_ns'] / 1e6:.1f} ms {gap['cause']}, the truth's GPU done "
            f"{(done - a) / 1e3:+.0f} us from its start; calls (us from its start): {calls}")


if not check(host_wait3 == max(st[3]["idle_by_cause"].values()) and host_wait3 > 0,
             f"step 3 idle is host_wait: {st[3]['idle_by_cause']}"):
    print(longest_gap())

# All GPU work lies inside the steps' intervals (init launches nothing; the last step's
# interval ends with its GPU work): the steps' busy and idle time by cause add up exactly
# to what `cutrace gaps` measures for the device.
r = subprocess.run([cutrace, "gaps", "--format", "json", data], capture_output=True, text=True)
dev = json.loads(r.stdout)["devices"][0]
check(sum(s["device_busy_ns"] for s in st) == dev["busy_ns"],
      f"busy: steps {sum(s['device_busy_ns'] for s in st)} vs gaps {dev['busy_ns']}")
for cause in ("host_wait", "launch_overhead", "sync", "other_stream", "tracer", "other"):
    got = sum(s["idle_by_cause"][cause] for s in st)
    check(got == dev["idle"][cause + "_ns"], f"idle {cause}: steps {got} vs gaps {dev['idle']}")

def late_host(outlier, doc):
    """True when an outlier is explained by the load on the machine, not a plant: a
    synchronize that woke late (its first reason sync idle) or the program's thread
    preempted between launches (host_wait idle; seen in CI at load 4-5 on 2 cores: a
    160 ms step 25% longer), and without that idle it would be no outlier (at the
    factor doc used: 1.25, or --outlier's)."""
    step = doc["steps"][outlier["step"]]
    first = reason_keys(outlier["reasons"])[:1]
    if first not in ([("idle", "sync")], [("idle", "host_wait")]):
        return False
    factor = doc["summary"]["outlier_factor"]
    return step["time_ns"] - step["idle_by_cause"][first[0][1]] <= factor * doc["summary"]["median_ns"]


def outliers_ok(doc, planted):
    """The planted steps are outliers, and any other is the load's (late_host)."""
    outliers = doc["summary"]["outliers"]
    got = {o["step"] for o in outliers}
    return planted <= got and all(late_host(o, doc) for o in outliers if o["step"] not in planted)


outl = summ["outliers"]
check(outliers_ok(proc, {0, 3, 6}),
      f"outliers: {[(o['step'], reason_keys(o['reasons'])) for o in outl]}")
check([o["time_ns"] for o in outl] == sorted((o["time_ns"] for o in outl), reverse=True),
      "outliers slowest first")
check([s["step"] for s in st if s["outlier"]] == sorted(o["step"] for o in outl), "per-step outlier flags")
by_step = {o["step"]: o for o in outl}
# step 0's planted setup is a cudaMalloc and a synchronous copy of 64 MiB: its first
# reason is the new alloc calls, the new memcpy calls or the copy's GPU time (which
# depends on the machine: meson's MALLOC_PERTURB_ makes the simulator's allocation fill
# its memory), the copy is named, and nothing else is but idle time (host_wait around
# the copy; sync when a synchronize wakes late on a loaded machine)
SETUP = {("calls", "alloc"), ("calls", "memcpy"), ("copies", "copies")}


NOISE = {("idle", "sync")}  # a synchronize that woke late on a loaded machine


def setup_ok(keys):
    return (keys and keys[0] in SETUP and set(keys) <= SETUP | NOISE | {("idle", "host_wait")}
            and (("calls", "memcpy") in keys or ("copies", "copies") in keys))


if 0 in by_step:
    check(setup_ok(reason_keys(by_step[0]["reasons"])),
          f"step 0 reasons: {reason_keys(by_step[0]['reasons'])}")
if 3 in by_step:
    k3 = reason_keys(by_step[3]["reasons"])
    check(k3[:1] == [("idle", "host_wait")] and set(k3[1:]) <= NOISE,
          f"step 3 reasons: {reason_keys(by_step[3]['reasons'])}")
if 6 in by_step:
    r6 = by_step[6]["reasons"]
    check(reason_keys(r6)[:1] == [("kernel", S_WORK)] and set(reason_keys(r6)[1:]) <= NOISE
          and r6[0]["demangled"] == "s_work(float*)"
          and r6[0]["count"] == 4 and r6[0]["median_count"] == 4
          and r6[0]["excess_ns"] == r6[0]["ns"] - r6[0]["median_ns"],
          f"step 6 reasons: {r6}")
check(summ["setup_ns"] == st[0]["time_ns"] - summ["median_ns"] and summ["setup_ns"] > 0,
      f"setup_ns {summ['setup_ns']}")
check(setup_ok(reason_keys(summ["setup_reasons"])) and summ["setup_reasons"] == by_step.get(0, {}).get("reasons"),
      f"setup reasons: {reason_keys(summ['setup_reasons'])}")
times = sorted(s["time_ns"] for s in st)
check(summ["median_ns"] == times[4] and summ["p90_ns"] == times[8] and summ["min_ns"] == times[0]
      and summ["max_ns"] == times[8] and summ["mean_ns"] == sum(times) // 9,
      f"statistics: {summ}")

# ---- --skip and --outlier ---------------------------------------------------------------
sk = steps_json("--skip", "1")
check(sk["summary"]["counted"] == 8 and sk["steps"][0]["warmup"] is True
      and outliers_ok(sk, {3, 6})
      and 0 not in [o["step"] for o in sk["summary"]["outliers"]]
      and sk["summary"]["setup_ns"] > 0,
      f"--skip 1: counted {sk['summary']['counted']}, outliers "
      f"{[o['step'] for o in sk['summary']['outliers']]}")
o3 = steps_json("--outlier", "3")  # step 3: 760 ms, 4.75x; step 6: 320 ms, 2x (step 0: it depends)
o3_steps = [o["step"] for o in o3["summary"]["outliers"]]
# step 6 (or another) past 3x only by what load adds (at load 17-37 a sync or the
# thread's return to the CPU can take 160 ms more): late_host at factor 3
check(o3["summary"]["outlier_factor"] == 3 and 3 in o3_steps
      and all(o["step"] in (0, 3) or late_host(o, o3) for o in o3["summary"]["outliers"]),
      f"--outlier 3: {[(o['step'], reason_keys(o['reasons'])) for o in o3['summary']['outliers']]}")

# ---- --range: exact, glob, nested --------------------------------------------------------
g = steps_json("--range", "st*")
check(g["range"] == "st*" and g["chosen"] is False and g["how"] == "--range"
      and g["summary"]["steps"] == 9, f"--range st*: {g['range']} {g['summary']['steps']}")
f = steps_json("--range", "fwd")
check(f["summary"]["steps"] == 18 and all(s["kernels"] == 2 for s in f["steps"]),
      f"--range fwd: {f['summary']['steps']} steps")
a = steps_json("--range", "*")
check(a["summary"]["steps"] == 10 and a["ignored_ranges"] == 18,
      f"--range '*': init + 9 steps, 18 nested fwd left out: {a['summary']['steps']} "
      f"{a['ignored_ranges']}")

# ---- text and CSV -----------------------------------------------------------------------
rc, out, err = steps()
check(rc == 0 and 'steps: 9 instances of NVTX range "step" (most frequent outermost range)' in out
      and f"outliers (> 1.25x the median): {len(outl)}\n" in out and "\nsetup: step 0 took " in out
      and "  step 3: " in out and "host_wait idle +" in out and "kernel s_work(float*) +" in out,
      f"text: status {rc}\n{out}")
rc, out, err = steps("--format", "csv")
rows = list(csv.DictReader(io.StringIO(out)))
check(rc == 0 and len(rows) == 9 and [r["outlier"] for r in rows] == ["1" if s["outlier"] else "0" for s in st]
      and [r["outlier"] for r in rows][0:7:3] == ["1", "1", "1"]
      and rows[0]["copies"] == "1" and rows[3]["top_kernel"] == S_WORK
      and int(rows[3]["idle_host_wait_ns"]) == host_wait3,
      f"csv: status {rc}, {len(rows)} rows")

# ---- errors -----------------------------------------------------------------------------
for args, want in [(["--range", "nosuch"], "no NVTX range matches 'nosuch'"),
                   (["--skip", "x"], "--skip takes a count"),
                   (["--outlier", "0.5"], "--outlier takes a factor"),
                   (["--format", "xml"], "--format takes text, csv or json"),
                   (["--bogus"], "unknown option '--bogus'")]:
    rc, out, err = steps(*args)
    check(rc == 2 and err.count("\n") == 1 and want in err and out == "",
          f"{args}: status {rc}, stderr {err!r}, stdout {out[:80]!r}")
r = subprocess.run([cutrace, "steps", "--range"], capture_output=True, text=True)
check(r.returncode == 2 and r.stderr.startswith("cutrace steps: --range needs a value")
      and r.stderr.count("\n") == 1, f"--range without value: {r.returncode} {r.stderr!r}")

sys.exit(finish())
