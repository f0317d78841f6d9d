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
  pattern every_call / first_call, its time inside the gaps, its first call, its
  medians and its time after its launch equal to what the raw records give (each
  call's overlap with the device gap its kernel ended, and with the gap that began
  inside it), and against the plan (at least SPIN / WARM a call), the saving (all of it
  / the first call's), the share;
- the idle-by-ending-call table (JSON and text): the gemm rows and the sleep rows (the
  SLEEPLAUNCH: line) with their causes, counts and medians against each gap's cause
  (docs/gaps.md rules 6-10) and length as the records give them, and the plan, rows
  ordered by idle time, their idle time adding up to the device's (the records' too)
  and their gaps to its gap count;
Nothing depends on the host's scheduling: a loaded host only lengthens calls, sleeps
and gaps, or makes a gap begin inside a call preempted after its launch (the records
say so, and so must the finding).
- findings ordered by what they add (then their saving) in JSON, text and the --summary line;
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


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) // 2


def record(mode):
    rc, out, err, data, _ = h.record("slowcall", args=(mode,), kernel_us=KERNELS, tag=mode)
    h.check(rc == 0 and "slowcall: ok" in out, f"slowcall {mode}: rc {rc} {out} {err[-400:]}")
    rc, doc, err = h.cutrace_json("gaps", "--format", "json", data)
    h.check(rc == 0 and doc, f"gaps {mode}: rc {rc} {err}")
    return data, doc or {"findings": [], "idle_by_ending_call": [], "devices": [{}]}


def timeline(data):
    """What the raw records say (GPU and host on one clock on the simulator), whatever
    the host's scheduling: per outermost cublasSgemm_v2 call in call order a dict with
    span (its duration), in_gap (its time inside the device gap its kernel ended: from
    the previous GPU work's end to its kernel's start), tail (its time after its kernel
    ended inside the gap that began there: 0 when it returned first) and gap (the length
    of the gap its kernel ended); and the gaps' lengths before each host_step kernel."""
    files = [os.path.join(data, f) for f in os.listdir(data) if f.endswith(".ctr")]
    recs, strings = raw_records(h.cutrace, files[0])
    gpu = sorted((r for r in recs if r["kind"] == "gpu" and r["device"] == 0), key=lambda r: r["start_ns"])
    by_corr = {r["corr"]: r for r in gpu}
    kernel_of = {r["parent"]: by_corr[r["corr"]] for r in recs
                 if r["kind"] == "api" and r["depth"] > 0 and r["corr"] in by_corr}

    def gap_before(k):
        return max((g["end_ns"] for g in gpu if g["start_ns"] < k["start_ns"]), default=k["start_ns"])

    def overlap(a0, a1, b0, b1):
        return max(0, min(a1, b1) - max(a0, b0))

    outer = [r for r in recs if r["kind"] == "api" and r["depth"] == 0]
    tid = outer[0]["tid"] if outer else 0
    held = [(r["begin_ns"], r["end_ns"], "tracer") for r in recs if r["kind"] == "tracer" and r["tid"] == tid]
    for r in outer:
        name = strings.get(r.get("name"), "")
        held.append((r["begin_ns"], r["end_ns"], "sync" if name in SYNCS else "launch_overhead"
                     if name == "cublasSgemm_v2" or name.endswith("LaunchKernel") else "host_wait"))

    def cause(a, b):
        """docs/gaps.md rules 6-10 for a gap [a, b] the launching thread was late for
        (here every one): what it spent most of the gap doing, ties to the earlier rule."""
        amount = dict.fromkeys(CAUSE_ORDER, 0)
        for begin, end, what in held:
            amount[what] += overlap(begin, end, a, b)
        amount["host_wait"] += max(0, (b - a) - sum(amount.values()))  # (a tracer span inside a call counts twice)
        return max(CAUSE_ORDER, key=lambda c: (amount[c], -CAUSE_ORDER.index(c)))

    calls = sorted((r for r in outer if strings.get(r.get("name")) == "cublasSgemm_v2"), key=lambda r: r["begin_ns"])
    out = []
    for c in calls:
        k = kernel_of.get(c["corr"], {"start_ns": c["end_ns"], "end_ns": c["end_ns"]})
        nxt = min((g["start_ns"] for g in gpu if g["start_ns"] >= k["end_ns"] and g is not k), default=k["end_ns"])
        out.append({"span": c["end_ns"] - c["begin_ns"], "gap": k["start_ns"] - gap_before(k),
                    "in_gap": overlap(c["begin_ns"], c["end_ns"], gap_before(k), k["start_ns"]),
                    "tail": overlap(c["begin_ns"], c["end_ns"], k["end_ns"], nxt),
                    "cause": cause(gap_before(k), k["start_ns"])})
    steps = [g for g in gpu if strings.get(g.get("name"), "").startswith("_Z9host_step")]
    return out, [{"gap": k["start_ns"] - gap_before(k), "cause": cause(gap_before(k), k["start_ns"])} for k in steps]


