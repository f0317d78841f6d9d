#!/usr/bin/env python3
"""cutrace report on generated traces of known content (cutrace-gentrace --mixed):
exact kernel names, calls and GPU totals, copy bytes, GEMM shapes, API totals, merged
and per process, in JSON, CSV and text; sorting and limits; damaged, empty and
foreign inputs. The expected values are the scenario's formulas (gentrace.c).
Then planted traces written from Python (tracewrite.py, inner_scenario.py): GEMMs
timed by the kernels they launch (format 1.1), and such traces with records lost."""
import csv
import io
import json
import os
import pty
import subprocess
import sys

cutrace, gentrace = sys.argv[1], sys.argv[2]
import tooltest
from tooltest import check, finish, scratch


def run(*args):
    return tooltest.run(cutrace, *args)


def expected(n):
    """The mixed scenario's tables for n iterations: {table: {key: (calls, total_ns, bytes)}}."""
    even, odd, by4 = (n + 1) // 2, n // 2, (n + 3) // 4
    reduce_total = sum(1000 * (1 + i % 5) for i in range(n))
    return {
        "kernels": {
            "vadd(float const*, float const*, float*, int)": (n, 2000 * n),
            "void reduce<256>(float const*, float*, int)": (n, reduce_total),
            "softmax_row(float*, int)": (even, 10000 * even),
            "cublasSgemm_v2": (n, 50000 * n),
            "cublasGemmStridedBatchedEx": (odd, 10000 * odd),
        },
        "memcpy": {
            ("HtoD", "pinned", "device"): (n, 40000 * n, (1 << 20) * n),
            ("DtoH", "device", "pageable"): (n, 2000 * n, 4096 * n),
            ("DtoD", "device", "device"): (even, 10000 * even, (2 << 20) * even),
            ("memset", "unknown", "device"): (by4, 1000 * by4, 65536 * by4),
        },
        "gemms": {
            ("cublasSgemm_v2", 512, 512, 512, 1): (n, 50000 * n),
            ("cublasGemmStridedBatchedEx", 128, 256, 64, 8): (odd, 10000 * odd),
        },
        "apis": {
            "cudaMemcpyAsync": (n + even, 4000 * n + 2000 * even),
            "__cudaLaunchKernel": (2 * n, 3000 * 2 * n),
            "cublasSgemm_v2": (n, 8000 * n),
            "cublasGemmStridedBatchedEx": (odd, 5000 * odd),
            "cudaStreamSynchronize": (n, 82500 * n),
            "cudaMemcpy": (n, 40000 * n),
            "cudaMemsetAsync": (by4, 2000 * by4),
            "cuLaunchKernel": (even, 2000 * even),
        },
    }


def merge(a, b):
    out = {}
    for t in a:
        out[t] = dict(a[t])
        for k, v in b[t].items():
            old = out[t].get(k)
            out[t][k] = tuple(x + y for x, y in zip(old, v)) if old else v
    return out


def rows_of(doc):
    """The JSON tables keyed like expected()."""
    return {
        "kernels": {r["name"]: (r["calls"], r["total_ns"]) for r in doc["kernels"]},
        "memcpy": {(r["kind"], r["src"], r["dst"]): (r["count"], r["total_ns"], r["bytes"])
                   for r in doc["memcpy"]},
        "gemms": {(r["api"], r["m"], r["n"], r["k"], r["batch"]): (r["calls"], r["total_ns"])
                  for r in doc["gemms"]},
        "apis": {r["name"]: (r["calls"], r["total_ns"]) for r in doc["apis"]},
    }


def check_tables(doc, exp, label):
    got = rows_of(doc)
    for t in exp:
        check(got[t] == exp[t], f"{label}: table {t}:\n  got      {got[t]}\n  expected {exp[t]}")
    gpu = sum(v[1] for v in exp["kernels"].values()) + sum(v[1] for v in exp["memcpy"].values())
    check(doc["gpu_total_ns"] == gpu, f"{label}: gpu_total_ns {doc['gpu_total_ns']} != {gpu}")


