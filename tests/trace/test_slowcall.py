#!/usr/bin/env python3
"""GPU idle caused by slow launching calls, end to end on the simulated GPU
(programs/slowcall.cu with programs/slowblas.cu as its "cuBLAS").

The program's cublasSgemm_v2 (a library call that launches its kernel from inside)
spins a planted time before the launch, 8 times, with a sync after each: in mode
"every" 5 ms each call, in mode "warmup" 40 ms the first call and 5 us the others, in
mode "tail" 5 ms and then 30 ms more after the launch (the call is read after its gap
was judged).
Then 3 times the host sleeps 3 ms before a plain launch, and 4 small synchronous
pageable copies. Asserted on `cutrace gaps`:
- the slow_launch_call finding: the call, its call site (the SLOWCALL: line), 8 gaps,
  pattern every_call / first_call, its time inside the gaps equal (within 1 ms a call)
  to the calls' own spans read from the raw records, the median and the first call
  against the plan, the saving (all of it / the first call's), the share;
- the idle-by-ending-call table (JSON and text): the gemm row and the sleep row (the
  SLEEPLAUNCH: line) with counts and medians against the plan, rows ordered by idle
  time, their idle time adding up to the device's and their gaps to its gap count;
- findings ordered by their saving in JSON, text and the --summary line;
- the --summary advice repeats --from/--to and the thresholds given;
- tail: the gaps still counted under cublasSgemm_v2 at its call site, and the call's
  30 ms after its launch inside the gaps that began then counted as its own (the
  leading call: after_launch_ns, in the saving and the text).

usage: test_slowcall.py SIM_DIR CUTRACE LIBTRACE PROGRAM_DIR SLOWCALL_CU
"""
import os
import re
import sys

from harness import Harness
from rawdump import raw_records

h = Harness(sys.argv)
source = open(h.extra[0]).read().splitlines()
LINE = {m: next(i + 1 for i, l in enumerate(source) if f"/* {m} */" in l) for m in ("SLOWCALL:", "SLEEPLAUNCH:")}
MS = 1000000
KERNELS = "slowblas_gemm=1000,host_step=1000"
ITERS, SPIN, WARM, REST, SLEEPS, SLEEP = 8, 5 * MS, 40 * MS, 5000, 3, 3 * MS
SLACK = 5 * MS  # a loaded host may add to a call or a sleep (never take away)


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) // 2


def record(mode):
    rc, out, err, data, _ = h.record("slowcall", args=(mode,), kernel_us=KERNELS, tag=mode)
    h.check(rc == 0 and "slowcall: ok" in out, f"slowcall {mode}: rc {rc} {out} {err[-400:]}")
    rc, doc, err = h.cutrace_json("gaps", "--format", "json", data)
    h.check(rc == 0 and doc, f"gaps {mode}: rc {rc} {err}")
    return data, doc or {"findings": [], "idle_by_ending_call": [], "devices": [{}]}


def gemm_spans(data):
    """Durations of the outermost cublasSgemm_v2 calls in the raw records."""
    files = [os.path.join(data, f) for f in os.listdir(data) if f.endswith(".ctr")]
    recs, strings = raw_records(h.cutrace, files[0])
    return [r["end_ns"] - r["begin_ns"] for r in recs
            if r["kind"] == "api" and strings.get(r.get("name")) == "cublasSgemm_v2" and r["depth"] == 0]


def slow_finding(doc, mode):
    # (a call that only began gaps, pattern starts_gaps, is not the gemm's story: a host
    # preempted inside another call, cudaMemset in a loaded full run, makes one)
    fs = [f for f in doc["findings"] if f["kind"] == "slow_launch_call" and f.get("pattern") != "starts_gaps"]
    h.check(len(fs) == 1, f"{mode}: one slow_launch_call finding: {fs}")
    return fs[0] if fs else {}


site = f"run_gemm(float*) (slowcall.cu:{LINE['SLOWCALL:']})"

