"""Shared helpers of the end-to-end tests: run a bundled workload on the simulated GPU
under `cutrace record`, and read what the cutrace commands say about it.

Every test gets the same arguments: SIM_DIR CUTRACE LIBTRACE WORKLOAD_DIR [extra...].
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import cttest  # noqa: E402
from cttest import SKIP  # noqa: E402,F401  (SKIP: also harness.SKIP)


class Harness:
    """Paths of the build and a scratch directory for one test."""

    def __init__(self, argv):
        self.sim_dir, self.cutrace, self.libtrace, self.wdir = argv[1:5]
        self.extra = argv[5:]
        self.tmp = cttest.scratch_dir("cutrace-e2e-")
        cttest.require_built(os.path.join(self.sim_dir, "libcuda.so.1"), self.libtrace,
                             self.cutrace)

    def check(self, cond, what):
        """cttest.check: records and prints a failed expectation; returns cond."""
        return cttest.check(cond, what)

    def finish(self):
        """Prints the number of failures; exits 0 when every check passed, 1 otherwise.
        The scratch directory follows cttest.scratch_dir's rule: removed when every
        check passed, kept (and named) when one failed or CUTRACE_KEEP_TMP=1."""
        sys.exit(cttest.finish())

    def env(self, kernel_us="", truth=None, extra=None):
        """The environment of a simulated run (the workload finds the simulated
        libraries first; durations and the truth log as asked)."""
        e = dict(os.environ)
        e["LD_LIBRARY_PATH"] = self.sim_dir
        e["CUTRACE_PRELOAD"] = self.libtrace
        e["SIMCUDA_CLOCK_OFFSET_US"] = "1500"
        e["SIMCUDA_CLOCK_DRIFT_PPM"] = "50"
        if kernel_us:
            e["SIMCUDA_KERNEL_US"] = kernel_us
        if truth:
            e["SIMCUDA_TRUTH_FILE"] = truth
        e.pop("LD_PRELOAD", None)
        e.pop("CUTRACE_OUTPUT", None)
        if extra:
            e.update(extra)
        return e

    def workload(self, name):
        return os.path.join(self.wdir, name)

    def plain(self, name, args=(), kernel_us="", extra=None):
        """Runs a workload untraced: (returncode, stdout, stderr)."""
        p = subprocess.run([self.workload(name), *args], env=self.env(kernel_us, extra=extra),
                           capture_output=True, text=True, timeout=120)
        return p.returncode, p.stdout, p.stderr

    def record(self, name, args=(), kernel_us="", tag=None, extra=None):
        """Runs a workload under `cutrace record -q`: returns (returncode, stdout,
        stderr, data_dir, truth_lines)."""
        tag = tag or name
        data = os.path.join(self.tmp, tag + ".data")
        truth = os.path.join(self.tmp, tag + ".truth")
        p = subprocess.run([self.cutrace, "record", "-q", "-o", data, "--", self.workload(name), *args],
                           env=self.env(kernel_us, truth, extra), capture_output=True, text=True,
                           timeout=180)
        return p.returncode, p.stdout, p.stderr, data, read_truth(truth)

    def cutrace_json(self, *args):
        """Runs a cutrace command with --format json; returns (returncode, parsed or None, stderr)."""
        p = subprocess.run([self.cutrace, *args], capture_output=True, text=True, timeout=180)
        try:
            doc = json.loads(p.stdout)
        except ValueError:
            doc = None
        return p.returncode, doc, p.stderr

    def run(self, *args):
        p = subprocess.run([self.cutrace, *args], capture_output=True, text=True, timeout=180)
        return p.returncode, p.stdout, p.stderr


def record_one_file(cutrace, libtrace, sim_dir, data, argv, ok_marker, env_extra):
    """Runs argv on the simulated GPU under `cutrace record -q -o data` (the tracer's
    recording knobs from the caller's environment left out, env_extra added); checks that
    it succeeded, printed ok_marker and wrote one trace file. Returns that file's path,
    or None when a check failed."""
    return record_one_file_out(cutrace, libtrace, sim_dir, data, argv, ok_marker, env_extra)[0]


def record_one_file_out(cutrace, libtrace, sim_dir, data, argv, ok_marker, env_extra):
    """record_one_file, also returning what the program printed: (path or None, stdout)."""
    env = dict(os.environ, LD_LIBRARY_PATH=sim_dir, CUTRACE_PRELOAD=libtrace, **env_extra)
    for k in ("LD_PRELOAD", "CUTRACE_OUTPUT", "CUTRACE_CAPTURE", "CUTRACE_DELAY",
              "CUTRACE_DURATION"):
        env.pop(k, None)
    label = os.path.basename(data)
    p = subprocess.run([cutrace, "record", "-q", "-o", data, "--", *argv], env=env,
                       capture_output=True, text=True, timeout=120)
    ok = cttest.check(p.returncode == 0 and ok_marker in p.stdout,
                      f"{label}: record status {p.returncode}, {p.stdout!r}, {p.stderr[-400:]!r}")
    files = sorted(os.listdir(data)) if os.path.isdir(data) else []
    ok = ok and cttest.check(len(files) == 1, f"{label}: one trace file, found {files}")
    return (os.path.join(data, files[0]) if ok else None), p.stdout


def partly_overlapping(slices, eps=0.002):
    """The pairs of (begin, end, ...) slices of one track that partly overlap (neither
    nests in the other: what breaks a viewer's nesting); eps: the rounding allowed (us in
    a Chrome JSON, whose ts and dur are rounded to the ns)."""
    partial, stack = [], []
    for s in sorted(slices, key=lambda x: (x[0], -x[1])):
        while stack and stack[-1][1] <= s[0] + eps:
            stack.pop()
        if stack and s[1] > stack[-1][1] + eps:
            partial.append((stack[-1], s))
        stack.append(s)
    return partial


def perfetto_slices(cutrace, path, out, names):
    """`cutrace dump --perfetto -o out path` read back (tools/perfetto_read.py): (sorted
    (ts, end, name) of its slices named in names, the reader's problems), or None after
    a failed check (the command's status and stderr)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
    import perfetto_read
    p = subprocess.run([cutrace, "dump", "--perfetto", "-o", out, path], capture_output=True,
                       text=True, timeout=60)
    if not cttest.check(p.returncode == 0, f"dump --perfetto: {p.stderr}"):
        return None
    tr = perfetto_read.read(out)
    return sorted((s["ts"], s["ts"] + s["dur"], s["name"]) for s in tr.slices
                  if s.get("name") in names), tr.problems


def chrome_events(cutrace, path, out, label):
    """`cutrace dump --chrome -o out path`: the document's traceEvents, or None after a
    failed check (the command's status and stderr)."""
    p = subprocess.run([cutrace, "dump", "--chrome", "-o", out, path], capture_output=True,
                       text=True, timeout=60)
    if not cttest.check(p.returncode == 0, f"{label}: dump --chrome: {p.stderr}"):
        return None
    with open(out) as fh:
        doc = json.load(fh)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def gaps_spoiled_by_load(recs, names, gaps, planted_calls):
    """The planted gaps [(a, b)] (host ns) that a loaded machine may rightly give another
    cause than the planted calls': those in which the program spent less than half of
    the gap inside the outermost calls named in planted_calls (from raw_records: recs,
    names). `cutrace gaps` names what the launching thread spent most of a gap on; a
    thread preempted inside its launch call or between its calls (seen in CI at load
    4-37: 2-50 ms) can make that the launch or host_wait. In a gap the planted calls
    fill more than half of, nothing else can outweigh them: its cause is theirs."""
    spans = [(r["begin_ns"], r["end_ns"]) for r in recs
             if r["kind"] == "api" and r["depth"] == 0 and names.get(r["name"]) in planted_calls]
    spoiled = []
    for a, b in gaps:
        inside = sum(max(0, min(end, b) - max(begin, a)) for begin, end in spans)
        if 2 * inside < b - a:
            spoiled.append((a, b))
    return spoiled


def read_truth(path):
    """The simulator's truth log: one dict per executed GPU operation
    (kind, name, stream, device, enqueue_ns, start_ns, end_ns)."""
    out = []
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) < 7:
                continue
            try:
                enq, start, end = int(parts[-3]), int(parts[-2]), int(parts[-1])
            except ValueError:
                continue
            out.append({"kind": parts[0], "name": " ".join(parts[1:-5]), "stream": parts[-5],
                        "device": parts[-4], "enqueue_ns": enq, "start_ns": start, "end_ns": end})
    return out


def union_ns(spans):
    """The time covered by the (begin, end) spans, overlaps once."""
    total, reach = 0, 0
    for b, e in sorted(spans):
        if e > reach:
            total += e - max(b, reach)
            reach = e
    return total


def gap_time_within(stream_gaps, stream, cause, spans):
    """The time (ns) that the stream's gaps of one cause (`gaps --format json`'s
    stream_gaps; ask for them all with --top) share with the (begin, end) spans, each
    instant once. A test that plants idle time spent polling or syncing asks this of
    host_wait: on a loaded machine the host can stall for milliseconds between a sync's
    return and its next launch, a host_wait gap the trace rightly shows, but none of the
    time the thread was in the planted waits may be host_wait."""
    cut = []
    for g in stream_gaps:
        if g.get("stream") != stream or g.get("cause") != cause:
            continue
        for b, e in spans:
            lo, hi = max(b, g["start_ns"]), min(e, g["end_ns"])
            if hi > lo:
                cut.append((lo, hi))
    return union_ns(cut)
