#!/usr/bin/env python3
"""Instructions per intercepted call, by function, with callgrind on the simulator.

Runs a loop workload (default: bench/workloads/launch_loop) under
`valgrind --tool=callgrind --separate-threads=yes` at two sizes, N1 and N2 calls,
and divides every difference by N2 - N1: start-up and exit cancel out, what is
left is the steady cost of one call. It does so untraced and traced (with
LD_PRELOAD=libtrace.so, CUTRACE_* as given) and prints markdown tables:

- the calling thread: instructions per call untraced and traced, and the traced
  total split into the tracer's own work (instructions executed in libtrace.so
  plus the C library functions it calls, e.g. clock_gettime), the simulated CUDA
  calls the tracer makes itself (cuEventRecord, cuCtxGetCurrent, ...: the
  simulator's cost, not the real driver's) and the program's own CUDA path;
- the tracer's functions by "own inclusive" cost per call: the instructions of a
  function and everything it calls, minus the CUDA calls below it (callees'
  costs are shared out per call, exact for a loop that repeats one call);
- the tracer's threads (writer, poller) per call.

usage: bench/callgrind_launch.py [--build DIR] [--n1 N] [--n2 N] [--top K]
           [--env NAME=VALUE ...] [--only traced] [--json FILE] [--libtrace SO]
           [-- WORKLOAD ARGS...]
The workload gets `N` substituted for the literal argument {n} (default
`launch_loop {n}`). Needs valgrind; prints one line and exits 2 without it.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict

CUDA_OBJECTS = re.compile(r"/(libcuda\.so|libcudart\.so|libcublas\.so|libcublasLt\.so)[^/]*$")
TRACER_OBJECT = re.compile(r"/libtrace\.so[^/]*$")


def parse_callgrind(path):
    """Returns (self_cost, calls, ncalls, obj_of, total): self_cost[f] the
    instructions executed in f itself; calls[(f, g)] the inclusive cost of f's
    calls to g; ncalls[(f, g)] how many; f and g are (object, function) pairs."""
    names = defaultdict(dict)  # kind -> id -> name
    self_cost = defaultdict(int)
    calls = defaultdict(int)
    ncalls = defaultdict(int)
    ob = fn = None
    cob = cfn = None
    pending_call = None
    total = 0

    def resolve(kind, value):
        m = re.match(r"\((\d+)\)(?: (.*))?$", value)
        if not m:
            return value
        if m.group(2) is not None:
            names[kind][m.group(1)] = m.group(2)
        return names[kind].get(m.group(1), value)

    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line[0] == "#":
                continue
            c = line[0]
            if c.isdigit() or c in "+-*":
                parts = line.split()
                cost = int(parts[1]) if len(parts) > 1 else 0
                if pending_call is not None:
                    calls[pending_call] += cost
                    pending_call = None
                else:
                    self_cost[(ob, fn)] += cost
                    total += cost
                continue
            key, _, value = line.partition("=")
            if key == "ob":
                ob = resolve("ob", value)
            elif key == "fn":
                fn = resolve("fn", value)
                cob = None
            elif key == "cob":
                cob = resolve("ob", value)
            elif key == "cfn":
                cfn = resolve("fn", value)
            elif key in ("fl", "fi", "fe"):
                resolve("fl", value)
            elif key in ("cfi", "cfl"):
                resolve("fl", value)
            elif key == "calls":
                callee = (cob if cob is not None else ob, cfn)
                pending_call = ((ob, fn), callee)
                ncalls[pending_call] += int(value.split()[0])
                cob = None
    return self_cost, calls, ncalls, total


def is_cuda(fn):
    return bool(fn[0] and CUDA_OBJECTS.search(fn[0]))


def is_tracer(fn):
    return bool(fn[0] and TRACER_OBJECT.search(fn[0]))


class Profile:
    """One thread's callgrind data with the tracer-specific sums."""

    def __init__(self, path):
        self.self_cost, self.calls, self.ncalls, self.total = parse_callgrind(path)
        self.callees = defaultdict(list)
        self.times_called = defaultdict(int)
        for (f, g), n in self.ncalls.items():
            self.callees[f].append(g)
            self.times_called[g] += n
        self._own = {}

    def own_inclusive(self, fn, stack=()):
        """fn's instructions and its callees' except CUDA libraries (and what
        those call), callees' costs shared out per call."""
        if fn in self._own:
            return self._own[fn]
        if fn in stack:
            return 0
        cost = self.self_cost.get(fn, 0)
        for g in self.callees[fn]:
            if is_cuda(g):
                continue
            n = self.ncalls[(fn, g)]
            per_call = self.own_inclusive(g, stack + (fn,)) / max(1, self.times_called[g])
            cost += min(per_call * n, self.calls[(fn, g)])
        self._own[fn] = cost
        return cost

    def tracer_split(self):
        """(tracer's own, CUDA calls made by the tracer by callee name)."""
        own = sum(c for f, c in self.self_cost.items() if is_tracer(f))
        cuda_by_tracer = defaultdict(int)
        for (f, g), c in self.calls.items():
            if not is_tracer(f) or is_tracer(g):
                continue
            if is_cuda(g):
                cuda_by_tracer[g[1]] += c
            else:
                own += self.own_inclusive(g) / max(1, self.times_called[g]) * self.ncalls[(f, g)]
        return own, cuda_by_tracer


