#!/usr/bin/env python3
"""cutrace dump --perfetto against dump --chrome of the same traces, event by event:
the protobuf trace (read by perfetto_read.py, our own reader, the way trace_processor
reads it) holds the same slices (name, category, track, start and duration in ns,
args), the same counters and the same flows as the JSON, on tracks named as the JSON
names them (thread descriptors with the JSON's pid and tid); interned strings resolve,
every track is described before use, slices pair up on their tracks; the interning
table's reset (a tiny CUTRACE_PERFETTO_INTERN_MAX) changes nothing; --split writes
rank-N.pftrace; a truncated trace gives status 1 and a whole, valid file.

Usage: test_perfetto.py CUTRACE GENTRACE PLANTRACE
   or: test_perfetto.py --compare DOC.json TRACE.pftrace   (prints the differences)"""
import collections
import json
import os
import subprocess
import sys

import perfetto_read


def json_view(doc):
    """The JSON document as the events to compare: slices keyed by (process row name,
    track name, ts ns, name), instants keyed the same way, counters, flows {id: (s, f)},
    thread tracks {(pid, tid): name}."""
    ev = doc["traceEvents"]
    procs, threads = {}, {}
    for e in ev:
        if e["ph"] == "M" and e["name"] == "process_name":
            procs[e["pid"]] = e["args"]["name"]
        elif e["ph"] == "M" and e["name"] == "thread_name":
            threads[(e["pid"], e["tid"])] = e["args"]["name"]
    ns = lambda us: round(us * 1000)
    place = lambda e: (procs.get(e["pid"]), threads.get((e["pid"], e["tid"])))
    slices = collections.defaultdict(list)
    instants = collections.defaultdict(list)
    counters = collections.Counter()
    flows = collections.defaultdict(dict)
    for e in ev:
        if e["ph"] == "X":
            # null and empty lists have no value in Perfetto: left out there
            args = {k: v for k, v in e["args"].items() if v is not None and v != [] and v != {}}
            if "range begin" in args:
                args["range begin"] = ns(args["range begin"])
            slices[place(e) + (ns(e["ts"]), e["name"])].append((e["cat"], ns(e["dur"]), args))
        elif e["ph"] == "i":
            instants[place(e) + (ns(e["ts"]), e["name"])].append((e["cat"], e["args"]))
        elif e["ph"] == "C":
            (value,) = e["args"].values()  # one series: "depth" (queues), "bytes" (memory)
            counters[(procs.get(e["pid"]), e["name"], ns(e["ts"]), value)] += 1
        elif e["ph"] in ("s", "f"):
            flows[e["id"]][e["ph"]] = place(e) + (ns(e["ts"]),)
    return slices, instants, counters, flows, threads


def same_value(j, p):
    """JSON value j equals Perfetto value p (JSON floats have 3 decimals)."""
    if isinstance(j, float) or isinstance(p, float):
        return isinstance(p, (int, float)) and abs(j - p) <= 0.0005 + 1e-9 * abs(j)
    if isinstance(j, dict):
        return isinstance(p, dict) and j.keys() == p.keys() and all(same_value(j[k], p[k]) for k in j)
    if isinstance(j, list):
        return isinstance(p, list) and len(j) == len(p) and all(map(same_value, j, p))
    return j == p and type(j) is type(p)


