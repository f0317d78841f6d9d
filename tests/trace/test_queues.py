#!/usr/bin/env python3
"""Launch delay and queue depth per stream, end to end on the simulated GPU
(programs/queues.cu): a starved stream (20 tiny 1 us kernels, each launched after the
CPU slept) and a fed stream (40 kernels of 5 ms launched back to back).
`cutrace report --tables streams` must give, planted: starved: every launch found the
queue empty (depth 1), every kernel ran shorter than its launch call, no launch delay;
fed: depths 1..40 (median 20, max 40, one empty), launch delays up to 39 kernel
durations, no short kernel. Every number must also equal what the trace's own API and
GPU records give (computed here by brute force), in JSON, text and CSV; and
`dump --chrome --queues` must draw a counter per stream equal to the operations queued
at each of its changes.

usage: test_queues.py SIM_DIR CUTRACE LIBTRACE QUEUES_PROGRAM
"""
import csv
import io
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from cttest import check, finish, require_built, scratch_dir  # noqa: E402
from rawdump import raw_records  # noqa: E402

sim_dir, cutrace, libtrace, program = sys.argv[1:5]
require_built(os.path.join(sim_dir, "libcuda.so.1"), libtrace, cutrace, program)
FEW, DEEP, HEAVY_NS = 20, 40, 5_000_000
tmp = scratch_dir("cutrace-queues-")
env = dict(os.environ, LD_LIBRARY_PATH=sim_dir, CUTRACE_PRELOAD=libtrace,
           SIMCUDA_KERNEL_US="tiny=1,heavy=5000", SIMCUDA_LAUNCH_US="2")
for k in ("LD_PRELOAD", "CUTRACE_OUTPUT"):
    env.pop(k, None)
data = os.path.join(tmp, "queues.data")
p = subprocess.run([cutrace, "record", "-q", "-o", data, "--", program, str(FEW), str(DEEP)],
                   env=env, capture_output=True, text=True, timeout=120)
check(p.returncode == 0 and "queues: ok" in p.stdout, f"traced queues: {p.returncode} {p.stderr[-300:]}")
files = [f for f in os.listdir(data) if f.endswith(".ctr")] if os.path.isdir(data) else []
if not check(len(files) == 1, f"one trace file: {files}"):
    sys.exit(finish())
path = os.path.join(data, files[0])


def run(*args):
    p = subprocess.run([cutrace, *args], capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"cutrace {' '.join(args)}: exit {p.returncode} {p.stderr[-300:]}")
    return p.stdout


# ---- what the trace's own records say -------------------------------------------------
recs, strings = raw_records(cutrace, path)
calls = {r["corr"]: r for r in recs if r["kind"] == "api"}
ops = {}
for r in recs:
    if r["kind"] == "gpu":
        ops.setdefault((r["device"], r["stream"]), []).append(r)
expect = {}
for key, lst in ops.items():
    depths, delays, short, kernels, in_call = [], [], 0, 0, 0
    for op in lst:
        call = calls.get(op["corr"])
        if not call:
            continue
        b = call["begin_ns"]
        depths.append(1 + sum(1 for o in lst if o is not op and o["start_ns"] < op["start_ns"]
                              and o["end_ns"] > b))
        delays.append(max(0, op["start_ns"] - call["end_ns"]))
        in_call += op["start_ns"] < call["end_ns"]
        if op["type"] not in (2, 3):  # not a copy or a set
            kernels += 1
            short += op["end_ns"] - op["start_ns"] < call["end_ns"] - call["begin_ns"]
    expect[key] = dict(ops=len(lst), gpu_ns=sum(o["end_ns"] - o["start_ns"] for o in lst),
                       depths=depths, delays=delays, short=short, kernels=kernels,
                       in_call=in_call)


def name_of(lst):
    return strings.get(lst[0]["name"], "")


starved = [k for k, v in ops.items() if "tiny_step" in name_of(v)]
fed = [k for k, v in ops.items() if "heavy_step" in name_of(v)]
if not check(len(starved) == 1 and len(fed) == 1, f"one stream each: {starved} {fed}"):
    sys.exit(finish())
starved, fed = starved[0], fed[0]

# ---- JSON -----------------------------------------------------------------------------
doc = json.loads(run("report", "--format", "json", "--tables", "streams", path))
rows = {(r["device"], r["stream"]): r for r in doc.get("streams", [])}
check(set(rows) == set(ops), f"a row per stream with work: {sorted(rows)} vs {sorted(ops)}")
for key, e in expect.items():
    r = rows.get(key, {})
    got = (r.get("ops"), r.get("gpu_ns"), r.get("with_call"), r.get("kernels"),
           r.get("short_kernels"), r.get("started_in_call"))
    want = (e["ops"], e["gpu_ns"], len(e["depths"]), e["kernels"], e["short"], e["in_call"])
    check(got == want, f"stream {key}: ops, gpu_ns, with_call, kernels, short, in_call {got} == {want}")
    q = r.get("queue_depth", {})
    check(q.get("max") == max(e["depths"]) and r.get("empty_queue") == e["depths"].count(1),
          f"stream {key}: depth max {q.get('max')} empty {r.get('empty_queue')} vs records")
    check(abs(q.get("avg", -1) - sum(e["depths"]) / len(e["depths"])) < 0.006,
          f"stream {key}: depth avg {q.get('avg')}")
    d = r.get("launch_delay", {})
    check(d.get("max_ns") == max(e["delays"]) and
          d.get("avg_ns") == sum(e["delays"]) // len(e["delays"]),
          f"stream {key}: delay max/avg {d} vs records {max(e['delays'])}")

