#!/usr/bin/env python3
"""cudaMalloc/cudaFree in a loop, end to end on the simulated GPU (programs/alloc_loop.cu).

The program runs 6 steps of cudaMalloc, one launch of a_work (20 ms) and cudaFree (which
waits for a_work: the implicit synchronisation), then each other allocation entry point
once. The simulator makes every allocation and free call cost 5 ms of host time
(SIMCUDA_ALLOC_US), so the GPU sits idle between two a_work kernels while the CPU frees
and allocates. A loaded machine can preempt the program longer than that inside its
launch call or between calls (seen in CI: 2-50 ms), which rightly makes that gap
launch_overhead or host_wait: such a run (less than half of a planted gap in the free
and the allocation, harness.gaps_spoiled_by_load) is recorded again, at most 3 times,
and the last run is judged; so is a run in which the program reached a loop free only
after its kernel had ended (it cannot show the wait then). Built twice: with the simulated libcudart.so (shared: runtime spans, the
driver calls they make only forward) and with the simulated runtime linked in
statically (as nvcc's default static cudart: only the driver-level hooks see anything).
Asserted exactly, for both: every allocation call as one span of the right entry point
(runtime names, or the driver's cuMemAlloc_v2 ... with the DRIVER flag), depth 0, no
GPU work; each loop cudaFree / cuMemFree_v2 lasting until its kernel's end; `cutrace
gaps`: the 5 gaps between the kernels, each from one kernel's end to the next one's
start, each `alloc`, the device's idle time all `alloc`, the alloc_in_loop finding
(5 gaps, their idle time); the text table's alloc column, the finding's line, and the
Chrome trace's gap slices with cause "alloc"; `cutrace report`'s memory allocations
table (format 1.5 ALLOC records): per kind the calls, bytes, releases matched, peak and
final live bytes, and the time of the allocation calls equal to their spans'; `dump
--chrome`'s memory counters: per kind the live bytes after each call, their highest
value the report's peak, device memory changing at the ends of the device calls; its
Kineto [memory] events: one per allocation and release at a call's end, GPU memory on
CUDA device 0 and page-locked memory on the CPU, totals the running sum of their bytes,
back to 0 at the end.

usage: test_alloc.py SIM_DIR CUTRACE LIBTRACE ALLOC_LOOP ALLOC_LOOP_STATIC
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cttest import check, finish, require_built, scratch_dir  # noqa: E402
from harness import chrome_events, gaps_spoiled_by_load, record_one_file  # noqa: E402
from rawdump import raw_records  # noqa: E402

sim_dir, cutrace, libtrace, shared_prog, static_prog = sys.argv[1:6]
require_built(os.path.join(sim_dir, "libcuda.so.1"), libtrace, cutrace, shared_prog, static_prog)
tmp = scratch_dir("cutrace-alloc-")
ITERS = 6
API_DRIVER, API_PTSZ = 0x10, 0x1
KERNEL_US, ALLOC_US = 20000, 5000  # kernels long enough that each free begins inside its kernel
ATTEMPTS = 3  # runs, while load spoils a planted gap (record_unspoiled)

# entry point -> spans, for each build
RUNTIME = {"cudaMalloc": ITERS, "cudaFree": ITERS + 3, "cudaMallocHost": 1, "cudaFreeHost": 2,
           "cudaHostAlloc": 1, "cudaMallocManaged": 1, "cudaMallocPitch": 1,
           "cudaHostRegister": 1, "cudaHostUnregister": 1, "cudaMallocAsync": 1,
           "cudaFreeAsync": 1, "cudaMallocAsync_ptsz": 1, "cudaFreeAsync_ptsz": 1}
# the static runtime's cudaFree(0) only initialises: no cuMemFree_v2
DRIVER = {"cuMemAlloc_v2": ITERS, "cuMemFree_v2": ITERS + 2, "cuMemAllocHost_v2": 1,
          "cuMemFreeHost": 2, "cuMemHostAlloc": 1, "cuMemAllocManaged": 1,
          "cuMemAllocPitch_v2": 1, "cuMemHostRegister_v2": 1, "cuMemHostUnregister": 1,
          "cuMemAllocAsync": 1, "cuMemFreeAsync": 1, "cuMemAllocAsync_ptsz": 1,
          "cuMemFreeAsync_ptsz": 1}


def record(label, program):
    return record_one_file(cutrace, libtrace, sim_dir, os.path.join(tmp, label), [program],
                           "alloc_loop: ok", {"SIMCUDA_KERNEL_US": f"a_work={KERNEL_US},default=5",
                                              "SIMCUDA_ALLOC_US": str(ALLOC_US)})


def check_spans(label, recs, names, driver):
    apis = [r for r in recs if r["kind"] == "api"]
    gpu_corrs = {r["corr"] for r in recs if r["kind"] == "gpu"}
    counts = {}
    for a in apis:
        counts.setdefault(names.get(a["name"], "?"), []).append(a)
    want, other = (DRIVER, RUNTIME) if driver else (RUNTIME, DRIVER)
    for name, n in want.items():
        spans = counts.get(name, [])
        check(len(spans) == n, f"{label}: {len(spans)} {name} spans, want {n}")
        for a in spans:
            check(a["depth"] == 0 and a["result"] == 0 and a["corr"] not in gpu_corrs
                  and bool(a["flags"] & API_DRIVER) == driver
                  and bool(a["flags"] & API_PTSZ) == name.endswith("_ptsz"),
                  f"{label}: {name} depth {a['depth']} result {a['result']} flags {a['flags']:#x}")
    doubled = {n: len(counts[n]) for n in other if n in counts}
    check(not doubled, f"{label}: spans of the other layer {doubled}")
    check_alloc_first(label, recs)
    return counts


def check_alloc_first(label, recs):
    """Each ALLOC record comes before its call's API record in the file (a detail
    written after it could be cut off from it by the writer and arrive too late for the
    reader: CTPH_FINISH), and every API record that has one follows it."""
    where = {}
    for i, r in enumerate(recs):
        if r["kind"] in ("alloc", "api") and r.get("corr"):
            where.setdefault((r["kind"], r["corr"]), i)
    late = [c for (k, c), i in where.items() if k == "alloc" and where.get(("api", c), -1) < i]
    check(not late and any(k == "alloc" for k, _ in where),
          f"{label}: ALLOC records not before their API records: corr {late}")


def kernels_of(recs, names):
    return sorted((r for r in recs if r["kind"] == "gpu" and "a_work" in names.get(r["name"], "")),
                  key=lambda r: r["start_ns"])


def check_frees_wait(label, kernels, frees):
    """Each loop free began while its kernel ran and returned after the kernel's end."""
    frees = sorted(frees, key=lambda a: a["begin_ns"])
    for k in kernels:
        f = next((a for a in frees if a["begin_ns"] > k["start_ns"] - 1000000), None)
        check(f is not None and f["begin_ns"] < k["end_ns"] <= f["end_ns"]
              and f["end_ns"] - k["end_ns"] >= ALLOC_US * 1000,
              f"{label}: the free after kernel {k} did not wait for it: {f}")


