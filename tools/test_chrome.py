#!/usr/bin/env python3
"""cutrace dump --chrome on generated traces of known content: the JSON parses and
follows the Trace Event Format, has one named track per thread and per stream, every
GPU event carries its correlation and a matching ac2g flow pair, slices nest properly
on every track, counts per category are the scenario's, NVTX ranges are projected onto
the GPU streams (gpu_user_annotation) over exactly their work, cuBLAS calls timed by
their child kernels show those kernels by name with flows from the child launches and
list them in their args, and damaged inputs give partial output with status 1."""
import collections
import json
import os
import subprocess
import sys

cutrace, gentrace = sys.argv[1], sys.argv[2]
import tooltest
from tooltest import check, finish, scratch
from chrome_check import trace_event_format_problem


def run(*args):
    return tooltest.run(cutrace, *args)


def check_document(doc, label, n_iters, pid, stream_tids, gpu=0, gpu_name="GPU 0", file_index=0):
    """gpu: the pid of the GPU's process row; file_index: the file's place (flow ids)."""
    ev = doc["traceEvents"]
    check("deviceProperties" in doc and doc["deviceProperties"][0]["name"] == "cutrace simulated GPU",
          f"{label}: deviceProperties")
    check(doc["distributedInfo"]["rank"] == 0, f"{label}: distributedInfo")
    xs = [e for e in ev if e["ph"] == "X"]
    by_cat = collections.Counter(e["cat"] for e in xs if e["pid"] == pid or (
        e["pid"] == gpu and e["tid"] in stream_tids.values() and e["cat"] != "gap"))
    n, even, odd, by4 = n_iters, (n_iters + 1) // 2, n_iters // 2, (n_iters + 3) // 4
    exp = {"kernel": n + n + even + n + odd, "gpu_memcpy": n + n + even, "gpu_memset": by4,
           "cuda_driver": even, "user_annotation": 2 * n, "tracer": (n + 7) // 8}
    exp["cuda_runtime"] = (n + n + n + odd + n) + (n + n + by4 + even)
    for cat, count in exp.items():
        check(by_cat[cat] == count, f"{label}: {cat} events {by_cat[cat]} != {count}")

    # Tracks: every (pid, tid) with a slice has a thread_name; threads and streams present.
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev
             if e["ph"] == "M" and e["name"] == "thread_name"}
    used = {(e["pid"], e["tid"]) for e in xs}
    check(used <= set(names), f"{label}: unnamed tracks {used - set(names)}")
    check(names.get((pid, pid)) == f"main ({pid})" and names.get((pid, pid + 1)) == f"worker ({pid + 1})",
          f"{label}: thread tracks {names}")
    for s, tid in stream_tids.items():
        check(names.get((gpu, tid), "").startswith(f"stream {s}"), f"{label}: stream {s} track")
    check(any(v.startswith("cutrace: flush") for v in names.values()), f"{label}: tracer track")
    procs = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
    check(procs.get(gpu) == gpu_name and f"(pid {pid})" in procs.get(pid, ""),
          f"{label}: process names {procs}")

    # Units: microseconds with 3 decimals; the scenario's first vadd is 2 us long.
    vadd = [e for e in xs if e["name"].startswith("vadd(") and e["pid"] == gpu and e["tid"] == stream_tids[7]]
    check(vadd and vadd[0]["dur"] == 2.0 and vadd[0]["args"]["grid"] == [256, 1, 1], f"{label}: vadd slice")
    h2d = [e for e in xs if e["cat"] == "gpu_memcpy" and e["name"] == "Memcpy HtoD (Pinned -> Device)"
           and e["pid"] == gpu and e["tid"] == stream_tids[7]]
    check(len(h2d) == n and h2d[0]["args"]["bytes"] == 1 << 20, f"{label}: HtoD copies")

    # Flows: per GPU event of this process one s on the call and one f (bp e) on the event.
    gpu_events = [e for e in xs if e["cat"] in ("kernel", "gpu_memcpy", "gpu_memset") and
                  e["pid"] == gpu and e["tid"] in stream_tids.values()]
    flows = collections.defaultdict(list)
    for e in ev:
        if e["ph"] in ("s", "f"):
            flows[e["id"]].append(e)
    calls = {(e["pid"], e["tid"], e["ts"]) for e in xs if e["cat"] in ("cuda_runtime", "cuda_driver")}
    ok = True
    for g in gpu_events:
        corr = g["args"].get("correlation")
        pair = [f for f in flows.get(g["args"]["correlation"] | (file_index << 40), [])]
        s = [f for f in pair if f["ph"] == "s"]
        f = [f for f in pair if f["ph"] == "f"]
        if not corr or len(s) != 1 or len(f) != 1 or f[0].get("bp") != "e" or \
           (f[0]["pid"], f[0]["tid"], f[0]["ts"]) != (g["pid"], g["tid"], g["ts"]) or \
           (s[0]["pid"], s[0]["tid"], s[0]["ts"]) not in calls or f[0]["cat"] != "ac2g":
            ok = False
            print("  bad flow for", g, pair)
            break
    check(ok and gpu_events, f"{label}: every GPU event has its correlation and flow pair")