def device_idle(data):
    """The device's idle time between its first GPU work and its last, from the records."""
    files = [os.path.join(data, f) for f in os.listdir(data) if f.endswith(".ctr")]
    recs, _ = raw_records(h.cutrace, files[0])
    idle, busy_to = 0, None
    for g in sorted((r for r in recs if r["kind"] == "gpu" and r["device"] == 0), key=lambda r: r["start_ns"]):
        if busy_to is not None and g["start_ns"] > busy_to:
            idle += g["start_ns"] - busy_to
        busy_to = g["end_ns"] if busy_to is None else max(busy_to, g["end_ns"])
    return idle


# rules 6-10's order (no allocation calls in this program); the blocking calls it makes
CAUSE_ORDER = ["tracer", "sync", "launch_overhead", "host_wait"]
SYNCS = {"cudaDeviceSynchronize", "cudaMemcpy"}


def causes(gaps):
    """{cause: [gap lengths]} of gaps (dicts with gap and cause)."""
    out = {}
    for g in gaps:
        out.setdefault(g["cause"], []).append(g["gap"])
    return out


def hist_median(got, values):
    """Whether got is report's median of values (tools/stats.c): inside [min, max] and
    in the bucket (1/32 of a power of two wide) of the middle value, the lower of two."""
    v = sorted(values)
    mid = v[(len(v) - 1) // 2] if v else 0
    return bool(v) and v[0] <= got <= v[-1] and abs(got - mid) <= mid // 32 + 1


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
calls, step_gaps = timeline(data)
spans, in_gap = [c["span"] for c in calls], [c["in_gap"] for c in calls]
h.check(len(calls) == ITERS, f"{ITERS} cublasSgemm_v2 calls: {calls}")
h.check(f.get("what") == "cublasSgemm_v2" and f.get("callsite") == site and f.get("nested") is True
        and f.get("count") == ITERS and f.get("pattern") == "every_call",
        f"every: the call, its site {site}, {ITERS} gaps, every_call: {f}")
# Each call spins SPIN before its launch, after the sync that ended the GPU's work: all
# of that is inside the gap its kernel ends, whatever the host's scheduling. A host
# preempted after a call's launch (a loaded machine) moves time out of that gap (its
# kernel's 1 ms, then the gap that begins inside the call), so the finding is compared
# with each call's time inside its gap as the raw records give it, not with its span.
inside = f.get("idle_ns", 0)
h.check(all(SPIN <= c["in_gap"] <= c["span"] for c in calls), f"every: each call's time in its gap: {calls}")
h.check(inside == sum(in_gap) and ITERS * SPIN <= inside <= sum(spans),
        f"every: time inside the gaps {inside} vs the records' {sum(in_gap)}, spans {sum(spans)}")
# The first call (which also loads the library's kernels) exactly; the medians from
# report's duration histograms (docs/gaps.md: within 3.1%, of the lower middle value).
h.check(f.get("first_call_ns") == in_gap[0] and hist_median(f.get("median_ns", 0), in_gap)
        and hist_median(f.get("rest_median_ns", 0), in_gap[1:]),
        f"every: median and first call: {f} vs the calls' time in their gaps {in_gap}, spans {spans}")
# Each call returns at its launch, so normally no gap begins inside one; a host
# preempted between a call's launch and its return for longer than the kernel rightly
# makes the next gap begin inside that call: counted as the call's (after_launch), each
# as the records give it.
after = f.get("after_launch_ns", -1)
tails = [c["tail"] for c in calls]
h.check(f.get("saving_ns") == inside + after, f"every: the saving is all of it: {f.get('saving_ns')}")
h.check(after == sum(tails) and f.get("after_launch_gaps") == sum(1 for t in tails if t),
        f"every: time after the launch in the gaps that began inside a call: {f} vs the records' {tails}")
# The share is of the device's idle time, the sum of its gaps as the records give them
# (a loaded host adds idle time of other causes: the share is over half only on an idle
# host, so it is not asserted).
h.check(f.get("device_idle_ns") == dev.get("idle_ns") == device_idle(data) and
        abs(f.get("share", 0) - inside / max(1, dev.get("idle_ns", 1))) < 0.001,
        f"every: share of the device's idle time: {f.get('share')}; the records' idle {device_idle(data)}")

# The idle grouped by what ended it.
rows = doc["idle_by_ending_call"]
h.check(all(a["idle_ns"] >= b["idle_ns"] for a, b in zip(rows, rows[1:])), "rows ordered by idle time")
h.check(sum(r["idle_ns"] for r in rows) == dev.get("idle_ns") and sum(r["count"] for r in rows) == dev.get("gaps"),
        f"rows add up to the device's idle time and gaps: {rows} vs {dev}")
# Each gap's cause is what the launching thread spent most of it doing (docs/gaps.md
# rules 6-10): normally in the slow call (launch_overhead) or, before a sleep's launch,
# outside CUDA (host_wait); a host preempted inside the sync before (a loaded machine)
# rightly makes that gap sync, and one preempted between two calls host_wait. So the
# rows are compared with each gap's cause and length as the records give them.
gemm_rows = [r for r in rows if r["api"] == "cublasSgemm_v2"]
want = causes(calls)
lo = [r for r in gemm_rows if r["cause"] == "launch_overhead"]
r0 = lo[0] if lo else {}
h.check(len(lo) == 1 and r0.get("nested") is True and r0.get("callsite") == site
        and r0.get("count") == len(want.get("launch_overhead", [])) >= 1 and SPIN <= r0.get("median_ns", 0)
        and hist_median(r0.get("median_ns", 0), want.get("launch_overhead", [])),
        f"gemm row: {r0}; rows {rows}; the gemm gaps {calls}")
h.check(sum(r["count"] for r in gemm_rows) == ITERS and sum(r["in_call_ns"] for r in gemm_rows) == inside
        and all(r["callsite"] == site for r in gemm_rows)
        and {r["cause"]: r["count"] for r in gemm_rows} == {c: len(v) for c, v in want.items()},
        f"gemm rows: {gemm_rows} vs the gaps' causes {want}")
h.check(all(hist_median(r["median_ns"], want.get(r["cause"], [])) for r in gemm_rows),
        f"gemm rows' medians: {gemm_rows} vs the gaps {want}")
sleep_site = f"sleep_then_launch(float*) (slowcall.cu:{LINE['SLEEPLAUNCH:']})"
sl = [r for r in rows if r["callsite"] == sleep_site]
want = causes(step_gaps)
h.check(len(step_gaps) == SLEEPS and sum(r["count"] for r in sl) == SLEEPS
        and all(r["nested"] is False and r["api"].endswith("aLaunchKernel") for r in sl)
        and {r["cause"]: r["count"] for r in sl} == {c: len(v) for c, v in want.items()}
        and all(hist_median(r["median_ns"], want.get(r["cause"], [])) for r in sl)
        and len(want.get("host_wait", [])) >= 1 and all(g["gap"] >= SLEEP for g in step_gaps),
        f"sleep rows: {sl}; the sleeps' gaps {step_gaps}")
h.check(abs(sum(r["share"] for r in rows) - 1.0) < 0.002, "shares add up to 1")

# Findings by what they add (then saving): JSON, text, --summary.
savings = [(x["adds_ns"], x["saving_ns"]) for x in doc["findings"]]
h.check(len(savings) >= 3 and savings == sorted(savings, reverse=True) and doc["findings"][0]["kind"] == "slow_launch_call",
        f"findings by what they add: {[(x['kind'], x['adds_ns'], x['saving_ns']) for x in doc['findings']]}")
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
                                                       + re.escape(site) + rf" +{r0.get('count')} ", text),
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
calls, _ = timeline(data)
in_gap = [c["in_gap"] for c in calls]
h.check(len(calls) == ITERS and f.get("first_call_ns") == in_gap[0] and WARM <= in_gap[0] <= calls[0]["span"]
        and hist_median(f.get("rest_median_ns", 0), in_gap[1:]),
        f"warmup: the first call's time inside its gap and the others' median vs the records' {calls}")