def check_gaps(label, path, kernels, free_name, malloc_name, launch_api):
    p = subprocess.run([cutrace, "gaps", "--format", "json", "--top", "100", path],
                       capture_output=True, text=True, timeout=60)
    if not check(p.returncode == 0, f"{label}: gaps status {p.returncode}: {p.stderr}"):
        return
    doc = json.loads(p.stdout)
    dev = doc["devices"][0]
    want = [(a["end_ns"], b["start_ns"]) for a, b in zip(kernels, kernels[1:])]
    check(len(kernels) == ITERS, f"{label}: {len(kernels)} a_work kernels")
    got = sorted((g["start_ns"], g["start_ns"] + g["dur_ns"], g["cause"]) for g in doc["gaps"])
    check(got == [(a, b, "alloc") for a, b in want], f"{label}: gaps {got}, want alloc {want}")
    check(all(g["ended_by"]["api"] == launch_api for g in doc["gaps"]),
          f"{label}: gaps ended by {[g['ended_by']['api'] for g in doc['gaps']]}")
    idle = sum(b - a for a, b in want)
    check(dev["idle_ns"] == idle == dev["idle"]["alloc_ns"] and dev["gaps"] == ITERS - 1,
          f"{label}: device idle {dev['idle']}, {dev['gaps']} gaps, want alloc {idle}")
    finds = [f for f in doc["findings"] if f["kind"] == "alloc_in_loop"]
    if check(len(finds) == 1, f"{label}: findings {doc['findings']}"):
        f = finds[0]
        check(f["count"] == ITERS - 1 and f["idle_ns"] == idle and f["what"] in (free_name, malloc_name)
              and f["first_ns"] == want[0][0] and f["last_ns"] == want[-1][1]
              and "caching allocator" in f["fix"], f"{label}: alloc finding {f}")
    p = subprocess.run([cutrace, "gaps", path], capture_output=True, text=True, timeout=60)
    rows = [line.split() for line in p.stdout.splitlines()]
    header = next((r for r in rows if r[:2] == ["pid", "device"]), [])
    check(header[6:10] == ["host_wait", "launch_ovh", "sync", "alloc"], f"{label}: header {header}")
    check(f"{ITERS - 1} gaps (" in p.stdout and "spent mostly allocating and freeing memory"
          in p.stdout, f"{label}: text finding missing:\n{p.stdout[-1500:]}")
    p = subprocess.run([cutrace, "gaps", "--summary", path], capture_output=True, text=True,
                       timeout=60)
    check("idle" in p.stdout and ": alloc " in p.stdout and
          "findings: memory allocated and freed in the loop" in p.stdout,
          f"{label}: gaps --summary {p.stdout!r}")
    events = chrome_events(cutrace, path, os.path.join(tmp, label + ".json"), label)
    if events is not None:
        slices = [e for e in events if e.get("cat") == "gap" and e.get("ph") == "X"]
        device = [e for e in slices if e["args"].get("stream") == -1]
        check(len(device) == ITERS - 1 and all(e["args"]["cause"] == "alloc" and
                                               e["name"].startswith("GPU idle: alloc ")
                                               for e in device),
              f"{label}: chrome device gap slices {device}")


