"""Helpers shared by the tools' Python tests (stdlib only): a failure counter with
check(), running a command, and the exit that meson reads."""
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


def finish():
    """Prints the verdict and exits 0 (pass) or 1 (failures)."""
    print("ok" if not failures else f"{failures} failures")
    sys.exit(1 if failures else 0)
