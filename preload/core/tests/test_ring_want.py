#!/usr/bin/env python3
"""The ready rings of a process that shows it will use CUDA before it records anything.

usage: test_ring_want.py RING_WANT CORE_CHECK LIBTRACE SIM_DIR
ring_want looks up the simulated driver's entry points (dlsym of cuGetProcAddress_v2:
preload/driver/usage.c tells the core CUDA is coming), waits, then makes its first CUDA
calls on a new thread. With the default pool that thread takes a ready ring: no TRACER
"ring" span on it. With CUTRACE_RING_POOL=0 it maps its own (the span the check looks
for is there: the check can fail).
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "tests", "lib"))
from cttest import check, finish, scratch  # noqa: E402

RING_WANT, CHECKER, LIBTRACE, SIM_DIR = sys.argv[1:5]


def run(tmp, pool):
    """Runs ring_want traced; returns (thread tid, {tid: 1} of the threads with a ring span)."""
    out = os.path.join(tmp, "pool" + pool)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUTRACE_", "SIMCUDA_"))}
    env.update(LD_PRELOAD=LIBTRACE, LD_LIBRARY_PATH=SIM_DIR, CUTRACE_OUTPUT=out,
               CUTRACE_RING_POOL=pool)
    # 300 ms: the writer, woken by the lookup, has made its rings long before
    p = subprocess.run([RING_WANT, "300"], env=env, capture_output=True, text=True, timeout=60)
    check(p.returncode == 0 and "ok\n" in p.stdout, f"pool {pool}: ring_want failed: {p.stdout}{p.stderr}")
    tid = next((int(line.split()[1]) for line in p.stdout.splitlines()
                if line.startswith("thread_tid ")), -1)
    files = sorted(f for f in os.listdir(out) if f.endswith(".ctr")) if os.path.isdir(out) else []
    if not check(len(files) == 1, f"pool {pool}: {len(files)} trace files"):
        return tid, {}
    q = subprocess.run([CHECKER, os.path.join(out, files[0])], capture_output=True, text=True,
                       timeout=60)
    spans = {int(line.split()[0][len("ring_tid_"):]) for line in q.stdout.splitlines()
             if line.startswith("ring_tid_")}
    check("threads" in q.stdout, f"pool {pool}: core_check read nothing: {q.stderr}")
    return tid, spans


def main():
    with scratch("cutrace-ringwant-") as tmp:
        tid, spans = run(tmp, "2")
        check(tid > 0 and tid not in spans,
              f"the first CUDA thread mapped its own ring although the lookup came 300 ms "
              f"before (ring spans on {sorted(spans)}, thread {tid})")
        tid, spans = run(tmp, "0")
        check(tid > 0 and tid in spans,
              f"without a pool the first CUDA thread shows no ring span (spans on "
              f"{sorted(spans)}, thread {tid})")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
