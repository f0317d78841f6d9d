#!/usr/bin/env python3
"""gappy (bench/workloads/gappy.cu) plants idle periods of known cause and length and
prints them; traced on the simulated GPU, `cutrace gaps` must find each one with the
right cause and its edges within 30 us of the simulator's truth, report the planted findings
(and the host-bound launch at launch_spin that the host_wait phase's sleeps make), and find no
gap where there is none (docs/workloads.md, "gappy: the planted idle periods").
An edge made by an operation on an idle stream whose launch call returned late (a host
preempted inside the call after submitting: seen at load 8-17) is dated by that return,
as docs/preload.md "GPU timing" says (a start event completed before the call returned;
an end event recorded after a short kernel had finished): such an edge may lie up to the
call's return, 30 us more, and no later.

usage: test_gappy.py SIM_DIR CUTRACE LIBTRACE WORKLOAD_DIR
"""
import json
import os
import re
import sys

from harness import Harness, gaps_spoiled_by_load
from rawdump import kernel_identifier, raw_records

h = Harness(sys.argv)
KERNEL_US = "gappy_tiny=1,gappy_short=20,gappy_work=100,gappy_long=2000"
# Launches of 10 us: the launch-bound phase's gaps (a launch apart) stay wider than what
# the clock mapping may take off them plus --min-gap's 1 us. Its GPU times are mapped
# through one anchor for up to 100 ms (docs/preload.md "Clock mapping"), and the
# harness's 50 ppm drift then moves them up to 5 us against the host-dated starts; a
# loaded host stretches the run so the phase lies further from the anchor (4 us seen at
# load 13: with 4 us launches, 180 of 198 gaps fell under 1 us and went unreported).
rc, out, err, data, truth = h.record("gappy", kernel_us=KERNEL_US, extra={"SIMCUDA_LAUNCH_US": "10"})
h.check(rc == 0, f"gappy exit {rc}: {err.strip()[-400:]}")


def fields(line):
    return dict(re.findall(r"(\w+)=(\S+)", line))


phases, planted, findings, nones = {}, [], [], []
for line in out.splitlines():
    f = fields(line)
    if line.startswith("phase ") and "begin_ns" in f:
        phases[f["name"]] = [int(f["begin_ns"]), None]
    elif line.startswith("phase ") and "end_ns" in f:
        phases[f["name"]][1] = int(f["end_ns"])
    elif line.startswith("planted gap"):
        planted.append(f)
    elif line.startswith("planted finding"):
        findings.append(f)
    elif line.startswith("expect none"):
        nones.append(f)
h.check(len(planted) >= 4 and len(phases) >= 6, f"gappy's plan not understood:\n{out}")

rc, doc, err = h.cutrace_json("gaps", "--format", "json", "--top", "10000", "--min-gap", "1", data)
h.check(rc == 0 and doc is not None, f"gaps exit {rc}: {err.strip()}")
doc = doc or {}
reported = [g for g in doc.get("gaps", []) + doc.get("stream_gaps", []) if g["device"] == 0]
print(f"{len(reported)} gaps reported; devices: {json.dumps(doc.get('devices'))}")

# The truth: idle periods of the main (legacy default, handle 0x0) stream in the
# simulator's own log. Host-load noise stretches the planted sleeps; the truth does not lie.
main_ops = sorted((t for t in truth if t["stream"] in ("0x0", "0", "(nil)")), key=lambda t: t["start_ns"])
all_truth_gaps = [(a["end_ns"], b["start_ns"], kernel_identifier(b["name"])) for a, b in zip(main_ops, main_ops[1:])
                  if b["start_ns"] > a["end_ns"]]
truth_gaps = [(b, e, k) for b, e, k in all_truth_gaps if e - b >= 1000000]
# when the operation ending each main-stream gap was enqueued (the host's launch)
enqueued = {(a["end_ns"], b["start_ns"]): b["enqueue_ns"] for a, b in zip(main_ops, main_ops[1:])}


def phase_of(t):
    for name, (b, e) in phases.items():
        if e is not None and b <= t <= e:
            return name
    return None


