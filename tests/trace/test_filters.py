#!/usr/bin/env python3
"""The selection options on a real program traced on two simulated GPUs
(programs/filters.cu, SIMCUDA_DEVICES=2): device 0 runs 3 flt_alpha and a copy on
stream A and 2 flt_beta<int> on stream B, device 1 runs 4 flt_gamma and a memset on
stream C.

Asserted, exactly: the kernels, copies and sets report keeps for --device, --stream
(ids as report's streams table gives them) and --kernel (substring of the demangled
name; a glob matches all of it, "void flt_beta<int>(float*)" included), the CUDA calls
all kept; gaps on one device is that device's rows of the unfiltered run; dump --csv and
--chrome keep the selected GPU rows and every call; bad values are one line, status 2.

usage: test_filters.py SIM_DIR CUTRACE LIBTRACE FILTERS
"""
import collections
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

sim_dir, cutrace, libtrace, program = sys.argv[1:5]
require_built(os.path.join(sim_dir, "libcuda.so.1"), libtrace, cutrace, program)
tmp = scratch_dir("cutrace-filters-")
ALPHA, BETA, GAMMA = "flt_alpha(float*)", "void flt_beta<int>(float*)", "flt_gamma(float*)"


def run(*args):
    p = subprocess.run([cutrace, *args], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def report(*sel):
    """(kernels: name -> calls, memory operations: kind -> count, calls) of report."""
    rc, out, err = run("report", "--format", "json", *sel, path)
    check(rc == 0, f"report {sel}: status {rc} {err!r}")
    try:
        d = json.loads(out)
    except ValueError:
        return {}, {}, 0
    return ({k["name"]: k["calls"] for k in d["kernels"]},
            {m["kind"]: m["count"] for m in d["memcpy"]}, d["calls"])


env = {"SIMCUDA_DEVICES": "2", "SIMCUDA_KERNEL_US": "default=50"}
path = record_one_file(cutrace, libtrace, sim_dir, os.path.join(tmp, "filters"), [program],
                       "filters: ok", env)
if path:
    kernels, memops, calls = report()
    check(kernels == {ALPHA: 3, BETA: 2, GAMMA: 4} and memops == {"HtoD": 1, "memset": 1},
          f"unfiltered: {kernels} {memops}")
    rc, out, _ = run("report", "--format", "json", path)
    streams = json.loads(out)["streams"] if rc == 0 else []
    by_ops = {(s["device"], s["ops"]): s["stream"] for s in streams}
    check(sorted(by_ops) == [(0, 2), (0, 4), (1, 5)], f"three streams: {sorted(by_ops)}")
    a, b, c = by_ops.get((0, 4), -1), by_ops.get((0, 2), -1), by_ops.get((1, 5), -1)
    cases = [
        (["--device", "1"], {GAMMA: 4}, {"memset": 1}),
        (["--device", "0"], {ALPHA: 3, BETA: 2}, {"HtoD": 1}),
        (["--device", "0,1"], {ALPHA: 3, BETA: 2, GAMMA: 4}, {"HtoD": 1, "memset": 1}),
        (["--stream", str(b)], {BETA: 2}, {}),
        (["--stream", f"{a},{c}"], {ALPHA: 3, GAMMA: 4}, {"HtoD": 1, "memset": 1}),
        (["--device", "0", "--stream", f"{a},{c}"], {ALPHA: 3}, {"HtoD": 1}),
        (["--kernel", "flt_beta"], {BETA: 2}, {}),
        (["--kernel", "flt_*"], {ALPHA: 3, GAMMA: 4}, {}),  # a glob: "void flt_beta..." not
        (["--kernel", "*flt_beta<int>*"], {BETA: 2}, {}),
        (["--kernel", "memcpy"], {}, {"HtoD": 1}),
        (["--kernel", "a(float", "--device", "0"], {ALPHA: 3}, {}),
    ]
    for sel, want_k, want_m in cases:
        got = report(*sel)
        check(got == (want_k, want_m, calls),
              f"report {sel}: {got}, want {(want_k, want_m, calls)} (every call kept)")

    def gaps(*sel):
        rc, out, err = run("gaps", "--format", "json", *sel, path)
        check(rc == 0, f"gaps {sel}: {rc} {err!r}")
        return json.loads(out) if rc == 0 else {}

    full = gaps()
    for dev in (0, 1):
        one = gaps("--device", str(dev))
        want = [d for d in full.get("devices", []) if d["device"] == dev]
        check(len(want) == 1 and one.get("devices") == want,
              f"gaps --device {dev}: the unfiltered row\n{one.get('devices')}\n{want}")
        want_s = [s for s in full.get("streams", []) if s["device"] == dev]
        check(one.get("streams") == want_s, f"gaps --device {dev}: its streams' rows")
        check([g for g in full.get("gaps", []) if g["device"] == dev] == one.get("gaps"),
              f"gaps --device {dev}: the unfiltered run's gaps on it, causes unchanged")

    rc, out, err = run("dump", "--csv", "--stream", str(c), path)
    kinds = collections.Counter(r["kind"] for r in csv.DictReader(io.StringIO(out)))
    rc0, out0, _ = run("dump", "--csv", path)
    kinds0 = collections.Counter(r["kind"] for r in csv.DictReader(io.StringIO(out0)))
    check(rc == 0 and kinds["kernel"] == 4 and kinds["launch"] == kinds0["launch"] == 9,
          f"dump --csv --stream C: 4 kernels, the 9 launch calls kept: {kinds} / {kinds0}")
    out_json = os.path.join(tmp, "beta.json")
    rc, _, err = run("dump", "--chrome", "--kernel", "flt_beta", "-o", out_json, path)
    try:
        ev = json.load(open(out_json))["traceEvents"] if rc == 0 else []
    except (OSError, ValueError):
        ev = []
    cats = collections.Counter(e.get("cat") for e in ev)
    check(cats["kernel"] == 2 and cats["cuda_runtime"] == calls and cats["ac2g"] == 4
          and not cats["gpu_memcpy"], f"chrome --kernel flt_beta: 2 kernels, 2 flows, all calls {cats}")

    for args, msg in [(["report", "--device", "2"], "--device 2: no such device in"),
                      (["gaps", "--device", "2"], "(devices: 0, 1)"),
                      (["report", "--stream", "99"], "--stream 99: no such stream in"),
                      (["report", "--device", "1", "--kernel", "flt_alpha"],
                       "the selection (--device 1 --kernel flt_alpha) matches no GPU work"),
                      (["report", "--kernel", "flt_beta<int>*"], "no GPU work's name matches it")]:
        rc, out, err = run(*args, path)
        check(rc == 2 and out == "" and err.count("\n") == 1 and msg in err,
              f"{args}: {rc} {out[:60]!r} {err!r} (want {msg!r})")
sys.exit(finish())