def thread_label(profile):
    names = {f[1] for f in profile.self_cost}
    if "writer_main" in names:
        return "writer thread"
    if "poller_main" in names:
        return "poller thread"
    return None


def run_profiles(args, workload, n, traced, tmp, tag):
    out = os.path.join(tmp, f"cg.{tag}.{n}")
    env = dict(os.environ)
    env.update(LD_LIBRARY_PATH=os.path.join(args.build, "tests/sim"), SIMCUDA_LAUNCH_US="0",
               SIMCUDA_KERNEL_US="default=0", SIMCUBLAS_COMPUTE="0",
               CUTRACE_OUTPUT=os.path.join(tmp, f"trace.{tag}.{n}"), CUTRACE_QUIET="1")
    env.pop("LD_PRELOAD", None)
    for kv in args.env:
        k, _, v = kv.partition("=")
        env[k] = v
    if traced:
        env["LD_PRELOAD"] = os.path.abspath(args.libtrace or os.path.join(args.build, "preload/libtrace.so"))
    argv = [a.replace("{n}", str(n)) for a in workload]
    p = subprocess.run(["valgrind", "--tool=callgrind", "--separate-threads=yes", "--fair-sched=yes",
                        f"--callgrind-out-file={out}", *argv],
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"callgrind_launch: {' '.join(argv)} failed ({p.returncode}): {p.stderr[-400:]}")
    files = sorted(f for f in os.listdir(tmp) if f.startswith(os.path.basename(out) + "-"))
    profiles = [Profile(os.path.join(tmp, f)) for f in files]
    return profiles[0], {thread_label(p) or f"thread {i + 2}": p for i, p in enumerate(profiles[1:])}


