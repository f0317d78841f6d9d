#!/usr/bin/env python3
"""The NULL and per-thread default streams of a primary, a created and a green context
of one device (programs/ctxstreams.cu, simulated GPU with SIMCUDA_CTX_REUSE=1: a destroyed
context's address serves the next cuCtxCreate).

Phase 1: with P (primary), C (cuCtxCreate) and Gc (cuCtxFromGreenCtx) current in turn,
cx_<ctx>_null on the NULL stream (3 ms) and cx_<ctx>_pt on cudaStreamPerThread (2 ms),
twice, 30 ms apart. The GPU runs each context's streams apart from the other contexts':
asserted, six streams, each with the two launches of one kernel: cx_p_null on 0 (legacy),
cx_c_null and cx_g_null on ids of their own whose STREAM records are flagged legacy
(and green for Gc) with handle the context's address (the program prints them),
cx_p_pt, cx_c_pt, cx_g_pt on per-thread streams of their own (flag per-thread, and green
for Gc; handle CU_STREAM_PER_THREAD for P's, the context for the others; owner the
launching thread); each kernel's times as planted and its launch call on the same stream;
`cutrace report --format json` and `cutrace gaps --format json` (streams) list the six
streams with two kernels each and each stream's busy time the sum of its two kernels;
`gaps` finds one stream gap on each, between its kernel's two runs, ended by its second;
`cutrace dump --csv --rows gpu` puts each kernel on its own stream with the same times.
Before 2026-12-07 C's NULL stream was stream 0 (merged with P's) and C's and Gc's
per-thread streams were P's.

Phase 2 (address reuse): a thread T makes G2's converted context X current and launches
cx_reuse_green(_pt); the main thread destroys G2 and creates a context at address X; T
makes it current and launches cx_reuse_created(_pt). Asserted: four streams apart; the
created one's NULL stream not flagged green (T's cached answer for X is dropped when a
context is destroyed or created). Phase 3: a created context D's NULL, per-thread and
created streams (cx_destroyed_*), D destroyed, a new context at D's address with the same
three kinds (cx_after_*): the ids of D's NULL and per-thread streams serve none of the
new context's (its created stream, at the address D's had, is not asserted: a reused
stream handle keeps its id).

usage: test_ctxstreams.py SIM_DIR CUTRACE LIBTRACE CTXSTREAMS
"""
import csv
import io
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cttest import check, require_built  # noqa: E402
from harness import Harness, record_one_file_out  # noqa: E402
from rawdump import kernel_identifier, raw_records  # noqa: E402

sim_dir, cutrace, libtrace, program = sys.argv[1:5]
require_built(program)
h = Harness(sys.argv)
GPU_KERNEL, PER_THREAD, LEGACY, GREEN = 1, 0x2, 0x4, 0x8
CU_STREAM_PER_THREAD = 2
SLACK_NS = 100_000
NULL_US, PT_US = 3000, 2000
CTXS = ("p", "c", "g")
PHASE1 = [f"cx_{c}_{s}" for c in CTXS for s in ("null", "pt")]
env = {"SIMCUDA_CTX_REUSE": "1",
       "SIMCUDA_KERNEL_US": f"default=20,_null={NULL_US},_pt={PT_US}"}

path, out = record_one_file_out(cutrace, libtrace, sim_dir, os.path.join(h.tmp, "ctxstreams"),
                                [program], "ctxstreams: ok", env)
addr = {}
for line in out.splitlines():
    if line.startswith("ctx "):
        _, name, value = line.split()
        addr[name] = int(value, 16)


def planted_us(kernel):
    return NULL_US if kernel.endswith("_null") else PT_US if kernel.endswith("_pt") else 20