with scratch("cutrace-report-") as d:
    data = os.path.join(d, "data")
    os.mkdir(data)
    a, b = os.path.join(data, "h.100.ctr"), os.path.join(data, "h.200.ctr")
    subprocess.run([gentrace, "--mixed", a, "40", "100"], check=True)
    subprocess.run([gentrace, "--mixed", b, "25", "200"], check=True)
    exp_a, exp_b = expected(40), expected(25)

    # Merged JSON: exact sums over both processes.
    rc, out, err = run("report", "--format", "json", data)
    check(rc == 0 and not err, f"report json exit {rc}: {err}")
    doc = json.loads(out)
    check_tables(doc, merge(exp_a, exp_b), "merged")
    check([f["pid"] for f in doc["files"]] == [100, 200], "files list")
    reduce_row = [r for r in doc["kernels"] if r["name"].startswith("void reduce<256>")][0]
    check(reduce_row["min_ns"] == 1000 and reduce_row["max_ns"] == 5000, "reduce min/max")
    check(abs(reduce_row["median_ns"] - 3000) <= 3000 * 0.032, f"median {reduce_row['median_ns']}")
    vadd = [r for r in doc["kernels"] if r["name"].startswith("vadd")][0]
    check(vadd["median_ns"] == 2000 and vadd["mangled"] == "_Z4vaddPKfS0_Pfi", "vadd row")
    sg = [r for r in doc["gemms"] if r["api"] == "cublasSgemm_v2"][0]
    check(sg["atype"] == "f32" and abs(sg["tflops"] - 2 * 512**3 / 50000 / 1e3) < 1e-3,
          f"sgemm types/TFLOP/s {sg}")
    hb = [r for r in doc["gemms"] if r["batch"] == 8][0]
    check(hb["atype"] == "f16" and abs(hb["tflops"] - 2 * 128 * 256 * 64 * 8 / 10000 / 1e3) < 1e-3,
          f"batched gemm {hb}")
    check(all(abs(r["gflops"] - r["tflops"] * 1e3) < 1 for r in doc["gemms"]), "gflops = 1000 x tflops")
    # text: achieved GFLOP/s with one decimal (2*512^3 flops per 50 us = 5368.7 GFLOP/s)
    rc, out, err = run("report", a)
    gemm_text = out[out.find("GEMMs"):]
    check("GFLOP/s" in gemm_text and " 5368.7  512  512  512 " in gemm_text and "e-0" not in gemm_text,
          f"GEMM table in GFLOP/s: {gemm_text[:400]!r}")
    h2d = [r for r in doc["memcpy"] if r["kind"] == "HtoD"][0]
    check(abs(h2d["gbps"] - (1 << 20) / 40000) < 1e-3, f"HtoD GB/s {h2d['gbps']}")
    total_pct = sum(r["gpu_pct"] for r in doc["kernels"]) + sum(r["gpu_pct"] for r in doc["memcpy"])
    check(abs(total_pct - 100) < 0.1, f"GPU shares add up to {total_pct}")
    # sorted by total time, descending
    totals = [r["total_ns"] for r in doc["kernels"]]
    check(totals == sorted(totals, reverse=True), "default sort is total, descending")

    # Per process.
    rc, out, err = run("report", "--per-process", "--format", "json", data)
    doc = json.loads(out)
    check(rc == 0 and doc["per_process"] and len(doc["processes"]) == 2, "per-process json")
    for p, exp in zip(doc["processes"], (exp_a, exp_b)):
        check_tables(p, exp, f"pid {p['pid']}")

    # CSV: one block per table, each parses, first column names the table.
    rc, out, err = run("report", "--format", "csv", a)
    blocks = [list(csv.reader(io.StringIO(blk))) for blk in out.strip().split("\n\n")]
    check(rc == 0 and len(blocks) == 5 and blocks[4][1][0] == "streams", f"csv blocks {len(blocks)}")
    kern = blocks[0]
    check(kern[0][:5] == ["table", "name", "type", "calls", "total_ns"], f"csv header {kern[0]}")
    got = {r[1]: (int(r[3]), int(r[4])) for r in kern[1:]}
    check(got == exp_a["kernels"], f"csv kernels {got}")
    check(all(len(r) == len(blk[0]) for blk in blocks for r in blk), "csv rows as wide as headers")
    mem = {(r[1], r[2], r[3]): (int(r[4]), int(r[6]), int(r[5])) for r in blocks[2][1:]}
    check(mem == exp_a["memcpy"], f"csv memcpy {mem}")

    # Text: demangled names, titles, units.
    rc, out, err = run("report", a)
    check(rc == 0 and "GPU kernels" in out and "void reduce<256>(float const*, float*, int)" in out
          and "cudaStreamSynchronize" in out and "pinned -> device" in out and "f16*f16->f16" in out,
          "text tables")

    # Sorting and limits.
    rc, out, err = run("report", "--format", "json", "--sort", "name", "--limit", "2",
                       "--tables", "apis", a)
    doc = json.loads(out)
    check([r["name"] for r in doc["apis"]] == ["__cudaLaunchKernel", "cuLaunchKernel"],
          f"sort by name, limit 2: {[r['name'] for r in doc['apis']]}")
    check("kernels" not in doc, "--tables apis leaves the others out")
    rc, out, err = run("report", "--format", "json", "--sort", "calls", "--tables", "kernels", a)
    calls = [r["calls"] for r in json.loads(out)["kernels"]]
    check(calls == sorted(calls, reverse=True), "sort by calls")

    # --by range: NVTX ranges "step" > "forward" on the main thread (gentrace.c): step holds
    # the HtoD copy, vadd, the Sgemm and (odd i) the batched GEMM; forward all but the copy.
    for n, path, label in ((40, a, "one file"), (65, data, "merged")):
        rc, out, err = run("report", "--by", "range", "--format", "json", path)
        doc = json.loads(out)
        got = {r["name"]: (r["calls"], r["kernels"], r["activities"], r["cpu_ns"], r["gpu_ns"])
               for r in doc.get("ranges", [])}
        n_odd = 20 + 12 if n == 65 else 20
        want = {"step": (n, 2 * n + n_odd, 3 * n + n_odd, 108000 * n, 92000 * n + 10000 * n_odd),
                "forward": (n, 2 * n + n_odd, 2 * n + n_odd, 18500 * n, 52000 * n + 10000 * n_odd)}
        check(rc == 0 and got == want and "kernels" not in doc, f"--by range ({label}): {got} != {want}")
    rc, out, err = run("report", "--by", "range", "--per-process", "--format", "csv", data)
    rows = list(csv.reader(io.StringIO(out)))
    check(rc == 0 and rows[0][:4] == ["table", "pid", "rank", "name"] and  # no rank: empty
          sorted((r[1], r[2], r[3], r[4]) for r in rows[1:] if r and r[0] == "ranges") ==
          [("100", "", "forward", "40"), ("100", "", "step", "40"), ("200", "", "forward", "25"),
           ("200", "", "step", "25")],
          f"--by range per process, csv: {rows}")
    rc, out, err = run("report", "--by", "range", a)
    check(rc == 0 and "NVTX ranges" in out and "step" in out and "forward" in out, "--by range text")

    # Bad options.
    for bad in (["--format", "xml"], ["--sort", "size"], ["--limit", "x"], ["--bogus"],
                ["--tables", "nope"], ["--by", "line"], ["--format"]):
        rc, out, err = run("report", *bad, a)
        check(rc == 2 and err.count("\n") == 1 and "cutrace report:" in err, f"bad option {bad}: {rc} {err!r}")
    rc, out, err = run("report", "--help")
    check(rc == 0 and "usage: cutrace report" in out, "--help")
    # --tables chooses among --by kernel's tables: with another --by it was silently ignored
    for by in ("range", "callsite", "stack"):
        rc, out, err = run("report", "--by", by, a, "--tables", "kernels")
        check(rc == 2 and not out and err.count("\n") == 1 and f"--by {by} prints its own" in err,
              f"--tables with --by {by}: {rc} {err!r}")
    rc, out, err = run("report", "--by", "kernel", "--tables", "apis", a)
    check(rc == 0 and "CUDA API calls" in out and "GPU kernels" not in out, f"--tables with --by kernel: {rc} {err!r}")

    # A progress line on stderr when it is a terminal (every 2^20 records), cleared at the end.
    long = os.path.join(d, "long.ctr")
    subprocess.run([gentrace, "--mixed", long, "50000", "400"], check=True)
    master, slave = pty.openpty()
    p = subprocess.run([cutrace, "report", long], stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    shown = b""
    try:
        while chunk := os.read(master, 4096):
            shown += chunk
    except OSError:
        pass
    os.close(master)
    check(p.returncode == 0 and b"cutrace report: " + long.encode() + b": 1.0M records" in shown
          and shown.endswith(b"\r\x1b[K"), f"progress line on a terminal: {shown[:100]!r}")
    rc, out, err = run("report", long)
    check(rc == 0 and err == "", f"no progress line when stderr is not a terminal: {err!r}")
    os.unlink(long)

    # Damage: truncated, corrupt in the middle, empty, foreign.
    big = os.path.join(d, "big.ctr")
    subprocess.run([gentrace, "--mixed", big, "20000", "300", "16384"], check=True)
    raw = open(big, "rb").read()
    cut = os.path.join(d, "cut.ctr")
    open(cut, "wb").write(raw[: len(raw) // 2])
    rc, out, err = run("report", "--format", "json", cut)
    check(rc == 1 and "cut.ctr" in err and "offset" in err and err.count("\n") == 1,
          f"truncated: {rc} {err!r}")
    doc = json.loads(out)
    n_vadd = rows_of(doc)["kernels"].get("vadd(float const*, float const*, float*, int)", (0, 0))[0]
    check(1000 < n_vadd < 20000, f"truncated file still counted: {n_vadd} vadd")
    check(doc["status"] == "partial" and doc["files"][0]["status"] == "partial", "json says partial")
    rc, out, err = run("report", "--by", "range", "--format", "json", cut)
    steps = [r["calls"] for r in json.loads(out)["ranges"] if r["name"] == "step"]
    check(rc == 1 and "cut.ctr" in err and steps and 1000 < steps[0] < 20000,
          f"--by range on a truncated file: {rc} {steps} {err!r}")
    bad = os.path.join(d, "corrupt.ctr")
    mid = bytearray(raw)
    for i in range(len(raw) // 3, len(raw) // 3 + 64):
        mid[i] ^= 0x5A
    open(bad, "wb").write(bytes(mid))
    rc, out, err = run("report", "--format", "json", bad)
    n_vadd = rows_of(json.loads(out))["kernels"].get("vadd(float const*, float const*, float*, int)", (0, 0))[0]
    check(rc == 1 and "corrupt.ctr" in err, f"corrupt: {rc} {err!r}")
    check(15000 < n_vadd < 20000, f"corrupt file: frames after the damage still used ({n_vadd})")
    empty = os.path.join(d, "empty.ctr")
    open(empty, "wb").close()
    foreign = os.path.join(d, "foreign.ctr")
    open(foreign, "w").write("{\"not\": \"a trace\"}\n")
    for path, what in ((empty, "empty"), (foreign, "not a cutrace trace")):
        rc, out, err = run("report", path)
        check(rc == 2 and what in err and os.path.basename(path) in err, f"{what}: {rc} {err!r}")
    # a readable file next to an unreadable one: the result is partial, not an error
    rc, out, err = run("report", "--format", "json", a, foreign)
    check(rc == 1 and "foreign.ctr" in err, f"good + foreign: {rc} {err!r}")
    check_tables(json.loads(out), exp_a, "good + foreign")
    # Library calls timed by the kernels they launch (format 1.1), next to a GEMM timed
    # as one activity: GEMM rows are the sums of their child kernels, nothing counted twice.
    import inner_scenario
    inner = os.path.join(d, "inner.ctr")
    plan = inner_scenario.write(inner, 12)
    want = inner_scenario.expected_report(12)
    rc, out, err = run("report", "--format", "json", inner)
    doc = json.loads(out)
    check(rc == 0 and not err, f"inner: {rc} {err!r}")
    kern = {r["name"]: (r["calls"], r["total_ns"], r["launched_by"]) for r in doc["kernels"]}
    check(kern == want["kernels"], f"inner: kernel rows {kern}")
    gem = {(r["api"], r["m"], r["n"], r["k"]): (r["calls"], r["total_ns"], r["kernels"], r["inner_timed"])
           for r in doc["gemms"]}
    check(gem == want["gemms"], f"inner: GEMM rows {gem}")
    # each INNER_TIMED GEMM row is the sum of the activities whose parent is one of its calls
    by_parent = {}
    for act in plan["activities"]:
        if act["parent"]:
            by_parent.setdefault(act["name"] == "lt_kernel", []).append(act["end"] - act["start"])
    check(gem[("cublasSgemm_v2", 128, 256, 64)][1] == sum(by_parent[False]) and
          gem[("cublasLtMatmul", 64, 64, 64)][1] == sum(by_parent[True]), "inner: GEMM = sum of children")
    sgemm = [r for r in doc["gemms"] if r["api"] == "cublasSgemm_v2"][0]
    check(sgemm["min_ns"] == sgemm["max_ns"] == 12000 and sgemm["median_ns"] == 12000,
          f"inner: one sample per GEMM call (its kernels' sum): {sgemm}")
    check(abs(sgemm["gflops"] - 2 * 128 * 256 * 64 / 12000) < 0.01, f"inner: GFLOP/s {sgemm['gflops']}")
    apis = {(r["name"], r["inner"]): r["calls"] for r in doc["apis"]}
    check(apis == want["apis"], f"inner: API rows {apis}")
    check(doc["calls"] == 4 * 12, f"inner: top-level calls {doc['calls']}")
    total = sum(a["end"] - a["start"] for a in plan["activities"])
    check(doc["gpu_total_ns"] == want["gpu_total_ns"] == total and
          sum(r["total_ns"] for r in doc["kernels"]) == total,
          f"inner: GPU time counted once: {doc['gpu_total_ns']} vs {total}")
    rc, out, err = run("report", inner)
    check(rc == 0 and "k_main(float*)  [by cublasSgemm_v2]" in out and "cuLaunchKernel (inner)" in out,
          f"inner: text marks {out[:1500]}")
    rc, out, err = run("report", "--format", "csv", "--tables", "apis,kernels", inner)
    rows = list(csv.reader(io.StringIO(out.replace("\n\n", "\n"))))
    check(["apis", "cuLaunchKernel", "36"] == [x for x in rows if x[:2] == ["apis", "cuLaunchKernel"]][0][:3] and
          [x for x in rows if x[:2] == ["apis", "cuLaunchKernel"]][0][-1] == "1", f"inner: csv inner column {rows}")
    rc, out, err = run("report", "--by", "range", "--format", "json", inner)
    rng = {r["name"]: (r["calls"], r["kernels"], r["gpu_ns"]) for r in json.loads(out)["ranges"]}
    check(rc == 0 and rng == want["ranges"], f"inner: --by range {rng}")
    # Ranges nested 5 deep (more than a call's entry keeps inline): L0 > L1 > L2 > L3 > L4;
    # per instance a kernel launched in L4 (100 us) and a copy launched in L2 outside L3
    # (30 us); odd instances write their GPU records after the ranges close (pending),
    # even ones before. Every level is credited: L0-L2 both, L3 and L4 the kernel.
    from tracewrite import TraceWriter
    w = TraceWriter()
    w.add("process", pid=9, start_ns=10**9)
    lk, cp = w.string("cudaLaunchKernel"), w.string("cudaMemcpyAsync")
    kname, levels = w.string("_Z4deepv"), [w.string(f"L{i}") for i in range(5)]
    for i in range(4):
        t, ca, cb = 10**9 + i * 10**7, 2 * i + 1, 2 * i + 2
        gpu = [("gpu", dict(corr=ca, stream=1, start_ns=t + 10**6, end_ns=t + 10**6 + 100000,
                            type=1, name=kname)),
               ("gpu", dict(corr=cb, stream=1, start_ns=t + 2 * 10**6, end_ns=t + 2 * 10**6 + 30000,
                            type=2, name=0))]
        w.add("api", tid=9, name=cp, begin_ns=t + 2000, end_ns=t + 3000, corr=cb, stream=1, flags=4)
        w.add("api", tid=9, name=lk, begin_ns=t + 5000, end_ns=t + 6000, corr=ca, stream=1, flags=4)
        if i % 2 == 0:
            for kind, f in gpu:
                w.add(kind, **f)
        for lv in range(4, -1, -1):  # written as they close: the innermost first
            w.add("range", tid=9, name=levels[lv], begin_ns=t + (4000 if lv >= 3 else 1000 - lv),
                  end_ns=t + (7000 if lv >= 3 else 8000 + lv), depth=lv)
        if i % 2:
            for kind, f in gpu:
                w.add(kind, **f)
    deep = os.path.join(d, "deep.ctr")
    w.save(deep)
    rc, out, err = run("report", "--by", "range", "--format", "json", deep)
    rng = {r["name"]: (r["calls"], r["kernels"], r["gpu_ns"]) for r in json.loads(out)["ranges"]}
    want_deep = {f"L{i}": (4, 4, 4 * 130000) if i < 3 else (4, 4, 4 * 100000) for i in range(5)}
    check(rc == 0 and rng == want_deep, f"ranges nested 5 deep: {rng} != {want_deep}")
    # Lost records: children whose GEMM call is missing, a GEMM whose child's GPU record
    # is missing. Kernels still count once; the GEMM keeps what arrived; nothing hangs.
    from tracewrite import TraceWriter
    w = TraceWriter()
    w.add("process", pid=9, start_ns=10**9)
    cu, sg, k = w.string("cuLaunchKernel"), w.string("cublasSgemm_v2"), w.string("_Z1kv")
    for i in range(6000):  # orphans (parent corr 10**6 + i never written), swept as they age
        t = 10**9 + i * 10**6
        w.add("api", tid=9, name=cu, begin_ns=t, end_ns=t + 1000, corr=i + 1, depth=1,
              parent=10**6 + i, flags=0x14)
        w.add("launch", corr=i + 1, kernel=k)
        w.add("gpu", corr=i + 1, start_ns=t + 2000, end_ns=t + 3000, type=1, name=k)
    t = 10**9 + 7000 * 10**6
    w.add("api", tid=9, name=cu, begin_ns=t + 100, end_ns=t + 200, corr=5001, depth=1, parent=5000, flags=0x14)
    w.add("api", tid=9, name=cu, begin_ns=t + 300, end_ns=t + 400, corr=5002, depth=1, parent=5000, flags=0x14)
    w.add("api", tid=9, name=sg, begin_ns=t, end_ns=t + 500, corr=5000, flags=0x20)
    w.add("gemm", corr=5000, m=8, n=8, k=8, batch=1)
    w.add("gpu", corr=5001, start_ns=t + 600, end_ns=t + 1600, type=1, name=k)
    # a GEMM that sets its workspace before its kernel: both are its GPU work
    ms = w.string("cuMemsetD8Async")
    t += 10**6
    w.add("api", tid=9, name=ms, begin_ns=t + 100, end_ns=t + 200, corr=6001, depth=1, parent=6000, flags=0x14)
    w.add("memop", corr=6001, bytes=4096, kind=5, dst_mem=1)
    w.add("api", tid=9, name=cu, begin_ns=t + 300, end_ns=t + 400, corr=6002, depth=1, parent=6000, flags=0x14)
    w.add("api", tid=9, name=sg, begin_ns=t, end_ns=t + 500, corr=6000, flags=0x20)
    w.add("gemm", corr=6000, m=16, n=16, k=16, batch=1)
    w.add("gpu", corr=6001, start_ns=t + 600, end_ns=t + 800, type=3)
    w.add("gpu", corr=6002, start_ns=t + 800, end_ns=t + 1800, type=1, name=k)
    lossy = os.path.join(d, "lossy.ctr")
    w.save(lossy)
    rc, out, err = run("report", "--format", "json", lossy)
    doc = json.loads(out)
    kern = {r["name"]: (r["calls"], r["total_ns"]) for r in doc["kernels"]}
    gem = {(r["api"], r["m"]): (r["calls"], r["total_ns"], r["kernels"]) for r in doc["gemms"]}
    sets = [(r["kind"], r["count"], r["total_ns"]) for r in doc["memcpy"]]
    check(rc == 0 and kern == {"k()": (6002, 6002000)} and sets == [("memset", 1, 200)] and
          gem == {("cublasSgemm_v2", 8): (1, 1000, 1), ("cublasSgemm_v2", 16): (1, 1200, 2)} and
          doc["gpu_total_ns"] == 6002200, f"lost records: {rc} {kern} {gem} {sets} {err!r}")
    rc, out, err = run("report", os.path.join(d, "missing"))
    check(rc == 2 and "No such file" in err, f"missing: {rc} {err!r}")

finish()