def per_call(a, b, span):
    return (b - a) / span


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--n1", type=int, default=2000)
    ap.add_argument("--n2", type=int, default=12000)
    ap.add_argument("--top", type=int, default=14)
    ap.add_argument("--env", action="append", default=[], help="NAME=VALUE for the traced runs")
    ap.add_argument("--only", choices=["traced"], help="skip the untraced runs")
    ap.add_argument("--json", help="also write the numbers to this file")
    ap.add_argument("--libtrace", help="the libtrace.so to preload (default: BUILD/preload/libtrace.so)")
    ap.add_argument("workload", nargs="*")
    args = ap.parse_args()
    if not shutil.which("valgrind"):
        print("callgrind_launch: valgrind not found", file=sys.stderr)
        return 2
    if args.n2 <= args.n1:
        print("callgrind_launch: --n2 must be larger than --n1", file=sys.stderr)
        return 2
    global TRACER_OBJECT
    if args.libtrace:
        TRACER_OBJECT = re.compile("/" + re.escape(os.path.basename(args.libtrace)) + "$")
    workload = args.workload or [os.path.join(args.build, "bench/workloads/launch_loop"), "{n}"]
    span = args.n2 - args.n1
    tmp = tempfile.mkdtemp(prefix="cutrace-cg-")
    result = {"workload": " ".join(workload), "n1": args.n1, "n2": args.n2, "env": args.env}
    try:
        untraced = None
        if args.only != "traced":
            u1, _ = run_profiles(args, workload, args.n1, False, tmp, "u")
            u2, _ = run_profiles(args, workload, args.n2, False, tmp, "u")
            untraced = per_call(u1.total, u2.total, span)
        t1, o1 = run_profiles(args, workload, args.n1, True, tmp, "t")
        t2, o2 = run_profiles(args, workload, args.n2, True, tmp, "t")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    traced = per_call(t1.total, t2.total, span)
    own1, cuda1 = t1.tracer_split()
    own2, cuda2 = t2.tracer_split()
    own = per_call(own1, own2, span)
    cuda_calls = {k: per_call(cuda1.get(k, 0), cuda2.get(k, 0), span) for k in set(cuda1) | set(cuda2)}
    cuda_calls = {k: v for k, v in cuda_calls.items() if abs(v) >= 0.5}
    result.update(untraced=untraced, traced=traced, tracer_own=own, tracer_cuda_calls=cuda_calls)

    print(f"Calling thread, instructions per call ({result['workload']}, N {args.n1} -> {args.n2}):")
    print()
    print("| what | instructions per call |")
    print("|---|---:|")
    if untraced is not None:
        print(f"| untraced, whole thread | {untraced:.0f} |")
    print(f"| traced, whole thread | {traced:.0f} |")
    if untraced is not None:
        print(f"| added by tracing | {traced - untraced:.0f} |")
    print(f"| tracer's own work (libtrace.so and the libc it calls) | {own:.0f} |")
    for k, v in sorted(cuda_calls.items(), key=lambda kv: -kv[1]):
        print(f"| simulated CUDA call made by the tracer: {k} | {v:.0f} |")
    print()

    rows = []
    fns = {f for f in set(t1.self_cost) | set(t2.self_cost) if is_tracer(f)}
    for f in fns:
        inc = per_call(t1.own_inclusive(f), t2.own_inclusive(f), span)
        slf = per_call(t1.self_cost.get(f, 0), t2.self_cost.get(f, 0), span)
        calls = per_call(t1.times_called.get(f, 0), t2.times_called.get(f, 0), span)
        if inc >= 0.5:
            rows.append((f[1], inc, slf, calls))
    rows.sort(key=lambda r: -r[1])
    result["functions"] = [{"function": r[0], "own_inclusive": r[1], "self": r[2], "calls": r[3]}
                           for r in rows]
    print("Tracer functions on the calling thread, per call (own inclusive: CUDA calls below excluded):")
    print()
    print("| function | own inclusive | self | calls |")
    print("|---|---:|---:|---:|")
    for name, inc, slf, calls in rows[:args.top]:
        print(f"| `{name}` | {inc:.0f} | {slf:.0f} | {calls:.2f} |")
    print()

    threads = {}
    for label in sorted(set(o1) & set(o2)):
        threads[label] = per_call(o1[label].total, o2[label].total, span)
    result["threads"] = threads
    if threads:
        print("Tracer threads, instructions per call (CUDA calls they make included):")
        print()
        print("| thread | instructions per call |")
        print("|---|---:|")
        for label, v in threads.items():
            print(f"| {label} | {v:.0f} |")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
