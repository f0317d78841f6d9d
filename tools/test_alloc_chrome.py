#!/usr/bin/env python3
"""Allocations in cutrace dump --chrome and --perfetto on planted traces (alloc_plant.py,
format 1.5 ALLOC records): the live-bytes counters per process, device and kind of
memory, with their exact values at the end of each allocation and release call (a
reused pointer drops its old allocation, unmatched releases and failed calls change
nothing), their highest and last values equal to report's peak and final live bytes;
the address, memory kind, bytes and live bytes args of the calls' slices; Kineto's
"[memory]" instant events (profile_memory=True's: Device Type and Id, Addr, Bytes
negative for a release, Total Allocated and Total Reserved the live bytes of that
Kineto device) at the same ends, none for an unmatched release; --no-memory;
two files in one document (each on its own GPU rows); the Perfetto trace holds the same
events (test_perfetto.compare) with the memory counters in bytes; a format 1.4 file has
no memory counter.

usage: test_alloc_chrome.py CUTRACE"""
import collections
import json
import os
import sys

import perfetto_read
import tooltest
from alloc_plant import KIB, MIB, first_file, old_file, second_file
from test_perfetto import compare
from tooltest import check, finish, scratch

cutrace = sys.argv[1]
T0 = 10**9 + 1000  # the first call's begin; calls are 10 us apart, 1 us long unless said


def end(i, dur=1000):
    """The end (ns) of the i-th call (from 0) of a planted file."""
    return T0 + i * 10000 + dur


# (process row, counter) -> [(ts ns, live bytes)]: changes at each call's end
WANT_ONE = {
    ("GPU 0", "device memory"): [(end(0), MIB), (end(1), 3 * MIB), (end(2), 2 * MIB),
                                 (end(7), MIB),  # B again: its 2 MiB forgotten, 1 MiB new
                                 (end(10, 3000), MIB + 256), (end(11, 5000), MIB)],
    ("GPU 1", "device memory"): [(end(3), 4 * MIB)],
    ("GPU 0", "managed memory"): [(end(5), 512 * KIB), (end(6), 0)],
    ("GPU 0", "pinned memory"): [(end(9), 64 * KIB)],
}
WANT_TWO = {("pid 7 " + row, name): v for (row, name), v in WANT_ONE.items()}
WANT_TWO[("pid 8 GPU 0", "device memory")] = [(end(0), 8 * MIB)]

# (name, ts ns) of a call -> its memory args
WANT_ARGS = {
    ("cudaMalloc", T0): {"address": "0x10000", "memory kind": "device", "bytes": MIB,
                         "live bytes": MIB},
    ("cudaFree", T0 + 20000): {"address": "0x10000", "memory kind": "device", "bytes": MIB,
                               "live bytes": 2 * MIB},
    ("cudaFree", T0 + 40000): {"address": "0x99000", "memory kind": "device",
                               "allocation": "not in the trace"},
    ("cudaFree", T0 + 60000): {"address": "0x50000", "memory kind": "managed",
                               "bytes": 512 * KIB, "live bytes": 0},
    ("cudaMalloc", T0 + 70000): {"address": "0x20000", "memory kind": "device", "bytes": MIB,
                                 "live bytes": MIB},
    ("cudaMalloc", T0 + 80000): {},  # failed: no ALLOC record
    ("cuMemFree_v2", T0 + 110000): {"address": "0x40000", "memory kind": "device",
                                    "bytes": 256, "live bytes": MIB},
}

def mem(i, device_type, device_id, addr, nbytes, total, dur=1000):
    """The [memory] instant event of the i-th call: (ts ns, args)."""
    return (end(i, dur), {"Device Type": device_type, "Device Id": device_id, "Addr": addr,
                          "Bytes": nbytes, "Total Allocated": total, "Total Reserved": total})


# Kineto's [memory] events of first_file, in order: GPU memory (device, managed) on
# CUDA device D (type 1), pinned memory on the CPU (type 0, id -1); totals per device
WANT_INSTANTS = [
    mem(0, 1, 0, 0x10000, MIB, MIB), mem(1, 1, 0, 0x20000, 2 * MIB, 3 * MIB),
    mem(2, 1, 0, 0x10000, -MIB, 2 * MIB), mem(3, 1, 1, 0x30000, 4 * MIB, 4 * MIB),
    # call 4 releases a pointer never allocated: no event
    mem(5, 1, 0, 0x50000, 512 * KIB, 2 * MIB + 512 * KIB), mem(6, 1, 0, 0x50000, -512 * KIB, 2 * MIB),
    mem(7, 1, 0, 0x20000, MIB, MIB),  # B again: its old 2 MiB forgotten
    # call 8 failed
    mem(9, 0, -1, 0x60000, 64 * KIB, 64 * KIB),
    mem(10, 1, 0, 0x40000, 256, MIB + 256, 3000), mem(11, 1, 0, 0x40000, -256, MIB, 5000),
]


def instants(doc):
    """The JSON's instant events: [(ts ns, args)] in file order, and the set of their
    (ph, cat, s, name, pid, tid)."""
    ev = [e for e in doc["traceEvents"] if e["ph"] == "i"]
    return ([(round(e["ts"] * 1000), e["args"]) for e in ev],
            {(e["ph"], e["cat"], e["s"], e["name"], e["pid"], e["tid"]) for e in ev})


MEMORY_ARGS = ("address", "memory kind", "bytes", "live bytes", "allocation")