# ---- every call slow ------------------------------------------------------------------
data, doc = record("every")
dev = doc["devices"][0]
f = slow_finding(doc, "every")
spans = gemm_spans(data)
h.check(len(spans) == ITERS, f"{ITERS} cublasSgemm_v2 spans: {spans}")
h.check(f.get("what") == "cublasSgemm_v2" and f.get("callsite") == site and f.get("nested") is True
        and f.get("count") == ITERS and f.get("pattern") == "every_call",
        f"every: the call, its site {site}, {ITERS} gaps, every_call: {f}")
inside = f.get("idle_ns", 0)
h.check(sum(spans) - ITERS * MS <= inside <= sum(spans),
        f"every: time inside the gaps {inside} vs the spans {sum(spans)}")
h.check(ITERS * SPIN <= inside, f"every: {inside} vs {ITERS} x {SPIN}")
# Each call's time inside its gap is its span less the bit after its kernel started: the
# median, the first call (which also loads the library's kernels) and the others' median
# within 1 ms of the spans' (a loaded host stretches both alike).
# The medians come from report's duration histograms, within 3.1% (docs/gaps.md): a
# median of calls a little over SPIN may read up to 3.1% under it.
# A call preempted after its launch (below: at most one of the 8) spans its kernel's
# 1 ms and the after-launch time too, outside the gap it ended: seen on the first call
# in a loaded full run (span 9.2 ms, 5.06 ms in its gap, 3.15 ms after its launch).
HIST_FLOOR = SPIN - SPIN * 31 // 1000
first_extra = MS + f.get("after_launch_ns", 0) if f.get("after_launch_gaps") else 0
h.check(HIST_FLOOR <= f.get("median_ns", 0) and abs(f.get("median_ns", 0) - median(spans)) <= MS
        and spans[0] - MS - first_extra <= f.get("first_call_ns", 0) <= spans[0]
        and HIST_FLOOR <= f.get("rest_median_ns", 0) and abs(f.get("rest_median_ns", 0) - median(spans[1:])) <= MS,
        f"every: median and first call: {f} vs spans {spans}")
# Each call returns at its launch, so no gap begins inside one; but a host preempted
# between a call's launch and its return for longer than the kernel (a loaded machine)
# rightly makes that gap begin inside the call: at most one of the 8 may.
after = f.get("after_launch_ns", -1)
h.check(f.get("saving_ns") == inside + after, f"every: the saving is all of it: {f.get('saving_ns')}")
h.check((after == 0 and f.get("after_launch_gaps") == 0) or (after > 0 and f.get("after_launch_gaps") == 1),
        f"every: each call returns at its launch, a gap begins inside at most one: {f}")
h.check(f.get("device_idle_ns") == dev.get("idle_ns") and
        abs(f.get("share", 0) - inside / max(1, dev.get("idle_ns", 1))) < 0.001 and f.get("share", 0) > 0.5,
        f"every: share of the device's idle time: {f.get('share')}")

# The idle grouped by what ended it.
rows = doc["idle_by_ending_call"]
h.check(all(a["idle_ns"] >= b["idle_ns"] for a, b in zip(rows, rows[1:])), "rows ordered by idle time")
h.check(sum(r["idle_ns"] for r in rows) == dev.get("idle_ns") and sum(r["count"] for r in rows) == dev.get("gaps"),
        f"rows add up to the device's idle time and gaps: {rows} vs {dev}")
r0 = rows[0] if rows else {}
# A host preempted between a sync's return and the next call for longer than the call
# (a loaded machine) rightly makes that gap host_wait: at most one of the 8 may move.
gemm_rows = [r for r in rows if r["api"] == "cublasSgemm_v2"]
h.check(r0.get("cause") == "launch_overhead" and r0.get("api") == "cublasSgemm_v2" and r0.get("nested") is True
        and r0.get("callsite") == site and r0.get("count", 0) >= ITERS - 1
        and SPIN <= r0.get("median_ns", 0) <= SPIN + MS + SLACK, f"gemm row: {r0}; rows {rows}")
h.check(sum(r["count"] for r in gemm_rows) == ITERS and sum(r["in_call_ns"] for r in gemm_rows) == inside
        and all(r["callsite"] == site for r in gemm_rows), f"gemm rows: {gemm_rows}")