with scratch("cutrace-chrome-") as d:
    data = os.path.join(d, "data")
    os.mkdir(data)
    a, b = os.path.join(data, "h.100.ctr"), os.path.join(data, "h.200.ctr")
    subprocess.run([gentrace, "--mixed", a, "40", "100"], check=True)
    subprocess.run([gentrace, "--mixed", b, "25", "200"], check=True)

    out_file = os.path.join(d, "one.json")
    rc, out, err = run("dump", "--chrome", "-o", out_file, a)
    check(rc == 0 and not err and out == "", f"dump --chrome -o: {rc} {err!r}")
    doc = json.load(open(out_file))
    check_document(doc, "one file", 40, 100, {0: 0, 7: 7, 8: 8})
    check(not trace_event_format_problem(doc), f"one file: Trace Event Format: {trace_event_format_problem(doc)}")
    ann = [e for e in doc["traceEvents"] if e.get("cat") == "gpu_user_annotation"]
    check(len(ann) == 2 * 40 and {e["name"] for e in ann} == {"step", "forward"} and
          all(e["pid"] == 0 and e["tid"] == 7 for e in ann), f"one file: gpu_user_annotation {len(ann)}")
    tooltest.check_nesting(doc, "one file")
    check(doc["baseTimeNanoseconds"] == 1700000000000000000 - 1000000000, "baseTimeNanoseconds")
    gaps = [e for e in doc["traceEvents"] if e.get("cat") == "gap"]
    if gaps:  # built with the gaps analysis
        check(all(e["name"].startswith("GPU idle: ") and e["args"]["cause"] in e["name"] for e in gaps),
              "gap slices are labelled with their cause")

    # Two processes in one document: both complete, each file's GPU a process row of its
    # own (pid 10^9 + file * 1000 + device) sorted right under its CPU process.
    rc, out, err = run("dump", "--chrome", data)
    check(rc == 0, f"two files: {rc} {err!r}")
    doc2 = json.loads(out)
    sim = "cutrace simulated GPU"
    check_document(doc2, "first of two", 40, 100, {0: 0, 7: 7, 8: 8}, 1000000000,
                   f"pid 100 GPU 0 ({sim})", 0)
    check_document(doc2, "second of two", 25, 200, {0: 0, 7: 7, 8: 8}, 1000001000,
                   f"pid 200 GPU 0 ({sim})", 1)
    check(not trace_event_format_problem(doc2), f"two files: {trace_event_format_problem(doc2)}")
    tooltest.check_nesting(doc2, "two files")
    order = {e["pid"]: e["args"]["sort_index"] for e in doc2["traceEvents"]
             if e["ph"] == "M" and e["name"] == "process_sort_index"}
    check(order == {100: 1000, 1000000000: 1001, 200: 2000, 1000001000: 2001},
          f"two files: process rows in order {order}")
    check(not [e for e in doc2["traceEvents"] if e.get("pid") == 0],
          "two files: nothing left on the shared row pid 0")
    props = [(x["id"], x.get("pid"), x.get("process"), "rank" in x) for x in doc2["deviceProperties"]]
    check(props == [(0, 1000000000, 100, False), (0, 1000001000, 200, False)],
          f"two files: deviceProperties per process {props}")
    gap_tracks = {(e["pid"], e["tid"]) for e in doc2["traceEvents"] if e.get("cat") == "gap"}
    tnames = {(e["pid"], e["tid"]): e["args"]["name"] for e in doc2["traceEvents"]
              if e["ph"] == "M" and e["name"] == "thread_name"}
    if gap_tracks:
        check({t for t in gap_tracks if tnames[t] == "GPU idle"} ==
              {(1000000000, 1500000000), (1000001000, 1500000000)},
              "idle tracks on each process's GPU row")

    # GEMMs timed by their child kernels, NVTX ranges projected onto the GPU streams.
    import inner_scenario
    inner = os.path.join(d, "inner.ctr")
    plan = inner_scenario.write(inner, 6)
    rc, out, err = run("dump", "--chrome", "--no-gaps", inner)
    check(rc == 0 and not err, f"inner: {rc} {err!r}")
    doc = json.loads(out)
    check(not trace_event_format_problem(doc), f"inner: Trace Event Format: {trace_event_format_problem(doc)}")
    tooltest.check_nesting(doc, "inner")
    ev = doc["traceEvents"]
    xs = [e for e in ev if e["ph"] == "X"]
    us = lambda ns: round(ns / 1000, 3)
    # every planted activity on its stream track by its real name, with its flow from the
    # child call that launched it (the innermost slice at the flow's start)
    acts = {e["args"]["correlation"]: e for e in xs if e["pid"] == 0 and e["cat"] == "kernel"}
    names = {"k_main": "k_main(float*)", "k_splitk": "k_splitk(float*)", "relu": "relu(float*, int)",
             "lt_kernel": "lt_kernel(float const*)", "cublasGemmEx": "cublasGemmEx"}
    ok = len(acts) == len(plan["activities"])
    for act in plan["activities"]:
        e = acts.get(act["corr"])
        ok = ok and e is not None and e["name"] == names[act["name"]] and e["tid"] == act["stream"] and \
            e["ts"] == us(act["start"]) and e["dur"] == us(act["end"] - act["start"]) and \
            e["args"].get("parent correlation", 0) == act["parent"]
    check(ok, "inner: every kernel on its stream by name, parent correlation")
    calls = {e["args"]["correlation"]: e for e in xs if e["cat"] in ("cuda_runtime", "cuda_driver")}
    flows = collections.defaultdict(dict)
    for e in ev:
        if e["ph"] in ("s", "f"):
            flows[e["id"]][e["ph"]] = e
    ok = True
    for act in plan["activities"]:
        call = calls.get(act["corr"])
        fl = flows.get(act["corr"], {})
        ok = ok and call is not None and "s" in fl and "f" in fl and fl["s"]["ts"] == call["ts"] and \
            fl["s"]["tid"] == call["tid"] and (call["args"]["depth"] == 1) == bool(act["parent"])
    check(ok, "inner: flows start at the launching call (the depth-1 child for library kernels)")
    # the GEMM spans: shape, types, their kernels
    sg = [e for e in xs if e["name"] == "cublasSgemm_v2"]
    check(len(sg) == 6 and all(e["args"]["m"] == 128 and e["args"]["n"] == 256 and e["args"]["k"] == 64 and
                               e["args"]["atype"] == "f32" and e["args"]["kernels"] == 2 and
                               e["args"]["kernels gpu_ns"] == 12000 and
                               e["args"]["kernel names"] == ["k_main(float*)", "k_splitk(float*)"]
                               for e in sg), f"inner: Sgemm span args {sg[:1]}")
    lt = [e for e in xs if e["name"] == "cublasLtMatmul"]
    check(len(lt) == 6 and all(e["args"]["kernels"] == 1 and e["args"]["epilogue"] == 2 for e in lt),
          f"inner: Lt span args {lt[:1]}")
    gx = [e for e in xs if e["name"] == "cublasGemmEx" and e["pid"] != 0]
    check(len(gx) == 6 and all(e["args"]["atype"] == "f16" and "kernels" not in e["args"] for e in gx),
          "inner: an older-style GEMM span keeps its own activity")
    # gpu_user_annotation: per range and stream, earliest start to latest end of its work
    by_corr = {x["corr"]: x for x in plan["activities"]}
    want = sorted((r["name"], by_corr[r["corrs"][0]]["stream"], us(min(by_corr[c]["start"] for c in r["corrs"])),
                   us(max(by_corr[c]["end"] for c in r["corrs"]) - min(by_corr[c]["start"] for c in r["corrs"])))
                  for r in plan["ranges"])
    got = sorted((e["name"], e["tid"], e["ts"], e["dur"]) for e in xs if e["cat"] == "gpu_user_annotation")
    check(got == want, f"inner: gpu_user_annotation slices {got[:4]} != {want[:4]}")
    cpu_ranges = [e for e in xs if e["cat"] == "user_annotation"]
    check(len(cpu_ranges) == len(plan["ranges"]), "inner: NVTX ranges as CPU slices")
    rc, out, err = run("dump", "--chrome", "--no-gaps", "-o", "-", a)
    check(rc == 0 and not [e for e in json.loads(out)["traceEvents"] if e.get("cat") == "gap"], "--no-gaps")

    # Raw dump stays the default.
    rc, out, err = run("dump", a)
    check(rc == 0 and out.startswith("string id=1 "), "raw dump is the default")

    # Damage: a truncated file still gives a valid document of what was read, status 1.
    big = os.path.join(d, "big.ctr")
    subprocess.run([gentrace, "--mixed", big, "5000", "300", "16384"], check=True)
    raw = open(big, "rb").read()
    cut = os.path.join(d, "cut.ctr")
    open(cut, "wb").write(raw[: len(raw) // 2])
    rc, out, err = run("dump", "--chrome", cut)
    check(rc == 1 and "cut.ctr" in err and err.count("\n") == 1, f"truncated: {rc} {err!r}")
    ev = json.loads(out)["traceEvents"]
    nk = sum(1 for e in ev if e.get("cat") == "kernel")
    check(1000 < nk < 5000 * 4, f"truncated: {nk} kernel events kept")
    foreign = os.path.join(d, "foreign.ctr")
    open(foreign, "w").write("hello\n")
    rc, out, err = run("dump", "--chrome", foreign)
    check(rc == 2 and "not a cutrace trace" in err, f"foreign alone: {rc} {err!r}")
    check(json.loads(out)["traceEvents"] == [], "foreign alone: still a valid, empty document")
    rc, out, err = run("dump", "--chrome", a, foreign)
    check(rc == 1 and json.loads(out)["traceEvents"], f"good + foreign: {rc} {err!r}")
    for bad in (["--chrome", "--gap-min", "x"], ["--bogus"], ["-o", "x.json"], ["--chrome", "-o"]):
        rc, out, err = run("dump", *bad, a)
        check(rc == 2 and err.count("\n") == 1, f"bad options {bad}: {rc} {err!r}")
    rc, out, err = run("dump", "--chrome", "-o", os.path.join(d, "no", "such", "dir.json"), a)
    check(rc == 2 and "cannot write" in err, f"unwritable output: {rc} {err!r}")

finish()
