#!/usr/bin/env python3
"""The deprecated multi-device cooperative launch (programs/coopmulti.cu) on two simulated
GPUs: cm_busy (2 ms) on device 1's stream S1, then, device 0 current,
cuLaunchCooperativeKernelMultiDevice of cm_part (300 us; grid 4, block 128, 256 bytes of
shared memory) on S0 (device 0) and S1 (device 1) with the default pre-launch sync, again
with CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_PRE_LAUNCH_SYNC, then with an empty list
(fails, CUDA_ERROR_INVALID_VALUE). Before 2026-12-07 these launches were not seen; until
the 2026-12-07 session 14 only their first entry was recorded.

Asserted: three outermost API records flagged DRIVER with results 0, 0, 1, none with a
LAUNCH or GPU record of its own; inside each successful one, one call per entry (depth 1,
the same name, parent the outer call's corr, DRIVER): its LAUNCH record (cm_part, 4 x 1 x
1, 128 x 1 x 1, 256 bytes), device 0 on S0's stream and device 1 on S1's (the STREAM
records say devices 0 and 1); the first call's entries (default flags: each kernel first
waits for the other stream's cm_busy, which a start event recorded before the call would
count as kernel time) are flagged UNTIMED with no GPU record, the outer call not
INNER_TIMED; the second call's entries are TIMED, each with a kernel GPU record on its own
device and stream, ending when the simulator's cm_part on that device ended (its truth
log, within 50 us) and starting when it started, or, when that was before the call
returned, between then and the return (docs/preload.md "GPU timing": such a start is
dated by the call; a host descheduled inside the call after it submitted the kernels, on
a loaded machine, shortened the record by up to that delay: the old check, 300 us +-50,
failed so once), the outer call flagged INNER_TIMED; the failed call has no entries. Two
cm_part GPU records in all.

usage: test_coopmulti.py SIM_DIR CUTRACE LIBTRACE COOPMULTI
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cttest import check, finish, require_built, scratch_dir  # noqa: E402
from harness import read_truth, record_one_file  # noqa: E402
from rawdump import kernel_identifier, raw_records  # noqa: E402

sim_dir, cutrace, libtrace, program = sys.argv[1:5]
require_built(os.path.join(sim_dir, "libcuda.so.1"), libtrace, cutrace, program)
tmp = scratch_dir("cutrace-coopmulti-")
API_TIMED, API_UNTIMED, API_DRIVER, API_INNER_TIMED = 0x4, 0x8, 0x10, 0x20
GPU_KERNEL, INVALID_VALUE = 1, 1
SLACK_NS = 50_000
NAME = "cuLaunchCooperativeKernelMultiDevice"
SHAPE = ("cm_part", 4, 1, 1, 128, 1, 1, 256)

truth_path = os.path.join(tmp, "truth")
env = {"SIMCUDA_DEVICES": "2", "SIMCUDA_KERNEL_US": "default=50,cm_busy=2000,cm_part=300",
       "SIMCUDA_TRUTH_FILE": truth_path}
path = record_one_file(cutrace, libtrace, sim_dir, os.path.join(tmp, "coopmulti"), [program],
                       "coopmulti: ok", env)
truth_parts = [t for t in read_truth(truth_path)
               if t["kind"] == "kernel" and kernel_identifier(t["name"]) == "cm_part"]
check(len(truth_parts) == 4, f"the simulator ran {len(truth_parts)} cm_part kernels, want 4 "
      f"(one per entry of each successful call)")
if path:
    recs, names = raw_records(cutrace, path)
    mine = [r for r in recs if r["kind"] == "api" and names.get(r["name"]) == NAME]
    calls = sorted((a for a in mine if a["depth"] == 0), key=lambda a: a["begin_ns"])
    check([a["result"] for a in calls] == [0, 0, INVALID_VALUE],
          f"{NAME} results {[a['result'] for a in calls]}, want [0, 0, 1]")
    launches = {r["corr"]: r for r in recs if r["kind"] == "launch"}
    gpus = {r["corr"]: r for r in recs if r["kind"] == "gpu"}
    streams = {r["stream"]: r for r in recs if r["kind"] == "stream"}
    parts = [g for g in gpus.values() if g["type"] == GPU_KERNEL
             and kernel_identifier(names.get(g["name"], "")) == "cm_part"]
    busy = [g for g in gpus.values() if g["type"] == GPU_KERNEL
            and kernel_identifier(names.get(g["name"], "")) == "cm_busy"]
    check(len(parts) == 2 and len(busy) == 1,
          f"{len(parts)} cm_part GPU records (want 2: the second call's entries), {len(busy)} cm_busy")
    for a in calls:
        check(a["flags"] & API_DRIVER and a["corr"] not in launches and a["corr"] not in gpus,
              f"{NAME} corr {a['corr']}: flags {a['flags']:#x}, its own LAUNCH "
              f"{launches.get(a['corr'])} or GPU {gpus.get(a['corr'])}")
    if len(calls) == 3:
        entries = {}
        for a in mine:
            if a["depth"] == 1:
                entries.setdefault(a["parent"], []).append(a)
        check(calls[2]["corr"] not in entries, f"the failed call has entries {entries.get(calls[2]['corr'])}")
        first_end = {}
        for n, call in enumerate(calls[:2]):
            es = sorted(entries.get(call["corr"], []), key=lambda e: e["device"])
            got = [(e["device"], streams.get(e["stream"], {}).get("device")) for e in es]
            check(got == [(0, 0), (1, 1)] and es[0]["stream"] != es[1]["stream"],
                  f"call {n + 1}: entries (device, its stream's device) {got}, want (0, 0), (1, 1) "
                  f"on two streams")
            for e in es:
                l = launches.get(e["corr"])
                shape = l and (kernel_identifier(names.get(l["kernel"], "")), l["grid_x"], l["grid_y"],
                               l["grid_z"], l["block_x"], l["block_y"], l["block_z"], l["shmem"])
                check(shape == SHAPE and e["flags"] & API_DRIVER and e["result"] == 0,
                      f"call {n + 1} entry on device {e['device']}: LAUNCH {shape}, flags {e['flags']:#x}")
                g = gpus.get(e["corr"])
                if n == 0:
                    check(e["flags"] & API_UNTIMED and g is None,
                          f"default flags: entry on device {e['device']} flags {e['flags']:#x}, GPU {g}")
                    continue
                if not check(e["flags"] & API_TIMED and g is not None and g["device"] == e["device"]
                             and g["stream"] == e["stream"],
                             f"NO_PRE_LAUNCH_SYNC: entry on device {e['device']} stream {e['stream']} "
                             f"flags {e['flags']:#x}, GPU {g}") or not busy:
                    continue
                # the simulator's run of this kernel: on its device, the one ending nearest
                mine_t = sorted((t for t in truth_parts if int(t["device"]) == e["device"]),
                                key=lambda t: abs(t["end_ns"] - g["end_ns"]))
                if not check(mine_t, f"no cm_part on device {e['device']} in the truth log"):
                    continue
                t = mine_t[0]
                # a start before the call returned is dated between it and the return
                latest_start = max(t["start_ns"], call["end_ns"])
                check(abs(g["end_ns"] - t["end_ns"]) <= SLACK_NS
                      and t["start_ns"] - SLACK_NS <= g["start_ns"] <= latest_start + SLACK_NS
                      and t["end_ns"] - t["start_ns"] == 300_000,
                      f"NO_PRE_LAUNCH_SYNC cm_part on device {e['device']}: [{g['start_ns']}, "
                      f"{g['end_ns']}], the simulator's [{t['start_ns']}, {t['end_ns']}], its call "
                      f"returned at {call['end_ns']}: want the end within {SLACK_NS} ns, the "
                      f"start from the simulator's to {latest_start}")
        check(not calls[0]["flags"] & API_INNER_TIMED and calls[1]["flags"] & API_INNER_TIMED,
              f"outer flags {calls[0]['flags']:#x}, {calls[1]['flags']:#x}: INNER_TIMED on the second only")
sys.exit(finish())