def in_truth(g):
    """True when the simulator's main stream was idle over reported gap g (edges within 30 us,
    the end possibly later as match allows), or g lies inside the call that launched the
    work ending it: a stream that went idle while the host sat in the call after
    submitting has its start dated at the return, idle the GPU did not have
    (docs/preload.md "GPU timing")."""
    call = g.get("ended_by") or {}
    if (call.get("call_end_ns") is not None and call["call_begin_ns"] - 30000 <= g["start_ns"]
            and g["start_ns"] + g["dur_ns"] <= call["call_end_ns"] + 30000):
        return True
    return bool(match_one(g, [(b, e) for b, e, _ in all_truth_gaps]))


# The launch call of each GPU operation of the trace, joined by correlation id: for an
# edge dated at its call's return, when the call began and returned.
recs, names = [], {}
if os.path.isdir(data) and len(os.listdir(data)) == 1:
    recs, names = raw_records(h.cutrace, os.path.join(data, os.listdir(data)[0]))
call_of = {r["corr"]: (r["begin_ns"], r["end_ns"]) for r in recs if r["kind"] == "api" and r.get("depth") == 0}
gpu_end_corr = {r["end_ns"]: r["corr"] for r in recs if r["kind"] == "gpu" and r.get("device") == 0}


def edge_ok(got, truth, call):
    """An edge within 30 us of the truth, or later but no later than the return of the
    call that launched its operation (call: (begin_ns, end_ns) or None), when that call
    began before the truth (it is the call of the truth's operation, not a later one)."""
    if abs(got - truth) <= 30000:
        return True
    return call is not None and call[0] <= truth + 30000 and truth < got <= call[1] + 30000


def match_one(g, truth_gaps):
    """The truth gaps [(tb, te)] whose edges reported gap g has within 30 us, or later up
    to the return of the call that launched the operation making the edge."""
    ended_by = g.get("ended_by") or {}
    end_call = (ended_by["call_begin_ns"], ended_by["call_end_ns"]) if ended_by.get("call_end_ns") else None
    start_call = call_of.get(gpu_end_corr.get(g["start_ns"]))
    return [(tb, te) for tb, te in truth_gaps if edge_ok(g["start_ns"], tb, start_call)
            and edge_ok(g["start_ns"] + g["dur_ns"], te, end_call)]


def match(tb, te):
    """Reported main-stream or device gaps matching the truth gap (tb, te) (match_one)."""
    return [g for g in reported if g.get("stream") in (0, None) and match_one(g, [(tb, te)])]


def nearest(tb, te):
    """The reported main-stream or device gap nearest to (tb, te), with its calls' returns
    (for the failure message)."""
    near = min((g for g in reported if g.get("stream") in (0, None)),
               key=lambda g: abs(g["start_ns"] - tb) + abs(g["start_ns"] + g["dur_ns"] - te), default=None)
    if near is None:
        return "no gap reported"
    start_call = call_of.get(gpu_end_corr.get(near["start_ns"])) or (0, 0)
    ended_by = near.get("ended_by") or {}
    return (f"nearest: {near['start_ns'] - tb:+} ns at the start (its operation's call "
            f"{start_call[0] - tb:+} to {start_call[1] - tb:+} ns), "
            f"{near['start_ns'] + near['dur_ns'] - te:+} ns at the end (call "
            f"{(ended_by.get('call_begin_ns') or 0) - te:+} to {(ended_by.get('call_end_ns') or 0) - te:+} ns), "
            f"cause {near['cause']}")