if path:
    recs, names = raw_records(cutrace, path)
    streams = {r["stream"]: r for r in recs if r["kind"] == "stream"}
    apis = {r["corr"]: r for r in recs if r["kind"] == "api"}
    runs = {}
    for g in recs:
        if g["kind"] == "gpu" and g["type"] == GPU_KERNEL:
            runs.setdefault(kernel_identifier(names.get(g["name"], "")), []).append(g)
    for k in runs:
        runs[k].sort(key=lambda g: g["start_ns"])
    on = {k: {g["stream"] for g in gs} for k, gs in runs.items()}

    # phase 1: six streams, each with its kernel's two runs
    for k in PHASE1:
        gs = runs.get(k, [])
        check(len(gs) == 2 and len(on[k]) == 1, f"{k}: {len(gs)} runs on streams {on.get(k)}")
    ids = [next(iter(on[k])) for k in PHASE1 if len(on.get(k, ())) == 1]
    check(len(set(ids)) == 6, f"phase 1 kernels on streams {dict(zip(PHASE1, ids))}: want six")
    want = {"cx_p_null": (LEGACY, 0), "cx_c_null": (LEGACY, addr.get("C")),
            "cx_g_null": (LEGACY | GREEN, addr.get("G")),
            "cx_p_pt": (PER_THREAD, CU_STREAM_PER_THREAD), "cx_c_pt": (PER_THREAD, addr.get("C")),
            "cx_g_pt": (PER_THREAD | GREEN, addr.get("G"))}
    for k, (flags, handle) in want.items():
        s = next(iter(on.get(k, {-1})))
        st = streams.get(s)
        check(st is not None and st["flags"] == flags and st["handle"] == handle
              and st["device"] == 0 and (k == "cx_p_null" or s != 0),
              f"{k} on stream {s}: STREAM record {st}, want flags {flags:#x} handle {handle}")
        if st and flags & PER_THREAD:
            tids = {apis[g["corr"]]["tid"] for g in runs.get(k, []) if g["corr"] in apis}
            check(tids == {st["owner_tid"]}, f"{k}: owner {st['owner_tid']}, launched by {tids}")
    for k in PHASE1:
        for g in runs.get(k, []):
            dur = (g["end_ns"] - g["start_ns"]) / 1000
            check(abs(dur - planted_us(k)) <= SLACK_NS / 1000,
                  f"{k}: {dur:.0f} us on the GPU, planted {planted_us(k)}")
            call = apis.get(g["corr"])
            check(call is not None and call["stream"] == g["stream"],
                  f"{k}: its launch call on stream {call and call['stream']}, the GPU record on {g['stream']}")
    # a context's per-thread kernel follows its own NULL kernel (the legacy stream
    # synchronises with the context's blocking streams), not another context's
    for c in CTXS:
        for n, p in zip(runs.get(f"cx_{c}_null", []), runs.get(f"cx_{c}_pt", [])):
            call = apis.get(p["corr"], {})
            check(p["start_ns"] >= n["end_ns"] - SLACK_NS
                  and p["start_ns"] <= max(n["end_ns"], call.get("end_ns", 0)) + SLACK_NS,
                  f"cx_{c}_pt starts at {p['start_ns']}, cx_{c}_null ends at {n['end_ns']}")

    stream_of = {k: next(iter(on[k])) for k in PHASE1 if len(on.get(k, ())) == 1}
    p = subprocess.run([cutrace, "report", "--format", "json", path], capture_output=True,
                       text=True, timeout=60)
    check(p.returncode == 0, f"report: {p.stderr}")
    report = json.loads(p.stdout) if p.returncode == 0 else {}
    rows = {r["stream"]: r for r in report.get("streams", []) if r["device"] == 0}
    got = {k: rows.get(s, {}).get("kernels") for k, s in stream_of.items()}
    check(got == {k: 2 for k in PHASE1}, f"report json: kernels per stream {got}, want 2 each")

    p = subprocess.run([cutrace, "gaps", "--format", "json", "--top", "100", path],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, f"gaps: {p.stderr}")
    doc = json.loads(p.stdout) if p.returncode == 0 else {}
    srows = {r["stream"]: r for r in doc.get("streams", []) if r["device"] == 0}
    for k, s in stream_of.items():
        r = srows.get(s, {})
        busy = sum(g["end_ns"] - g["start_ns"] for g in runs[k])
        check(r.get("activities") == 2 and abs(r.get("busy_ns", 0) - busy) <= 1000,
              f"gaps json stream {s} ({k}): {r.get('activities')} activities, busy "
              f"{r.get('busy_ns')} ns, want 2 and {busy}")
        gaps = [g for g in doc.get("stream_gaps", []) if g["device"] == 0 and g["stream"] == s]
        first, second = runs[k]
        check(len(gaps) == 1
              and kernel_identifier(gaps[0]["ended_by"].get("mangled", "")) == k
              and abs(gaps[0]["start_ns"] - first["end_ns"]) <= 1000
              and abs(gaps[0]["end_ns"] - second["start_ns"]) <= 1000,
              f"gaps json: stream {s} ({k}) gaps "
              f"{[(g['start_ns'], g['end_ns'], g['ended_by'].get('mangled')) for g in gaps]}, "
              f"want one from {first['end_ns']} to {second['start_ns']} ended by {k}")

    p = subprocess.run([cutrace, "dump", "--csv", "--rows", "gpu", path], capture_output=True,
                       text=True, timeout=60)
    check(p.returncode == 0, f"dump --csv: {p.stderr}")
    table = list(csv.DictReader(io.StringIO(p.stdout))) if p.returncode == 0 else []
    for k, s in stream_of.items():
        got = sorted((int(r["stream"]), int(r["start_ns"]), int(r["end_ns"])) for r in table
                     if kernel_identifier(r["name"]) == k)
        exp = [(s, g["start_ns"], g["end_ns"]) for g in runs[k]]
        check(got == exp, f"dump --csv {k}: {got}, want {exp}")

    # phase 2: X's streams as a green context's, then as a created context's
    reuse = ["cx_reuse_green", "cx_reuse_green_pt", "cx_reuse_created", "cx_reuse_created_pt"]
    ids = [next(iter(on.get(k, {-1}))) for k in reuse]
    check(all(len(on.get(k, ())) == 1 for k in reuse) and len(set(ids)) == 4
          and not set(ids) & set(stream_of.values()),
          f"phase 2 kernels on streams {dict(zip(reuse, ids))}: want four of their own")
    want = {"cx_reuse_green": LEGACY | GREEN, "cx_reuse_green_pt": PER_THREAD | GREEN,
            "cx_reuse_created": LEGACY, "cx_reuse_created_pt": PER_THREAD}
    for k, s in zip(reuse, ids):
        st = streams.get(s)
        check(st is not None and st["flags"] == want[k] and st["handle"] == addr.get("X"),
              f"{k} on stream {s}: STREAM record {st}, want flags {want[k]:#x} handle X")

    # phase 3: a destroyed context's stream ids serve no stream of the next context
    before = {next(iter(on.get(k, {-1}))) for k in ("cx_destroyed_null", "cx_destroyed_pt")}
    after = {next(iter(on.get(k, {-1}))) for k in ("cx_after_null", "cx_after_pt")}
    check(len(before) == 2 and len(after) == 2 and not before & after and -1 not in before | after,
          f"phase 3: the destroyed context's streams {before}, the next one's {after}")
    check("stream reused 1" in out, "phase 3: the new context's stream not at the destroyed one's address")
    s_before, s_after = (next(iter(on.get(k, {-1}))) for k in ("cx_destroyed_s", "cx_after_s"))
    check(s_before != s_after and s_after not in before | after,
          f"phase 3: the destroyed context's created stream {s_before}, the new one's {s_after}")
    st = [streams.get(s) for s in after]
    check(all(x is not None and x["handle"] == addr.get("D") for x in st),
          f"phase 3: the new context's STREAM records {st}, want handle {addr.get('D')}")
h.finish()