rc, out, err = h.run("gaps", "--summary", data)
# the summary names the slow_launch_call finding that adds most, as the JSON orders them:
# the gemm's, unless a loaded host was preempted longer inside another call (a 153 ms
# cudaMemset once: its finding, pattern starts_gaps, then leads, rightly)
lead = next((x for x in doc["findings"] if x["kind"] == "slow_launch_call"), {})
want = ("findings: slow launching calls (cublasSgemm_v2, first call only) up to " if lead is f
        else f"findings: slow launching calls ({lead.get('what')}, ")
h.check(rc == 0 and (lead is f or lead.get("pattern") == "starts_gaps")
        and out.splitlines()[-1].startswith(want), f"warmup summary: {out} (want {want!r})")
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
# (each call's tail as the raw records give it: at least the 30 ms less its kernel's
# 1 ms and the launch's own latency; a loaded host only lengthens it)
calls, _ = timeline(data)
tails = [c["tail"] for c in calls]
h.check(f.get("after_launch_gaps") == ITERS and len(tails) == ITERS and all(t >= TAIL - 2 * MS for t in tails)
        and f.get("after_launch_ns") == sum(tails)
        and f.get("saving_ns") == f.get("idle_ns", 0) + f.get("after_launch_ns", 0) <= dev.get("idle_ns", 0),
        f"tail: the time after its launch in the gaps that began inside it: {f}; device {dev}; the records' {tails}")
rc, text, err = h.run("gaps", data)
h.check(rc == 0 and f"after its own launch in the {ITERS} gaps that began while it still ran" in text
        and "find what the call does after its launch" in text, f"tail: text {text[text.find('Findings'):][:900]}")
rows = doc["idle_by_ending_call"]
h.check(sum(r["count"] for r in rows if r["api"] == "cublasSgemm_v2" and r["callsite"] == site) == ITERS
        and not any(r["callsite"] == site and r["api"] != "cublasSgemm_v2" for r in rows),
        f"tail: every gemm gap under cublasSgemm_v2: {rows}")
h.finish()
