"""End to end: a CUDA C program built with -g (programs/callsite.cu) traced on the
simulated GPU with call stacks. `report --by callsite` must name launch_a and launch_b
at the lines marked `CALLSITE:` in the source, with exact call and kernel counts;
`gaps` must name launch_b, its line and the NVTX range "phase_b" as the call that
ended each planted gap; without stacks the report says how to get them; a smaller
--stack-depth keeps shorter stacks.

usage: test_callsite.py SIM_DIR CUTRACE LIBTRACE CALLSITE_PROGRAM CALLSITE_SOURCE
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from cttest import callsite_markers, check, finish, require_built, scratch_dir  # noqa: E402

sim_dir, cutrace, libtrace, program, source = sys.argv[1:6]
ITERATIONS, PAUSE_US = 5, 3000

require_built(os.path.join(sim_dir, "libcuda.so.1"), libtrace, cutrace, program)

lines = callsite_markers(source)
check(set(lines) == {"launch_a", "launch_b"}, f"markers in {source}: {lines}")
tmp = scratch_dir("cutrace-callsite-")


def record(tag, *record_args):
    """Traces the program under `cutrace record`; returns the data directory."""
    env = dict(os.environ, LD_LIBRARY_PATH=sim_dir, CUTRACE_PRELOAD=libtrace,
               SIMCUDA_KERNEL_US="default=50")
    for k in ("LD_PRELOAD", "CUTRACE_OUTPUT", "CUTRACE_STACKS", "CUTRACE_STACK_DEPTH"):
        env.pop(k, None)
    data = os.path.join(tmp, tag)
    p = subprocess.run([cutrace, "record", "-q", "-o", data, *record_args, "--", program,
                        str(ITERATIONS), str(PAUSE_US)], env=env, capture_output=True, text=True,
                       timeout=120)
    check(p.returncode == 0, f"{tag}: the traced program failed ({p.returncode}): {p.stderr}")
    return data


def cutrace_json(*args):
    p = subprocess.run([cutrace, args[0], "--format", "json", *args[1:]], capture_output=True,
                       text=True, timeout=120)
    check(p.returncode == 0, f"cutrace {args}: status {p.returncode}: {p.stderr}")
    try:
        return json.loads(p.stdout)
    except ValueError:
        check(False, f"cutrace {args}: not JSON")
        return {}


def site_of(row):
    stack = row.get("stack", [])
    i = row.get("site_index", len(stack))
    return stack[i] if i < len(stack) else {}


data = record("stacks", "--stacks")
report = cutrace_json("report", "--by", "callsite", data)
rows = {r["function"].split("(")[0]: r for r in report.get("callsites", [])}
expect = {"launch_a": (2 * ITERATIONS, "callsite_kernel_a(float*, int)"),
          "launch_b": (ITERATIONS, "callsite_kernel_b(float*, int)")}
for fn, (count, kernel) in expect.items():
    r = rows.get(fn)
    if not check(r is not None, f"no call site {fn}: {sorted(rows)}"):
        continue
    check(os.path.basename(r["file"]) == "callsite.cu" and r["line"] == lines[fn],
          f"{fn}: at {r['file']}:{r['line']}, expected callsite.cu:{lines[fn]}")
    check(r["calls"] == count and r["kernels"] == count,
          f"{fn}: {r['calls']} calls, {r['kernels']} kernels, expected {count} of each")
    check(r["top_kernel"] == kernel, f"{fn}: top kernel {r['top_kernel']}")
    check(r["gpu_ns"] > 0 and r["cpu_ns"] > 0, f"{fn}: times {r['cpu_ns']} {r['gpu_ns']}")
    caller = r["stack"][r["site_index"] + 1] if len(r["stack"]) > r["site_index"] + 1 else {}
    check(caller.get("function") == "main", f"{fn}: caller {caller}")

gaps = cutrace_json("gaps", "--top", str(2 * ITERATIONS), data).get("gaps", [])
# the gaps ended by launch_b are the planted ones: one per iteration, as long as the pause
# (the others: the program's start before the first launch_a, short ones)
planted = [g for g in gaps if site_of(g.get("ending_call") or {}).get("function", "").startswith("launch_b")]
check(len(planted) == ITERATIONS, f"{len(planted)} gaps ended by launch_b, expected {ITERATIONS}")
for g in planted:
    c = g["ending_call"]
    site = site_of(c)
    # a loaded machine may sleep longer, never shorter
    check(g["dur_ns"] >= PAUSE_US * 800, f"gap at {g['start_ns']}: {g['dur_ns']} ns, planted {PAUSE_US} us")
    check(site.get("line") == lines["launch_b"] and os.path.basename(site.get("file", "")) == "callsite.cu",
          f"gap at {g['start_ns']}: ended at {site}")
    check(c.get("range") == "phase_b", f"gap at {g['start_ns']}: range {c.get('range')}")
    check("LaunchKernel" in (c.get("api") or ""), f"gap at {g['start_ns']}: api {c.get('api')}")
    check(c.get("tid") and any(t["tid"] == c["tid"] and t["launching"] for t in g["threads"]),
          f"gap at {g['start_ns']}: threads {g['threads']}")

# without stacks: nothing is attributed, and the report says how to record them
off = record("off", "--stacks=off")
doc = cutrace_json("report", "--by", "callsite", off)
check(doc.get("calls_with_stack") == 0 and doc.get("callsites") == [] and "--stacks" in doc.get("hint", ""),
      f"--stacks=off: {doc.get('calls_with_stack')} calls with a stack, hint {doc.get('hint')}")

# a smaller depth keeps fewer frames
shallow = record("shallow", "--stacks", "--stack-depth", "2")
deep = max(len(r["stack"]) for r in cutrace_json("report", "--by", "stack", data).get("stacks", [{"stack": []}]))
short = max(len(r["stack"]) for r in cutrace_json("report", "--by", "stack", shallow).get("stacks", [{"stack": []}]))
check(0 < short < deep, f"stack length with --stack-depth 2: {short}, default: {deep}")

sys.exit(finish())