s, f = rows.get(starved, {}), rows.get(fed, {})
# planted: the starved stream
check(s.get("ops") == FEW and s.get("queue_depth", {}).get("max") == 1 and s.get("empty_queue") == FEW,
      f"starved: every launch found the queue empty: {s.get('queue_depth')} {s.get('empty_queue')}")
check(s.get("short_kernels") == FEW and s.get("kernels") == FEW,
      f"starved: every 1 us kernel shorter than its launch call: {s.get('short_kernels')}")
check(s.get("empty_queue_pct") == 100.0, f"starved: empty 100%: {s.get('empty_queue_pct')}")
# planted: the fed stream
fq = f.get("queue_depth", {})
check(f.get("ops") == DEEP and fq.get("max") == DEEP and fq.get("median") == DEEP // 2 and
      f.get("empty_queue") == 1, f"fed: depths 1..{DEEP}: {fq} empty {f.get('empty_queue')}")
check(sorted(expect[fed]["depths"]) == list(range(1, DEEP + 1)), "fed: the records give depths 1..DEEP")
check(f.get("short_kernels") == 0 and f.get("kernels") == DEEP, f"fed: no short kernel {f.get('short_kernels')}")
fd = f.get("launch_delay", {})
check((DEEP - 2) * HEAVY_NS < fd.get("max_ns", 0) <= (DEEP - 1) * HEAVY_NS,
      f"fed: the last launch waited 38-39 kernel durations: {fd.get('max_ns')}")
check(fd.get("median_ns", 0) > (DEEP // 2 - 2) * HEAVY_NS * 0.97, f"fed: median delay {fd}")
check(f.get("busy_pct", 0) > 99.9, f"fed: the stream never idled {f.get('busy_pct')}")

# ---- text and CSV agree -----------------------------------------------------------------
text = run("report", "--tables", "streams", path)
lines = [ln for ln in text.splitlines() if ln.rstrip().endswith(f"(pid {doc['files'][0]['pid']})")]
check(len(lines) == 2, f"two text rows: {text}")
fed_line = [ln for ln in lines if f"{fed[0]}/{fed[1]} (pid" in ln]
check(bool(fed_line) and fed_line[0].split()[-7:-3] == ["20", str(DEEP), "2.5", f"0/{DEEP}"],
      f"fed text row: queue max, empty %, short: {fed_line}")
rows_csv = list(csv.DictReader(io.StringIO(run("report", "--format", "csv", "--tables", "streams", path))))
by = {(int(r["device"]), int(r["stream"])): r for r in rows_csv}
check(set(by) == set(ops) and int(by[fed]["depth_max"]) == DEEP and int(by[starved]["empty_queue"]) == FEW
      and int(by[starved]["short_kernels"]) == FEW, f"csv rows: {rows_csv}")
# the default report has the table; --tables without it does not
check("Streams (" in run("report", path) and "Streams (" not in run("report", "--tables", "kernels", path),
      "streams table shown by default, not when not asked for")

# ---- dump --chrome --queues: a counter per stream, equal to the records at every change ----
out = os.path.join(tmp, "q.json")
run("dump", "--chrome", "--queues", "-o", out, path)
try:
    events = json.load(open(out))["traceEvents"]
except (OSError, ValueError) as e:
    events = []
    check(False, f"chrome JSON: {e}")
series = {}
for e in events:
    if e.get("ph") == "C" and e.get("cat") == "queue":
        series.setdefault((e["pid"], e["name"]), []).append((round(e["ts"] * 1000), e["args"]["depth"]))
check(sorted(series) == sorted((d, f"stream {s} queue") for d, s in ops),
      f"one counter track per stream: {sorted(series)}")
for (dev, name), pts in series.items():
    stream = int(name.split()[1])
    lst = [(calls[o["corr"]]["begin_ns"], o["end_ns"]) for o in ops.get((dev, stream), [])
           if o["corr"] in calls]
    wrong = [(t, v) for t, v in pts if v != sum(1 for b, e in lst if b <= t < e)]
    check(not wrong, f"{name}: counter equals ops queued at each change: {wrong[:3]}")
    check(all(pts[i][0] <= pts[i + 1][0] for i in range(len(pts) - 1)) and pts[-1][1] == 0,
          f"{name}: in time order, ends empty")
check(max(v for _, v in series.get((fed[0], f"stream {fed[1]} queue"), [(0, 0)])) == DEEP and
      len(series.get((fed[0], f"stream {fed[1]} queue"), [])) == 2 * DEEP, "fed counter: 1..40..0")
check(len(series.get((starved[0], f"stream {starved[1]} queue"), [])) == 2 * FEW, "starved counter: 1,0 per op")
plain = os.path.join(tmp, "plain.json")
run("dump", "--chrome", "-o", plain, path)
check('"cat":"queue"' not in open(plain).read(), "no queue counters without --queues")
p = subprocess.run([cutrace, "dump", "--queues", path], capture_output=True, text=True, timeout=60)
check(p.returncode == 2 and "--queues needs --chrome" in p.stderr and p.stderr.count("\n") == 1,
      f"--queues without --chrome: one line, exit 2: {p.returncode} {p.stderr}")
sys.exit(finish())
