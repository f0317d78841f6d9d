#!/usr/bin/env python3
"""cutrace diff --format csv carries every field the text and JSON show (docs/diff.md,
"Output"): a kernel's registers, shared memory and occupancy on each side, a copy's
kind and memory types, a GEMM's entry point and shape parts (batch, transposes, types,
epilogue), an inner API call, the --per-range instances and an `inputs` block naming
each side's files, pid, host and rank. Planted traces of known content; each CSV cell
is checked against the planted answer and against the JSON of the same diff.

usage: test_diff_csv.py CUTRACE
"""
import csv
import io
import json
import os
import sys

from tracewrite import TraceWriter
import tooltest
from tooltest import check, finish, scratch

cutrace = sys.argv[1]
US = 1000
T0 = 10**9
STEP = 1000 * US


def write(path, side, steps, pid, rank):
    """BEFORE: k_attr under two configurations (32 regs, 50 %; 64 regs, 25 %), a
    batched f16 GEMM with A transposed, a device memset, cudaMemcpy with an inner
    cuMemcpyHtoD_v2. AFTER: k_attr at 128 regs, 1 KiB static shared memory, 12.5 %; a
    bf16 cublasLtMatmul with epilogue 2; the memset and the calls as before."""
    w = TraceWriter()
    s = {}

    def sid(text):
        if text not in s:
            s[text] = w.string(text)
        return s[text]

    before = side == "before"
    w.add("process", pid=pid, ppid=1, start_ns=T0, host=sid("node7"), cmdline=sid("./train"))
    w.add("job", known=0x1f, rank=rank, world_size=4, local_rank=rank, local_world_size=4,
          node_rank=0)
    w.add("device", device=0, name=sid("cutrace simulated GPU"), cc_major=9, sm_count=132,
          max_threads_per_sm=2048, warp_size=32)
    if before:  # 32-thread blocks on a 2048-thread SM: 64 blocks are 100 %
        w.add("kernel_attr", id=1, name=sid("_Z6k_attrPf"), regs=32, max_threads=1024)
        w.add("occupancy", attr=1, device=0, block_threads=32, dyn_smem=0, blocks_per_sm=32)
        w.add("kernel_attr", id=2, name=sid("_Z6k_attrPf"), regs=64, max_threads=1024)
        w.add("occupancy", attr=2, device=0, block_threads=32, dyn_smem=0, blocks_per_sm=16)
    else:
        w.add("kernel_attr", id=3, name=sid("_Z6k_attrPf"), regs=128, static_smem=1024,
              max_threads=1024)
        w.add("occupancy", attr=3, device=0, block_threads=32, dyn_smem=0, blocks_per_sm=8)
    w.add("thread", tid=pid, name=sid("main"), start_ns=T0)
    corr = 0
    for i in range(steps):
        t = T0 + i * STEP
        cpu, gpu = t + 10 * US, t + 15 * US

        def call(api, dur_us):
            nonlocal corr, cpu
            corr += 1
            b, e = cpu, cpu + dur_us * US
            w.add("api", tid=pid, name=sid(api), begin_ns=b, end_ns=e, corr=corr, flags=0x4)
            cpu = e + US
            return corr, e

        def gpu_op(c, e, dur_us, **kw):
            nonlocal gpu
            gs = max(gpu, e + US)
            w.add("gpu", corr=c, start_ns=gs, end_ns=gs + dur_us * US, **kw)
            gpu = gs + dur_us * US + US

        for j in range(2):
            c, e = call("__cudaLaunchKernel", 2)
            attr = (1 + j) if before else 3
            w.add("launch", corr=c, kernel=sid("_Z6k_attrPf"), grid_x=1, block_x=32, block_y=1,
                  block_z=1, attr=attr)
            gpu_op(c, e, 10 if before else 20, type=1, name=sid("_Z6k_attrPf"))
        api = "cublasSgemmStridedBatched" if before else "cublasLtMatmul"
        c, e = call(api, 8)
        if before:
            w.add("gemm", corr=c, m=64, n=32, k=16, batch=4, transa=1, transb=0, atype=2,
                  btype=2, ctype=0, compute_type=68)
        else:
            w.add("gemm", corr=c, m=64, n=32, k=16, batch=1, transa=0, transb=1, atype=14,
                  btype=14, ctype=14, epilogue=2, compute_type=77)
        gpu_op(c, e, 30, type=4, name=sid(api))
        c, e = call("cudaMemsetAsync", 3)
        w.add("memop", corr=c, bytes=4096, kind=5, src_mem=0, dst_mem=1, **{"async": 1})
        gpu_op(c, e, 4, type=3)
        # cudaMemcpy (no GPU record) with the driver call it makes inside it (depth 1,
        # written first: it returns first)
        outer, corr = corr + 1, corr + 2
        b = cpu
        w.add("api", tid=pid, name=sid("cuMemcpyHtoD_v2"), begin_ns=b + 2 * US,
              end_ns=b + (8 if before else 6) * US, corr=corr, depth=1, parent=outer, flags=0x10)
        w.add("api", tid=pid, name=sid("cudaMemcpy"), begin_ns=b, end_ns=b + 10 * US, corr=outer)
        cpu = b + 11 * US
        w.add("range", tid=pid, name=sid("step"), begin_ns=t, end_ns=t + 900 * US, depth=0)
    w.save(path)