sleep_site = f"sleep_then_launch(float*) (slowcall.cu:{LINE['SLEEPLAUNCH:']})"
# (a host preempted inside the sync before a sleep for longer than the sleep, load
# average 12 on 2 cores, made one of the 3 gaps sync: at most one may move)
sl = [r for r in rows if r["callsite"] == sleep_site]
slh = [r for r in sl if r["cause"] == "host_wait"]
h.check(len(slh) == 1 and slh[0]["count"] >= SLEEPS - 1 and sum(r["count"] for r in sl) == SLEEPS
        and all(r["nested"] is False and r["api"].endswith("aLaunchKernel") for r in sl)
        and SLEEP <= slh[0]["median_ns"] <= SLEEP + MS + SLACK,
        f"sleep row: {sl}")
h.check(abs(sum(r["share"] for r in rows) - 1.0) < 0.002, "shares add up to 1")

# Findings by saving: JSON, text, --summary.
savings = [x["saving_ns"] for x in doc["findings"]]
h.check(len(savings) >= 3 and savings == sorted(savings, reverse=True) and doc["findings"][0]["kind"] == "slow_launch_call",
        f"findings by saving: {[(x['kind'], x['saving_ns']) for x in doc['findings']]}")
kinds = {x["kind"] for x in doc["findings"]}
h.check({"pageable_copy", "sync_copy"} <= kinds, f"the copies' findings: {kinds}")
# The findings add up (docs/gaps.md "Findings add up"): the slow call, first, adds its
# saving; the 4 copies are both pageable and synchronous, so the second copy finding
# adds nothing of its own; the adds sum to the total, at most the device's idle time.
byk = {x["kind"]: x for x in doc["findings"]}
cp = [byk.get("pageable_copy", {}), byk.get("sync_copy", {})]
claim = [c.get("saving_ns", 0) - c.get("not_idle_ns", 0) for c in cp]
tot = doc.get("findings_total", {})
h.check(doc["findings"][0]["adds_ns"] == doc["findings"][0]["saving_ns"]
        and cp[1].get("adds_ns") == 0 and cp[1].get("overlap_ns") == claim[1] == claim[0]
        and sum(x["adds_ns"] for x in doc["findings"]) == tot.get("saving_ns")
        and tot.get("saving_ns") <= tot.get("idle_ns") == sum(d["idle_ns"] for d in doc["devices"])
        and all(d["findings_saving_ns"] <= d["idle_ns"] for d in doc["devices"]),
        f"findings add up: {[(x['kind'], x['saving_ns'], x['overlap_ns'], x['not_idle_ns'], x['adds_ns']) for x in doc['findings']]} {tot}")
rc, text, err = h.run("gaps", data)
found = text[text.find("\nFindings"):].splitlines()[2:]
h.check(rc == 0 and found and found[0].startswith("  - ") and f"cublasSgemm_v2 at {site} held the launching thread" in found[0]
        and f"inside the {ITERS} device gaps it ended" in found[0] and "every call was slow" in found[0]
        and "(saves up to " in found[0], f"text finding: {found[:1]}")
# each share beside the time it is of: the call's own (JSON share), then its gaps' idle
# time (the sum of its rows' shares in the table)
gaps_share = sum(r["share"] for r in gemm_rows)
shares = re.search(r"held the launching thread [0-9.]+ m?s, ([0-9.]+)% of the device's idle time, inside the "
                   r"\d+ device gaps it ended \([0-9.]+ m?s idle: ([0-9.]+)% of the device's idle time\)",
                   found[0] if found else "")
h.check(shares and abs(float(shares[1]) - 100 * f.get("share", 0)) < 0.06
        and abs(float(shares[2]) - 100 * gaps_share) < 0.1 and float(shares[2]) >= float(shares[1]),
        f"text finding's shares {shares and shares.groups()} vs share {f.get('share')}, rows {gaps_share}: {found[:1]}")
h.check("Idle by what ended it" in text and re.search(r"launch_overhead +cublasSgemm_v2 \(nested launch\) +"
                                                       + re.escape(site) + r" +[78] ", text),
        "text table row")
