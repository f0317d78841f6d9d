#!/usr/bin/env python3
"""The deprecated multi-device cooperative launch (programs/coopmulti.cu) on two simulated
GPUs: cm_busy (2 ms) on device 1's stream S1, then, device 0 current,
cuLaunchCooperativeKernelMultiDevice of cm_part (300 us; grid 4, block 128, 256 bytes of
shared memory) on S0 and S1 with the default pre-launch sync, again with
CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_PRE_LAUNCH_SYNC, then with an empty list (fails,
CUDA_ERROR_INVALID_VALUE). Before 2026-12-07 these launches were not seen.

Asserted: three outermost API records flagged DRIVER with results 0, 0, 1; the first two
have a LAUNCH record of the first entry (cm_part, 4 x 1 x 1, 128 x 1 x 1, 256 bytes) and
S0's stream on device 0, the failed one none; the first (default flags: its kernel first
waits for the other stream's cm_busy, which a start event recorded before the call would
count as kernel time) has no GPU record; the second has a kernel GPU record on S0, 300 us
long (+-50 us), starting when the first cm_part ended (S0's earlier work, within 50 us;
or at its call's return when the host was later), itself after cm_busy's end; the other entries (device 1) are not recorded (one cm_part
GPU record in all).

usage: test_coopmulti.py SIM_DIR CUTRACE LIBTRACE COOPMULTI
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cttest import check, finish, require_built  # noqa: E402
from harness import record_one_file  # noqa: E402
from rawdump import kernel_identifier, raw_records  # noqa: E402

sim_dir, cutrace, libtrace, program = sys.argv[1:5]
require_built(os.path.join(sim_dir, "libcuda.so.1"), libtrace, cutrace, program)
tmp = tempfile.mkdtemp(prefix="cutrace-coopmulti-")
API_DRIVER, GPU_KERNEL, INVALID_VALUE = 0x10, 1, 1
SLACK_NS = 50_000
NAME = "cuLaunchCooperativeKernelMultiDevice"

env = {"SIMCUDA_DEVICES": "2", "SIMCUDA_KERNEL_US": "default=50,cm_busy=2000,cm_part=300"}
path = record_one_file(cutrace, libtrace, sim_dir, os.path.join(tmp, "coopmulti"), [program],
                       "coopmulti: ok", env)
if path:
    recs, names = raw_records(cutrace, path)
    calls = sorted((r for r in recs if r["kind"] == "api" and names.get(r["name"]) == NAME),
                   key=lambda a: a["begin_ns"])
    check([a["result"] for a in calls] == [0, 0, INVALID_VALUE],
          f"{NAME} results {[a['result'] for a in calls]}, want [0, 0, 1]")
    launches = {r["corr"]: r for r in recs if r["kind"] == "launch"}
    gpus = {r["corr"]: r for r in recs if r["kind"] == "gpu"}
    parts = [g for g in gpus.values() if g["type"] == GPU_KERNEL
             and kernel_identifier(names.get(g["name"], "")) == "cm_part"]
    busy = [g for g in gpus.values() if g["type"] == GPU_KERNEL
            and kernel_identifier(names.get(g["name"], "")) == "cm_busy"]
    check(len(parts) == 1 and len(busy) == 1,
          f"{len(parts)} cm_part GPU records (want 1: the second call's first entry), {len(busy)} cm_busy")
    for a in calls:
        check(a["depth"] == 0 and a["flags"] & API_DRIVER, f"{NAME}: depth {a['depth']} flags {a['flags']:#x}")
    if len(calls) == 3:
        for a in calls[:2]:
            l = launches.get(a["corr"])
            got = l and (names.get(l["kernel"]), l["grid_x"], l["grid_y"], l["grid_z"], l["block_x"],
                         l["block_y"], l["block_z"], l["shmem"])
            check(got == ("cm_part", 4, 1, 1, 128, 1, 1, 256) and a["device"] == 0 and a["stream"] != 0,
                  f"{NAME} corr {a['corr']}: LAUNCH {got}, device {a['device']} stream {a['stream']}")
        check(calls[2]["corr"] not in launches, "the failed call has a LAUNCH record")
        check(calls[0]["corr"] not in gpus, f"default flags: a GPU record {gpus.get(calls[0]['corr'])}")
        g = gpus.get(calls[1]["corr"])
        if check(g is not None and g["stream"] == calls[1]["stream"] and g["device"] == 0,
                 f"NO_PRE_LAUNCH_SYNC: GPU record {g}, call stream {calls[1]['stream']}") and busy:
            dur = g["end_ns"] - g["start_ns"]
            # the first cm_part waited for cm_busy (or for its own call, when the host was
            # late on a loaded machine); the second runs after it (or after its own call)
            first_end = max(busy[0]["end_ns"], calls[0]["begin_ns"]) + 300_000
            latest = max(max(busy[0]["end_ns"], calls[0]["end_ns"]) + 300_000, calls[1]["end_ns"])
            check(abs(dur - 300_000) <= SLACK_NS
                  and first_end - SLACK_NS <= g["start_ns"] <= latest + SLACK_NS,
                  f"NO_PRE_LAUNCH_SYNC cm_part: {dur} ns from {g['start_ns']}, want 300 us from "
                  f"{first_end}..{latest} (after cm_busy's end and the first cm_part)")
sys.exit(finish())
