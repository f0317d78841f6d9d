#!/usr/bin/env python3
"""Library setup the GPU waits for, end to end on the simulated GPU
(programs/libsetup.cu): cublasLtCreate and cublasCreate_v2, a kernel and a wait for it,
then cublasLtMatmulAlgoGetHeuristic planted 30 ms slow (SIMCUBLAS_HEURISTIC_US=30000, a busy
wait) before the cublasLtMatmul. 30 ms, not 3: the gap must be at least half inside the
call, and on a loaded machine the host time around it (the sync's return, the matmul's
launch) can come near 3 ms.

Asserted: the program prints the same result traced and untraced; `cutrace report
--format json` lists each of the three setup calls once, without errors, the heuristic
at least its planted 30 ms; `cutrace gaps --format json` has exactly one gap named
inside_call cublasLtMatmulAlgoGetHeuristic, a host_wait gap, with at least the planted
30 ms inside it and no more than the gap, and at least half of it; the text names it
(`host_wait (inside cublasLtMatmulAlgoGetHeuristic: ...)`); `gaps --format csv` has the
same call and time in that gap's row (inside_call, inside_ns), and none on stream rows.

usage: test_libsetup.py SIM_DIR CUTRACE LIBTRACE LIBSETUP
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
from harness import record_one_file  # noqa: E402

MS = 1000000
HEURISTIC = "cublasLtMatmulAlgoGetHeuristic"
sim_dir, cutrace, libtrace, program = sys.argv[1:5]
require_built(os.path.join(sim_dir, "libcuda.so.1"), libtrace, cutrace, program)
tmp = scratch_dir("cutrace-libsetup-")
PLANTED_MS = 30
env_extra = {"SIMCUBLAS_HEURISTIC_US": str(PLANTED_MS * 1000)}

plain = subprocess.run([program], env=dict(os.environ, LD_LIBRARY_PATH=sim_dir, **env_extra),
                       capture_output=True, text=True, timeout=60)
check(plain.returncode == 0 and plain.stdout == "libsetup: ok D[0,3]=12\n",
      f"untraced: status {plain.returncode}, {plain.stdout!r} {plain.stderr!r}")
path = record_one_file(cutrace, libtrace, sim_dir, os.path.join(tmp, "libsetup"), [program],
                       plain.stdout or "libsetup: ok", env_extra)
if path:
    p = subprocess.run([cutrace, "report", "--format", "json", path], capture_output=True,
                       text=True, timeout=60)
    check(p.returncode == 0, f"report: status {p.returncode}: {p.stderr}")
    apis = {r["name"]: r for r in json.loads(p.stdout).get("apis", [])} if p.returncode == 0 else {}
    for name in ("cublasLtCreate", "cublasCreate_v2", HEURISTIC):
        r = apis.get(name, {})
        check(r.get("calls") == 1 and r.get("errors") == 0,
              f"report: {name}: one call, no error: {r or 'missing'}")
    check(apis.get(HEURISTIC, {}).get("total_ns", 0) >= PLANTED_MS * MS,
          f"report: {HEURISTIC} at least the planted {PLANTED_MS} ms: {apis.get(HEURISTIC)}")

    p = subprocess.run([cutrace, "gaps", "--format", "json", path], capture_output=True,
                       text=True, timeout=60)
    check(p.returncode == 0, f"gaps: status {p.returncode}: {p.stderr}")
    gaps = json.loads(p.stdout).get("gaps", []) if p.returncode == 0 else []
    named = [g for g in gaps if (g.get("inside_call") or {}).get("api") == HEURISTIC]
    if check(len(named) == 1, f"gaps: one gap inside {HEURISTIC}: "
             f"{[(g['dur_ns'], g['cause'], g.get('inside_call')) for g in gaps]}"):
        g = named[0]
        ns = g["inside_call"]["ns"]
        check(g["cause"] == "host_wait" and PLANTED_MS * MS <= ns <= g["dur_ns"] and 2 * ns >= g["dur_ns"],
              f"gaps: the heuristic's gap: host_wait, {PLANTED_MS} ms <= {ns} ns inside <= {g['dur_ns']} ns: {g['cause']}")
    p = subprocess.run([cutrace, "gaps", path], capture_output=True, text=True, timeout=60)
    lines = [x for x in p.stdout.splitlines() if f": host_wait (inside {HEURISTIC}: " in x]
    check(p.returncode == 0 and len(lines) == 1, f"gaps text: one line inside {HEURISTIC}: {p.stdout}")
    # CSV: the same gap's row names the call (inside_call, inside_ns as JSON's)
    p = subprocess.run([cutrace, "gaps", "--format", "csv", "--tables", "gaps", path],
                       capture_output=True, text=True, timeout=60)
    rows = list(csv.DictReader(io.StringIO(p.stdout, newline=""))) if p.returncode == 0 else []
    got = [(int(r["dur_ns"]), int(r["inside_ns"])) for r in rows if r.get("inside_call") == HEURISTIC]
    want = [(g["dur_ns"], g["inside_call"]["ns"]) for g in named]
    check(p.returncode == 0 and got == want and want,
          f"gaps csv: rows inside {HEURISTIC} {got}, JSON's {want} ({p.returncode} {p.stderr})")
    check(all(r["inside_call"] == "" and r["inside_ns"] == "" for r in rows if r["scope"] == "stream"),
          "gaps csv: stream rows have no inside_call")
sys.exit(finish())
