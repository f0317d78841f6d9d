#!/usr/bin/env python3
"""End to end: `cutrace dump --csv` of workloads traced on the simulated GPU (matmul_add:
cuBLAS GEMMs and a bias kernel with copies; multistream: three streams; nvtx_kernels:
planted NVTX ranges on two threads), read back with Python's csv module and checked
against `cutrace report --format json` and the trace's own records:

- every row has the header's 45 columns; one gpu row per GPU record, one call row per
  API record; kernel names and counts, GPU time per kernel, the total GPU time and the
  copies' bytes per kind equal report's;
- correlation: every gpu row with an api names a call row of the same correlation,
  entry point, thread and times (call_start_ns, call_end_ns);
- the GEMM kernels launched inside cublasSgemm_v2 say so (library_call), and so do
  their cuLaunchKernel call rows;
- nvtx_range is the innermost push/pop range around each call's begin on its thread,
  as computed here from the RANGE records; planted: phase_a (nvtx_kernel_a twice),
  copy (the DtoH copy), none (nvtx_kernel_b), t1_work (nvtx_kernel_c on the worker);
- kernel names with commas ("bias_add(float const*, ...)") round-trip through quoting;
- --rows gpu / calls, two files in a directory (rows of both pids), --from/--to (@NS:
  exactly the rows that overlap the window).

usage: test_dump_csv.py SIM_DIR CUTRACE LIBTRACE WORKLOAD_DIR NVTX_KERNELS
"""
import collections
import csv
import glob
import io
import os
import shutil
import subprocess
import sys

from harness import Harness
from rawdump import raw_records

h = Harness(sys.argv)
nvtx_program = h.extra[0] if h.extra else ""
COLUMNS = 45


def trace_of(data):
    files = glob.glob(os.path.join(data, "*.ctr"))
    h.check(len(files) == 1, f"one trace in {data}: {files}")
    return files[0] if files else None


def csv_rows(label, *args):
    """`cutrace dump --csv ARGS` parsed: (header, rows as dicts), or (None, []) after a
    failed check."""
    p = subprocess.run([h.cutrace, "dump", "--csv", *args], capture_output=True, timeout=120)
    rc, out, err = p.returncode, p.stdout.decode(), p.stderr.decode()
    if not h.check(rc == 0 and not err, f"{label}: dump --csv status {rc}, {err!r}"):
        return None, []
    h.check(out.endswith("\r\n"), f"{label}: CRLF line ends (RFC 4180)")
    table = list(csv.reader(io.StringIO(out, newline="")))
    header, body = table[0], table[1:]
    h.check(len(header) == COLUMNS, f"{label}: {len(header)} columns in the header")
    bad = [r for r in body if len(r) != len(header)]
    h.check(not bad, f"{label}: rows with another number of fields: {bad[:2]}")
    return header, [dict(zip(header, r)) for r in body if len(r) == len(header)]


def check_against_report(label, path, rows):
    rc, rep, err = h.cutrace_json("report", "--format", "json", "--limit", "0", path)
    if not h.check(rc == 0 and rep, f"{label}: report: {err}"):
        return
    gpu = [r for r in rows if r["row"] == "gpu"]
    calls = [r for r in rows if r["row"] == "call"]
    h.check(len(gpu) == rep["activities"], f"{label}: {len(gpu)} gpu rows, report {rep['activities']}")
    want = sum(a["calls"] for a in rep["apis"])  # inner calls (depth > 0) have rows of their own
    h.check(len(calls) == want, f"{label}: {len(calls)} call rows, report's API table {want}")
    outer = sum(1 for r in calls if r["depth"] == "0")
    h.check(outer == rep["calls"], f"{label}: {outer} outermost call rows, report {rep['calls']}")
    total = sum(int(r["duration_ns"]) for r in gpu)
    h.check(total == rep["gpu_total_ns"], f"{label}: GPU time {total}, report {rep['gpu_total_ns']}")
    for r in gpu:
        h.check(int(r["end_ns"]) - int(r["start_ns"]) == int(r["duration_ns"]),
                f"{label}: duration = end - start: {r}")
    # kernels table: name (demangled), count, total
    per = collections.defaultdict(lambda: [0, 0])
    for r in gpu:
        if r["kind"] in ("kernel", "gemm", "graph"):
            per[r["demangled"]][0] += 1
            per[r["demangled"]][1] += int(r["duration_ns"])
    want = {k["name"]: [k["calls"], k["total_ns"]] for k in rep["kernels"]}
    h.check(dict(per) == want, f"{label}: kernels {dict(per)} vs report {want}")
    mangled = {k["mangled"] for k in rep["kernels"] if k.get("mangled")}
    names = {r["name"] for r in gpu if r["kind"] == "kernel"}
    h.check(mangled <= names, f"{label}: report's mangled names {mangled - names} not in name")
    # copies and sets: bytes and count per kind, source and destination
    mem = collections.defaultdict(lambda: [0, 0])
    for r in gpu:
        if r["kind"] in ("memcpy", "memset"):
            key = (r["copy_kind"], r["src_mem"] or "unknown", r["dst_mem"])
            mem[key][0] += 1
            mem[key][1] += int(r["bytes"])
    want = {(m["kind"], m["src"], m["dst"]): [m["count"], m["bytes"]] for m in rep["memcpy"]}
    h.check(dict(mem) == want, f"{label}: copies {dict(mem)} vs report {want}")