def check_report(label, path, counts, driver):
    p = subprocess.run([cutrace, "report", "--format", "json", "--tables", "allocs", path],
                       capture_output=True, text=True, timeout=60)
    if not check(p.returncode == 0, f"{label}: report status {p.returncode}: {p.stderr}"):
        return
    rows = {r["kind"]: r for r in json.loads(p.stdout).get("allocs", [])}
    malloc = ("cuMemAlloc_v2", "cuMemAllocPitch_v2") if driver else ("cudaMalloc", "cudaMallocPitch")
    alloc_ns = sum(a["end_ns"] - a["begin_ns"] for n in malloc for a in counts.get(n, []))
    # kind: allocs, bytes (the pitched 100 x 8 has a 512-byte pitch), peak live bytes
    want = {"device": (ITERS + 1, ITERS * (1 << 20) + 512 * 8, 1 << 20),
            "pinned": (2, 8192, 4096), "managed": (1, 4096, 4096), "async": (2, 8192, 4096),
            "registered": (1, 8192, 8192)}
    got = {k: (r["allocs"], r["bytes"], r["peak_live_bytes"]) for k, r in rows.items()}
    check(got == want, f"{label}: report allocs {got}, want {want}")
    for k, r in rows.items():
        check(r["frees"] == r["allocs"] and r["freed_bytes"] == r["bytes"] and
              r["unmatched_frees"] == 0 and r["live_bytes_at_end"] == 0,
              f"{label}: {k} releases {r}")
    check(rows.get("device", {}).get("alloc_ns") == alloc_ns,
          f"{label}: device alloc_ns {rows.get('device')} vs spans {alloc_ns}")
    check_chrome_memory(label, path, rows, counts, driver)


