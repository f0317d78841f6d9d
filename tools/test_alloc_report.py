#!/usr/bin/env python3
"""cutrace report's memory allocations table on planted traces (tracewrite.py, format 1.5
ALLOC records): per process, device and kind the allocations, bytes, releases matched by
pointer (a cudaFree of managed memory in the managed row), releases of pointers never
allocated (unmatched), a pointer allocated again without its release, a failing call,
driver-level calls, peak and final live bytes; exact in JSON, CSV and text; a second
file whose release of the first file's pointer stays unmatched (pointers are per
process); a format 1.4 file (no ALLOC kind): no table.

usage: test_alloc_report.py CUTRACE"""
import csv
import io
import json
import os
import sys
import tempfile

import tooltest
from tooltest import check, finish
from tracewrite import TraceWriter

cutrace = sys.argv[1]
MIB, KIB = 1 << 20, 1 << 10
DEVICE, PINNED, MANAGED = 1, 2, 3
A, B, C, D, M, P, X = 0x10000, 0x20000, 0x30000, 0x40000, 0x50000, 0x60000, 0x99000


class Calls:
    """API records of one thread, each 1 us long and 10 us apart, with their ALLOC records."""

    def __init__(self, w, pid, t0):
        self.w, self.pid, self.t, self.corr = w, pid, t0, 1

    def call(self, name, ptr=0, nbytes=0, kind=DEVICE, release=0, device=0, result=0, dur=1000):
        w = self.w
        w.add("api", tid=self.pid, name=w.string(name), begin_ns=self.t, end_ns=self.t + dur,
              corr=self.corr, device=device, result=result,
              flags=0x10 if name.startswith("cu") and not name.startswith("cuda") else 0)
        if ptr and not result:
            w.add("alloc", corr=self.corr, ptr=ptr, bytes=nbytes, kind=kind, release=release)
        self.corr += 1
        self.t += 10000


def first_file(path):
    w = TraceWriter()
    w.add("process", pid=7, start_ns=10**9)
    c = Calls(w, 7, 10**9 + 1000)
    c.call("cudaMalloc", A, 1 * MIB)
    c.call("cudaMalloc", B, 2 * MIB)                  # live 3 MiB: the device row's peak
    c.call("cudaFree", A, release=1)
    c.call("cudaMalloc", C, 4 * MIB, device=1)         # device 1's own row
    c.call("cudaFree", X, release=1)                  # never allocated: unmatched
    c.call("cudaMallocManaged", M, 512 * KIB, kind=MANAGED)
    c.call("cudaFree", M, release=1)                  # released in the managed row
    c.call("cudaMalloc", B, 1 * MIB)                  # B again, unreleased: 2 MiB forgotten
    c.call("cudaMalloc", result=2)                    # failed: no ALLOC record, not counted
    c.call("cudaMallocHost", P, 64 * KIB, kind=PINNED)  # never released
    c.call("cuMemAlloc_v2", D, 256, dur=3000)
    c.call("cuMemFree_v2", D, release=1, dur=5000)
    w.add("end", records=0, end_ns=c.t)
    w.save(path)


def second_file(path):
    """Another process: its release of B (the first file's pointer) is unmatched."""
    w = TraceWriter()
    w.add("process", pid=8, start_ns=10**9)
    c = Calls(w, 8, 10**9 + 1000)
    c.call("cudaMalloc", A, 8 * MIB)
    c.call("cudaFree", B, release=1)
    w.add("end", records=0, end_ns=c.t)
    w.save(path)


def old_file(path):
    w = TraceWriter()
    del w.schema["alloc"]
    w.version = (1, 4)
    w.add("process", pid=9, start_ns=10**9)
    Calls(w, 9, 10**9).call("cudaMalloc")
    w.save(path)


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

with tempfile.TemporaryDirectory(prefix="ct-alloc-") as d:
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

    rc, out, err = tooltest.run(cutrace, "report", "--format", "json", old)
    doc = json.loads(out) if rc == 0 else {}
    check(rc == 0 and "allocs" not in doc and doc.get("calls") == 1,
          f"format 1.4 file: {rc} {err!r} {sorted(doc)}")
    rc, out, err = tooltest.run(cutrace, "dump", one)
    check(rc == 0 and f"alloc corr=2 ptr={B} bytes={2 * MIB} kind=1 release=0" in out,
          f"dump prints ALLOC records:\n{out[:600]}")

sys.exit(finish())