def compare(doc, trace):
    """The differences between a --chrome document and a --perfetto trace ([] when none)."""
    diffs = list(trace.problems)
    slices, instants, counters, flows, threads = json_view(doc)
    pslices = collections.defaultdict(list)
    for s in trace.slices:
        row, track = trace.place(s["track"])
        if s["cat"] == "gpu_user_annotation":  # a track per depth next to the stream's
            depth = s["args"].get("depth")
            suffix = " ranges" + (f" (depth {depth})" if depth else "")
            if not track.endswith(suffix):
                diffs.append(f"gpu_user_annotation of depth {depth} on track {track!r}")
            track = track[:-len(suffix)]
        pslices[(row, track, s["ts"], s["name"])].append((s["cat"], s["dur"], s["args"]))
    for key in set(slices) | set(pslices):
        a, b = sorted(slices.get(key, []), key=repr), sorted(pslices.get(key, []), key=repr)
        ok = len(a) == len(b) and all(x[:2] == y[:2] and same_value(x[2], y[2]) for x, y in zip(a, b))
        if not ok and len(diffs) < 30:
            diffs.append(f"slice {key}: json {a} perfetto {b}")
    n_json, n_pf = sum(map(len, slices.values())), sum(map(len, pslices.values()))
    if n_json != n_pf:
        diffs.append(f"{n_json} JSON slices, {n_pf} Perfetto slices")
    pinstants = collections.defaultdict(list)
    for i in trace.instants:
        pinstants[trace.place(i["track"]) + (i["ts"], i["name"])].append((i["cat"], i["args"]))
    for key in set(instants) | set(pinstants):
        a, b = sorted(instants.get(key, []), key=repr), sorted(pinstants.get(key, []), key=repr)
        if (len(a) != len(b) or not all(x[0] == y[0] and same_value(x[1], y[1]) for x, y in zip(a, b))) \
                and len(diffs) < 30:
            diffs.append(f"instant {key}: json {a} perfetto {b}")
    pcounters = collections.Counter(
        trace.place(c["track"]) + (c["ts"], c["value"]) for c in trace.counters)
    if pcounters != counters:
        diffs.append(f"counters differ: json-only {list((counters - pcounters).items())[:3]} "
                     f"perfetto-only {list((pcounters - counters).items())[:3]}")
    # flows: the JSON's s at the call's start, f at the GPU slice's start
    ended = {fid for fid, f in trace.flows.items() if "in" in f}
    if ended != set(flows):
        diffs.append(f"flow ids: {len(flows)} in JSON, {len(ended)} ended in Perfetto, "
                     f"e.g. {sorted(ended ^ set(flows))[:3]}")
    lone = sorted(fid for fid, f in trace.flows.items() if "in" not in f)
    if lone:  # the JSON writes a flow with its end: Perfetto must not start one alone
        diffs.append(f"{len(lone)} flow starts that nothing ends, e.g. {lone[:3]}")
    starts = {(place, ts) for place, ts in ((k[:2], k[2]) for k in slices)}
    for fid in sorted(ended & set(flows)):
        f = trace.flows[fid]
        if not f.get("out") and len(f["in"]) == 1 and (flows[fid]["s"][:2], flows[fid]["s"][2]) not in starts:
            continue  # the call is outside --from/--to: JSON's s binds to no slice either
        if len(f.get("out", [])) != 1 or len(f["in"]) != 1:
            diffs.append(f"flow {fid}: {len(f.get('out', []))} starts, {len(f['in'])} ends")
            break
        got = tuple(trace.place(s["track"]) + (s["ts"],) for s in (f["out"][0], f["in"][0]))
        if got != (flows[fid]["s"], flows[fid]["f"]):
            diffs.append(f"flow {fid}: json {flows[fid]} perfetto {got}")
            break
    for t in trace.tracks.values():
        if t["kind"] == "thread" and threads.get((t["pid"], t["tid"])) != t["name"]:
            diffs.append(f"thread track {t['pid']}/{t['tid']} {t['name']!r}: "
                         f"JSON {threads.get((t['pid'], t['tid']))!r}")
    return diffs