def check_chrome_memory(label, path, rows, counts, driver):
    """dump --chrome's memory counters: per kind the live bytes at each call's end, their
    highest value report's peak; device memory changes exactly at the ends of the
    device allocation and release calls."""
    events = chrome_events(cutrace, path, os.path.join(tmp, label + "-memory.json"), label)
    if events is None:
        return
    series = {}
    for e in events:
        if e["ph"] == "C" and e["cat"] == "memory":
            series.setdefault(e["name"].split()[0], []).append((round(e["ts"] * 1000), e["args"]["bytes"]))
    one = lambda n: [n, 0]
    want = {"device": one(1 << 20) * ITERS + one(512 * 8), "pinned": one(4096) * 2,
            "managed": one(4096), "registered": one(8192), "async": one(4096) * 2}
    got = {k: [v for _, v in sorted(vals)] for k, vals in series.items()}
    check(got == want, f"{label}: chrome memory counters {got}, want {want}")
    for kind, vals in got.items():
        check(max(vals) == rows.get(kind, {}).get("peak_live_bytes"),
              f"{label}: {kind} counter's peak {max(vals)}, report {rows.get(kind)}")
    calls = (("cuMemAlloc_v2", "cuMemAllocPitch_v2", "cuMemFree_v2") if driver else
             ("cudaMalloc", "cudaMallocPitch", "cudaFree"))
    ends = {a["end_ns"] for n in calls for a in counts.get(n, [])}  # cudaFree(0) and the managed free too
    times = [t for t, _ in series.get("device", [])]
    check(len(times) == 2 * (ITERS + 1) and set(times) <= ends,
          f"{label}: device memory changes at the calls' ends {times}, not {sorted(ends)}")
    # Kineto's [memory] events: one per allocation and release, at the call's end, on
    # the calling thread; GPU memory on CUDA device 0 (Device Type 1), page-locked host
    # memory on the CPU (0, -1); the totals follow the Bytes of the events before
    mem = sorted((e for e in events if e["ph"] == "i" and e["name"] == "[memory]"),
                 key=lambda e: e["ts"])
    all_ends = {a["end_ns"] for spans in counts.values() for a in spans}
    kinds = {(e["args"]["Device Type"], e["args"]["Device Id"]) for e in mem}
    check(len(mem) == 2 * sum(r["allocs"] for r in rows.values()) and kinds == {(1, 0), (0, -1)}
          and all(round(e["ts"] * 1000) in all_ends and e["cat"] == "cpu_instant_event"
                  and e["s"] == "t" for e in mem),
          f"{label}: {len(mem)} [memory] events on {kinds}, want 2 per allocation of {rows}")
    totals = {}
    for e in mem:
        a = e["args"]
        key = (a["Device Type"], a["Device Id"])
        totals[key] = totals.get(key, 0) + a["Bytes"]
        check(a["Total Allocated"] == a["Total Reserved"] == totals[key],
              f"{label}: [memory] totals {a}, the events' bytes sum to {totals[key]}")
    host = ("pinned", "registered")
    want_peak = {(0, -1): 0, (1, 0): 0}
    for key, kind in ((k, kind) for kind in rows for k in [(0, -1) if kind in host else (1, 0)]):
        want_peak[key] = max(want_peak[key], rows[kind]["peak_live_bytes"])
    peaks = {k: max((e["args"]["Total Allocated"] for e in mem
                     if (e["args"]["Device Type"], e["args"]["Device Id"]) == k), default=0)
             for k in want_peak}
    check(all(peaks[k] >= want_peak[k] for k in peaks) and totals == {(1, 0): 0, (0, -1): 0},
          f"{label}: [memory] peaks {peaks} (at least each kind's {want_peak}), final {totals}")


def frees_after_kernels(recs, names, free_name):
    """The loop kernels whose free began only after the kernel had ended: the program
    preempted longer than the 20 ms kernel between its launch and the free (seen at
    load 13: 86 ms), so that free cannot show its wait."""
    frees = sorted((a for a in recs if a["kind"] == "api" and names.get(a["name"]) == free_name),
                   key=lambda a: a["begin_ns"])
    late = []
    for k in kernels_of(recs, names):
        f = next((a for a in frees if a["begin_ns"] > k["start_ns"] - 1000000), None)
        if f is not None and f["begin_ns"] >= k["end_ns"]:
            late.append(k["corr"])
    return late


def record_unspoiled(label, program, free_name, malloc_name):
    """Records program; again (at most ATTEMPTS runs) while load spoiled a planted gap
    (harness.gaps_spoiled_by_load: the thread preempted longer than it spent freeing
    and allocating there) or a free's wait (frees_after_kernels). Returns (path,
    records, names) of the last run, or None."""
    for attempt in range(1, ATTEMPTS + 1):
        path = record(f"{label}-{attempt}", program)
        if not path:
            return None
        recs, names = raw_records(cutrace, path)
        kernels = kernels_of(recs, names)
        gaps = [(a["end_ns"], b["start_ns"]) for a, b in zip(kernels, kernels[1:])]
        spoiled = gaps_spoiled_by_load(recs, names, gaps, (free_name, malloc_name))
        late = frees_after_kernels(recs, names, free_name)
        if not spoiled and not late:
            break
        print(f"{label}: run {attempt}: load spoiled planted gaps {spoiled} (less than half "
              f"of each in {free_name}/{malloc_name}), frees began after kernels {late}"
              + (", recording again" if attempt < ATTEMPTS else ""))
    return path, recs, names


for label, program, driver in (("shared", shared_prog, False), ("static", static_prog, True)):
    free_name, malloc_name = ("cuMemFree_v2", "cuMemAlloc_v2") if driver else ("cudaFree", "cudaMalloc")
    got = record_unspoiled(label, program, free_name, malloc_name)
    if not got:
        continue
    path, recs, names = got
    counts = check_spans(label, recs, names, driver)
    kernels = kernels_of(recs, names)
    check_frees_wait(label, kernels, counts.get(free_name, []))
    check_gaps(label, path, kernels, free_name, malloc_name,
               "cuLaunchKernel" if driver else "__cudaLaunchKernel")
    check_report(label, path, counts, driver)

sys.exit(finish())
