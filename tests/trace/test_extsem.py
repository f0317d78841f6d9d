#!/usr/bin/env python3
"""External semaphores end to end on the simulated GPU (programs/extsem.cu: six planted
calls on one stream, listed there; the semaphores' producers outside CUDA signal 300 ms
after a wait is queued: SIMCUDA_EXTSEM_US). 300 ms, not 30: a kernel launched after its
wait ended is the host's lateness (host_wait), not the producer's, and a loaded machine
stalled a thread 44 ms between two calls (test_greenctx); the waits cost sleep, no CPU.

Asserted exactly, for each call: one outermost API record of its entry point with its
result (DRIVER flag at the driver level, PTSZ flag on the per-thread form), on the
stream of the kernels around it, no GPU record, and one MEMOP record (format 1.10): kind
ext_wait (11) or ext_signal (12), count the semaphores, value the first one's fence
value (0 for the failed call), bytes 0, async 1. The simulator held the stream: es_after
starts 250 ms or more after es_before ends (truth log). `cutrace gaps --format json`: the
stream's two gaps (before es_after, before es_last; their lengths from the GPU records)
are both cause external_wait (the GPU waited on a producer outside CUDA) and nothing
else, the device's too; the text names the stream among the largest waits on external
semaphores, with the advice to look at the producer, and not among the waits on
another stream; `dump --chrome`: each call's slice carries "semaphores" and "fence value".

usage: test_extsem.py SIM_DIR CUTRACE LIBTRACE EXTSEM
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cttest import check, finish, require_built, scratch_dir  # noqa: E402
from harness import chrome_events, read_truth, record_one_file  # noqa: E402
from rawdump import kernel_identifier, raw_records  # noqa: E402

sim_dir, cutrace, libtrace, program = sys.argv[1:5]
require_built(os.path.join(sim_dir, "libcuda.so.1"), libtrace, cutrace, program)
tmp = scratch_dir("cutrace-extsem-")
API_PTSZ, API_DRIVER = 0x1, 0x10
WAIT, SIGNAL = 11, 12
INVALID_RESOURCE_HANDLE = 400  # cudaErrorInvalidResourceHandle
EDGE_NS = 200000

# (entry point, result, MEMOP kind, count, value)
PLANTED = [
    ("cudaWaitExternalSemaphoresAsync", 0, WAIT, 1, 5),
    ("cudaSignalExternalSemaphoresAsync", 0, SIGNAL, 1, 9),
    ("cuWaitExternalSemaphoresAsync_ptsz", 0, WAIT, 1, 9),
    ("cuWaitExternalSemaphoresAsync", 0, WAIT, 2, 1),
    ("cuSignalExternalSemaphoresAsync", 0, SIGNAL, 1, 3),
    ("cudaWaitExternalSemaphoresAsync", INVALID_RESOURCE_HANDLE, WAIT, 1, 0),
]

data = os.path.join(tmp, "extsem")
truth_path = os.path.join(tmp, "truth")
path = record_one_file(cutrace, libtrace, sim_dir, data, [program], "extsem: ok",
                       {"SIMCUDA_TRUTH_FILE": truth_path, "SIMCUDA_EXTSEM_US": "300000",
                        "SIMCUDA_KERNEL_US": "es_before=1000,es_after=2000,es_last=1000,default=5"})
if path:
    recs, names = raw_records(cutrace, path)
    wanted = {p[0] for p in PLANTED}
    apis = sorted((r for r in recs if r["kind"] == "api" and names.get(r["name"]) in wanted),
                  key=lambda a: a["begin_ns"])
    memops = {r["corr"]: r for r in recs if r["kind"] == "memop"}
    gpus = {r["corr"]: r for r in recs if r["kind"] == "gpu"}
    kernels = {kernel_identifier(names.get(g["name"], "")): g for g in gpus.values() if g["type"] == 1}
    check(len(apis) == len(PLANTED), f"{len(apis)} semaphore calls, planted {len(PLANTED)}: "
          f"{[names.get(a['name']) for a in apis]}")
    check(set(kernels) == {"es_before", "es_after", "es_last"}, f"kernels {sorted(kernels)}")
    stream = kernels.get("es_before", {}).get("stream")
    for i, (api, (name, result, kind, count, value)) in enumerate(zip(apis, PLANTED)):
        tag = f"call {i + 1} ({name})"
        got = names.get(api["name"])
        check(got == name, f"{tag}: entry point {got}")
        check(api["depth"] == 0 and api["result"] == result,
              f"{tag}: depth {api['depth']}, result {api['result']}, planted {result}")
        driver = name.startswith("cu") and not name.startswith("cuda")
        check(bool(api["flags"] & API_DRIVER) == driver and
              bool(api["flags"] & API_PTSZ) == name.endswith("_ptsz"), f"{tag}: flags {api['flags']:#x}")
        check(api["stream"] == stream, f"{tag}: stream {api['stream']}, the kernels' {stream}")
        check(api["corr"] not in gpus, f"{tag}: a GPU record {gpus.get(api['corr'])}")
        m = memops.get(api["corr"])
        if check(m is not None, f"{tag}: no MEMOP record"):
            got = (m["field_kind"], m["count"], m["value"], m["bytes"], m["async"])
            check(got == (kind, count, value, 0, 1),
                  f"{tag}: MEMOP (kind, count, value, bytes, async) {got}, planted "
                  f"{(kind, count, value, 0, 1)}")
    truth = {kernel_identifier(t["name"]): t for t in read_truth(truth_path) if t["kind"] == "kernel"}
    if check({"es_before", "es_after"} <= set(truth), f"truth kernels {sorted(truth)}"):
        held = truth["es_after"]["start_ns"] - truth["es_before"]["end_ns"]
        check(held >= 250_000_000, f"simulator: es_after started {held} ns after es_before's end")
    if set(kernels) == {"es_before", "es_after", "es_last"}:
        gaps = [kernels["es_after"]["start_ns"] - kernels["es_before"]["end_ns"],
                kernels["es_last"]["start_ns"] - kernels["es_after"]["end_ns"]]
        check(all(g >= 200_000_000 for g in gaps), f"GPU records: gaps {gaps} ns, planted about 300 ms")
        p = subprocess.run([cutrace, "gaps", "--format", "json", path], capture_output=True,
                           text=True, timeout=60)
        streams = {s["stream"]: s for s in json.loads(p.stdout).get("streams", [])} \
            if p.returncode == 0 else {}
        s1 = streams.get(stream, {})
        want = {c: 0 for c in ("host_wait_ns", "launch_overhead_ns", "sync_ns", "alloc_ns",
                               "other_stream_ns", "tracer_ns", "other_ns")}
        want["external_wait_ns"] = sum(gaps)
        check(s1.get("gaps") == 2 and s1.get("idle") == want,
              f"gaps: stream {stream}: {s1.get('gaps')} gaps, idle {s1.get('idle')}, want two "
              f"external_wait gaps of {gaps} ns")
        doc = json.loads(p.stdout) if p.returncode == 0 else {}
        dev_gaps = [g for g in doc.get("gaps", []) if g.get("cause") == "external_wait"]
        check(len(dev_gaps) == 2 and sorted(g["dur_ns"] for g in dev_gaps) == sorted(gaps),
              f"gaps: the device's external_wait gaps {dev_gaps}, want {gaps} ns")
        text = subprocess.run([cutrace, "gaps", path], capture_output=True, text=True,
                              timeout=60).stdout
        ext = text.partition("Largest waits of a stream on external semaphores")[2]
        check(f"on device 0 stream {stream} at " in ext and "look at the producer" in text,
              f"gaps text: stream {stream} among the largest waits on external semaphores:\n{text}")
        check("Largest waits of a stream on another stream" not in text,
              f"gaps text: no wait on another stream:\n{text}")
        check("ext_wait" in text.partition("Per device")[2].splitlines()[1],
              f"gaps text: an ext_wait column:\n{text}")
    events = chrome_events(cutrace, path, os.path.join(tmp, "extsem.json"), "extsem") or []
    args = [e.get("args", {}) for e in events
            if e.get("ph") == "X" and e.get("name") in wanted]
    got = sorted((a.get("semaphores"), a.get("fence value")) for a in args)
    want = sorted((p[3], p[4]) for p in PLANTED)
    check(got == want, f"chrome: the calls' (semaphores, fence value) {got}, planted {want}")
sys.exit(finish())
