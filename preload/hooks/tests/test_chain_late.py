#!/usr/bin/env python3
"""CUTRACE_EVENT_CHAIN=1 with the host late inside a launch call: no idle time hidden.

usage: test_chain_late.py SIM_DIR LIBTRACE HK_READ HK_LATE HK_LATE_SHIM   (or --skip)

hk_late queues an operation of each timed kind (kernel, pinned async copy through
the runtime and through the driver, async set, graph launch) behind a running 2 ms
kernel, and hk_late_shim (preloaded after libtrace.so) makes the call sleep 4 ms
before it reaches the runtime or the driver: the tracer finds the previous end
event pending and chains, and the stream is idle for 2 ms before the work is
submitted (the simulator's truth log says when). Each such start must not be dated
before the truth (the idle is not hidden), must lie within the launch call, and
must be counted (TRACER "chain_late"). A kernel submitted on time whose call
returns 4 ms late is uncertain the same way, dated by the same rule (at the
return: the trace then shows idle time that was not), and counted too. The
operations queued on time still chain (TRACER "chained") and match the truth:
durations and distances to the previous operation within 2 us, absolute times
within the clock mapping's error (20 us), copies from pageable memory (which
return only once done, so their return bounds nothing) through the runtime and the
driver included.

Under load the host can be late where the plan has it on time (the call of an
operation planted behind k_long begins after k_long ended, or an on-time call returns
after it): such an operation legitimately neither chains nor counts as chain_late, or
counts as chain_late though on time. Each call is judged against the simulator's
truth: when one began less than 1 ms before its previous operation's true end (2 ms
as planned), or an on-time one returned less than 1 ms before it, the run is spoiled
and made again (3 tries); the last is judged with those operations' counts left open
(the others' stay exact) and their plan checks skipped.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_hooks import Runner, GPU_KERNEL, GPU_MEMCPY, GPU_MEMSET, GPU_GRAPH  # noqa: E402
from cttest import check, finish, scratch  # noqa: E402

ROUNDS = 3
# per round: (GPU record type, truth name, how the host was late) in program order;
# "before": the call slept before it submitted, "after": after (it returned late)
ROUND = [(GPU_KERNEL, "_Z6k_longi", ""), (GPU_KERNEL, "_Z6k_nexti", "before"),
         (GPU_KERNEL, "_Z6k_longi", ""), (GPU_MEMCPY, "HtoD", "before"),
         (GPU_KERNEL, "_Z6k_longi", ""), (GPU_MEMSET, "memset", "before"),
         (GPU_KERNEL, "_Z6k_longi", ""), (GPU_GRAPH, "_Z7k_graphi", "before"),
         (GPU_KERNEL, "_Z6k_longi", ""), (GPU_MEMCPY, "HtoD", "before"),  # the driver's
         (GPU_KERNEL, "_Z6k_longi", ""), (GPU_KERNEL, "_Z6k_nexti", ""),
         (GPU_KERNEL, "_Z6k_nexti", ""), (GPU_MEMCPY, "HtoD", ""),
         (GPU_KERNEL, "_Z6k_longi", ""), (GPU_MEMCPY, "HtoD", ""),  # the driver's, pageable
         (GPU_KERNEL, "_Z6k_longi", ""), (GPU_KERNEL, "_Z6k_nexti", "after")]
DRIVER_COPIES = (9, 15)  # indexes in ROUND of the copies made through the driver
LATE = sum(1 for r in ROUND if r[2] == "before")
EXACT_NS = 2000     # event resolution (512 ns) and the clock mapping's error
CALL_SLACK_NS = 20000
# indexes in ROUND of the operations queued behind a running one when their call
# begins (chained), of those dated at their call's return (chain_late), and of the
# on-time ones whose call returns before they start (not chain_late)
CHAINED = (1, 3, 5, 7, 9, 11, 12, 13, 15, 17)
CHAIN_LATE = tuple(i for i, r in enumerate(ROUND) if r[2])
ON_TIME_RETURNS_EARLY = (11, 12)
PLAN_MARGIN_NS = 1000000  # the plan leaves 2 ms (k_long) for each of these


def spoiled(ours, truth, apis):
    """The operations whose planned host timing the load undid: {index: why}."""
    bad = {}
    for i in range(1, len(ours)):
        pos, prev_end = i % len(ROUND), int(truth[i - 1][6])
        api = apis.get(ours[i]["corr"])
        if api is None or pos not in CHAINED:
            continue
        if prev_end - api["begin_ns"] < PLAN_MARGIN_NS:
            bad[i] = f"call began {(api['begin_ns'] - prev_end) / 1e6:+.3f} ms from the previous end"
        elif pos in ON_TIME_RETURNS_EARLY and prev_end - api["end_ns"] < PLAN_MARGIN_NS:
            bad[i] = f"call returned {(api['end_ns'] - prev_end) / 1e6:+.3f} ms from the previous end"
    return bad


def tracer_total(t, label):
    return sum(r["amount"] for r in t.of("tracer") if t.name(r["what"]) == label)


def main():
    if sys.argv[1:] == ["--skip"]:
        print("nvcc or the simulated CUDA stack is not available: skipped")
        return 77
    if len(sys.argv) != 6:
        print(__doc__)
        return 2
    sim, lib, reader, app, shim = sys.argv[1:]
    run = Runner(sim, lib, reader)
    with scratch("hk_truth_") as tmp:
        truth_path = os.path.join(tmp, "truth.txt")
        extra = {"SIMCUDA_KERNEL_US": "default=5,k_long=2000", "SIMCUDA_CLOCK_OFFSET_US": "-3000",
                 "SIMCUDA_CLOCK_DRIFT_PPM": "50", "SIMCUDA_TRUTH_FILE": truth_path,
                 "CUTRACE_EVENT_CHAIN": "1"}
        rc0, out0, _ = run.run([app, str(ROUNDS)], extra, traced=False, preload_after=shim)
        n, bad = len(ROUND) * ROUNDS, {}
        for attempt in range(1, 4):
            if os.path.exists(truth_path):
                os.unlink(truth_path)
            rc, out, t = run.run([app, str(ROUNDS)], extra, preload_after=shim)
            truth = [line.split() for line in open(truth_path)] if os.path.exists(truth_path) else []
            if rc != 0 or not t or len(truth) != n or len(t.of("gpu")) != n:
                break
            bad = spoiled(sorted(t.of("gpu"), key=lambda g: g["corr"]), truth,
                          {a["corr"]: a for a in t.of("api")})
            if not bad:
                break
            print(f"  try {attempt}: the load undid the plan of {len(bad)} operations: "
                  f"{sorted(bad.items())[:3]}")
    check(rc0 == rc and out0 == out, f"output or status differ: untraced {rc0} {out0!r}, traced {rc} {out!r}")
    if not check(rc == 0 and t and truth, f"run failed: {out}"):
        return finish()
    ours = sorted(t.of("gpu"), key=lambda g: g["corr"])
    apis = {a["corr"]: a for a in t.of("api")}
    if not check(len(ours) == len(truth) == n, f"{len(ours)} GPU records, {len(truth)} true, {n} expected"):
        return finish()
    late_err, exact_err = [], []
    for i, (g, x) in enumerate(zip(ours, truth)):
        kind, name, late = ROUND[i % len(ROUND)]
        enqueue, start, end = int(x[4]), int(x[5]), int(x[6])
        if not check(g["type"] == kind and x[1] == name, f"#{i}: type {g['type']} / {x[1]}, expected {kind} / {name}"):
            return finish()
        api = apis[g["corr"]]
        if i % len(ROUND) in DRIVER_COPIES:
            check(t.name(api["name"]) == "cuMemcpyHtoDAsync_v2", f"#{i}: {t.name(api['name'])}, not the driver's")
        if late == "before":
            # planted: the previous operation (k_long) ended well before this one was submitted
            check(start == enqueue and start > int(truth[i - 1][6]) + 1000000,
                  f"#{i} {name}: the host was not late (truth {x})")
            # the start is uncertain within [previous end, call return]: dated at the
            # return, never before the truth
            err = g["start_ns"] - start
            late_err.append(err)
            check(err >= -EXACT_NS, f"#{i} {name}: dated {-err} ns before its true start (idle hidden)")
            check(api["begin_ns"] <= g["start_ns"] <= api["end_ns"] + CALL_SLACK_NS,
                  f"#{i} {name}: start {g['start_ns']} outside its call [{api['begin_ns']}, {api['end_ns']}]")
        elif late == "after" and i not in bad:
            # planted: submitted behind k_long, the call returned after the kernel had run
            check(start == int(truth[i - 1][6]) and api["end_ns"] > end + 1000000,
                  f"#{i} {name}: not submitted on time, or returned on time (truth {x})")
            # the same uncertainty, the same rule: the start is dated at the return;
            # the end event, recorded after the return on an idle stream, too (the
            # idle then shown before it is not real)
            check(api["end_ns"] - 1000000 < g["start_ns"] <= g["end_ns"] <= api["end_ns"] + CALL_SLACK_NS,
                  f"#{i} {name}: [{g['start_ns']}, {g['end_ns']}], truth [{start}, {end}], call ended "
                  f"{api['end_ns']}")
        elif late == "after":
            pass  # the load undid the plan: judged by the rule below only
        elif start > enqueue + 1000:
            # queued on time behind other work: chained, exact to the clock mapping's
            # error, and exact in duration and in distance to the previous operation
            es, ee = g["start_ns"] - start, g["end_ns"] - end
            prev = ours[i - 1]
            exact_err.append(abs((g["start_ns"] - prev["end_ns"]) - (start - int(truth[i - 1][6]))))
            check(abs(es) <= CALL_SLACK_NS, f"#{i} {name}: queued start {es} ns from the truth")
            check(exact_err[-1] <= EXACT_NS, f"#{i} {name}: start {exact_err[-1]} ns off after the previous end")
            if kind == GPU_MEMCPY:  # returns once done: the end event is recorded after it
                check(-EXACT_NS <= ee <= api["end_ns"] + CALL_SLACK_NS - end, f"#{i} {name}: end {ee} ns off")
            else:
                exact_err.append(abs((g["end_ns"] - g["start_ns"]) - (end - start)))
                check(exact_err[-1] <= EXACT_NS, f"#{i} {name}: duration {exact_err[-1]} ns off")
    check(len(late_err) == LATE * ROUNDS and len(exact_err) >= 6 * ROUNDS - 2 * len(bad),
          f"{len(late_err)} late and {len(exact_err)} exact times judged")
    # the idle before each late operation, as gaps would see it
    before = [i for i in range(n) if ROUND[i % len(ROUND)][2] == "before"]
    true_idle = sum(int(truth[i][5]) - int(truth[i - 1][6]) for i in before)
    our_idle = sum(ours[i]["start_ns"] - ours[i - 1]["end_ns"] for i in before)
    check(our_idle >= true_idle - len(late_err) * EXACT_NS,
          f"idle before the late operations: {our_idle} ns in the trace, {true_idle} ns true")
    chained, late = tracer_total(t, "chained"), tracer_total(t, "chain_late")
    # chained: every late operation (the previous end was pending when the call began)
    # and the on-time k_next pair and pageable copies; those the load spoiled may not be
    sure = [i for i in range(n) if i % len(ROUND) in CHAINED and i not in bad]
    check(chained >= len(sure), f"only {chained} chained starts, {len(sure)} expected at least "
          f"({len(bad)} spoiled by load: {sorted(bad.items())[:3]})")
    late_sure = sum(1 for i in sure if i % len(ROUND) in CHAIN_LATE)
    check(late_sure <= late <= late_sure + len(bad),
          f"{late} chained starts dated by their call (chain_late), {late_sure} planted"
          f"{f' and up to {len(bad)} spoiled by load' if bad else ''}")
    print(f"  {n} operations: {len(late_err)} late ones dated {min(late_err)}..{max(late_err)} ns after the "
          f"truth; idle before them {our_idle} ns traced, {true_idle} ns true; {len(exact_err)} queued "
          f"distances and durations within {max(exact_err or [0])} ns; chained {chained}, chain_late {late}; "
          f"{len(bad)} spoiled by load")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