def main():
    if sys.argv[1] == "--compare":
        doc = json.load(open(sys.argv[2]))
        diffs = compare(doc, perfetto_read.read(sys.argv[3]))
        print("\n".join(diffs) if diffs else "same events")
        sys.exit(1 if diffs else 0)
    cutrace, gentrace, plantrace = sys.argv[1:4]
    import tooltest
    from tooltest import check, finish, scratch_dir

    def both(label, args, env=None, status=0):
        """Dumps args as JSON and as Perfetto, checks both and compares them; returns the trace."""
        rc1, out, err1 = tooltest.run(cutrace, "dump", "--chrome", *args)
        pf = os.path.join(d, "out.pftrace")
        rc2, out2, err2 = tooltest.run(cutrace, "dump", "--perfetto", "-o", pf, *args, env=env)
        check(rc1 == status and rc2 == status and out2 == "",
              f"{label}: status {rc1} / {rc2}, not {status}: {err1!r} {err2!r}")
        check(err1 == err2, f"{label}: the same messages {err1!r} {err2!r}")
        try:
            trace = perfetto_read.read(pf)
        except perfetto_read.FormatError as e:
            check(False, f"{label}: unreadable protobuf: {e}")
            return None
        diffs = compare(json.loads(out), trace)
        check(not diffs, f"{label}: same events as --chrome: " + "; ".join(diffs[:5]))
        check(len(trace.slices) > 0, f"{label}: has slices")
        return trace

    d = scratch_dir("cutrace-perfetto-")
    data = os.path.join(d, "data")
    os.mkdir(data)
    a, b = os.path.join(data, "h.100.ctr"), os.path.join(data, "h.200.ctr")
    subprocess.run([gentrace, "--mixed", a, "40", "100", "4096"], check=True)
    subprocess.run([gentrace, "--mixed", b, "25", "200"], check=True)

    t = both("one file", [a])
    if t:
        cats = collections.Counter(s["cat"] for s in t.slices)
        n, even, odd, by4 = 40, 20, 20, 10
        check(cats["kernel"] >= n + n + even + n + odd and cats["gpu_memcpy"] >= n + n + even and
              cats["user_annotation"] == 2 * n and cats["gpu_user_annotation"] == 2 * n and
              cats["tracer"] == (n + 7) // 8 and cats["cuda_driver"] == even,
              f"one file: slices per category {dict(cats)}")
        rows = {t.tracks[u]["name"] for u in t.tracks
                if t.tracks[u]["parent"] is None and t.tracks[u]["kind"] != "thread" and u != 0}
        check(0 in t.tracks and t.tracks[0]["name"] == "", "one file: the root track's ordering")
        check(rows == {"GPU 0"} | {n for n in rows if n.endswith("(pid 100)")} and len(rows) == 2,
              f"one file: a process and a GPU row {rows}")
        check(t.clears == 1, f"one file: the interning state cleared once ({t.clears})")
        check(len(t.flows) > 0 and all("out" in f for f in t.flows.values() if "in" in f),
              "one file: every ended flow has its start")
        pf_size = os.path.getsize(os.path.join(d, "out.pftrace"))
        js_size = len(tooltest.run(cutrace, "dump", "--chrome", a)[1])
        check(pf_size * 2.5 < js_size, f"one file: {pf_size} bytes, JSON {js_size}")
    both("queues", ["--queues", a])
    both("window", ["--queues", "--from", "3ms", "--to", "9ms", a])
    both("no gaps", ["--no-gaps", a])
    t = both("two files", [data])
    if t:
        rows = sorted(t.tracks[u]["name"] for u in t.tracks if t.tracks[u]["parent"] is None
                      and t.tracks[u]["kind"] == "custom" and u != 0)
        check(rows == ["pid 100 GPU 0 (cutrace simulated GPU)", "pid 200 GPU 0 (cutrace simulated GPU)"],
              f"two files: a GPU row per file {rows}")
    # a tiny interning table: cleared again and again, the same events
    t = both("interning reset", ["--queues", a], env=dict(os.environ, CUTRACE_PERFETTO_INTERN_MAX="8"))
    check(t is not None and t.clears > 10, f"interning reset: cleared {t and t.clears} times")

    # a tiny flow queue: calls written before their GPU work is known, without their
    # flow ids (arrows lost), never a flow start that nothing ends; the same slices
    rc, out, _ = tooltest.run(cutrace, "dump", "--chrome", "--queues", a)
    pf = os.path.join(d, "small-queue.pftrace")
    rc2, _, err2 = tooltest.run(cutrace, "dump", "--perfetto", "--queues", "-o", pf, a,
                                env=dict(os.environ, CUTRACE_PERFETTO_FLOW_QUEUE_MAX="3"))
    t = perfetto_read.read(pf) if rc2 == 0 else None
    if check(t is not None and not t.problems, f"small flow queue: {rc2} {err2!r} {t and t.problems}"):
        diffs = [x for x in compare(json.loads(out), t) if x.startswith(("slice", "counters", "instant"))
                 or "flow starts that nothing ends" in x]
        drawn = sum(1 for f in t.flows.values() if "in" in f and "out" in f)
        lost = sum(1 for f in t.flows.values() if "out" not in f)
        check(not diffs and drawn and lost, f"small flow queue: {diffs[:3]}, {drawn} flows drawn, {lost} lost")

    # gaps and a planted trace's pauses
    p = os.path.join(d, "plant.ctr")
    subprocess.run([plantrace, p, "--loop", "3"], check=True, stdout=subprocess.DEVNULL)
    t = both("planted gaps", ["--gap-min", "0", p])
    gaps = [s for s in t.slices if s["cat"] == "gap"] if t else []
    if gaps:  # built with the gaps analysis
        check(any(s["args"].get("stream") == -1 for s in gaps),
              "planted gaps: device gaps carry stream -1 (int_value)")
    import diff_scenario
    ps = os.path.join(d, "paused.ctr")
    diff_scenario.write(ps, "a", 6, pause_after=2)
    t = both("pause", [ps])
    check(t is not None and any(s["cat"] == "cutrace" for s in t.slices), "pause: its slice")
    import inner_scenario
    inner = os.path.join(d, "inner.ctr")
    inner_scenario.write(inner, 6)
    t = both("library calls timed by their kernels", ["--no-gaps", inner])
    check(t is not None and any("kernel names" in s["args"] for s in t.slices),
          "library calls: kernel names list")

    # flows: only from calls whose GPU work is in the trace (not allocations, not calls
    # captured into a graph, not a call whose GPU record was lost)
    import order_scenario
    order = os.path.join(d, "order.ctr")
    order_scenario.write(order)
    t = both("planted flows and nesting", ["--no-gaps", order])
    if t:
        starts = {s["args"]["correlation"]: s["flow_out"] for s in t.slices
                  if t.place(s["track"])[1].startswith("main")
                  and s["args"].get("correlation") in order_scenario.FLOW_CORRS}
        want = {c: [c] if drawn else [] for c, drawn in order_scenario.FLOW_CORRS.items()}
        check(starts == want, f"planted flows: flow starts by call {starts}, want {want}")
        ended = sorted(fid for fid, f in t.flows.items() if "in" in f and "out" in f)
        check(ended == [c for c, drawn in order_scenario.FLOW_CORRS.items() if drawn],
              f"planted flows: drawn {ended}")
        # the launch whose GPU record was lost waited for it at most 2 s (trace time)
        where = {(x["name"], x["ts"]): x["packet"] for x in t.slices}
        lost = [x["packet"] for x in t.slices if x["args"].get("correlation") == 3]
        late = where.get(("cudaStreamSynchronize", order_scenario.LATE_NEST))
        check(lost and late and lost[0] < late,
              f"planted flows: the lost launch written before a slice 3 s later ({lost} {late})")
        # slices that begin in the same ns: the outer one first in both files, so that
        # viewers nest them right (the reader pairs begins and ends as trace_processor)
        got = {(x["name"], x["ts"]): x["ts"] + x["dur"] for x in t.slices}
        want = {(name, b): e for name, b, e, _ in order_scenario.NESTED}
        check(all(got.get(k) == v for k, v in want.items()),
              f"planted nesting: Perfetto slices end {[(k, got.get(k)) for k in want]}, want {want}")
        doc = json.loads(tooltest.run(cutrace, "dump", "--chrome", "--no-gaps", order)[1])
        at = {(e["name"], round(e["ts"] * 1000)): i for i, e in enumerate(doc["traceEvents"])
              if e["ph"] == "X"}
        for name, b, _, parent in order_scenario.NESTED:
            pb = [x[1] for x in order_scenario.NESTED if x[0] == parent]
            check(parent is None or at[(parent, pb[0])] < at[(name, b)],
                  f"planted nesting: JSON has {parent} before {name} ({at})")
            check(parent is None or where[(parent, pb[0])] < where[(name, b)],
                  f"planted nesting: Perfetto has {parent} before {name} ({where})")

    # two files, the second earlier by 10 s: its calls wait for their GPU work as long
    # as the first file's did (each file's flows end in that file)
    later = os.path.join(d, "order-later.ctr")
    order_scenario.write(later, shift=10**10, dpid=100)
    t = both("planted flows, a later file first", ["--no-gaps", later, order])
    if t:
        drawn = sorted(fid for fid, f in t.flows.items() if "in" in f and "out" in f)
        want = sorted(k << 40 | c for k in (0, 1) for c, on in order_scenario.FLOW_CORRS.items() if on)
        check(drawn == want, f"planted flows, a later file first: drawn {drawn}, want {want}")

    # several ranks, and --split
    import ranks_scenario
    job = os.path.join(d, "job")
    os.mkdir(job)
    ranks_scenario.write(job)
    both("ranks", [job])
    rc, out, err = tooltest.run(cutrace, "dump", "--perfetto", "--split", os.path.join(d, "sp"), job)
    rc2, out2, _ = tooltest.run(cutrace, "dump", "--chrome", "--split", os.path.join(d, "sj"), job)
    check(rc == rc2 == 0 and out.replace("/sp/", "/") == out2.replace("/sj/", "/").replace(".json", ".pftrace"),
          f"--split: {rc} {out!r} {out2!r}")
    names = sorted(os.listdir(os.path.join(d, "sp")))
    check(names == ["rank-0.pftrace", "rank-1.pftrace", "rank-2.pftrace"], f"--split files {names}")
    for name in names:
        diffs = compare(json.load(open(os.path.join(d, "sj", name.replace(".pftrace", ".json")))),
                        perfetto_read.read(os.path.join(d, "sp", name)))
        check(not diffs, f"--split {name}: same events as --chrome: {diffs[:3]}")

    # a truncated trace: status 1, every event before the damage, a whole file
    cut = os.path.join(d, "cut.ctr")
    with open(a, "rb") as f:
        raw = f.read()
    with open(cut, "wb") as f:
        f.write(raw[: len(raw) * 2 // 3])
    both("truncated", [cut], status=1)

    # binary output to a terminal: refused, one line, nothing written
    import pty
    master, slave = pty.openpty()
    try:  # a cutrace that wrote would block once the terminal's buffer is full
        p = subprocess.run([cutrace, "dump", "--perfetto", a], stdout=slave, stderr=subprocess.PIPE,
                           text=True, timeout=20)
        status, err = p.returncode, p.stderr
    except subprocess.TimeoutExpired:
        status, err = None, "wrote to the terminal until it blocked"
    os.close(slave)
    os.set_blocking(master, False)
    try:
        leaked = os.read(master, 100)
    except OSError:
        leaked = b""
    os.close(master)
    check(status == 2 and err.count("\n") == 1 and "-o FILE" in err and not leaked,
          f"--perfetto to a terminal: {status} {err!r} {leaked[:20]!r}")
    rc, _, err = tooltest.run(cutrace, "dump", "--perfetto", "-o", "/nonexistent/x.pftrace", a)
    check(rc == 2 and err.count("\n") == 1 and "cannot write" in err, f"unwritable output: {rc} {err!r}")
    finish()


if __name__ == "__main__":
    main()