def counters(doc):
    """The JSON's counters: (process row, name) -> [(ts ns, value)], and their categories."""
    procs = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"]
             if e["ph"] == "M" and e["name"] == "process_name"}
    got, cats = collections.defaultdict(list), set()
    for e in doc["traceEvents"]:
        if e["ph"] == "C":
            got[(procs.get(e["pid"]), e["name"])].append((round(e["ts"] * 1000), e["args"]["bytes"]))
            cats.add(e["cat"])
    return {k: sorted(v) for k, v in got.items()}, cats


def call_args(doc):
    """(name, ts ns) of each call slice -> its memory args."""
    return {(e["name"], round(e["ts"] * 1000)): {k: v for k, v in e["args"].items() if k in MEMORY_ARGS}
            for e in doc["traceEvents"] if e["ph"] == "X" and e["cat"].startswith("cuda_")}


def dump(*args):
    rc, out, err = tooltest.run(cutrace, "dump", *args)
    try:
        return rc, json.loads(out), err
    except ValueError:
        return rc, {"traceEvents": []}, err


def report_rows(*args):
    rc, out, err = tooltest.run(cutrace, "report", "--format", "json", *args)
    return {(r["pid"], r["device"], r["kind"]): r for r in json.loads(out).get("allocs", [])} if rc == 0 else {}


with scratch("ct-allocchrome-") as d:
    one, two, old = (os.path.join(d, n) for n in ("one.ctr", "two.ctr", "old.ctr"))
    first_file(one)
    second_file(two)
    old_file(old)

    rc, doc, err = dump("--chrome", one)
    got, cats = counters(doc)
    check(rc == 0 and got == WANT_ONE, f"counters of one file ({rc} {err!r}):\n{got}\nwant\n{WANT_ONE}")
    check(cats == {"memory"}, f"counter category {cats}")
    got, shape = instants(doc)
    check(got == WANT_INSTANTS, f"[memory] events of one file:\n{got}\nwant\n{WANT_INSTANTS}")
    check(shape == {("i", "cpu_instant_event", "t", "[memory]", 7, 7)}, f"[memory] events: {shape}")
    args = call_args(doc)
    for key, want in WANT_ARGS.items():
        check(args.get(key) == want, f"args of {key}: {args.get(key)} want {want}")

    # the counters' highest and last values are report's peak and final live bytes, also
    # in a window that leaves out B's first allocation and A's (their releases unmatched)
    for window in ([], ["--from", "15us"]):
        rc, doc, err = dump("--chrome", *window, one)
        got, _ = counters(doc)
        rows = report_rows(*window, one)
        device = {"GPU 0": 0, "GPU 1": 1}
        for (row, name), values in got.items():
            r = rows.get((7, device[row], name.split()[0]), {})
            peak, last = max(v for _, v in values), values[-1][1]
            check((peak, last) == (r.get("peak_live_bytes"), r.get("live_bytes_at_end")),
                  f"{window} {row} {name}: peak {peak}, last {last}; report {r}")
        check(rc == 0 and len(got) == len(rows) == 4,
              f"{window}: one counter per report row: {sorted(got)} {sorted(rows)}")
        if window:
            check(got[("GPU 0", "device memory")] == [(end(7), MIB), (end(10, 3000), MIB + 256),
                                                      (end(11, 5000), MIB)],
                  f"device memory in the window: {got[('GPU 0', 'device memory')]}")

    rc, doc, err = dump("--chrome", "--no-memory", one)
    got, _ = counters(doc)
    check(rc == 0 and got == {} and call_args(doc) == args, f"--no-memory: counters {got}, args kept")
    check(instants(doc)[0] == [], f"--no-memory: no [memory] events {instants(doc)[0][:2]}")

    rc, doc, err = dump("--chrome", one, two)
    got, _ = counters(doc)
    check(rc == 0 and got == WANT_TWO, f"counters of two files ({rc} {err!r}):\n{got}\nwant\n{WANT_TWO}")

    rc, doc, err = dump("--chrome", old)
    got, _ = counters(doc)
    check(rc == 0 and got == {}, f"format 1.4 file: no memory counter ({rc} {err!r}) {got}")

    rc, out, err = tooltest.run(cutrace, "dump", "--no-memory", one)
    check(rc == 2 and "--no-memory needs --chrome or --perfetto" in err, f"--no-memory alone: {rc} {err!r}")

    for label, files in (("one file", [one]), ("two files", [one, two])):
        rc, doc, err = dump("--chrome", *files)
        pf = os.path.join(d, "t.pftrace")
        prc, _, perr = tooltest.run(cutrace, "dump", "--perfetto", "-o", pf, *files)
        trace = perfetto_read.read(pf) if prc == 0 else None
        diffs = compare(doc, trace) if trace else [f"status {prc} {perr!r}"]
        check(not diffs, f"--perfetto against --chrome, {label}: {diffs[:5]}")
        if trace:
            units = {t["name"]: t["unit"] for t in trace.tracks.values() if t["kind"] == "counter"}
            check(units and all(u == 3 for u in units.values()),
                  f"memory counter tracks in bytes (UNIT_SIZE_BYTES): {units}")
            n = sum(len(v) for v in (WANT_ONE if label == "one file" else WANT_TWO).values())
            check(len(trace.counters) == n, f"{label}: {len(trace.counters)} counter values, want {n}")
            n = len(WANT_INSTANTS) + (0 if label == "one file" else 1)  # pid 8: one allocation
            check(len(trace.instants) == n and {i["name"] for i in trace.instants} == {"[memory]"},
                  f"{label}: {len(trace.instants)} [memory] instants (TYPE_INSTANT), want {n}")

sys.exit(finish())
