#!/usr/bin/env python3
"""Runs an nvcc-built program against the simulated CUDA stack.

usage: run_sim.py SIM_DIR PROGRAM [ARGS...]

Sets LD_LIBRARY_PATH=SIM_DIR and LD_BIND_NOW=1, passes the program's exit code
through, and fails when the dynamic loader warns about missing version
information (the simulated libraries must carry the real version nodes).
Exits 77 (skip) when SIM_DIR has no simulated driver libcuda.so.1.
"""
import os
import subprocess
import sys


def main():
    sim_dir, program, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    if not os.path.exists(os.path.join(sim_dir, "libcuda.so.1")):
        print("skip: no simulated libcuda.so.1 in", sim_dir)
        return 77
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = sim_dir
    env["LD_BIND_NOW"] = "1"
    proc = subprocess.run([program] + args, env=env, capture_output=True, text=True, timeout=30)
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    if "no version information" in proc.stderr:
        print("FAIL: loader warned about missing version information")
        return 1
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