rc, out, err = h.run("gaps", "--summary", data)
last = out.splitlines()[-1] if out else ""
h.check(rc == 0 and last.startswith("findings: slow launching calls (cublasSgemm_v2) up to ")
        and last.index("pageable copies") < last.index(" (see cutrace gaps"), f"summary findings: {last}")

# The advice keeps --from/--to and the thresholds.
rc, out, err = h.run("gaps", "--summary", "--from", "1ms", "--to=@99999999999999999", "--repeat-min", "3", data)
last = out.splitlines()[-1] if out else ""
h.check(rc == 0 and last.endswith(f" (see cutrace gaps --from=1ms --to=@99999999999999999 --repeat-min=3 {data} for the fixes)"),
        f"advice with the options: {last!r}")
rc, out, err = h.run("gaps", "--summary", "--from=1500us", data)
last = out.splitlines()[-1] if out else ""
h.check(rc == 0 and last.endswith(f" (see cutrace gaps --from=1500us {data} for the fixes)"), f"advice --from: {last!r}")

# ---- only the first call slow (warm-up) ----------------------------------------------------
data, doc = record("warmup")
f = slow_finding(doc, "warmup")
h.check(f.get("what") == "cublasSgemm_v2" and f.get("callsite") == site and f.get("count") == ITERS
        and f.get("pattern") == "first_call", f"warmup: first_call: {f}")
h.check(WARM <= f.get("first_call_ns", 0) and f.get("rest_median_ns", MS) < MS
        and f.get("saving_ns") == f.get("first_call_ns"), f"warmup: the first call and the rest: {f}")
spans = gemm_spans(data)
h.check(len(spans) == ITERS and spans[0] - MS <= f.get("first_call_ns", 0) <= spans[0],
        f"warmup: the first call's time inside its gap vs its span {spans[:1]}")
rc, out, err = h.run("gaps", "--summary", data)
h.check(rc == 0 and out.splitlines()[-1].startswith("findings: slow launching calls (cublasSgemm_v2, first call only) up to "),
        f"warmup summary: {out}")
rc, text, err = h.run("gaps", data)
h.check("only the first call was slow (warm-up" in text and "CUDA_MODULE_LOADING=EAGER" in text, "warmup text")

# ---- the call goes on 30 ms after its launch: each gap is judged before its call is
# read, and waits for it (the list of gaps waiting for their outermost call) ----------
data, doc = record("tail")
f = slow_finding(doc, "tail")
h.check(f.get("what") == "cublasSgemm_v2" and f.get("callsite") == site and f.get("count") == ITERS
        and f.get("nested") is True and f.get("pattern") == "every_call" and SPIN <= f.get("median_ns", 0),
        f"tail: the outermost call found after its gaps: {f}")
# Each gap begins when the call's kernel (1 ms) ends while the call goes on for its 30 ms
# tail: the call's time inside those gaps is counted as the leading call's, 8 gaps (the
# last one ended by a sleep_then_launch), and is part of the saving.
TAIL = 30 * MS
dev = doc["devices"][0]
h.check(f.get("after_launch_gaps") == ITERS
        and ITERS * (TAIL - 2 * MS) <= f.get("after_launch_ns", 0) <= ITERS * (TAIL + SLACK)
        and f.get("saving_ns") == f.get("idle_ns", 0) + f.get("after_launch_ns", 0) <= dev.get("idle_ns", 0),
        f"tail: the time after its launch in the gaps that began inside it: {f}; device {dev}")
rc, text, err = h.run("gaps", data)
h.check(rc == 0 and f"after its own launch in the {ITERS} gaps that began while it still ran" in text
        and "find what the call does after its launch" in text, f"tail: text {text[text.find('Findings'):][:900]}")
rows = doc["idle_by_ending_call"]
h.check(sum(r["count"] for r in rows if r["api"] == "cublasSgemm_v2" and r["callsite"] == site) == ITERS
        and not any(r["callsite"] == site and r["api"] != "cublasSgemm_v2" for r in rows),
        f"tail: every gemm gap under cublasSgemm_v2: {rows}")
h.finish()