def check_correlation(label, rows):
    calls = {(r["pid"], r["correlation"]): r for r in rows if r["row"] == "call"}
    joined = 0
    for r in rows:
        if r["row"] != "gpu" or not r["api"]:
            continue
        c = calls.get((r["pid"], r["correlation"]))
        ok = c is not None and c["name"] == r["api"] and c["tid"] == r["tid"] and \
            c["start_ns"] == r["call_start_ns"] and c["end_ns"] == r["call_end_ns"]
        h.check(ok, f"{label}: gpu row {r['correlation']} {r['name']} pairs with its call {c}")
        joined += ok
        delay = max(0, int(r["start_ns"]) - int(r["call_end_ns"]))
        h.check(int(r["launch_delay_ns"]) == delay, f"{label}: launch delay of {r}")
    h.check(joined > 0, f"{label}: some gpu rows joined with their call")


def innermost_ranges(path):
    """{tid: [(begin, end, depth, name)]} of the push/pop RANGE records."""
    records, strings = raw_records(h.cutrace, path)
    out = collections.defaultdict(list)
    for r in records:
        if r["kind"] == "range" and not r["flags"] & 0x2:
            out[str(r["tid"])].append((r["begin_ns"], r["end_ns"], r["depth"],
                                       strings.get(r["name"], "")))
    return out


def expected_range(ranges, tid, t):
    around = [x for x in ranges.get(tid, []) if x[0] <= t <= x[1]]
    return max(around, key=lambda x: (x[2], x[0]))[3] if around else ""


