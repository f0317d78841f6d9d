#!/usr/bin/env python3
"""CUTRACE_NVTX with a value it does not take: libtrace.so's constructor reads it
before the tracer's configuration is loaded, and says so in one line on stderr
unless CUTRACE_QUIET is set to anything but 0/no (docs/preload.md, Environment).

usage: test_nvtx_knob.py LIBTRACE_SO PROGRAM (any program: it only has to start)
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests", "lib"))
from cttest import check, finish, scratch  # noqa: E402

LINE = "cutrace: CUTRACE_NVTX='off' is not 0 or 1; using 1"


def main():
    lib, program = sys.argv[1], sys.argv[2]
    with scratch("cutrace-nvtx-knob-") as tmp:
        for quiet, want in ((None, [LINE]), ("0", [LINE]), ("no", [LINE]), ("1", []), ("yes", [])):
            env = {k: v for k, v in os.environ.items()
                   if not k.startswith("CUTRACE_") and k != "NVTX_INJECTION64_PATH"}
            env.update(LD_PRELOAD=lib, CUTRACE_NVTX="off", CUTRACE_OUTPUT=tmp)
            if quiet is not None:
                env["CUTRACE_QUIET"] = quiet
            p = subprocess.run([program], env=env, capture_output=True, text=True, timeout=60)
            said = [l for l in p.stderr.splitlines() if l.startswith("cutrace:")]
            if check(said == want, f"CUTRACE_QUIET={quiet}: stderr said {said}, expected {want}"):
                print(f"ok: CUTRACE_QUIET={quiet}: {len(said)} line(s)")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