def blocks_of(out):
    """{table id: (header, [rows])} of diff's CSV blocks (one per table, empty line between)."""
    got = {}
    for text in out.strip().split("\n\n"):
        rows = list(csv.reader(io.StringIO(text)))
        check(rows and all(len(r) == len(rows[0]) for r in rows),
              f"a block's rows as wide as its header: {rows[:2]}")
        got[rows[1][0] if len(rows) > 1 else "?"] = (rows[0], rows[1:])
    return got


def by_name(block):
    header, rows = block
    return {r[header.index("name")]: dict(zip(header, r)) for r in rows}


def csv_diff(*args):
    rc, out, err = tooltest.run(cutrace, "diff", "--format", "csv", *args)
    check(rc == 0 and not err, f"csv exit {rc}: {err!r}")
    return blocks_of(out)


def json_diff(*args):
    rc, out, err = tooltest.run(cutrace, "diff", "--format", "json", *args)
    check(rc == 0 and not err, f"json exit {rc}: {err!r}")
    return json.loads(out)


with scratch("cutrace-diff-csv-") as d:
    before, after = os.path.join(d, "before.ctr"), os.path.join(d, "after.ctr")
    write(before, "before", 4, pid=100, rank=2)
    write(after, "after", 8, pid=200, rank=3)

    blocks = csv_diff(before, after)
    check(list(blocks) == ["summary", "kernels", "memcpy", "gemms", "inputs"],
          f"CSV blocks in order: {list(blocks)}")
    doc = json_diff(before, after)
    common = ["table", "status", "name", "calls_before", "calls_after", "total_before_ns",
              "total_after_ns", "delta_ns", "delta_pct", "avg_before_ns", "avg_after_ns",
              "avg_delta_pct"]
    want_headers = {
        "kernels": common + ["mangled", "regs_before", "regs_after", "smem_before",
                             "smem_after", "occupancy_pct_before", "occupancy_pct_after"],
        "memcpy": common + ["bytes_before", "bytes_after", "kind", "src", "dst"],
        "gemms": common + ["api", "m", "n", "k", "batch", "transa", "transb", "atype", "btype",
                           "ctype", "epilogue", "compute_type", "compute_type_name", "atype_name",
                           "btype_name", "ctype_name"],
    }
    for t, h in want_headers.items():
        check(blocks[t][0] == h, f"{t} header\n  got  {blocks[t][0]}\n  want {h}")

    # kernels: both configurations of BEFORE as ranges, AFTER's one, as the text shows them
    k = by_name(blocks["kernels"]).get("k_attr(float*)", {})
    check((k.get("mangled"), k.get("regs_before"), k.get("regs_after"), k.get("smem_before"),
           k.get("smem_after"), k.get("occupancy_pct_before"), k.get("occupancy_pct_after"))
          == ("_Z6k_attrPf", "32-64", "128", "0", "1024", "25.00-50.00", "12.50"),
          f"k_attr attributes in CSV: {k}")
    ja = [r for r in doc["kernels"] if r["name"] == "k_attr(float*)"][0]
    check((ja["attributes_before"]["regs_min"], ja["attributes_before"]["regs_max"],
           ja["attributes_after"]["occupancy_pct_min"]) == (32, 64, 12.5),
          f"k_attr attributes in JSON: {ja['attributes_before']} {ja['attributes_after']}")
    rc, text, _ = tooltest.run(cutrace, "diff", before, after)
    check("k_attr(float*)  [regs 32-64 -> 128, smem 0 -> 1024, occ 25-50 -> 12 %]" in text
          or "k_attr(float*)  [regs 32-64 -> 128, smem 0 -> 1024, occ 25-50 -> 13 %]" in text,
          f"the text's attribute change:\n{text}")
    g = by_name(blocks["kernels"]).get("cublasLtMatmul", {})
    check(g.get("regs_before") == "" and g.get("occupancy_pct_after") == "",
          f"a kernel row without attributes has empty cells: {g}")

    # memory operations: kind and memory types, bytes per side
    m = by_name(blocks["memcpy"]).get("memset device", {})
    check((m.get("kind"), m.get("src"), m.get("dst"), m.get("bytes_before"), m.get("bytes_after"))
          == ("memset", "unknown", "device", str(4 * 4096), str(8 * 4096)),
          f"memset row in CSV: {m}")
    jm = doc["memcpy"][0]
    check((jm["kind"], jm["src"], jm["dst"]) == (m.get("kind"), m.get("src"), m.get("dst")),
          f"memset row, CSV against JSON: {jm}")

    # GEMMs: every part of the shape, epilogue included; the operand types as report's CSV
    # has them: the recorded cudaDataType numbers, their names at the end
    gem = by_name(blocks["gemms"])
    parts = ["status", "api", "m", "n", "k", "batch", "transa", "transb", "atype_name", "btype_name",
             "ctype_name", "epilogue", "compute_type", "compute_type_name", "calls_before",
             "calls_after"]
    got = {name: [row[p] for p in parts] for name, row in gem.items()}
    want = {"cublasSgemmStridedBatched 64x32x16 x4 TN f16*f16->f32 32F":
            ["removed", "cublasSgemmStridedBatched", "64", "32", "16", "4", "1", "0", "f16",
             "f16", "f32", "0", "68", "32F", "4", "0"],
            "cublasLtMatmul 64x32x16 NT bf16*bf16->bf16 32F_FAST_TF32 epilogue 2":
            ["added", "cublasLtMatmul", "64", "32", "16", "1", "0", "1", "bf16", "bf16", "bf16",
             "2", "77", "32F_FAST_TF32", "0", "8"]}
    check(got == want, f"GEMM rows\n  got  {got}\n  want {want}")
    raw = {name: [row["atype"], row["btype"], row["ctype"]] for name, row in gem.items()}
    check(sorted(raw.values()) == [["14", "14", "14"], ["2", "2", "0"]], f"GEMM rows' raw types: {raw}")
    jg = {r["name"]: [r["status"], r["api"], str(r["m"]), str(r["n"]), str(r["k"]),
                      str(r["batch"]), str(int(r["transa"])), str(int(r["transb"])), r["atype"],
                      r["btype"], r["ctype"], str(r["epilogue"]), str(r["compute_type"]),
                      r["compute_type_name"], str(r["calls_before"]),
                      str(r["calls_after"])] for r in doc["gemms"]}
    check(jg == want, f"GEMM rows in JSON\n  got  {jg}\n  want {want}")
    # report's CSV: the same convention (numbers, then the names)
    rc, out, err = tooltest.run(cutrace, "report", "--format", "csv", "--tables", "gemms", before)
    rows = list(csv.reader(io.StringIO(out)))
    rep = [dict(zip(rows[0], r)) for r in rows[1:]] if rc == 0 and rows else []
    check([(r["atype"], r["btype"], r["ctype"], r["atype_name"], r["btype_name"], r["ctype_name"],
            r["compute_type"], r["compute_type_name"]) for r in rep]
          == [("2", "2", "0", "f16", "f16", "f32", "68", "32F")] and rows[0][-4:]
          == ["compute_type_name", "atype_name", "btype_name", "ctype_name"],
          f"report CSV GEMM types: {rc} {err!r} {rows}")

    # inputs: each side's file, pid, host, rank
    ih, irows = blocks["inputs"]
    check(ih == ["table", "side", "path", "status", "pid", "host", "rank"], f"inputs header {ih}")
    check(irows == [["inputs", "before", before, "clean", "100", "node7", "2"],
                    ["inputs", "after", after, "clean", "200", "node7", "3"]],
          f"inputs rows {irows}")

    # --by api: the inner call flagged; --per-range: the instances in the summary
    api = csv_diff("--by", "api", "--per-range", "step", before, after)
    check(api["apis"][0][-1] == "inner", f"apis header {api['apis'][0]}")
    rows = by_name(api["apis"])
    inner = {n: (r.get("inner"), r.get("calls_before"), r.get("calls_after"))
             for n, r in rows.items() if n.startswith("cu")}
    check(inner.get("cuMemcpyHtoD_v2 (inner)") == ("1", "1", "1")
          and inner.get("cudaMemcpy") == ("0", "1", "1"),
          f"inner flag and per-step calls: {inner}")
    inst = [r for r in api["summary"][1] if r[1] == "per_range_instances"]
    check(inst == [["summary", "per_range_instances", "4", "8", "4", "2.0000"]],
          f"per-range instances in the summary: {inst}")
    plain = csv_diff(before, after)
    check(not [r for r in plain["summary"][1] if r[1] == "per_range_instances"],
          "no instances row without --per-range")

    # the help says what the CSV holds
    rc, out, err = tooltest.run(cutrace, "diff", "--help")
    check(rc == 0 and "then the inputs" in out, f"diff --help on CSV: {out!r}")

finish()
