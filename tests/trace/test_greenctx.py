#!/usr/bin/env python3
"""Green contexts and context-wide events (programs/greenctx.cu) on device 1 of two
simulated GPUs: a green context G with a stream GS beside a created stream PS of device 1's
primary context P; cuCtxRecordEvent(P) + cuGreenCtxWaitEvent(G) hold GS's gc_consumer
behind PS's 5 ms gc_producer, cuGreenCtxRecordEvent(G) + cuCtxWaitEvent(P) hold PS's
gc_after behind GS's 5 ms gc_green_long; one launch on GS with G current; two calls that
fail (INVALID_HANDLE, 400). Before 2026-12-07 the four context-wide calls were not seen.

Asserted: the program's own checks pass (each wait held); the six calls are outermost API
records flagged DRIVER, in the program's order, with their results (0 x 4, then 400 x 2)
and no stream; every kernel has a GPU record on device 1, gc_warm/gc_consumer/
gc_green_long/gc_in_green on GS's stream and gc_producer/gc_after on PS's (the STREAM
records give device 1 and the two handles); gc_consumer starts when gc_producer ends and
gc_after when gc_green_long ends (within 50 us; or, the host that late, at its launch's return or the
end of the work before it on its stream); gc_green_null, launched on the NULL stream with G
current, is on a stream of its own (not 0: its STREAM record flagged legacy and green,
format 1.14, device 1, handle G's context), gc_primary_null on P's NULL stream (0), and
`cutrace report --format json` has one kernel on each (before 2026-12-07 both had stream
0, merged into one row); `cutrace gaps --format json`: the stream gaps that gc_consumer and gc_after end
(when launched before their producer ended) are caused by other_stream (as behind a
cuStreamWaitEvent) and end at their producer's end; `cutrace report --format json` counts each
entry point once (twice for the two that failed once). Again with event chaining on
(CUTRACE_EVENT_CHAIN=1): the waiters' starts still match their producers' ends.

usage: test_greenctx.py SIM_DIR CUTRACE LIBTRACE GREENCTX
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cttest import check, finish, require_built, scratch_dir  # noqa: E402
from harness import record_one_file  # noqa: E402
from rawdump import kernel_identifier, raw_records  # noqa: E402

sim_dir, cutrace, libtrace, program = sys.argv[1:5]
require_built(os.path.join(sim_dir, "libcuda.so.1"), libtrace, cutrace, program)
tmp = scratch_dir("cutrace-greenctx-")
API_DRIVER, GPU_KERNEL, INVALID_HANDLE, NO_STREAM = 0x10, 1, 400, 0
LEGACY, GREEN = 0x4, 0x8  # CT_STREAM_* (green: format 1.14)
SLACK_NS = 50_000
CALLS = [("cuCtxRecordEvent", 0), ("cuGreenCtxWaitEvent", 0), ("cuGreenCtxRecordEvent", 0),
         ("cuCtxWaitEvent", 0), ("cuCtxWaitEvent", INVALID_HANDLE),
         ("cuGreenCtxRecordEvent", INVALID_HANDLE)]
ON_GREEN = {"gc_consumer", "gc_green_long", "gc_in_green"}
ON_PRIMARY = {"gc_producer", "gc_after"}



def held_behind(w, p, apis, gpus):
    """Whether the waiter kernel w started when the producer p ended, or (the host late
    on a loaded machine) by the return of w's own launch call or the end of the work
    before it on its stream, whichever was last."""
    call = apis.get(w["corr"])
    before = [g["end_ns"] for g in gpus if g["stream"] == w["stream"] and g is not w
              and g["end_ns"] <= w["start_ns"] + SLACK_NS]
    latest = max([p["end_ns"], call["end_ns"] if call else 0] + before)
    return p["end_ns"] - SLACK_NS <= w["start_ns"] <= latest + SLACK_NS


env = {"SIMCUDA_DEVICES": "2",
       "SIMCUDA_KERNEL_US": "default=5,gc_producer=5000,gc_green_long=5000,gc_warm=300"}
path = record_one_file(cutrace, libtrace, sim_dir, os.path.join(tmp, "greenctx"), [program],
                       "greenctx: ok", env)
if path:
    recs, names = raw_records(cutrace, path)
    wanted = {n for n, _ in CALLS}
    calls = sorted((r for r in recs if r["kind"] == "api" and names.get(r["name"]) in wanted),
                   key=lambda a: a["begin_ns"])
    got = [(names.get(a["name"]), a["result"]) for a in calls]
    check(got == CALLS, f"context-wide calls {got}, want {CALLS}")
    for a in calls:
        check(a["depth"] == 0 and a["flags"] & API_DRIVER and a["stream"] == NO_STREAM
              and a["device"] == 1,
              f"{names.get(a['name'])}: depth {a['depth']} flags {a['flags']:#x} stream "
              f"{a['stream']} device {a['device']}")
    streams = {r["stream"]: r for r in recs if r["kind"] == "stream"}
    kernels = {}
    for g in recs:
        if g["kind"] == "gpu" and g["type"] == GPU_KERNEL:
            kernels.setdefault(kernel_identifier(names.get(g["name"], "")), []).append(g)
    check(all(g["device"] == 1 for gs in kernels.values() for g in gs),
          f"kernels on devices {sorted({g['device'] for gs in kernels.values() for g in gs})}, want 1")
    green = {g["stream"] for k in ON_GREEN for g in kernels.get(k, [])}
    primary = {g["stream"] for k in ON_PRIMARY for g in kernels.get(k, [])}
    check(len(green) == 1 and len(primary) == 1 and green != primary and NO_STREAM not in green,
          f"green-context kernels on streams {green}, primary-context kernels on {primary}")
    warm = {g["stream"] for g in kernels.get("gc_warm", [])}
    check(warm == green | primary, f"gc_warm on streams {warm}, want {green | primary}")
    for s in green | primary:
        st = streams.get(s)
        check(st is not None and st["device"] == 1 and st["handle"] != 0,
              f"STREAM record of stream {s}: {st}")

    def one(name):
        ks = kernels.get(name, [])
        check(len(ks) == 1, f"{len(ks)} GPU records of {name}, want 1")
        return ks[0] if ks else None

    apis = {r["corr"]: r for r in recs if r["kind"] == "api"}
    fed = {}  # waiter -> its producer's end, when its launch returned before it (the GPU held it)
    for waiter, producer in (("gc_consumer", "gc_producer"), ("gc_after", "gc_green_long")):
        w, p = one(waiter), one(producer)
        if w and p:
            check(held_behind(w, p, apis, [g for gs in kernels.values() for g in gs]),
                  f"{waiter} starts at {w['start_ns']}, {producer} ends at {p['end_ns']}")
            if apis.get(w["corr"], {}).get("end_ns", 0) < p["end_ns"]:
                fed[waiter] = p["end_ns"]
    one("gc_in_green")
    gn, pn = one("gc_green_null"), one("gc_primary_null")
    st = streams.get(gn["stream"]) if gn else None
    check(gn is not None and gn["stream"] != 0 and st is not None and st["device"] == 1
          and st["flags"] & (LEGACY | GREEN) == LEGACY | GREEN and st["handle"] != 0,
          f"gc_green_null on stream {gn and gn['stream']}, its STREAM record {st}: want its "
          f"own id, flags legacy | green")
    check(pn is not None and pn["stream"] == 0, f"gc_primary_null on stream {pn and pn['stream']}, want 0")
    if gn and apis.get(gn["corr"]):
        check(apis[gn["corr"]]["stream"] == gn["stream"],
              f"gc_green_null's launch call on stream {apis[gn['corr']]['stream']}")

    p = subprocess.run([cutrace, "gaps", "--format", "json", path], capture_output=True,
                       text=True, timeout=60)
    check(p.returncode == 0, f"gaps: {p.stderr}")
    doc = json.loads(p.stdout) if p.returncode == 0 else {}
    for waiter in ("gc_consumer", "gc_after"):
        if waiter not in fed:  # launched after its producer ended: not a wait the GPU did
            continue
        rows = [g for g in doc.get("stream_gaps", [])
                if kernel_identifier(g.get("ended_by", {}).get("mangled", "")) == waiter]
        check(len(rows) == 1 and rows[0]["cause"] == "other_stream"
              and abs(rows[0]["end_ns"] - fed[waiter]) <= SLACK_NS,
              f"gaps: the stream gap ended by {waiter}: "
              f"{[(g['cause'], g['end_ns']) for g in rows]}, want one other_stream ending at "
              f"its producer's end {fed[waiter]}")

    p = subprocess.run([cutrace, "report", "--format", "json", path], capture_output=True,
                       text=True, timeout=60)
    report = json.loads(p.stdout) if p.returncode == 0 else {}
    null_rows = {r["stream"]: r["kernels"] for r in report.get("streams", [])
                 if r["device"] == 1 and gn and r["stream"] in (0, gn["stream"])}
    check(gn is not None and null_rows == {0: 1, gn["stream"]: 1},
          f"report json streams: kernels on device 1's NULL streams {null_rows}, want one on each")
    rows = {r["name"]: r for r in report.get("apis", [])}
    for name in sorted(wanted):
        n = sum(1 for c, _ in CALLS if c == name)
        errors = sum(1 for c, r in CALLS if c == name and r)
        r = rows.get(name, {})
        check(r.get("calls") == n and r.get("errors") == errors,
              f"report json {name}: {r}, want {n} calls, {errors} errors")

# Event chaining (CUTRACE_EVENT_CHAIN=1): gc_after is queued on PS while gc_warm's end event
# is still pending; only the context-wide wait between them (ctph_barrier_all) keeps its
# start from being taken as gc_warm's end, 4.7 ms early.
path = record_one_file(cutrace, libtrace, sim_dir, os.path.join(tmp, "greenctx-chain"), [program],
                       "greenctx: ok", dict(env, CUTRACE_EVENT_CHAIN="1"))
if path:
    recs, names = raw_records(cutrace, path)
    starts = {}
    for g in recs:
        if g["kind"] == "gpu" and g["type"] == GPU_KERNEL:
            starts.setdefault(kernel_identifier(names.get(g["name"], "")), []).append(g)
    apis = {r["corr"]: r for r in recs if r["kind"] == "api"}
    for waiter, producer in (("gc_consumer", "gc_producer"), ("gc_after", "gc_green_long")):
        w, p = starts.get(waiter, []), starts.get(producer, [])
        check(len(w) == 1 and len(p) == 1
              and held_behind(w[0], p[0], apis, [g for gs in starts.values() for g in gs]),
              f"chained: {waiter} starts at {[g['start_ns'] for g in w]}, {producer} ends at "
              f"{[g['end_ns'] for g in p]}")
sys.exit(finish())