# ---- matmul_add: GEMM kernels inside cublasSgemm_v2, bias_add, copies -----------------
rc, out, err, data, _ = h.record("matmul_add", ["64", "5", "2"])
h.check(rc == 0, f"matmul_add: {rc} {err}")
mm = trace_of(data)
if mm:
    header, rows = csv_rows("matmul_add", mm)
    check_against_report("matmul_add", mm, rows)
    check_correlation("matmul_add", rows)
    bias = [r for r in rows if r["row"] == "gpu" and r["name"] == "_Z8bias_addPKfS0_Pfi"]
    h.check(len(bias) == 7, f"matmul_add: 7 bias_add kernels (2 warm-up + 5), {len(bias)}")
    h.check(all(r["demangled"] == "bias_add(float const*, float const*, float*, int)" for r in bias),
            f"matmul_add: demangled name with commas round-trips: {bias[:1]}")
    h.check(all(r["block_x"] == "256" and r["grid_x"] and r["registers"] for r in bias),
            f"matmul_add: bias_add launch shape and registers: {bias[:1]}")
    gemm_kernels = [r for r in rows if r["row"] == "gpu" and r["parent_correlation"]]
    h.check(len(gemm_kernels) == 7 and all(r["library_call"] == "cublasSgemm_v2" for r in gemm_kernels),
            f"matmul_add: 7 GEMM kernels launched by cublasSgemm_v2: {gemm_kernels[:1]}")
    by_corr = {r["correlation"]: r for r in rows if r["row"] == "call"}
    for k in gemm_kernels:
        parent = by_corr.get(k["parent_correlation"])
        h.check(parent is not None and parent["name"] == "cublasSgemm_v2" and
                parent["gemm_m"] == "64" and parent["depth"] == "0",
                f"matmul_add: parent call of {k['correlation']}: {parent}")
    inner_calls = [r for r in rows if r["row"] == "call" and r["depth"] != "0"]
    h.check(inner_calls and all(r["library_call"] == "cublasSgemm_v2" for r in inner_calls),
            f"matmul_add: inner call rows name their library call: {inner_calls[:1]}")
    h.check(all(not r["library_call"] for r in rows if r["depth"] in ("0", "")),
            "matmul_add: no library_call outside one")
    copies = [r for r in rows if r["row"] == "gpu" and r["kind"] == "memcpy"]
    h.check(copies and all(float(r["gbps"]) == round(int(r["bytes"]) / int(r["duration_ns"]), 3)
                           for r in copies if int(r["duration_ns"])),
            f"matmul_add: GB/s = bytes / duration: {copies[:1]}")
    _, gpu_only = csv_rows("matmul_add --rows gpu", "--rows", "gpu", mm)
    _, calls_only = csv_rows("matmul_add --rows calls", "--rows", "calls", mm)
    h.check(gpu_only == [r for r in rows if r["row"] == "gpu"], "matmul_add: --rows gpu")
    h.check(calls_only == [r for r in rows if r["row"] == "call"], "matmul_add: --rows calls")
    # --from/--to with host times: exactly the rows that overlap the window
    starts = sorted(int(r["start_ns"]) for r in rows)
    a, b = starts[len(starts) // 3], starts[2 * len(starts) // 3]
    _, window = csv_rows("matmul_add window", "--from", f"@{a}", "--to", f"@{b}", mm)
    want = [r for r in rows if int(r["end_ns"]) >= a and int(r["start_ns"]) <= b]
    h.check(0 < len(window) == len(want) < len(rows),
            f"matmul_add: --from/--to: {len(window)} rows, {len(want)} overlap [{a}, {b}]")
    for got, exp in zip(window, want):
        # a library call outside the window is not read: its name stays empty
        if not got["library_call"]:
            exp = dict(exp, library_call="")
        h.check(got == exp, f"matmul_add: --from/--to row {got} is {exp}")

# ---- multistream: three streams; with matmul_add's file, a directory of two ---------
rc, out, err, data, _ = h.record("multistream", ["3", "5"])
h.check(rc == 0, f"multistream: {rc} {err}")
ms = trace_of(data)
if ms:
    _, rows = csv_rows("multistream", ms)
    check_against_report("multistream", ms, rows)
    check_correlation("multistream", rows)
    streams = {r["stream"] for r in rows if r["row"] == "gpu" and r["kind"] == "kernel"}
    h.check(len(streams) >= 3, f"multistream: kernels on 3 streams: {streams}")
    ends = [int(r["end_ns"]) for r in rows]
    h.check(ends == sorted(ends), "multistream: rows in end order")
    if mm:
        both = os.path.join(h.tmp, "both")
        os.mkdir(both)
        shutil.copy(mm, both)
        shutil.copy(ms, both)
        _, all_rows = csv_rows("directory", both)
        _, mm_rows = csv_rows("matmul_add again", mm)
        first = sorted(os.listdir(both))[0]
        order = mm_rows + rows if os.path.join(both, first).endswith(os.path.basename(mm)) \
            else rows + mm_rows
        h.check(all_rows == order, f"directory: both files' rows, file by file "
                                   f"({len(all_rows)} vs {len(order)})")

# ---- nvtx_kernels: planted ranges on two threads ---------------------------------------
if nvtx_program:
    data = os.path.join(h.tmp, "nvtx.data")
    env = h.env()
    p = subprocess.run([h.cutrace, "record", "-q", "-o", data, "--", nvtx_program], env=env,
                       capture_output=True, text=True, timeout=120)
    h.check(p.returncode == 0, f"nvtx_kernels: {p.returncode} {p.stderr}")
    nv = trace_of(data)
    if nv:
        _, rows = csv_rows("nvtx", nv)
        ranges = innermost_ranges(nv)
        for r in rows:
            tid, t = (r["tid"], int(r["start_ns"])) if r["row"] == "call" else \
                (r["tid"], int(r["call_start_ns"] or 0))
            want = expected_range(ranges, tid, t) if tid else ""
            h.check(r["nvtx_range"] == want,
                    f"nvtx: {r['row']} {r['name']} at {t}: range {r['nvtx_range']!r}, want {want!r}")
        planted = collections.defaultdict(list)
        for r in rows:
            if r["row"] == "gpu":
                planted[r["name"]].append(r["nvtx_range"])
        h.check(sorted(planted.get("nvtx_kernel_a", [])) == ["phase_a", "phase_a"],
                f"nvtx: kernel_a in phase_a twice: {dict(planted)}")
        h.check(planted.get("memcpy DtoH") == ["copy"], f"nvtx: the copy in copy: {dict(planted)}")
        h.check(planted.get("nvtx_kernel_b") == [""], f"nvtx: kernel_b in none: {dict(planted)}")
        h.check(planted.get("nvtx_kernel_c") == ["t1_work"], f"nvtx: kernel_c in t1_work: {dict(planted)}")

h.finish()
