#!/usr/bin/env python3
"""cutrace report's memory allocations table on planted traces (tracewrite.py, format 1.5
ALLOC records): per process, device and kind the allocations, bytes, releases matched by
pointer (a cudaFree of managed memory in the managed row), releases of pointers never
allocated (unmatched), a pointer allocated again without its release, a failing call,
driver-level calls, peak and final live bytes; exact in JSON, CSV and text; a second
file whose release of the first file's pointer stays unmatched (pointers are per
process); VMM handles (kind vmm) and a kind this reader does not know (its own row,
"?"); a format 1.4 file (no ALLOC kind): no table; ALLOC records written before their
API records with 30 ms of another thread's records between (a drained buffer): joined.

usage: test_alloc_report.py CUTRACE"""
import csv
import io
import json
import os
import sys

import tooltest
from tooltest import check, finish, scratch
from alloc_plant import KIB, MIB, B, first_file, second_file, kinds_file, old_file, split_file

cutrace = sys.argv[1]

# (pid, device, kind): allocs, bytes, alloc_ns, frees, freed_bytes, free_ns, unmatched,
#                      peak, live at end, total_ns
WANT = {
    (7, 0, "device"): (4, 4 * MIB + 256, 6000, 3, MIB + 256, 7000, 1, 3 * MIB, MIB, 13000),
    (7, 1, "device"): (1, 4 * MIB, 1000, 0, 0, 0, 0, 4 * MIB, 4 * MIB, 1000),
    (7, 0, "managed"): (1, 512 * KIB, 1000, 1, 512 * KIB, 1000, 0, 512 * KIB, 0, 2000),
    (7, 0, "pinned"): (1, 64 * KIB, 1000, 0, 0, 0, 0, 64 * KIB, 64 * KIB, 1000),
    (8, 0, "device"): (1, 8 * MIB, 1000, 1, 0, 1000, 1, 8 * MIB, 8 * MIB, 2000),
}
FIELDS = ("allocs", "bytes", "alloc_ns", "frees", "freed_bytes", "free_ns", "unmatched_frees",
          "peak_live_bytes", "live_bytes_at_end", "total_ns")

with scratch("ct-alloc-") as d:
    one, two, old = (os.path.join(d, n) for n in ("one.ctr", "two.ctr", "old.ctr"))
    first_file(one)
    second_file(two)
    old_file(old)
    rc, out, err = tooltest.run(cutrace, "report", "--format", "json", one, two)
    doc = json.loads(out) if rc == 0 else {}
    got = {(r["pid"], r["device"], r["kind"]): tuple(r[f] for f in FIELDS)
           for r in doc.get("allocs", [])}
    check(got == WANT, f"allocs rows ({rc} {err!r}):\n{got}\nwant\n{WANT}")
    rows = [(r["pid"], r["device"], r["kind"]) for r in doc.get("allocs", [])]
    check(rows[:1] == [(7, 0, "device")], f"sorted by total time: {rows}")
    api = {r["name"]: r["calls"] for r in doc.get("apis", [])}  # 5 + 1 cudaMalloc, the failed one too
    check(api.get("cudaMalloc") == 6 and api.get("cuMemFree_v2") == 1, f"apis {api}")

    rc, out, err = tooltest.run(cutrace, "report", "--format", "csv", "--tables", "allocs", one, two)
    table = list(csv.reader(io.StringIO(out)))
    check(rc == 0 and table and table[0] == ["table", "pid", "device", "kind", *FIELDS],
          f"csv header {table[:1]}")
    csv_rows = {(int(r[1]), int(r[2]), r[3]): tuple(int(x) for x in r[4:]) for r in table[1:]}
    check(csv_rows == WANT, f"csv rows {csv_rows}")

    rc, out, err = tooltest.run(cutrace, "report", one)
    lines = [line.split() for line in out.splitlines()]
    check(rc == 0 and "Memory allocations (CPU time of the allocation and release calls" in out
          and ["13.000", "us", "4", "4.00", "MiB", "6.000", "us", "3", "7.000", "us", "3.00", "MiB",
               "1.00", "MiB", "7/0", "device"] in lines, f"text table:\n{out}")

    rc, out, err = tooltest.run(cutrace, "report", "--tables", "kernels,apis", one)
    check(rc == 0 and "Memory allocations" not in out, "--tables without allocs")
    rc, out, err = tooltest.run(cutrace, "report", "--tables", "allocs,bogus", one)
    check(rc == 2 and "allocs" in err, f"--tables error names allocs: {err!r}")

    kinds = os.path.join(d, "kinds.ctr")
    kinds_file(kinds)
    rc, out, err = tooltest.run(cutrace, "report", "--format", "json", "--tables", "allocs", kinds)
    doc = json.loads(out) if rc == 0 else {}
    got = {r["kind"]: tuple(r[f] for f in FIELDS) for r in doc.get("allocs", [])}
    want = {"vmm": (2, 4 * MIB, 2000, 1, 2 * MIB, 1000, 0, 4 * MIB, 2 * MIB, 3000),
            "?": (1, 3 * MIB, 1000, 0, 0, 0, 0, 3 * MIB, 3 * MIB, 1000)}
    check(got == want, f"vmm and unknown kinds ({rc} {err!r}): {got}, want {want}")

    rc, out, err = tooltest.run(cutrace, "report", "--format", "json", old)
    doc = json.loads(out) if rc == 0 else {}
    check(rc == 0 and "allocs" not in doc and doc.get("calls") == 1,
          f"format 1.4 file: {rc} {err!r} {sorted(doc)}")
    split = os.path.join(d, "split.ctr")
    split_file(split)
    rc, out, err = tooltest.run(cutrace, "report", "--format", "json", "--tables", "allocs", split)
    doc = json.loads(out) if rc == 0 else {}
    got = [tuple(r[f] for f in FIELDS) for r in doc.get("allocs", [])]
    want = [(1, MIB, 500000, 1, MIB, 500000, 0, MIB, 0, 1000000)]
    check(got == want, f"ALLOC records apart from their calls ({rc} {err!r}): {got}, want {want}")

    rc, out, err = tooltest.run(cutrace, "dump", one)
    check(rc == 0 and f"alloc corr=2 ptr={B} bytes={2 * MIB} kind=1 release=0" in out,
          f"dump prints ALLOC records:\n{out[:600]}")

sys.exit(finish())
