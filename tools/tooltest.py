"""Helpers shared by the tools' Python tests (stdlib only): a failure counter with
check(), running a command, and the exit that meson reads."""
import collections
import subprocess
import sys

failures = 0


def check(cond, what):
    """Counts and prints a failed expectation; the test goes on."""
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)


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
    """Prints the verdict and exits 0 (pass) or 1 (failures)."""
    print("ok" if not failures else f"{failures} failures")
    sys.exit(1 if failures else 0)
