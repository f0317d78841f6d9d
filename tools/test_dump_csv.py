#!/usr/bin/env python3
"""cutrace dump --csv on planted traces (tracewrite.py) and generated ones (gentrace):

- planted (pid 77, thread 10): a kernel whose name holds a comma, quotes and a line
  break, launched inside the NVTX range `inner, "quoted"` (depth 1) inside `outer`, its
  GPU record read 20 ms after both closed; a copy in `outer` only; a cublasSgemm_v2 whose
  kernel (depth 1) ends 25 ms after the library call; a call after every range closed.
  Checked: every field round-trips through Python's csv module, the range and library
  call of each row, the launch shape, bytes, GB/s, the order (end times), and
  --rows gpu / calls;
- gentrace: a launch loop (exact times, 2 rows per launch); a truncated copy (exit 1,
  one line naming the file, every row before the damage as in the whole file); lost
  records (the "tracer lost" line, exit 0); NVTX steps inside a "train" range, and
  "train" alone around every launch, also with a hold of 100 rows
  (CUTRACE_CSV_HOLD_MAX), where rows cannot wait for "train" to close and take it from
  the first pass; a range whose rows are pushed out by another thread's (one line,
  counted); a directory of two files (file by file);
- standard input ("-"): the same table as the file (it is read twice), an empty one one
  line naming '-';
- a call made after its thread's last range: no range (the first pass says none of the
  file's ranges ends after it), without holding the rows after it back or writing it as
  unknown past a hold of 100; the rows after it name their library call
  (cublasSgemm_v2 on another thread), also in the same file without its END record,
  where they wait to its end;
- the first late records of a file (a thread's records 100 ms behind another's, past
  the model's first reorder window): in end order (the first pass measures the lateness
  and fixes the window); 3 s late with CUTRACE_JOIN_HOLD=10, out of order and said;
- bad options (also the Chrome-only --queues, --no-memory, --no-gaps, --gap-min,
  which a table would ignore): one line, exit 2.

usage: test_dump_csv.py CUTRACE GENTRACE"""
import csv
import io
import os
import subprocess
import sys

import tooltest
from tooltest import check, finish, scratch
from tracewrite import TraceWriter

cutrace, gentrace = sys.argv[1], sys.argv[2]
TIMED, INNER_TIMED = 0x4, 0x20
T0 = 10**9
MS = 10**6
WEIRD = 'void k<int, 2>(float*) "fast"\nv2'
INNER = 'inner, "quoted"'


def dump_csv(*args, env=None):
    """(status, rows as dicts, raw text, stderr) of `cutrace dump --csv ARGS`."""
    e = dict(os.environ, **(env or {}))
    p = subprocess.run([cutrace, "dump", "--csv", *args], capture_output=True, env=e, timeout=120)
    text = p.stdout.decode()
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    return p.returncode, rows, text, p.stderr.decode()


