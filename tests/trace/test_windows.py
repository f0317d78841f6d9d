#!/usr/bin/env python3
"""Recording windows, end to end on the simulated GPU (programs/windows.cu).

--capture=profiler: only what happens between cudaProfilerStart and cudaProfilerStop
is recorded (4 w_inside, 2 w_second, one graph launch, 2 captured w_captured, the
profiler calls themselves); nothing of w_before / w_after; three PAUSE records
(before the first start, between the windows, open after the last stop) whose
times bracket the profiler calls; a capture begun while paused is still known when
recording resumes (its launches are flagged captured, its graph has exactly its two
kernels); a graph instantiated while paused has its inventory (corr 0) and its
launch names it; NVTX "step" (opened paused, closed in a window) is written,
"warmup" and "cooldown" (wholly paused) are not; gaps leaves out time that touches
a pause (unrecorded_ns, pauses, pause_why) and no reported gap crosses one; the
Chrome trace has a "not recorded" slice per pause; info counts them.
--capture=nvtx:step: only while the NVTX range "step" is open (2 w_captured, 4
w_inside, the graph launch), two PAUSE records "nvtx" around it.
Without --capture everything is recorded and there is no PAUSE record.
--delay 1: only the launches made after 1 s (w_late, 2.5 s after main began), one
PAUSE "delay" of exactly 1 s from the process start. --duration 1: only those before
(w_early, at once: a start-up slower than 1 s on a loaded machine would break this),
one open PAUSE "duration" beginning exactly 1 s after the start.
Bad option values: status 2 and one line; a bad CUTRACE_CAPTURE: one warning line.

usage: test_windows.py SIM_DIR CUTRACE LIBTRACE WINDOWS_PROGRAM
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from cttest import check, finish, require_built, scratch_dir  # noqa: E402
from rawdump import kernel_identifier, raw_records  # noqa: E402

sim_dir, cutrace, libtrace, program = sys.argv[1:5]
require_built(os.path.join(sim_dir, "libcuda.so.1"), libtrace, cutrace, program)
tmp = scratch_dir("cutrace-windows-")
CAPTURED = 0x2
GPU_GRAPH = 5


def env(extra=None):
    e = dict(os.environ, LD_LIBRARY_PATH=sim_dir, CUTRACE_PRELOAD=libtrace,
             SIMCUDA_KERNEL_US="default=20")
    for k in ("LD_PRELOAD", "CUTRACE_OUTPUT", "CUTRACE_CAPTURE", "CUTRACE_DELAY",
              "CUTRACE_DURATION"):
        e.pop(k, None)
    e.update(extra or {})
    return e


def record(tag, opts, args, extra=None):
    """Runs the program under cutrace record; returns (records, strings, path, stderr)."""
    data = os.path.join(tmp, tag)
    p = subprocess.run([cutrace, "record", "-q", "-o", data, *opts, "--", program, *args],
                       env=env(extra), capture_output=True, text=True, timeout=120)
    check(p.returncode == 0 and f"windows {args[0]}: ok" in p.stdout,
          f"{tag}: status {p.returncode}, stdout {p.stdout!r}, stderr {p.stderr[-400:]!r}")
    files = sorted(f for f in os.listdir(data) if f.endswith(".ctr")) if os.path.isdir(data) else []
    if not check(len(files) == 1, f"{tag}: one trace file expected: {files}"):
        sys.exit(finish())
    path = os.path.join(data, files[0])
    recs, strings = raw_records(cutrace, path)
    return recs, strings, path, p.stderr


def named(recs, strings, kind, field):
    return [(strings.get(r[field], ""), r) for r in recs if r["kind"] == kind]


def kernels_launched(recs, strings):
    out = {}
    for name, _ in named(recs, strings, "launch", "kernel"):
        k = kernel_identifier(name)
        out[k] = out.get(k, 0) + 1
    return out


def pauses_of(recs, strings):
    """Complete pauses [(begin, end or None, why)] merged from open and closing records."""
    out = {}
    for why, r in named(recs, strings, "pause", "why"):
        cur = out.get(r["begin_ns"])
        if cur is None or r["end_ns"]:
            out[r["begin_ns"]] = (r["begin_ns"], r["end_ns"] or None, why)
    return [out[b] for b in sorted(out)]


# ---- --capture=profiler ----------------------------------------------------------------
recs, strings, path, _ = record("profiler", ["--capture=profiler"], ["profiler"])
got = kernels_launched(recs, strings)
check(got == {"w_captured": 2, "w_inside": 4, "w_second": 2},
      f"kernels launched in the windows: {got}")
apis = named(recs, strings, "api", "name")
calls = {}
for name, _ in apis:
    calls[name] = calls.get(name, 0) + 1
check(calls.get("cudaProfilerStart") == 2 and calls.get("cudaProfilerStop") == 2,
      f"profiler calls recorded: {calls}")
captured = [r for name, r in apis if r["flags"] & CAPTURED]
check(len(captured) == 2, f"{len(captured)} calls flagged captured, want the 2 w_captured launches")
gpu = [r for r in recs if r["kind"] == "gpu"]
check(len(gpu) == 7 and sum(r["type"] == GPU_GRAPH for r in gpu) == 1,
      f"GPU records: {len(gpu)} ({sum(r['type'] == GPU_GRAPH for r in gpu)} graph), want 7 (1 graph)")

graphs = {r["exec"]: r for r in recs if r["kind"] == "graph"}
inventory = {r["exec"]: (kernel_identifier(strings.get(r["name"], "")), r["count"])
             for r in recs if r["kind"] == "graph_kernel"}
launched = [r["exec"] for r in recs if r["kind"] == "graph_launch"]
corr_name = {r["corr"]: name for name, r in apis}
paused_graph = [e for e, g in graphs.items() if g["corr"] == 0]
check(len(graphs) == 2 and len(paused_graph) == 1
      and inventory.get(paused_graph[0]) == ("w_graph", 2)
      and graphs[paused_graph[0]]["kernels"] == 2 and launched == paused_graph,
      f"graph instantiated while paused: GRAPH {graphs}, kernels {inventory}, launches {launched}")
window_graph = [e for e, g in graphs.items() if g["corr"]]
check(len(window_graph) == 1 and inventory.get(window_graph[0]) == ("w_captured", 2)
      and graphs[window_graph[0]]["nodes"] == 2
      and corr_name.get(graphs[window_graph[0]]["corr"]) == "cudaGraphInstantiate",
      f"graph captured across the pause: GRAPH {graphs}, kernels {inventory}")

pauses = pauses_of(recs, strings)
process = next(r for r in recs if r["kind"] == "process")
starts = sorted(r["begin_ns"] for name, r in apis if name == "cudaProfilerStart")
stops = sorted(r["begin_ns"] for name, r in apis if name == "cudaProfilerStop")
if check(len(pauses) == 3 and all(p[2] == "profiler" for p in pauses),
         f"pauses {pauses}, want 3 of reason profiler"):
    (b0, e0, _), (b1, e1, _), (b2, e2, _) = pauses
    check(b0 == process["start_ns"] and e0 is not None and e0 <= starts[0],
          f"first pause [{b0}, {e0}) from the tracer start to cudaProfilerStart ({starts[0]})")
    check(stops[0] <= b1 and e1 is not None and e1 <= starts[1],
          f"second pause [{b1}, {e1}) between cudaProfilerStop ({stops[0]}) and start ({starts[1]})")
    check(stops[1] <= b2 and e2 is None, f"last pause [{b2}, {e2}) open after the last stop")
    inside = [(name, r["begin_ns"]) for name, r in apis
              if any(b <= r["begin_ns"] < (e or 1 << 64) for b, e, _ in pauses)]
    check(not inside, f"API calls that began inside a pause: {inside}")
ranges = sorted(name for name, _ in named(recs, strings, "range", "name"))
check(ranges == ["step"], f"NVTX ranges {ranges}, want only step")

p = subprocess.run([cutrace, "gaps", "--format", "json", path], capture_output=True, text=True,
                   timeout=120)
try:
    doc = json.loads(p.stdout)
except ValueError:
    doc = {}
if check(p.returncode == 0 and doc.get("processes"), f"gaps json: {p.returncode} {p.stderr}"):
    pr, dev = doc["processes"][0], doc["devices"][0]
    check(pr["pauses"] == 3 and pr["pause_why"] == "profiler" and pr["paused_ns"] > 0,
          f"gaps process pauses: {pr}")
    span = dev["last_ns"] - dev["first_ns"]
    check(dev["unrecorded_ns"] > 0 and dev["idle_ns"] + dev["busy_ns"] + dev["unrecorded_ns"] == span,
          f"device usage: idle + busy + unrecorded = span: {dev}")
    crossing = [g for g in doc.get("gaps", []) for b, e, _ in pauses
                if g["start_ns"] <= (e or 1 << 64) and b <= g["end_ns"]]
    check(not crossing, f"gaps reported across a pause: {crossing}")
p = subprocess.run([cutrace, "gaps", "--summary", path], capture_output=True, text=True, timeout=120)
check("not recorded: the tracer paused" in p.stdout, f"gaps summary: {p.stdout}")
chrome = os.path.join(tmp, "profiler.json")
p = subprocess.run([cutrace, "dump", "--chrome", "-o", chrome, path], capture_output=True, text=True,
                   timeout=120)
slices = []
if check(p.returncode == 0, f"dump --chrome: {p.stderr}"):
    with open(chrome) as f:
        slices = [e for e in json.load(f)["traceEvents"] if e.get("cat") == "cutrace"]
check(len(slices) == 3 and all(e["name"] == "not recorded (profiler)" for e in slices),
      f"chrome pause slices: {slices}")
p = subprocess.run([cutrace, "report", "--format", "json", path], capture_output=True, text=True,
                   timeout=120)
check(p.returncode == 0 and json.loads(p.stdout).get("pauses") == 3, f"report json pauses: {p.stdout[:200]}")
p = subprocess.run([cutrace, "info", path], capture_output=True, text=True, timeout=120)
check("paused         3 times (first: profiler)" in p.stdout, f"info: {p.stdout}")

# ---- --capture=nvtx:step: only while the NVTX range "step" is open -----------------------
recs, strings, path, _ = record("nvtx", ["--capture=nvtx:step"], ["profiler"])
got = kernels_launched(recs, strings)
check(got == {"w_captured": 2, "w_inside": 4}, f"kernels launched inside range step: {got}")
pauses = pauses_of(recs, strings)
push = [r for name, r in named(recs, strings, "range", "name") if name == "step"]
if check(len(pauses) == 2 and all(p[2] == "nvtx" for p in pauses) and len(push) == 1,
         f"pauses {pauses} (want 2 of reason nvtx), step ranges {push}"):
    (b0, e0, _), (b1, e1, _) = pauses
    check(e0 is not None and e0 <= push[0]["end_ns"] and push[0]["end_ns"] <= b1 and e1 is None,
          f"pauses [{b0}, {e0}) and [{b1}, {e1}) around range step {push[0]}")
ranges = sorted(name for name, _ in named(recs, strings, "range", "name"))
check(ranges == ["step"], f"NVTX ranges {ranges}, want only step")
launched = [r["exec"] for r in recs if r["kind"] == "graph_launch"]
paused_graph = [r["exec"] for r in recs if r["kind"] == "graph" and r["corr"] == 0]
check(len(launched) == 1 and launched == paused_graph,
      f"the graph launched in the range was instantiated before it: {launched} vs {paused_graph}")

# ---- everything recorded without --capture ---------------------------------------------
recs, strings, _, _ = record("all", [], ["profiler"])
got = kernels_launched(recs, strings)
check(got == {"w_before": 3, "w_graph": 2, "w_captured": 2, "w_inside": 4, "w_after": 3,
              "w_second": 2},
      f"kernels launched without --capture: {got}")
check(not [r for r in recs if r["kind"] == "pause"], "PAUSE records without a window setting")

# ---- --delay and --duration ------------------------------------------------------------
recs, strings, _, _ = record("delay", ["--delay", "1"], ["timed", "2.5"])
got = kernels_launched(recs, strings)
check(got == {"w_late": 3}, f"kernels after a 1 s delay: {got}")
pauses = pauses_of(recs, strings)
process = next(r for r in recs if r["kind"] == "process")
check(pauses == [(process["start_ns"], process["start_ns"] + 1000000000, "delay")],
      f"delay pause {pauses} (start {process['start_ns']})")

recs, strings, _, _ = record("duration", ["--duration", "1"], ["timed", "2.5"])
got = kernels_launched(recs, strings)
check(got == {"w_early": 3}, f"kernels within a 1 s duration: {got}")
pauses = pauses_of(recs, strings)
process = next(r for r in recs if r["kind"] == "process")
check(pauses == [(process["start_ns"] + 1000000000, None, "duration")],
      f"duration pause {pauses} (start {process['start_ns']})")

# ---- a profiler range the program never opens: nothing recorded, and gaps says why -----
recs, strings, path, _ = record("never", ["--capture=profiler"], ["timed", "0"])
check(not kernels_launched(recs, strings), f"kernels without cudaProfilerStart: {kernels_launched(recs, strings)}")
p = subprocess.run([cutrace, "gaps", "--summary", path], capture_output=True, text=True, timeout=60)
check("the tracer was paused (profiler); did the program call cudaProfilerStart?" in p.stdout,
      f"gaps summary of a trace never recorded: {p.stdout!r}")

# ---- a delay ending into a closed profiler range: two pauses, one reason each -----------
recs, strings, path, _ = record("delayprof", ["--capture=profiler", "--delay", "0.2"], ["timed", "0.3"])
pauses = pauses_of(recs, strings)
process = next(r for r in recs if r["kind"] == "process")
t = process["start_ns"] + 200000000
check(pauses == [(process["start_ns"], t, "delay"), (t, None, "profiler")] and
      not kernels_launched(recs, strings), f"delay then profiler pauses: {pauses}")

# ---- bad values ------------------------------------------------------------------------
for opts, want in ((["--capture=sometimes"], "--capture takes all, profiler or nvtx:NAME"),
                   (["--capture=nvtx:"], "--capture takes all, profiler or nvtx:NAME"),
                   (["--delay", "soon"], "--delay takes a number of seconds"),
                   (["--duration=-1"], "--duration takes a number of seconds")):
    p = subprocess.run([cutrace, "record", "-q", "-o", os.path.join(tmp, "bad"), *opts, "--",
                        program, "profiler"], env=env(), capture_output=True, text=True, timeout=60)
    check(p.returncode == 2 and want in p.stderr and len(p.stderr.strip().splitlines()) == 1,
          f"record {opts}: status {p.returncode}, stderr {p.stderr!r}")
recs, strings, _, err = record("badenv", [], ["profiler"], {"CUTRACE_CAPTURE": "sometimes"})
check("CUTRACE_CAPTURE='sometimes' is not all, profiler or nvtx:NAME" in err and len(kernels_launched(recs, strings)) == 6,
      f"bad CUTRACE_CAPTURE: warning {err!r}, kernels {kernels_launched(recs, strings)}")
sys.exit(finish())
