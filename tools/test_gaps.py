#!/usr/bin/env python3
"""cutrace gaps against traces with planted gaps (tools/plantrace.c): every planted gap
found with its cause and duration, none elsewhere; per-cause totals; the cross-stream
wait; findings; JSON schema; --summary; options; damaged and foreign input."""
import json
import re
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tooltest import check, finish, scratch  # noqa: E402

cutrace, plantrace, gaps_each = sys.argv[1], sys.argv[2], sys.argv[3]
gentrace = sys.argv[4] if len(sys.argv) > 4 else None
TOL = 1000  # ns: the planted times are exact; allow 1 us


def run(*args):
    p = subprocess.run([cutrace, "gaps", *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def plant(path, *args):
    p = subprocess.run([plantrace, path, *args], capture_output=True, text=True, check=True)
    return json.loads(p.stdout)


def gaps_by_ending_api(d):
    """The gaps counted per ending call's name (over devices, causes and sites)."""
    by_api = {}
    for r in d["idle_by_ending_call"]:
        by_api[r["api"]] = by_api.get(r["api"], 0) + r["count"]
    return by_api


def dur(text):
    """Nanoseconds of a duration as cutrace prints it ("840.000 us")."""
    v, u = text.split()
    return round(float(v) * {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[u])


def gaps_json(*args):
    rc, out, err = run("--format", "json", *args)
    try:
        return rc, json.loads(out), err
    except json.JSONDecodeError as e:
        check(False, f"JSON does not parse ({e}): {out[:200]!r} {err!r}")
        return rc, None, err


CAUSES = ["host_wait", "launch_overhead", "sync", "alloc", "other_stream", "tracer", "other",
          "external_wait"]


def check_schema(doc):
    for key, typ in [("devices", list), ("streams", list), ("gaps", list), ("stream_gaps", list),
                     ("findings", list), ("processes", list), ("inputs", list)]:
        check(isinstance(doc.get(key), typ), f"JSON has {key} ({typ.__name__})")
    for d in doc["devices"]:
        for k in ["device", "span_ns", "busy_ns", "idle_ns"]:
            check(isinstance(d.get(k), int), f"device.{k} is an integer")
        check(sorted(d["idle"]) == sorted(c + "_ns" for c in CAUSES), f"idle keys {sorted(d['idle'])}")
        check(d["span_ns"] == d["busy_ns"] + d["idle_ns"], "span = busy + idle")
        check(sum(d["idle"].values()) == d["idle_ns"], "idle split adds up")
    for g in doc["gaps"]:
        for k in ["device", "stream", "start_ns", "dur_ns"]:
            check(isinstance(g.get(k), int), f"gap.{k} is an integer")
        check(g.get("cause") in CAUSES, f"gap cause {g.get('cause')}")
    durs = [g["dur_ns"] for g in doc["gaps"]]
    check(durs == sorted(durs, reverse=True), "gaps sorted longest first")


with scratch("cutrace-gaps-") as tmp:
    trace = os.path.join(tmp, "planted.4242.ctr")
    ans = plant(trace)
    rc, doc, err = gaps_json("--top", "1000", trace)
    check(rc == 0, f"exit {rc}: {err}")
    check_schema(doc)
    dev = doc["devices"][0]
    check(len(doc["devices"]) == 2 and dev["device"] == 0, "two devices")
    dev1 = [d for d in doc["devices"] if d["device"] == 1]
    want1 = ans["device1_gaps"]
    check(dev1 and dev1[0]["gaps"] == len(want1) == 2 and
          dev1[0]["idle"]["host_wait_ns"] == sum(g["end_ns"] - g["start_ns"] for g in want1),
          f"device 1 apart: {dev1}")
    got1 = sorted((g["start_ns"], g["start_ns"] + g["dur_ns"], g["cause"]) for g in doc["gaps"]
                  if g["device"] == 1)
    check(got1 == [(g["start_ns"], g["end_ns"], g["cause"]) for g in want1], f"device 1 gaps {got1}")
    # the host-bound launch: device 1's two host_wait gaps of 300 us, each ended by a
    # 3 us launch call of the helper thread (its only time in CUDA there): 594 us outside.
    # Two gaps: only with --repeat-min 2 (the default, 4, leaves them out, as it does two
    # copies or syncs)
    hb = [f for f in doc["findings"] if f["kind"] == "host_bound_launch"]
    check(not [f for f in hb if f["device"] == 1], f"device 1's 2 host-bound gaps under --repeat-min 4: {hb}")
    rc, d2, err = gaps_json("--repeat-min", "2", trace)
    hb1 = [f for f in d2["findings"] if f["kind"] == "host_bound_launch" and f["device"] == 1]
    check(len(hb1) == 1 and hb1[0]["count"] == 2 and hb1[0]["gaps_idle_ns"] == 600000
          and hb1[0]["idle_ns"] == 594000 and hb1[0]["cpu_ns"] == 6000 and hb1[0]["saving_ns"] == 594000
          and hb1[0]["tid"] == 1002 and hb1[0]["device_idle_ns"] == 600000 and hb1[0]["share"] == 0.99
          and hb1[0]["gap_median_ns"] == 300000 and hb1[0]["callsite"] is None,
          f"device 1's host-bound launch: {hb1}")
    # only host_wait rows make one: each finding's gaps are a host_wait row's
    hw_rows = {(r["device"], r["api"], r["callsite"], r["count"], r["idle_ns"])
               for r in doc["idle_by_ending_call"] if r["cause"] == "host_wait"}
    check(len(hb) == 2 and all((f["device"], f["what"], f["callsite"], f["count"], f["gaps_idle_ns"]) in hw_rows
                               for f in hb), f"host-bound findings from host_wait rows: {hb} vs {hw_rows}")
    doc["gaps"] = [g for g in doc["gaps"] if g["device"] == 0]
    check(abs(dev["busy_ns"] - ans["busy_ns"]) <= TOL, f"busy {dev['busy_ns']} vs {ans['busy_ns']}")
    check(dev["first_ns"] == ans["first_ns"] and dev["last_ns"] == ans["last_ns"], "span")
    check(dev["gaps"] == ans["gap_count"], f"gap count {dev['gaps']} vs {ans['gap_count']}")
    for c in CAUSES:
        want = ans["idle"][c + "_ns"]
        check(abs(dev["idle"][c + "_ns"] - want) <= TOL, f"idle {c}: {dev['idle'][c + '_ns']} vs {want}")

    # Every planted gap, once, with its cause; nothing else.
    found = {(g["start_ns"], g["start_ns"] + g["dur_ns"]): g for g in doc["gaps"]}
    check(len(found) == len(doc["gaps"]) == ans["gap_count"], f"{len(doc['gaps'])} gaps listed")
    for p in ans["gaps"]:
        g = found.get((p["start_ns"], p["end_ns"]))
        near = g or next((x for x in doc["gaps"] if abs(x["start_ns"] - p["start_ns"]) <= TOL and
                          abs(x["start_ns"] + x["dur_ns"] - p["end_ns"]) <= TOL), None)
        check(near is not None, f"planted gap {p} found")
        if near:
            check(near["cause"] == p["cause"], f"gap at {p['start_ns']}: {near['cause']} vs {p['cause']}")
    lo, hi = ans["no_gap"]
    check(not [g for g in doc["gaps"] if g["start_ns"] < hi and g["start_ns"] + g["dur_ns"] > lo],
          "no gap in the back-to-back stretch")

    # The wait on another stream, per stream.
    waits = [g for g in doc["stream_gaps"] if g["stream"] == 2]
    for sg in ans["stream_gaps"]:
        check(any(abs(g["start_ns"] - sg["start_ns"]) <= TOL and
                  abs(g["start_ns"] + g["dur_ns"] - sg["end_ns"]) <= TOL and g["cause"] == "other_stream"
                  for g in waits), f"other_stream wait on stream 2 at {sg['start_ns']}: {waits}")
    s2 = [s for s in doc["streams"] if s["stream"] == 2][0]
    check(s2["idle"]["other_stream_ns"] == sum(g["end_ns"] - g["start_ns"] for g in ans["stream_gaps"]),
          f"stream 2 idle between the waits is other_stream: {s2['idle']}")

    # What the threads did: the helper's cudaMalloc during a host-wait gap, the poller
    # thread's spans never turning a gap into "tracer".
    helper = [t for g in doc["gaps"] for t in g["threads"] if t["tid"] == 1002 and t["calls"]]
    check(any(c["name"] == "cudaMalloc" for t in helper for c in t["longest_calls"]),
          "helper thread seen in cudaMalloc")
    launching = [t for g in doc["gaps"] for t in g["threads"] if t["launching"]]
    check(launching and all(t["tid"] == 1001 for t in launching), "launching thread is 1001")
    top = doc["gaps"][0]
    check(top["ended_by"]["name"] == "before()" and top["ended_by"]["api"] == "__cudaLaunchKernel",
          f"largest gap ended by before(): {top['ended_by']}")
    check(top["rel_ns"] == top["start_ns"] - 1000000000, "relative time counts from the start")

    # Findings.
    kinds = {f["kind"]: f for f in doc["findings"]}
    lb = kinds.get("launch_bound", {})
    check(lb.get("count") == 80 and lb.get("stretches") == 2 and lb.get("longest_count") == 50,
          f"launch-bound 50 + 30: {lb}")
    check(kinds.get("pageable_copy", {}).get("count") == 12, "12 pageable copies")
    check(kinds.get("pageable_copy", {}).get("what") == "HtoD", "pageable copies' direction")
    # no pinned copy to measure the faster transfers by: the calls beyond the transfers
    # (12 x (110 - 40) us), a lower bound ("at least")
    pg = kinds.get("pageable_copy", {})
    check(pg.get("saving_ns") == 840000 and pg.get("transfer_saving_ns") == 0 and pg.get("saving_lower_bound") is True,
          f"pageable copies without pinned ones: {pg}")
    rc, text, err = run(trace)
    check("(saves at least 840.000 us of idle): 12 pageable HtoD copies" in text
          and "no pinned copy of the same direction in the trace" in text, "pageable copies' text, at least")
    rc, out, err = run("--summary", trace)
    # (the summary adds up idle time: what the copies add, 840 us, all inside the gaps)
    check("pageable copies up to 840.000 us" in out, f"pageable copies in the summary: {out}")
    # with 6 pinned 1 MiB copies of 20 us (twice the pageable rate): the 12 transfers
    # would take 12 x 20 us less, measured
    pinned = os.path.join(tmp, "pinned.4242.ctr")
    plant(pinned, "--pinned", "6")
    rc, dp, err = gaps_json(pinned)
    pp = [f for f in dp["findings"] if f["kind"] == "pageable_copy"] if dp else []
    check(rc == 0 and len(pp) == 1 and pp[0]["transfer_saving_ns"] == 240000 and pp[0]["saving_ns"] == 1080000
          and pp[0]["saving_lower_bound"] is False and pp[0]["count"] == 12, f"pageable copies against pinned: {pp}")
    rc, text, err = run(pinned)
    # the faster transfers are busy time, not idle: not added to the findings' total
    check("(saves up to 1.080 ms; adds 840.000 us to the total: 240.000 us of it not idle "
          "time in the device's gaps): 12 pageable HtoD copies" in text
          and "at the rate of this trace's pinned copies the transfers would take 240.000 us less" in text,
          "pageable copies' text, measured")
    rc, out, err = run("--summary", pinned)
    check("pageable copies up to 840.000 us" in out, f"pageable copies in the summary, measured: {out}")
    check(kinds.get("sync_copy", {}).get("bytes") == 12 << 20, "12 MiB of synchronous copies")
    check(kinds.get("sync_little_work", {}).get("count") == ans["little_syncs"], "little syncs")
    # the saving: the calls beyond their GPU work (252 - 120 us) plus the idle, after the
    # syncs returned, of the 5 gaps their returns opened: 3 sync gaps (3 x 5 us of 3 x
    # 46 us) and 2 launch_overhead ones shorter than --launch-threshold (2 x 5 us of 2 x
    # 6 us: the drained queue refilled at once), less the 1 us of each of those 5 that the
    # next sync's call holds (it begins 1 us before its kernel: in its calls - GPU)
    ls, pl = kinds.get("sync_little_work", {}), ans["little_sync"]
    check(ls.get("cpu_ns") == pl["cpu_ns"] and ls.get("gpu_ns") == pl["gpu_ns"]
          and ls.get("sync_gaps") == pl["sync_gaps"] == 5 and ls.get("idle_ns") == pl["idle_ns"] == 150000
          and ls.get("idle_after_ns") == pl["idle_after_ns"] == 25000
          and ls.get("saving_ns") == pl["cpu_ns"] - pl["gpu_ns"] + pl["idle_after_ns"] - pl["twice_ns"] == 152000,
          f"little syncs' saving: {ls} vs {pl}")
    rc, text, err = run(trace)
    check("(saves up to 152.000 us of idle): 6 syncs (cudaDeviceSynchronize) waited on little GPU work: "
          "252.000 us in the calls for 120.000 us of GPU work; their returns opened 5 device gaps "
          "(150.000 us idle, 25.000 us of it after the syncs returned)" in text, "little syncs' text")
    rc, out, err = run("--summary", trace)
    check("syncs on little GPU work up to 152.000 us" in out, f"little syncs in the summary: {out}")
    # with --launch-threshold 4us they are not: 5 us after the return, more than the
    # threshold (a launch gap counts only as long as a launch's own delay after the sync)
    rc, d4, err = gaps_json("--launch-threshold", "4us", trace)
    ls4 = [f for f in d4["findings"] if f["kind"] == "sync_little_work"]
    check(len(ls4) == 1 and ls4[0]["sync_gaps"] == 3 and ls4[0]["saving_ns"] == 144000,
          f"little syncs, launch threshold 4 us: {ls4}")
    # A call that only begins gaps: each planted cudaFree waits for its kernel and returns
    # 250 us after its end, the next cudaMalloc's launch ending the gap. With alloc_in_loop
    # there (4 alloc gaps) those gaps are its story; with --repeat-min 5 (no alloc_in_loop)
    # cudaFree is named: 4 gaps begun while it ran, 4 x 250 us, pattern starts_gaps.
    sg = [f for f in doc["findings"] if f.get("pattern") == "starts_gaps"]
    check(not sg, f"no starts_gaps finding beside alloc_in_loop: {sg}")
    rc, d5r, err = gaps_json("--repeat-min", "5", trace)
    sg = [f for f in d5r["findings"] if f.get("pattern") == "starts_gaps"]
    check(len(sg) == 1 and sg[0]["what"] == "cudaFree" and sg[0]["count"] == 0
          and sg[0]["after_launch_gaps"] == 4 and sg[0]["after_launch_ns"] == 4 * 250000
          and sg[0]["saving_ns"] == sg[0]["adds_ns"] == 1000000 and sg[0]["median_ns"] == 250000
          and sg[0]["share"] == round(1000000 / sg[0]["device_idle_ns"], 4)
          and not [f for f in d5r["findings"] if f["kind"] == "alloc_in_loop"],
          f"cudaFree begins the alloc gaps: {sg}")
    rc, text, err = run("--repeat-min", "5", trace)
    rc, out, err = run("--summary", "--repeat-min", "5", trace)
    check("cudaFree held the launching thread 1.000 ms, 5.1% of the device's idle time, at the start of "
          "4 device gaps: the GPU went idle while it ran and a later call ended the gap (250.000 us in "
          "the call a gap on average): the GPU ran out of work" in text
          and "slow launching calls (cudaFree, the GPU drained during it) up to 1.000 ms" in out,
          f"starts_gaps text and summary: {out}")
    # with --launch-threshold 5us the two 6 us gaps, mostly in the launch call, are
    # launch_overhead by rule 9 (issuing): counted all the same
    rc, d6, err = gaps_json("--launch-threshold", "5us", trace)
    ls6 = [f for f in d6["findings"] if f["kind"] == "sync_little_work"]
    check(len(ls6) == 1 and ls6[0]["sync_gaps"] == 5 and ls6[0]["saving_ns"] == 152000,
          f"little syncs, launch threshold 5 us: {ls6}")
    # The findings add up (docs/gaps.md "Findings add up"): in saving order per device,
    # each adds its idle claim less what the findings above it count. Planted: the 12
    # copies are both pageable and synchronous (the same 12 x 70 us beyond their
    # transfers, inside host_wait gaps: the sync finding adds nothing), the graph
    # candidate's 150 us are the launch-bound runs' launches (inside their 840 us), the
    # host-bound launches (outside CUDA) and the copies (inside their calls) apart.
    fs = doc["findings"]
    adds = {f["kind"]: f["adds_ns"] for f in fs if f["kind"] != "host_bound_launch"}
    over = {f["kind"]: f["overlap_ns"] for f in fs if f["kind"] != "host_bound_launch"}
    hb_adds = [f["adds_ns"] for f in fs if f["kind"] == "host_bound_launch"]
    check(adds == {"pageable_copy": 840000, "sync_copy": 0, "launch_bound": 840000, "graph_candidate": 0,
                   "sync_little_work": 152000, "alloc_in_loop": ans["alloc_gap_ns"]}
          and over == {"pageable_copy": 0, "sync_copy": 840000, "launch_bound": 0, "graph_candidate": 150000,
                       "sync_little_work": 0, "alloc_in_loop": 0}
          and hb_adds == [f["idle_ns"] for f in fs if f["kind"] == "host_bound_launch"],
          f"what each finding adds: {adds}, overlaps {over}")
    want_total = 840000 + 840000 + 152000 + ans["alloc_gap_ns"] + sum(hb_adds)
    idle_all = sum(d["idle_ns"] for d in doc["devices"])
    tot = doc.get("findings_total", {})
    check(tot == {"saving_ns": want_total, "idle_ns": idle_all, "devices": 2,
                  "share": round(want_total / idle_all, 4)}
          and sum(f["adds_ns"] for f in fs) == want_total
          and dev["findings_saving_ns"] == want_total and dev1[0]["findings_saving_ns"] == 0,
          f"findings' total {tot} vs {want_total} of {idle_all}")
    rc, text, err = run(trace)
    b = lambda ns: f"{ns / 1e6:.3f} ms"
    check(f"Together the findings save up to {b(want_total)} of the {b(idle_all)} idle "
          f"({100 * want_total / idle_all:.1f}%, summed over 2 devices)" in text
          and "(saves up to 840.000 us of idle; adds 0 ns to the total: 840.000 us counted by the "
          "findings above): 12 synchronous HtoD copies" in text, f"text total: {text[-3000:]}")
    rc, out, err = run("--summary", trace)
    check(out.splitlines()[-1].startswith("findings: ") and
          f"synchronous copies (counted above), CUDA-graph candidates (counted above); together up to "
          f"{b(want_total)} of {b(idle_all)} idle ({100 * want_total / idle_all:.1f}%, summed over 2 devices) "
          f"(see cutrace gaps {trace} for the fixes)" in out, f"summary total: {out}")
    # the kinds' numbers on the line add up to the total
    kinds_line = out.splitlines()[-1].split("; together")[0]
    summed = sum(dur(m) for m in re.findall(r"up to ([\d.]+ (?:ns|us|ms|s)\b)", kinds_line))
    check(summed == want_total, f"the summary's kinds add up: {summed} vs {want_total}: {kinds_line}")

    # the free's last 250 us, the next malloc's 300 us and the 1 us of the next free
    # between the launch call and its kernel's start, in each of the 4 gaps
    al = kinds.get("alloc_in_loop", {})
    check(al.get("count") == ans["alloc_gaps"] == 4 and al.get("idle_ns") == ans["alloc_gap_ns"]
          and al.get("what") == "cudaMalloc" and al.get("cpu_ns") == 4 * 551000
          and "empty_cache" in al.get("fix", ""), f"alloc finding: {al}")
    check(dev["idle"]["alloc_ns"] == ans["alloc_gap_ns"] == 4 * 554000 + 50000,
          f"alloc idle {dev['idle']['alloc_ns']} vs {ans['alloc_gap_ns']}")
    rc, d5, err = gaps_json("--repeat-min", "13", "--launch-bound-min", "51", "--graph-min", "26",
                          trace)
    # (host-bound launches: the 14 gaps at __cudaLaunchKernel stay, the 12 at cudaMemcpy go;
    # without alloc_in_loop the cudaFree that begins its gaps is named, starts_gaps)
    check([f["kind"] for f in d5["findings"] if f["kind"] != "host_bound_launch"
           and f.get("pattern") != "starts_gaps"] in ([], ["sync_little_work"])
          and [(f["what"], f["count"]) for f in d5["findings"] if f["kind"] == "host_bound_launch"]
          == [("__cudaLaunchKernel", 14)],
          f"finding thresholds: {[(f['kind'], f['count']) for f in d5['findings']]}")

    # ct_gaps_each: the same device gaps, the stream gaps too, min_ns honoured.
    p = subprocess.run([gaps_each, trace], capture_output=True, text=True)
    rows = [l.split() for l in p.stdout.splitlines()]
    check(rows and rows[-1][:3] == ["rc", "0", str(len(rows) - 1)], f"ct_gaps_each rc: {rows[-1:]}")
    devg = {(int(r[2]), int(r[3])): r for r in rows[:-1] if r[1] == "-" and r[0] == "0"}
    check(len(devg) == ans["gap_count"], f"ct_gaps_each device gaps {len(devg)}")
    check(all(devg.get((g["start_ns"], g["start_ns"] + g["dur_ns"]), [0] * 5)[4] == g["cause"]
              for g in doc["gaps"]), "ct_gaps_each causes match the JSON")
    check(all(r[6] == "proc" for r in rows[:-1]), "ct_gaps_each passes the process")
    check(any(r[1] == "2" and r[4] == "other_stream" and r[5] == "__cudaLaunchKernel"
              for r in rows[:-1]), "ct_gaps_each reports the stream wait")
    p = subprocess.run([gaps_each, trace, "600000"], capture_output=True, text=True)
    check(all(int(l.split()[3]) - int(l.split()[2]) >= 600000 for l in p.stdout.splitlines()[:-1]),
          "ct_gaps_each min_ns")
    p = subprocess.run([gaps_each, os.path.join(tmp, "nothing.ctr")], capture_output=True, text=True)
    check(p.stdout.startswith("rc -1 0"), f"ct_gaps_each on a missing file: {p.stdout!r}")

    # Text and summary.
    rc, out, err = run(trace)
    check(rc == 0 and "Largest gaps" in out and "CUDA graphs" in out and "pinned memory" in out,
          "text output")
    check("thread 1002: outside CUDA" in out and "cudaMalloc 200.000 us" in out, "threads in text")
    rc, out, err = run("--summary", trace)
    lines = out.splitlines()
    busy = 100.0 * ans["busy_ns"] / (ans["last_ns"] - ans["first_ns"])
    check(rc == 0 and 2 <= len(lines) <= 6, f"summary lines {len(lines)}")
    check(f"busy {busy:.1f}%" in out and "largest gap: 1.406 ms" in out and "before()" in out
          and "memory allocated and freed in the loop" in out and "(null)" not in out,
          f"summary content: {out!r}")

    # Options: --min-gap filters the list, not the totals; --launch-threshold 1 turns the
    # 2 us device gaps before the cross-stream waits' queued kernels into "other", while the
    # launch-bound gaps stay launch overhead (the thread was inside launch calls).
    rc, d2, err = gaps_json("--top", "1000", "--min-gap", "600", trace)
    check(rc == 0 and d2["gaps"] and all(g["dur_ns"] >= 600000 for g in d2["gaps"]), "--min-gap")
    check(d2["devices"][0]["idle"] == dev["idle"], "--min-gap keeps the totals")
    rc, d3, err = gaps_json("--launch-threshold", "1", trace)
    i3 = d3["devices"][0]["idle"]
    check(i3["other_ns"] - dev["idle"]["other_ns"] == 4000 and
          dev["idle"]["launch_overhead_ns"] - i3["launch_overhead_ns"] == 4000,
          f"--launch-threshold 1 moves 2 x 2 us to other: {i3}")
    rc, d4, err = gaps_json("--top", "3", trace)
    check(len(d4["gaps"]) == 3 and d4["gaps"][0]["dur_ns"] == 1406000, "--top 3")
    for bad in (["--top", "x"], ["--format", "xml"], ["--min-gap", "abc"], ["--bogus"], ["--top"],
                ["--launch-threshold", "-1"]):
        rc, out, err = run(*bad, trace)
        check(rc == 2 and len(err.strip().splitlines()) == 1 and "cutrace gaps" in err,
              f"bad option {bad}: {rc} {err!r}")
    rc, out, err = run("--help")
    check(rc == 0 and "--launch-threshold" in out, "--help")

    # A long launch loop: exact counts.
    big = os.path.join(tmp, "loop.ctr")
    la = plant(big, "--loop", "20000", "--pid", "77", "--chunk", "16384")
    rc, dl, err = gaps_json(big)
    dv = dl["devices"][0]
    check(rc == 0 and dv["gaps"] == la["gap_count"] == 19999, f"loop gaps {dv['gaps']}")
    check(dv["gap_counts"]["host_wait"] == 199 and dv["idle"]["host_wait_ns"] == 199 * 1004000,
          f"loop host waits {dv['gap_counts']}")
    check(dv["idle"]["launch_overhead_ns"] == 19800 * 4000, "loop launch overhead")
    # Idle by ending call: two rows (the launch call of 3 us inside every gap); their
    # medians from stats.h's histogram, within 3.1% of the planted gap.
    rows = {r["cause"]: r for r in dl["idle_by_ending_call"]}
    lo, hw = rows.get("launch_overhead", {}), rows.get("host_wait", {})
    check(len(dl["idle_by_ending_call"]) == 2 and lo.get("api") == hw.get("api") == "__cudaLaunchKernel"
          and lo.get("count") == 19800 and lo.get("idle_ns") == 19800 * 4000
          and lo.get("in_call_ns") == 19800 * 3000 and abs(lo.get("median_ns", 0) - 4000) <= 0.031 * 4000
          and hw.get("count") == 199 and hw.get("idle_ns") == 199 * 1004000 and hw.get("in_call_ns") == 199 * 3000
          and abs(hw.get("median_ns", 0) - 1004000) <= 0.031 * 1004000
          and dl["idle_by_ending_call"][0] is hw, f"loop rows by ending call: {dl['idle_by_ending_call']}")
    check(not any(f["kind"] == "slow_launch_call" for f in dl["findings"]),
          "3 us launches are not slow launching calls")
    # 1,100 entry points ending the gaps: 1,024 groups, then one "(more ending calls)"
    # row per cause; every gap still counted once.
    many = os.path.join(tmp, "apis.ctr")
    plant(many, "--loop", "3000", "--loop-apis", "1100")
    rc, dm, err = gaps_json(many)
    rows, dv = dm["idle_by_ending_call"], dm["devices"][0]
    more = sorted(r["cause"] for r in rows if r["api"] == "(more ending calls)")
    one = [r for r in rows if r["api"] == "__cudaLaunchKernel_1"]
    check(rc == 0 and len(rows) == 1026 and more == ["host_wait", "launch_overhead"]
          and sum(r["count"] for r in rows) == dv["gaps"] == 2999
          and sum(r["idle_ns"] for r in rows) == dv["idle_ns"]
          and len(one) == 1 and one[0]["count"] == 3 and one[0]["cause"] == "launch_overhead",
          f"bounded groups: {len(rows)} rows, more {more}, {one}")

    # Gaps waiting for their outermost call: 599 wait on a call that never ends (the
    # pending list overflows), then 150 wait briefly for their cublasLtMatmul. A full list
    # gives up on the gap that began first, so every later one still finds its call.
    # Then a thread whose outermost calls were dropped (each launch's parent never
    # recorded) launches 600 kernels while 3 older gaps wait for a 35 ms cublasLtMatmul:
    # its next outermost call settles its gaps, so they never fill the list and push
    # those 3 out.
    for mode, ngaps, expected in (("--waiting", 749, {"__cudaLaunchKernel": 599, "cublasLtMatmul": 150}),
                                  ("--dropped", 603, {"__cudaLaunchKernel": 600, "cublasLtMatmul": 3})):
        path = os.path.join(tmp, mode[2:] + ".ctr")
        plant(path, mode, "600")
        rc, dw, err = gaps_json(path)
        by_api = gaps_by_ending_api(dw)
        check(rc == 0 and dw["devices"][0]["gaps"] == ngaps and by_api == expected,
              f"{mode} 600, gaps by outermost call: {by_api}")

    # Two processes: kept apart.
    both = os.path.join(tmp, "both")
    os.mkdir(both)
    os.link(trace, os.path.join(both, "a.ctr"))
    os.link(big, os.path.join(both, "b.ctr"))
    rc, db, err = gaps_json(both)
    check(rc == 0 and sorted((d["pid"], d["device"]) for d in db["devices"]) == [(77, 0), (4242, 0), (4242, 1)],
          f"two processes, their devices apart: {[(d['pid'], d['device']) for d in db['devices']]}")

    # Findings are sorted once, after every file: by what each adds (then saving), equal
    # ones in the order the files were read (two copies of the planted trace: every
    # finding twice; the synchronous copies, which add nothing, below the little syncs).
    twins = os.path.join(tmp, "twins")
    os.mkdir(twins)
    plant(os.path.join(twins, "a.ctr"), "--pid", "11")
    plant(os.path.join(twins, "b.ctr"), "--pid", "12")
    rc, dt, err = gaps_json(twins)
    order = [(-f["adds_ns"], -f["saving_ns"], f["process"]) for f in dt["findings"]]
    kinds = [f["kind"] for f in dt["findings"]]
    check(rc == 0 and len(order) > 4 and order == sorted(order)
          and sorted(p for _, _, p in order) == [0] * (len(order) // 2) + [1] * (len(order) // 2)
          and "sync_copy" in kinds and kinds.index("sync_little_work") < kinds.index("sync_copy"),
          f"findings of two files by what they add, stable: {list(zip(kinds, order))}")
    # two processes: each device's findings add at most its idle time, the total is
    # twice one file's, summed over the 4 devices, and so is each kind on --summary
    rc, d1, err = gaps_json(os.path.join(twins, "a.ctr"))
    one, two = d1["findings_total"], dt["findings_total"]
    check(two["saving_ns"] == 2 * one["saving_ns"] and two["idle_ns"] == 2 * one["idle_ns"]
          and two["devices"] == 4 and all(d["findings_saving_ns"] <= d["idle_ns"] for d in dt["devices"]),
          f"two files' total: {two} vs one {one}")
    rc, o1, err = run("--summary", os.path.join(twins, "a.ctr"))
    rc, o2, err = run("--summary", twins)
    k1 = re.findall(r"(\w[\w -]*?) up to ([\d.]+ (?:ns|us|ms|s)\b)", o1.splitlines()[-1].split("; together")[0])
    k2 = re.findall(r"(\w[\w -]*?) up to ([\d.]+ (?:ns|us|ms|s)\b)", o2.splitlines()[-1].split("; together")[0])
    check(len(k1) == len(k2) > 3 and all(a[0] == b[0] and dur(b[1]) == 2 * dur(a[1]) for a, b in zip(k1, k2))
          and "summed over 4 devices" in o2.splitlines()[-1], f"summary of two files: {k1} vs {k2}")

    # Damaged: a truncated copy gives a partial result and exit 1; garbage and empty exit 2.
    data = open(big, "rb").read()
    cut = os.path.join(tmp, "cut.ctr")
    # inside the frame holding the middle byte (a cut on a frame boundary is not "truncated")
    starts = [i for i in range(len(data)) if data.startswith(b"\x28\xb5\x2f\xfd", i)]
    begin = max(i for i in starts if i <= len(data) // 2)
    end = min([i for i in starts if i > begin] + [len(data)])
    open(cut, "wb").write(data[: (begin + end) // 2])
    rc, dc, err = gaps_json(cut)
    check(rc == 1 and "cut.ctr" in err, f"truncated: {rc} {err!r}")
    if dc:
        check(dc["inputs"][0]["status"] == "partial", "input marked partial")
        g = dc["devices"][0]["gaps"] if dc["devices"] else 0
        check(0 < g < 19999, f"partial gaps {g}")
    junk = os.path.join(tmp, "junk.ctr")
    open(junk, "w").write("not a trace\n")
    rc, out, err = run(junk)
    check(rc == 2 and "junk.ctr" in err and len(err.strip().splitlines()) == 1, f"foreign: {rc} {err!r}")
    empty = os.path.join(tmp, "empty.ctr")
    open(empty, "w").close()
    rc, out, err = run(empty)
    check(rc == 2 and "empty.ctr" in err, f"empty: {rc} {err!r}")
    rc, out, err = run(os.path.join(tmp, "missing"))
    check(rc == 2 and "missing" in err, f"missing: {rc} {err!r}")

    # Thread names and the tracer's own threads in the largest gaps. The planted poller
    # (tid 1003, no THREAD record, only TRACER spans) is a tracer thread: listed only in
    # gaps where it polled, by its spans. The mixed trace names every thread (main,
    # worker, cutrace-writer): application threads by name, the writer only when it
    # flushed during the gap, as "cutrace-writer: flush ...".
    poller = [t for g in doc["gaps"] for t in g["threads"] if t["tid"] == 1003]
    check(all(t["tracer_thread"] and t["tracer_ns"] > 0 and t["name"] is None for t in poller),
          f"planted poller shown only with tracer work: {poller}")
    rc, out, err = run(trace)
    check("    thread 1003" not in out,
          "the poller is never shown as an application thread")
    if gentrace:
        mixed = os.path.join(tmp, "mixed.ctr")
        subprocess.run([gentrace, "--mixed", mixed, "200"], check=True)
        rc, dm, err = gaps_json(mixed)
        ths = [t for g in dm["gaps"] for t in g["threads"]] if dm else []
        writer = [t for t in ths if t["name"] == "cutrace-writer"]
        check(writer and all(t["tracer_thread"] and t["tracer_ns"] > 0 for t in writer),
              f"writer listed only when it flushed: {writer}")
        check(all(t["tid"] == 4244 for t in writer), "writer tid")
        apps = {(t["tid"], t["name"]) for t in ths if not t["tracer_thread"]}
        check(apps == {(4242, "main"), (4243, "worker")}, f"application threads named: {apps}")
        check(all(t["tracer_ns"] <= g["dur_ns"] for g in dm["gaps"] for t in g["threads"]),
              "tracer time of a thread never exceeds the gap")
        rc, out, err = run(mixed)
        check('thread 4242 "main" (launching): outside CUDA' in out, "named launching thread in text")
        check("    thread 4244" not in out and "    cutrace-writer: flush" in out,
              f"writer labelled by name in text: {out[-600:]}")

finish()
