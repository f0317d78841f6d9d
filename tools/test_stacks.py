"""Tests of call stacks in the tools on traces whose stacks are the generator's own
(test_stacks_gen.c): `report --by callsite` / `--by stack` name the right function,
file and line (read from the generator's `CALLSITE:` markers), count the calls and
the kernels (a gemm's inner kernels at the gemm's call site); `gaps` names the call
that ended each planted gap with its innermost NVTX range and its stack; a missing
module file or a wrong build-id give the documented `module+0xoffset` fallbacks.

usage: test_stacks.py CUTRACE TEST_STACKS_GEN SOURCE_OF_TEST_STACKS_GEN
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tooltest  # noqa: E402
from tooltest import check, run, scratch_dir  # noqa: E402
from cttest import callsite_markers  # noqa: E402  (tooltest put tests/lib on the path)

cutrace, gen, source = sys.argv[1:4]
tmp = scratch_dir("cutrace-stacks-")


def make(mode):
    path = os.path.join(tmp, mode + ".ctr")
    subprocess.run([gen, path, mode], check=True)
    return path


def report(path, *extra):
    rc, out, err = run(cutrace, "report", "--format", "json", *extra, path)
    check(rc == 0, f"report {extra} {path}: status {rc}: {err.strip()}")
    try:
        return json.loads(out)
    except ValueError:
        check(False, f"report {extra}: not JSON: {out[:200]}")
        return {}


lines = callsite_markers(source)
check(set(lines) == {"launch_a", "launch_b", "gemm_c"}, f"markers found: {lines}")
src_base = os.path.basename(source)

# ---- report --by callsite on a trace whose module file is the generator itself ----
normal = make("normal")
doc = report(normal, "--by", "callsite")
sites = {s["function"]: s for s in doc.get("callsites", [])}
check(doc.get("calls_with_stack") == 16, f"calls with a stack: {doc.get('calls_with_stack')}")
expect = {"launch_a": (8, 8, "kernel_a(float*)"), "launch_b": (4, 4, "kernel_b(float*)"),
          "gemm_c": (4, 8, "sgemm_kernel")}
check(set(sites) == set(expect), f"call sites: {sorted(sites)}")
for fn, (calls, kernels, top) in expect.items():
    s = sites.get(fn)
    if not s:
        continue
    check(os.path.basename(s["file"]) == src_base and s["line"] == lines[fn],
          f"{fn}: at {s['file']}:{s['line']}, expected {src_base}:{lines[fn]}")
    check(s["calls"] == calls, f"{fn}: {s['calls']} calls, expected {calls}")
    check(s["kernels"] == kernels, f"{fn}: {s['kernels']} kernels, expected {kernels}")
    check(s["gpu_ns"] == kernels * 50000, f"{fn}: GPU {s['gpu_ns']} ns, expected {kernels * 50000}")
    check(s["top_kernel"] == top, f"{fn}: top kernel {s['top_kernel']}, expected {top}")
    check(s["module"] == gen or os.path.realpath(s["module"]) == os.path.realpath(gen),
          f"{fn}: module {s['module']}")
    stack = s.get("stack", [])
    check(len(stack) >= 2 and stack[s["site_index"]]["function"] == fn and stack[s["site_index"] + 1]["function"] == "main",
          f"{fn}: stack {[f['function'] for f in stack]}")
check(doc.get("without_stack", {}).get("kernels") == 0,
      f"work without a stack: {doc.get('without_stack')}")

# --by stack: launch_a is called from two lines of main: two stacks, 4 calls each
doc = report(normal, "--by", "stack")
rows = [s for s in doc.get("stacks", []) if s["function"] == "launch_a"]
check(len(rows) == 2 and all(r["calls"] == 4 for r in rows), f"--by stack launch_a rows: {rows}")

# text and CSV carry the same call sites
rc, out, err = run(cutrace, "report", "--by", "callsite", normal)
check(rc == 0 and f"launch_b ({src_base}:{lines['launch_b']})" in out, f"text output:\n{out}{err}")
rc, out, err = run(cutrace, "report", "--by", "callsite", "--format", "csv", normal)
csv_rows = [r.split(",") for r in out.strip().splitlines()]
check(rc == 0 and csv_rows[0][:3] == ["table", "function", "file"] and len(csv_rows) == 4,
      f"CSV output:\n{out}{err}")

# a trace without stacks: one line telling how to record them
plain = os.path.join(tmp, "plain.ctr")
gentrace = os.path.join(os.path.dirname(gen), "cutrace-gentrace")
if os.path.exists(gentrace):
    subprocess.run([gentrace, "--mixed", plain, "20"], check=True, capture_output=True)
    rc, out, err = run(cutrace, "report", "--by", "callsite", plain)
    check(rc == 0 and len(out.strip().splitlines()) == 1 and "--stacks" in out,
          f"no stacks: {out}{err}")

# ---- gaps: the call that ended each planted gap, its range and its stack ----------
rc, out, err = run(cutrace, "gaps", "--format", "json", "--top", "8", normal)
check(rc == 0, f"gaps: status {rc}: {err}")
gaps = json.loads(out).get("gaps", []) if rc == 0 else []
planted = [g for g in gaps if g["dur_ns"] >= 2000000]
check(len(planted) == 8, f"gaps of >= 2 ms: {len(planted)}, expected 8")
expect_end = {"launch_b": ("cudaLaunchKernel", "phase_b", False),
              "gemm_c": ("cublasSgemm_v2", "phase_c", True)}
seen = {"launch_b": 0, "gemm_c": 0}
for g in planted:
    c = g.get("ending_call") or {}
    stack = c.get("stack", [])
    site = stack[c["site_index"]] if stack and c.get("site_index", 99) < len(stack) else {}
    fn = site.get("function")
    if fn not in expect_end:
        check(False, f"gap at {g['start_ns']}: ended by {c}")
        continue
    seen[fn] += 1
    api, rng, nested = expect_end[fn]
    check(c["api"] == api and c["range"] == rng and c["nested"] == nested and c["tid"] == 777,
          f"{fn}: ending call {c['api']} range {c['range']} nested {c['nested']} tid {c['tid']}")
    check(os.path.basename(site["file"]) == src_base and site["line"] == lines[fn],
          f"{fn}: ending call at {site['file']}:{site['line']}, expected line {lines[fn]}")
    check(len(stack) > c["site_index"] + 1 and stack[c["site_index"] + 1]["function"] == "main",
          f"{fn}: caller of the ending call: {[f['function'] for f in stack]}")
    check(any(t["tid"] == 777 and t["launching"] for t in g["threads"]),
          f"{fn}: threads of the gap: {g['threads']}")
check(seen == {"launch_b": 4, "gemm_c": 4}, f"ending calls: {seen}")
rc, out, err = run(cutrace, "gaps", "--top", "2", normal)
check(rc == 0 and f"at gemm_c ({src_base}:{lines['gemm_c']})" in out and 'in range "phase_c"' in out,
      f"gaps text:\n{out}{err}")

# ---- fallbacks: a missing module file, another build-id --------------------------
for mode in ("missing", "mismatch"):
    path = make(mode)
    doc = report(path, "--by", "callsite")
    sites = doc.get("callsites", [])
    check(len(sites) == 3, f"{mode}: {len(sites)} call sites, expected 3 (one per pc)")
    for s in sites:
        check(re.fullmatch(r"[\w.-]+\+0x[0-9a-f]+", s["function"]) is not None and s["line"] == 0
              and s["file"] == "", f"{mode}: frame {s}")
    check(sum(s["calls"] for s in sites) == 16, f"{mode}: calls {[s['calls'] for s in sites]}")
    note = "file missing" if mode == "missing" else "build-id mismatch"
    check(all(s["stack"][s["site_index"]].get("note") == note for s in sites), f"{mode}: notes {sites}")
    rc, out, err = run(cutrace, "report", "--by", "stack", path)
    check(rc == 0 and "+0x" in out and note in out, f"{mode}: --by stack text: {out}{err}")
    rc, out, err = run(cutrace, "gaps", "--format", "json", path)
    ends = [g["ending_call"] for g in json.loads(out)["gaps"]] if rc == 0 else []
    check(rc == 0 and ends and all(e["stack"] and "+0x" in e["stack"][e["site_index"]]["function"]
                                   for e in ends), f"{mode}: gaps ending calls {ends[:1]} {err}")

# ---- damaged stack records: cycles, pc 0, unknown parents and ids, odd modules ----
odd = make("odd")
for by in ("callsite", "stack"):
    p = subprocess.run([cutrace, "report", "--by", by, "--format", "json", odd], capture_output=True,
                       text=True, timeout=30)
    check(p.returncode == 0, f"odd --by {by}: status {p.returncode}: {p.stderr[-300:]}")
    doc = json.loads(p.stdout) if p.returncode == 0 else {}
    rows = doc.get("callsites" if by == "callsite" else "stacks", [])
    # the 16 normal calls as before, the 4 odd launches somewhere, each counted once
    check(sum(r["calls"] for r in rows) == 20 and sum(r["kernels"] for r in rows) == 24,
          f"odd --by {by}: calls {[r['calls'] for r in rows]} kernels {[r['kernels'] for r in rows]}")
    check(any(r["function"].startswith("(stack 424242") for r in rows), f"odd --by {by}: unknown id row missing")
    check(all(len(r["stack"]) <= 256 for r in rows), f"odd --by {by}: a stack longer than the nodes")
p = subprocess.run([cutrace, "gaps", "--format", "json", odd], capture_output=True, text=True, timeout=30)
check(p.returncode == 0 and json.loads(p.stdout)["gaps"], f"odd gaps: status {p.returncode}: {p.stderr[-300:]}")

# bad --by value: one line, status 2
rc, out, err = run(cutrace, "report", "--by", "nonsense", normal)
check(rc == 2 and len(err.strip().splitlines()) == 1, f"--by nonsense: {rc} {err}")

# cutrace record: bad stack options are one-line errors (status 2), before anything runs
for bad in (["--stacks=sometimes"], ["--stack-depth", "0"], ["--stack-depth", "many"],
            ["--stack-depth=999"], ["--stack-depth"]):
    rc, out, err = run(cutrace, "record", "-o", os.path.join(tmp, "never"), *bad, "--", "true")
    check(rc == 2 and len(err.strip().splitlines()) == 1 and not os.path.exists(os.path.join(tmp, "never")),
          f"record {bad}: status {rc}, stderr {err!r}")

tooltest.finish()
