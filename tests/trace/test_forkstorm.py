#!/usr/bin/env python3
"""A storm of fork children under libtrace.so (programs/forkstorm.cu, simulated GPU).

usage: test_forkstorm.py SIM_DIR CUTRACE LIBTRACE FORKSTORM

The rule (docs/preload.md, "Process lifetime"): a fork child's file is opened with its
first record, so a child that records nothing leaves no file, and a child that
records leaves one, complete, however many exit at once. forkstorm forks IDLE
children that make no CUDA call and BUSY children that each launch one kernel; all
of them exit in the same instant. Wanted: exactly 1 + BUSY files (the parent's and
the busy children's), each busy child's with its one launch, PROCESS naming the
parent, a clean END without drops; `cutrace info` reads every file clean.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from cttest import check, finish, scratch_dir  # noqa: E402
from rawdump import raw_records  # noqa: E402

IDLE, BUSY = 200, 200


def main():
    sim, cutrace, libtrace, program = sys.argv[1:5]
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CUTRACE_", "SIMCUDA_")) and k != "LD_PRELOAD"}
    env["LD_LIBRARY_PATH"] = sim
    args = [program, str(IDLE), str(BUSY)]
    plain = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60)
    want = f"forkstorm: {IDLE} idle, {BUSY} busy children; 0 failed\n"
    check(plain.returncode == 0 and plain.stdout == want, f"untraced: {plain.returncode} {plain.stdout!r}")
    out = scratch_dir("cutrace-forkstorm-")
    env.update({"LD_PRELOAD": libtrace, "CUTRACE_OUTPUT": out})
    p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60)
    check((p.returncode, p.stdout, p.stderr) == (0, want, ""),
          f"traced: same output and status ({p.returncode}, {p.stdout!r}, {p.stderr!r})")
    files = sorted(f for f in os.listdir(out) if f.endswith(".ctr"))
    listed = open(os.path.join(out, ".nocuda")).read() if os.path.exists(os.path.join(out, ".nocuda")) else ""
    # each idle child exits without CUDA: one whole line each in .nocuda, none lost or torn
    lines = listed.split("\n")[:-1]
    check(len(listed) == 64 * IDLE and len(lines) == IDLE and all(len(ln) == 63 for ln in lines)
          and len({ln.split()[0] for ln in lines}) == IDLE,
          f".nocuda: {len(lines)} lines ({len(listed)} bytes), wanted {IDLE} whole ones")
    check(len(files) == 1 + BUSY, f"{len(files)} trace files, wanted {1 + BUSY}: the parent's and "
          f"one per child that recorded, none for the {IDLE} idle children")
    pids, parent = {}, None
    for f in files:
        recs, strings = raw_records(cutrace, os.path.join(out, f))
        proc = [r for r in recs if r["kind"] == "process"]
        launches = [r for r in recs if r["kind"] == "api" and "LaunchKernel" in strings.get(r["name"], "")]
        ends = [r for r in recs if r["kind"] == "end"]
        if not check(len(proc) == 1, f"{f}: one PROCESS record ({len(proc)})"):
            continue
        pids[proc[0]["pid"]] = proc[0]["ppid"]
        check(len(launches) == 1, f"{f}: one launch ({len(launches)})")
        # END.records counts every record before it, the STRING records too
        check(len(ends) == 1 and ends[0]["drops"] == 0 and recs[-1]["kind"] == "end" and
              ends[0]["records"] == len(recs) - 1 + len(strings),
              f"{f}: a clean END, last, counting every record, no drops ({ends})")
        if not re.search(rf"\.{proc[0]['pid']}\.ctr$", f):
            check(False, f"{f}: not named after its pid {proc[0]['pid']}")
    parents = [pid for pid, ppid in pids.items() if ppid not in pids]
    if check(len(parents) == 1, f"one parent process among the files ({len(parents)})"):
        parent = parents[0]
        children = [pid for pid, ppid in pids.items() if ppid == parent]
        check(len(children) == BUSY, f"{len(children)} child files name the parent, wanted {BUSY}")
    info = subprocess.run([cutrace, "info", out], capture_output=True, text=True, timeout=120)
    clean = info.stdout.count("end            clean")
    check(info.returncode == 0 and clean == 1 + BUSY and info.stderr == "",
          f"cutrace info: {clean} clean ends of {1 + BUSY} (rc {info.returncode}, {info.stderr[:300]!r})")
    sys.exit(finish())


if __name__ == "__main__":
    main()