for p in planted:
    phase, cause, count = p["phase"], p["cause"], int(p["count"])
    if phase not in phases or phases[phase][1] is None:
        h.check(False, f"phase {phase} has no begin/end in gappy's output")
        continue
    if "dur_us" in p:
        want = float(p["dur_us"]) * 1000
        # The planted gaps end at the planted kernel (`before=`); a phase boundary
        # stretched by a loaded host is not one of them.
        # The gap before the phase's first main-stream operation is the boundary.
        first = min((t["start_ns"] for t in main_ops if t["start_ns"] >= phases[phase][0]), default=None)
        tg = [(b, e) for b, e, k in truth_gaps if phase_of(b) == phase and e - b >= 0.95 * want
              and k == p["before"] and e != first]
        h.check(len(tg) == count, f"phase {phase}: the simulator shows {len(tg)} main-stream gaps >= {want / 1e3:.0f} us, planted {count}")
        for b, e in tg:
            found = match(b, e)
            h.check(found, f"phase {phase}: gap of {(e - b) / 1e3:.1f} us at {b} (truth) not reported; "
                           f"{nearest(b, e)}")
            if found:
                causes = {g["cause"] for g in found}
                # other_stream: the main stream's next work waits queued for the side
                # stream. A host preempted for most of the gap before launching it (the
                # simulator shows it enqueued past the gap's middle) left the GPU unfed:
                # then the host's doing is the cause, as gaps documents.
                unfed = cause == "other_stream" and enqueued.get((b, e), b) - b > (e - b) / 2
                # sync: the host in cudaDeviceSynchronize for most of the gap; one
                # preempted after the sync returned, inside or before the next launch
                # for more than half of it (a loaded host, TSan's slowdown: 6 ms seen),
                # rightly gets what it spent most of the gap on (harness)
                late = cause == "sync" and bool(gaps_spoiled_by_load(recs, names, [(b, e)],
                                                                     {"cudaDeviceSynchronize"}))
                h.check(causes == {cause} or ((unfed or late) and cause not in causes),
                        f"phase {phase}: gap of {(e - b) / 1e3:.1f} us reported as {causes}, planted {cause}"
                        f"{' (its work enqueued late)' if unfed else ''}"
                        f"{' (the sync filled less than half of it)' if late else ''}")
                if p.get("device_idle") == "no":
                    h.check(all(g.get("scope") != "device" for g in found),
                            f"phase {phase}: a stream gap reported as a device gap though the other stream was busy")
    else:
        most = float(p["max_dur_us"]) * 1000
        b, e = phases[phase]
        short = [g for g in reported if g.get("stream") == 0 and b <= g["start_ns"] <= e
                 and g["dur_ns"] <= most and g["cause"] == cause]
        # A loaded host stretches some of the planted short gaps past `most` (a launch
        # preempted): what the simulator shows short is what must be found short.
        real = [1 for tb, te, _ in all_truth_gaps if b <= tb <= e and te - tb <= most]
        h.check(len(short) >= min(count, len(real)) * 0.9,
                f"phase {phase}: {len(short)} gaps <= {most / 1000:.0f} us with cause {cause}, planted {count}, "
                f"the simulator shows {len(real)}")

for n in nones:
    phase, most = n["phase"], float(n["max_gap_us"]) * 1000
    if phase in phases and phases[phase][1] is not None:
        b, e = phases[phase]
        # none planted; a host preempted for ms on a loaded machine makes a real one,
        # which the simulator's truth shows: only a gap it does not show is wrong
        bad = [g for g in reported if g.get("stream") == 0 and b + 100000 <= g["start_ns"]
               and g["start_ns"] + g["dur_ns"] <= e and g["dur_ns"] > most and not in_truth(g)]
        h.check(not bad, f"phase {phase}: gaps where none was planted nor seen by the simulator: {bad}")

kinds = {f.get("kind") for f in doc.get("findings", [])}
for f in findings:
    h.check(f["kind"] in kinds, f"finding {f['kind']} (phase {f['phase']}) not reported; found {kinds}")

