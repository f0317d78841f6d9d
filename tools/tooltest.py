"""Helpers shared by the tools' Python tests (stdlib only): check(), the failures and
the scratch directories (scratch, scratch_dir) of tests/lib/cttest.py, running a
command, Chrome slice nesting, and the exit that meson reads."""
import collections
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib"))
import cttest  # noqa: E402
from cttest import check, failures, scratch, scratch_dir, skip  # noqa: E402,F401  (the tests read these here)


def run(cutrace, *args, env=None):
    """Runs cutrace with args; returns (status, stdout, stderr)."""
    p = subprocess.run([cutrace, *args], capture_output=True, text=True, env=env)
    return p.returncode, p.stdout, p.stderr


def check_nesting(doc, label):
    """Checks that the X slices of every (pid, tid) track of a Chrome trace nest:
    none starts inside another and ends after it."""
    tracks = collections.defaultdict(list)
    for e in doc["traceEvents"]:
        if e["ph"] == "X":
            tracks[(e["pid"], e["tid"])].append((round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)))
    bad = 0
    for key, sl in tracks.items():
        sl.sort(key=lambda x: (x[0], -x[1]))
        stack = []
        for b, e in sl:
            while stack and stack[-1] <= b:
                stack.pop()
            if stack and e > stack[-1]:
                bad += 1
                if bad < 3:
                    print("  partial overlap on", key, (b, e), "inside", stack[-1])
            stack.append(e)
    check(bad == 0, f"{label}: slices nest on every track ({bad} partial overlaps)")


def finish():
    """Prints the number of failures and exits 0 (pass) or 1 (failures)."""
    sys.exit(cttest.finish())