def planted(path):
    w = TraceWriter()
    w.add("process", pid=77, ppid=1, start_ns=T0, host=w.string("h"))
    w.add("device", device=0, name=w.string("GPU"), cc_major=9, sm_count=132)
    weird, gemm_kernel = w.string(WEIRD), w.string("_Z9sgemm_k64v")

    def api(name, corr, begin, end, flags=TIMED, depth=0, parent=0, tid=10):
        w.add("api", tid=tid, name=w.string(name), begin_ns=begin, end_ns=end, corr=corr,
              flags=flags, depth=depth, parent=parent)

    # corr 1: the weird kernel, launched in inner (1..2 ms) in outer (0.5..10 ms)
    w.add("launch", corr=1, kernel=weird, grid_x=4, grid_y=2, grid_z=1, block_x=128,
          block_y=1, block_z=1, shmem=256)
    api("cudaLaunchKernel", 1, T0 + 1_100_000, T0 + 1_200_000)
    w.add("range", tid=10, name=w.string(INNER), begin_ns=T0 + 1 * MS, end_ns=T0 + 2 * MS, depth=1)
    # corr 2: a copy in outer only, 1 MiB in 0.5 ms
    w.add("memop", corr=2, bytes=1 << 20, kind=1, src_mem=3, dst_mem=1)
    api("cudaMemcpy", 2, T0 + 3 * MS, T0 + 4 * MS)
    w.add("gpu", corr=2, stream=0, start_ns=T0 + 3_200_000, end_ns=T0 + 3_700_000, type=2)
    # corr 3: cublasSgemm_v2 (5..6 ms), its kernel corr 4 (depth 1) ends at 30 ms
    w.add("launch", corr=4, kernel=gemm_kernel, grid_x=8, grid_y=1, grid_z=1, block_x=256,
          block_y=1, block_z=1)
    api("cuLaunchKernel", 4, T0 + 5_200_000, T0 + 5_300_000, depth=1, parent=3)
    w.add("gemm", corr=3, m=64, n=32, k=16, batch=1)
    api("cublasSgemm_v2", 3, T0 + 5 * MS, T0 + 6 * MS, flags=INNER_TIMED)
    w.add("range", tid=10, name=w.string("outer"), begin_ns=T0 + MS // 2, end_ns=T0 + 10 * MS)
    # corr 5: after every range closed
    api("cudaDeviceSynchronize", 5, T0 + 12 * MS, T0 + 13 * MS, flags=0)
    w.add("gpu", corr=1, stream=7, start_ns=T0 + 21 * MS, end_ns=T0 + 22 * MS, type=1, name=weird)
    w.add("gpu", corr=4, stream=0, start_ns=T0 + 29 * MS, end_ns=T0 + 30 * MS, type=1,
          name=gemm_kernel)
    w.add("end", records=0, end_ns=T0 + 40 * MS)
    w.save(path)


def crowded(path):
    """Thread 20 calls once inside range "slow" (0..1 s), then thread 21 makes 300 calls
    (1 ms apart) with no range; the range closes after them."""
    w = TraceWriter()
    w.add("process", pid=78, ppid=1, start_ns=T0, host=w.string("h"))
    sync = w.string("cudaStreamSynchronize")
    w.add("api", tid=20, name=sync, begin_ns=T0 + MS, end_ns=T0 + 2 * MS, corr=1)
    for i in range(300):
        t = T0 + 3 * MS + i * MS  # 300 ms: past the reorder window
        w.add("api", tid=21, name=sync, begin_ns=t, end_ns=t + 500, corr=2 + i)
    w.add("range", tid=20, name=w.string("slow"), begin_ns=T0, end_ns=T0 + 1000 * MS)
    w.add("end", records=0, end_ns=T0 + 1001 * MS)
    w.save(path)


def after_last_range(path, end=True):
    """Thread 20 calls once after its only range ("early") closed. Then thread 21 (no
    ranges) calls cublasSgemm_v2, whose launch (depth 1) and kernel are inside it, and
    makes 150 more calls. A record of a range that holds thread 20's call could still
    come until the file ends: unless the first pass says none does, that call and every
    row after it wait, and past the hold the call is written as unknown."""
    w = TraceWriter()
    w.add("process", pid=79, ppid=1, start_ns=T0, host=w.string("h"))
    launch, gemm_kernel = w.string("cuLaunchKernel"), w.string("_Z9sgemm_k64v")
    w.add("range", tid=20, name=w.string("early"), begin_ns=T0, end_ns=T0 + MS)
    w.add("api", tid=20, name=w.string("cudaStreamSynchronize"), begin_ns=T0 + 2 * MS,
          end_ns=T0 + 3 * MS, corr=1)
    w.add("launch", corr=3, kernel=gemm_kernel, grid_x=8, grid_y=1, grid_z=1, block_x=256,
          block_y=1, block_z=1)
    w.add("api", tid=21, name=launch, begin_ns=T0 + 4 * MS + 100, end_ns=T0 + 4 * MS + 900,
          corr=3, flags=TIMED, depth=1, parent=2)
    w.add("gemm", corr=2, m=64, n=32, k=16, batch=1)
    w.add("api", tid=21, name=w.string("cublasSgemm_v2"), begin_ns=T0 + 4 * MS,
          end_ns=T0 + 5 * MS, corr=2, flags=INNER_TIMED)
    w.add("gpu", corr=3, stream=0, start_ns=T0 + 6 * MS, end_ns=T0 + 7 * MS, type=1,
          name=gemm_kernel)
    sync = w.string("cudaStreamSynchronize")
    for i in range(150):  # 150 more rows, past a hold of 100
        t = T0 + 10 * MS + i * MS
        w.add("api", tid=21, name=sync, begin_ns=t, end_ns=t + 500, corr=10 + i)
    if end:
        w.add("end", records=0, end_ns=T0 + 400 * MS)
    w.save(path)


def first_late(path, span_ms):
    """Thread 21's records come first: 100 calls (no GPU work) spread over span_ms from
    100 ms on. Then thread 20's, the first lateness of the file (past the model's first
    reorder window of 20 ms): a kernel launch at 10 ms, its GPU record (10.5..12 ms), a
    synchronize (20..30 ms); none of them waits for another record."""
    w = TraceWriter()
    w.add("process", pid=80, ppid=1, start_ns=T0, host=w.string("h"))
    sync, kernel = w.string("cudaStreamSynchronize"), w.string("_Z4latev")
    for i in range(100):
        t = T0 + 100 * MS + i * (span_ms * MS // 100)
        w.add("api", tid=21, name=sync, begin_ns=t, end_ns=t + 500, corr=10 + i)
    w.add("launch", corr=1, kernel=kernel, grid_x=1, grid_y=1, grid_z=1, block_x=32,
          block_y=1, block_z=1)
    w.add("api", tid=20, name=w.string("cudaLaunchKernel"), begin_ns=T0 + 10 * MS,
          end_ns=T0 + 10 * MS + 300, corr=1, flags=TIMED)
    w.add("gpu", corr=1, stream=0, start_ns=T0 + 10 * MS + 500, end_ns=T0 + 12 * MS, type=1,
          name=kernel)
    w.add("api", tid=20, name=sync, begin_ns=T0 + 20 * MS, end_ns=T0 + 30 * MS, corr=2)
    w.add("end", records=0, end_ns=T0 + (100 + span_ms + 1) * MS)
    w.save(path)


with scratch("cutrace-dump-csv-") as d:
    # ---- the first late records of a file: still in end order ---------------------------
    # (before, the window grew only after it saw them: they came after 100 ms of later
    # rows; seen once under load in tests/trace/test_dump_csv.py's multistream)
    p0 = os.path.join(d, "first_late.ctr")
    first_late(p0, 100)
    rc, rows, _, err = dump_csv(p0)
    ends = [int(r["end_ns"]) for r in rows]
    check(rc == 0 and not err and len(rows) == 103 and ends == sorted(ends) and
          [r["correlation"] for r in rows[:3]] == ["1", "1", "2"],
          f"first late: 103 rows in end order, the late ones first: {rc} {err!r} "
          f"{[r['correlation'] for r in rows[:5]]}")
    # Beyond the memory bound (3 s late while more than CUTRACE_JOIN_HOLD events are held):
    # written when they come, and said.
    first_late(p0, 3000)
    rc, rows, _, err = dump_csv(p0)
    ends = [int(r["end_ns"]) for r in rows]
    check(rc == 0 and not err and ends == sorted(ends), f"3 s late: in end order: {rc} {err!r}")
    rc, rows, _, err = dump_csv(p0, env={"CUTRACE_JOIN_HOLD": "10"})
    ends = [int(r["end_ns"]) for r in rows]
    check(rc == 0 and len(rows) == 103 and ends != sorted(ends) and
          err == f"cutrace dump: {p0}: 3 rows out of end order (their records came more than "
                 "2 s of trace time and 10 events late: CUTRACE_JOIN_HOLD)\n",
          f"3 s late, hold 10: out of order, said: {rc} {err!r}")

    # ---- planted --------------------------------------------------------------------
    p1 = os.path.join(d, "planted.ctr")
    planted(p1)
    rc, rows, text, err = dump_csv(p1)
    check(rc == 0 and not err, f"planted: status {rc}, {err!r}")
    check(text.startswith("row,pid,rank,tid,") and text.count("\r\n") >= len(rows) + 1,
          "planted: header, CRLF line ends")
    by = {(r["row"], r["correlation"]): r for r in rows}
    check(len(rows) == 8, f"planted: 5 call rows and 3 gpu rows, got {len(rows)}")
    k = by.get(("gpu", "1"), {})
    check(k.get("name") == WEIRD and k.get("demangled") == WEIRD,
          f"planted: comma, quotes and line break round-trip: {k.get('name')!r}")
    check(k.get("nvtx_range") == INNER, f"planted: kernel read after its ranges closed is in "
                                        f"{INNER!r}: {k.get('nvtx_range')!r}")
    check((k.get("grid_x"), k.get("grid_y"), k.get("block_x"), k.get("dynamic_smem"), k.get("stream"))
          == ("4", "2", "128", "256", "7"), f"planted: launch shape and stream: {k}")
    check((k.get("api"), k.get("call_start_ns"), k.get("launch_delay_ns"), k.get("duration_ns"))
          == ("cudaLaunchKernel", str(T0 + 1_100_000), str(21 * MS - 1_200_000), str(MS)),
          f"planted: launching call, launch delay, duration: {k}")
    c = by.get(("gpu", "2"), {})
    check((c.get("bytes"), c.get("gbps"), c.get("copy_kind"), c.get("src_mem"), c.get("dst_mem"),
           c.get("nvtx_range")) == (str(1 << 20), "2.097", "HtoD", "pageable", "device", "outer"),
          f"planted: copy bytes, GB/s, kinds, range: {c}")
    g = by.get(("gpu", "4"), {})
    lc = by.get(("call", "4"), {})
    check(g.get("library_call") == "cublasSgemm_v2" and g.get("parent_correlation") == "3" and
          lc.get("library_call") == "cublasSgemm_v2" and g.get("nvtx_range") == "outer",
          f"planted: GEMM kernel and its launch inside cublasSgemm_v2, in outer: {g} {lc}")
    s = by.get(("call", "3"), {})
    check((s.get("gemm_m"), s.get("gemm_n"), s.get("gemm_k"), s.get("library_call")) ==
          ("64", "32", "16", ""), f"planted: the GEMM call's shape, no library call: {s}")
    check(by.get(("call", "5"), {}).get("nvtx_range") == "" and
          by.get(("call", "1"), {}).get("nvtx_range") == INNER,
          "planted: calls after and inside the ranges")
    ends = [int(r["end_ns"]) for r in rows]
    check(ends == sorted(ends), f"planted: rows in end order: {ends}")
    rc, gpu_rows, _, _ = dump_csv("--rows", "gpu", p1)
    rc2, call_rows, _, _ = dump_csv("--rows=calls", p1)
    check(rc == rc2 == 0 and gpu_rows == [r for r in rows if r["row"] == "gpu"] and
          call_rows == [r for r in rows if r["row"] == "call"], "planted: --rows gpu, calls")

    # ---- a range whose rows another thread's rows push out of the hold -----------------
    p2 = os.path.join(d, "crowded.ctr")
    crowded(p2)
    rc, rows, _, err = dump_csv(p2, env={"CUTRACE_CSV_HOLD_MAX": "100"})
    check(rc == 0 and err.count("\n") == 1 and "crowded.ctr: 1 row written without knowing"
          in err, f"crowded: one line for the row pushed out: {rc} {err!r}")
    check(len(rows) == 301 and rows[0]["tid"] == "20" and rows[0]["nvtx_range"] == "",
          f"crowded: every row, order kept: {rows[:1]}")
    rc, rows, _, err = dump_csv(p2)
    check(rc == 0 and not err and rows[0]["nvtx_range"] == "slow",
          f"crowded: with the default hold the row waits for its range: {rows[:1]} {err!r}")

    # ---- standard input ("-"), read twice like a file -------------------------------------
    with open(p1, "rb") as f:
        sp = subprocess.run([cutrace, "dump", "--csv", "-"], stdin=f, capture_output=True, timeout=60)
    check(sp.returncode == 0 and not sp.stderr and sp.stdout.decode() == text,
          f"stdin: the same table as the file: {sp.returncode} {sp.stderr!r}")
    sp = subprocess.run([cutrace, "dump", "--csv", "-"], stdin=subprocess.DEVNULL,
                        capture_output=True, timeout=60)
    check(sp.returncode == 2 and sp.stderr.decode() == "cutrace dump: -: empty file\n",
          f"stdin empty: one line naming '-': {sp.returncode} {sp.stderr!r}")

    # ---- rows held to the file's end behind a call after its thread's last range -------
    p3 = os.path.join(d, "after_last_range.ctr")
    after_last_range(p3)
    for hold in ("65536", "100"):
        rc, rows, _, err = dump_csv(p3, env={"CUTRACE_CSV_HOLD_MAX": hold})
        by = {(r["row"], r["correlation"]): r for r in rows}
        check(rc == 0 and not err and len(rows) == 154,
              f"after last range, hold {hold}: 154 rows, none unknown: {rc} {err!r}")
        check(by.get(("call", "1"), {}).get("nvtx_range") == "" and
              by.get(("call", "3"), {}).get("library_call") == "cublasSgemm_v2" and
              by.get(("gpu", "3"), {}).get("library_call") == "cublasSgemm_v2",
              f"after last range, hold {hold}: no range, and the launch and its kernel name "
              f"their library call: {rows[:4]}")
        ends = [int(r["end_ns"]) for r in rows]
        check(ends == sorted(ends), f"after last range, hold {hold}: rows in end order")
    # Without its END record (a file still being written) the first pass cannot say that
    # no range comes: thread 20's call and every row after it wait to the end of the file,
    # and keep the library call read meanwhile.
    p4 = os.path.join(d, "after_last_range_unfinished.ctr")
    after_last_range(p4, end=False)
    rc, rows, _, err = dump_csv(p4)
    by = {(r["row"], r["correlation"]): r for r in rows}
    check(rc == 0 and not err and len(rows) == 154 and
          by.get(("call", "3"), {}).get("library_call") == "cublasSgemm_v2" and
          by.get(("gpu", "3"), {}).get("library_call") == "cublasSgemm_v2",
          f"unfinished file: rows held to its end name their library call: {rc} {err!r} {rows[:4]}")

    # ---- generated launch loop, truncated copy, lost records ----------------------------
    full = os.path.join(d, "gen.4242.ctr")
    subprocess.run([gentrace, full, "50000", "16384"], check=True, capture_output=True)
    rc, rows, _, err = dump_csv(full)
    check(rc == 0 and not err and len(rows) == 100000, f"gen: {len(rows)} rows, {rc} {err!r}")
    last = [r for r in rows if r["row"] == "gpu"][-1] if rows else {}
    check((last.get("correlation"), last.get("start_ns"), last.get("end_ns"), last.get("duration_ns"))
          == ("50000", "1200101000", "1200103000", "2000"), f"gen: last kernel exact: {last}")
    part = os.path.join(d, "part", "cut.ctr")
    os.mkdir(os.path.dirname(part))
    data = open(full, "rb").read()
    open(part, "wb").write(data[: len(data) * 2 // 3])
    rc, cut_rows, _, err = dump_csv(part)
    check(rc == 1 and err.count("\n") == 1 and "cut.ctr: truncated" in err,
          f"truncated: exit 1, one line: {rc} {err!r}")
    check(0 < len(cut_rows) < len(rows) and cut_rows == rows[:len(cut_rows)],
          f"truncated: the rows before the damage, as in the whole file ({len(cut_rows)})")
    drops = os.path.join(d, "drops.ctr")
    subprocess.run([gentrace, "--drops", drops, "10000"], check=True, capture_output=True)
    rc, rows, _, err = dump_csv(drops)
    check(rc == 0 and "drops.ctr: the tracer lost" in err and err.count("\n") == 1,
          f"drops: the lost-records line, exit 0: {rc} {err!r}")
    check(sum(r["row"] == "call" for r in rows) == 9000 and sum(r["row"] == "gpu" for r in rows) == 7000,
          f"drops: 9000 calls and 7000 kernels, got {len(rows)} rows")

    # ---- NVTX ranges: steps inside train; train alone, also with a hold of 100 rows -----
    steps = os.path.join(d, "steps.ctr")
    subprocess.run([gentrace, "--ranged", steps, "5000", "10", "1"], check=True, capture_output=True)
    rc, rows, _, err = dump_csv(steps)
    check(rc == 0 and not err and len(rows) == 10000 and all(r["nvtx_range"] == "step" for r in rows),
          f"steps: every row in a step: {set(r['nvtx_range'] for r in rows)} {err!r}")
    train = os.path.join(d, "train.ctr")
    # 50000 launches: 200 ms, past the model's reorder window (rows then wait for train)
    subprocess.run([gentrace, "--ranged", train, "50000", "0", "1"], check=True, capture_output=True)
    for hold in ("65536", "100"):
        rc, rows, _, err = dump_csv(train, env={"CUTRACE_CSV_HOLD_MAX": hold})
        check(rc == 0 and not err and len(rows) == 100000 and all(r["nvtx_range"] == "train" for r in rows),
              f"train, hold {hold}: every row in train: {set(r['nvtx_range'] for r in rows)} {err!r}")

    # ---- a directory of two files: file by file -----------------------------------------
    both = os.path.join(d, "both")
    os.mkdir(both)
    os.link(p1, os.path.join(both, "a.ctr"))
    os.link(steps, os.path.join(both, "b.ctr"))
    rc, rows, _, err = dump_csv(both)
    _, a_rows, _, _ = dump_csv(p1)
    _, b_rows, _, _ = dump_csv(steps)
    check(rc == 0 and rows == a_rows + b_rows, f"directory: both files' rows in order, {rc} {err!r}")
    out = os.path.join(d, "out.csv")
    rc, _, text, err = dump_csv("-o", out, both)
    check(rc == 0 and text == "" and open(out, newline="").read().count("\r\n") == len(rows) + 1,
          f"-o FILE: {rc} {err!r}")

    # ---- bad options ----------------------------------------------------------------------
    for args, what in ((["--rows", "kernels", p1], "--rows takes gpu, calls or all"),
                       (["--chrome", p1], "--csv excludes --chrome"),
                       (["--split", d, p1], "--split needs --chrome"),
                       (["-o", os.path.join(d, "no", "such", "x.csv"), p1], "cannot write"),
                       (["--queues", p1], "--queues needs --chrome"),
                       (["--no-memory", p1], "--no-memory needs --chrome"),
                       (["--no-gaps", p1], "--no-gaps needs --chrome"),
                       (["--gap-min", "5us", p1], "--gap-min needs --chrome")):
        rc, _, _, err = dump_csv(*args)
        check(rc == 2 and what in err and err.count("\n") == 1, f"{args}: {rc} {err!r}")
    rc, out, err = tooltest.run(cutrace, "dump", "--rows", "gpu", p1)
    check(rc == 2 and "--rows needs --csv" in err, f"--rows without --csv: {rc} {err!r}")

finish()
