"""Runs programs/forkexec under libtrace.so and reads what it measured, for the tests
that check a traced process start never waits for the tracer's own I/O
(test_collect_connect.py: a collector that does not answer; test_file_open.py: a slow
filesystem). forkexec measures, on its own thread, the parent's start-up (main entered
vs when the test started it), a fork child's first CUDA call after fork, and an exec'd
image's start-up (main entered vs the execv)."""
import re
import subprocess
import time

LIMIT_MS = 1000.0  # each measure must stay below this: far below the delays planted


class ForkExec:
    """forkexec in the harness h's build."""

    def __init__(self, h):
        self.h = h
        self.prog = h.workload("forkexec")

    def run(self, launches, output, extra=None, wrapper=(), preload=""):
        """Runs forkexec (through the wrapper command, e.g. env, traced too) with
        preload + libtrace.so preloaded; returns (returncode, stdout, stderr, seconds the
        whole run took, {measure: ms})."""
        env = self.h.env(extra=extra)
        env.update(LD_PRELOAD=preload + self.h.libtrace, CUTRACE_OUTPUT=output)
        started = time.time_ns()
        p = subprocess.run([*wrapper, self.prog, str(launches)], env=env, capture_output=True,
                           text=True, timeout=120)
        took = (time.time_ns() - started) / 1e9
        ms = {}
        m = re.search(r"parent pid \d+: main entered at (\d+)", p.stdout)
        if m:
            ms["parent start"] = (int(m.group(1)) - started) / 1e6
        m = re.search(r"child pid \d+: first CUDA call returned ([\d.]+) ms after fork", p.stdout)
        if m:
            ms["fork child's first call"] = float(m.group(1))
        m = re.search(r"exec'd pid \d+: main entered ([\d.]+) ms after exec", p.stdout)
        if m:
            ms["exec'd start"] = float(m.group(1))
        return p.returncode, p.stdout, p.stderr, took, ms

    def check_not_delayed(self, tag, rc, out, ms):
        """The three processes ran to the end, each measure below LIMIT_MS."""
        check = self.h.check
        check(rc == 0 and out.count("copy check: ok") == 3, f"{tag}: rc {rc}, output {out!r}")
        check(len(ms) == 3, f"{tag}: three measurements in {out!r}")
        for what, v in ms.items():
            check(v < LIMIT_MS, f"{tag}: {what} took {v:.1f} ms (limit {LIMIT_MS:.0f} ms)")

    def kernels(self, path):
        """{kernel name: calls} of the traces at path (cutrace report)."""
        rc, doc, err = self.h.cutrace_json("report", "--format", "json", path)
        self.h.check(rc == 0 and doc is not None, f"report {path}: rc {rc}, {err.strip()}")
        return {k["name"]: k["calls"] for k in (doc or {}).get("kernels", [])}

    def info_of(self, path):
        """(whether the trace ends clean, records dropped) from cutrace info."""
        rc, out, _ = self.h.run("info", path)
        clean = rc == 0 and re.search(r"^\s*end\s+clean\s*$", out, re.M) is not None
        m = re.search(r"^\s*dropped\s+(\d+)", out, re.M)
        return clean, int(m.group(1)) if m else 0