# The host_wait phase's story: the CPU busy outside CUDA (sleeping) before the launches at
# one call site, launch_spin. Its finding: that call site, at least the planted gaps,
# the thread's time outside CUDA in them at least 90% of the planted sleeps' and more
# than its time in CUDA calls there (a launch call of 10 us a gap, or milliseconds when a
# loaded host preempts it) and at most the gaps' idle time, the
# saving that time, the thread named, the share of the device's idle time.
hw = next(p for p in planted if p["phase"] == "host_wait")
hw_count, hw_us = int(hw["count"]), float(hw["dur_us"])
hb = [f for f in doc.get("findings", []) if f.get("kind") == "host_bound_launch"]
spin = [f for f in hb if re.fullmatch(r"launch_spin\(.*\) \(gappy\.cu:\d+\)", f.get("callsite") or "")]
h.check(len(spin) == 1, f"one host_bound_launch finding at launch_spin: {hb}")
f = spin[0] if spin else {}
dev = next((d for d in doc.get("devices", []) if d["device"] == 0), {})
h.check(f.get("what", "").endswith("LaunchKernel") and f.get("count", 0) >= hw_count
        and f.get("idle_ns", 0) >= 0.9 * hw_count * hw_us * 1000
        and f.get("idle_ns", 0) <= f.get("gaps_idle_ns", 0) <= dev.get("idle_ns", 0)
        and f.get("idle_ns", 0) + f.get("cpu_ns", 0) == f.get("gaps_idle_ns", -1)
        and f.get("cpu_ns", 1 << 62) <= f.get("idle_ns", 0)  # (a loaded host preempts launch calls for ms)
        and f.get("saving_ns") == f.get("idle_ns") and f.get("device_idle_ns") == dev.get("idle_ns")
        and abs(f.get("share", 0) - f.get("idle_ns", 0) / max(1, dev.get("idle_ns", 1))) < 0.001
        and f.get("thread") == "gappy" and 0 < f.get("gap_median_ns", 0) <= f.get("gaps_idle_ns", 0),
        f"host_bound_launch finding vs {hw_count} planted sleeps of {hw_us} us: {f}; device {dev}")
rows = [r for r in doc.get("idle_by_ending_call", []) if r["cause"] == "host_wait" and r["callsite"] == f.get("callsite")]
h.check(len(rows) == 1 and rows[0]["count"] == f.get("count") and rows[0]["idle_ns"] == f.get("gaps_idle_ns"),
        f"the finding's gaps are the table's host_wait row at its call site: {rows}")
order = [(x["adds_ns"], x["saving_ns"]) for x in doc["findings"]]
h.check(order == sorted(order, reverse=True), f"findings ordered by what they add, then saving: {order}")
# and they add up (docs/gaps.md "Findings add up"): each adds at most its saving less
# its overlap and its part that is not idle, the adds sum to the total, at most the
# idle time, on each device and over all
tot = doc.get("findings_total", {})
h.check(all(x["adds_ns"] + x["overlap_ns"] + x["not_idle_ns"] <= x["saving_ns"] for x in doc["findings"])
        and sum(x["adds_ns"] for x in doc["findings"]) == tot.get("saving_ns") == sum(d["findings_saving_ns"] for d in doc["devices"])
        and tot.get("saving_ns") <= tot.get("idle_ns") == sum(d["idle_ns"] for d in doc["devices"])
        and all(d["findings_saving_ns"] <= d["idle_ns"] for d in doc["devices"]),
        f"findings add up: {[(x['kind'], x['saving_ns'], x['overlap_ns'], x['not_idle_ns'], x['adds_ns']) for x in doc['findings']]} {tot}")

rc, text_out, err = h.run("gaps", data)
h.check(rc == 0 and "host_wait" in text_out, f"gaps text output (exit {rc}):\n{text_out[:800]}{err}")
line = next((l for l in text_out.splitlines() if "the CPU was busy outside CUDA for" in l), "")
h.check(f"before the launches at {f.get('callsite')} by {f.get('what')}; thread " in line
        and '"gappy" spent' in line and "move the host work off the launching thread" in line,
        f"host-bound finding in text: {line!r}")
rc, out, err = h.run("gaps", "--summary", data)
h.check(rc == 0 and f"host-bound launches ({f.get('what')} at {f.get('callsite')}) up to " in out,
        f"host-bound launches in the summary: {out}")
# A finding whose estimate is 0 says so instead of "saves up to 0 ns". Seen by hand on
# gappy at its default settings (its syncs waited exactly as long as their GPU work:
# calls - GPU = 0, 2 runs in 3); under this test's settings the estimate was not 0 in
# 4 runs, so this check guards the wording only when such a run happens.
zero = [f for f in doc["findings"] if not f["saving_ns"] and not f.get("saving_lower_bound")]
h.check(not any("up to 0 ns" in t for t in (text_out, out)),
        f"no 'up to 0 ns' (findings with a 0 estimate: {[f['kind'] for f in zero]}):\n{out}")
h.check(text_out.count("(no idle saving estimated)") == len(zero),
        f"findings with a 0 estimate say so: {[f['kind'] for f in zero]}")
h.finish()
