#!/usr/bin/env python3
"""Call stacks recorded by libtrace.so (preload/stacks/) on the simulated CUDA stack.

usage: test_stacks.py SIM_DIR LIBTRACE CUTRACE STK_APP STK_PLUGIN [STK_KERNELS]   (or --skip)

STK_APP (stk_app.c, gcc -g, which loads STK_PLUGIN with dlopen) and STK_KERNELS (stk_kernels.cu, nvcc -g, optional) are
run without and with LD_PRELOAD=libtrace.so; their output and exit status must not
change. The trace is read with `cutrace dump` (tests/trace/rawdump.py) and checked
against the programs' known call sites, located with `nm` in the program itself:
each pc of a STACK record is a return address, so pc - 1 - bias must lie inside the
function that made the call.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "tests", "trace"))
from rawdump import raw_records  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "tests", "lib"))
from cttest import check, finish, scratch_dir, skip  # noqa: E402


def functions_of(program):
    """{name: (start, end)} of the program's defined functions, from `nm -S`."""
    out = subprocess.run(["nm", "-S", "--defined-only", program], capture_output=True,
                         text=True, check=True).stdout
    funcs = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwW":
            start, size = int(parts[0], 16), int(parts[1], 16)
            funcs[parts[3]] = (start, start + size)
    return funcs


class Trace:
    """One process's trace: API records, the stack tree and the modules."""

    def __init__(self, cutrace, path):
        self.records, self.strings = raw_records(cutrace, path)
        self.apis = [r for r in self.records if r["kind"] == "api"]
        self.stack_records = [r for r in self.records if r["kind"] == "stack"]
        self.modules = [r for r in self.records if r["kind"] == "module"]
        self.nodes = {r["id"]: (r["parent"], r["pc"]) for r in self.stack_records}

    def name(self, sid):
        return self.strings.get(sid, "")

    def path(self, node):
        """The pcs of a stack, innermost first (None when a node is missing)."""
        pcs = []
        while node:
            if node not in self.nodes or len(pcs) > 1000:
                return None
            parent, pc = self.nodes[node]
            pcs.append(pc)
            node = parent
        return pcs

    def module_of(self, pc):
        for m in self.modules:
            if m["start"] <= pc < m["end"]:
                return m
        return None

    def bias_of(self, program):
        """The load bias of the program (its MODULE record, matched by file name)."""
        base = os.path.basename(program)
        for m in self.modules:
            if os.path.basename(self.name(m["path"])) == base:
                return m["bias"]
        return None


class Program:
    """A test program, its functions and how to run it."""

    def __init__(self, path, sim, lib, cutrace):
        self.path, self.sim, self.lib, self.cutrace = path, sim, lib, cutrace
        self.funcs = functions_of(path)

    def env(self, traced, outdir, extra):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("CUTRACE_", "SIMCUDA_")) and k != "LD_PRELOAD"}
        env["LD_LIBRARY_PATH"] = self.sim
        if traced:
            env["LD_PRELOAD"] = self.lib
            env["CUTRACE_OUTPUT"] = outdir
        env.update(extra or {})
        return env

    def run(self, args=(), extra=None, traced=True):
        """Runs the program: (returncode, stdout, stderr, [Trace per file])."""
        outdir = scratch_dir("stk-")
        p = subprocess.run([self.path, *args], env=self.env(traced, outdir, extra),
                           capture_output=True, text=True, timeout=120)
        traces = []
        if traced:
            for f in sorted(os.listdir(outdir)):
                traces.append(Trace(self.cutrace, os.path.join(outdir, f)))
        return p.returncode, p.stdout, p.stderr, traces

    def function_at(self, pc, bias):
        """The function whose code holds the call that returns to pc."""
        addr = pc - 1 - bias
        for name, (start, end) in self.funcs.items():
            if start <= addr < end:
                return name
        return None

    def frames(self, trace, node, bias):
        """Function names of a stack, innermost first (None outside the program)."""
        return [self.function_at(pc, bias) for pc in trace.path(node) or []]


def check_tree(t, what):
    """Tree invariants: each node written once, parents numbered first, every pc in a MODULE."""
    ids = [r["id"] for r in t.stack_records]
    check(len(ids) == len(set(ids)), f"{what}: every STACK node written once ({len(ids)} records, "
          f"{len(set(ids))} ids)")
    check(sorted(ids) == list(range(1, len(ids) + 1)), f"{what}: node ids are 1..{len(ids)}")
    # Another thread's buffer may reach the file first (docs/format.md), so the file
    # order is not checked; a parent is always created, so numbered, before its child.
    for r in t.stack_records:
        check(r["parent"] == 0 or (r["parent"] in t.nodes and r["parent"] < r["id"]),
              f"{what}: node {r['id']}'s parent {r['parent']} exists and is numbered before it")
    uncovered = [hex(pc) for _, pc in t.nodes.values() if not t.module_of(pc)]
    check(not uncovered, f"{what}: every pc lies in a MODULE (uncovered: {uncovered[:5]})")
    for m in t.modules:
        check(m["start"] < m["end"] and t.name(m["path"]) != "",
              f"{what}: MODULE {t.name(m['path'])!r} has a path and a range")
    for a in t.apis:
        if a["stack"]:
            check(a["stack"] in t.nodes, f"{what}: API corr {a['corr']} names a written node")


def check_app(app):
    """stk_app.c under the default settings, depth limits, off, all, fork."""
    rc0, out0, _, _ = app.run(traced=False)
    check(rc0 == 0 and "failures=0" in out0, f"stk_app runs untraced (rc {rc0}: {out0!r})")

    rc, out, err, traces = app.run()
    check((rc, out) == (rc0, out0), f"default: same output and status ({rc}, {out!r})")
    check(err == "", f"default: nothing on stderr ({err!r})")
    check(len(traces) == 1, f"default: one trace file ({len(traces)})")
    if not traces:
        return
    t = traces[0]
    check_tree(t, "default")
    bias = t.bias_of(app.path)
    check(bias is not None, "default: a MODULE record for the program itself")
    if bias is None:
        return
    by_site = {}
    for a in t.apis:
        name = t.name(a["name"])
        if a["depth"] != 0:
            continue
        if name in ("cudaMemsetAsync", "cudaMemcpyAsync"):
            if not check(a["stack"] != 0, f"default: {name} corr {a['corr']} has a stack"):
                continue
            frames = app.frames(t, a["stack"], bias)
            by_site.setdefault(frames[0], []).append((a, frames))
        else:
            check(a["stack"] == 0, f"default (launches): {name} without GPU work has no stack")
    sets = by_site.get("memset_site", [])
    copies = by_site.get("copy_site", [])
    deep = by_site.get("deep_set_site", [])
    check(len(sets) == 12, f"default: 12 memsets from memset_site ({len(sets)}; sites "
          f"{sorted(str(k) for k in by_site)})")
    check(len(copies) == 7, f"default: 7 copies from copy_site ({len(copies)})")
    check(len(deep) == 2, f"default: 2 memsets from deep_set_site ({len(deep)})")
    check(len({a["stack"] for a, _ in sets}) == 1, "default: one stack id for memset_site's 12 calls")
    check(len({a["stack"] for a, _ in copies}) == 1, "default: one stack id for copy_site's 7 calls")
    if sets and copies:
        check(sets[0][0]["stack"] != copies[0][0]["stack"], "default: two call sites, two ids")
        check(sets[0][1][1] == "thread_a" and copies[0][1][1] == "thread_b",
              f"default: callers thread_a / thread_b ({sets[0][1][:2]}, {copies[0][1][:2]})")
    # the same site and stack depth reached through two callers, 4 calls each in
    # turn: the site cache learns each stack and must never answer one caller's
    # stack for the other
    shared = by_site.get("shared_site", [])
    callers = [f[1] for _, f in shared]
    check(callers == (["via_a"] * 4 + ["via_b"] * 4) * 3, f"default: shared_site's callers in turn ({callers})")
    check(len({a["stack"] for a, f in shared if f[1] == "via_a"}) == 1 and
          len({a["stack"] for a, f in shared if f[1] == "via_b"}) == 1 and
          len({a["stack"] for a, _ in shared}) == 2, "default: shared_site: one id per caller")
    if len(deep) == 2:
        depths = sorted(f.count("recurse_to_set") for _, f in deep)
        check(depths == [3, 9], f"default: recursion gives 3 and 9 recurse_to_set frames ({depths})")
        check(deep[0][0]["stack"] != deep[1][0]["stack"], "default: different depths, different ids")
        lens = sorted(len(f) for _, f in deep)
        check(lens[1] - lens[0] == 6, f"default: deep stacks differ by 6 frames ({lens})")
        check(all("main" in f for _, f in deep), "default: recursion stacks reach main")

    # depth limit
    _, out, _, traces = app.run(extra={"CUTRACE_STACK_DEPTH": "4"})
    check(out == out0, "depth 4: same output")
    if traces:
        t = traces[0]
        check_tree(t, "depth 4")
        lens = [len(t.path(a["stack"]) or []) for a in t.apis if a["stack"]]
        check(lens and max(lens) == 4, f"depth 4: the longest stack has 4 frames ({max(lens or [0])})")
        b = t.bias_of(app.path)
        deep = [a for a in t.apis if a["stack"] and app.frames(t, a["stack"], b)[0] == "deep_set_site"]
        check(len({a["stack"] for a in deep}) == 1,
              "depth 4: both recursion depths share their 4 innermost frames, one id")

    # off
    rc, out, _, traces = app.run(extra={"CUTRACE_STACKS": "off"})
    check((rc, out) == (rc0, out0), "off: same output and status")
    if traces:
        t = traces[0]
        check(all(a["stack"] == 0 for a in t.apis), "off: every API record has stack 0")
        check(not t.stack_records and not t.modules, "off: no STACK or MODULE records")
        check(len(t.apis) >= 49, f"off: the calls are still recorded ({len(t.apis)})")

    # all calls
    _, out, _, traces = app.run(extra={"CUTRACE_STACKS": "all"})
    if traces:
        t = traces[0]
        check_tree(t, "all")
        b = t.bias_of(app.path)
        syncs = [a for a in t.apis if t.name(a["name"]) == "cudaStreamSynchronize" and a["depth"] == 0]
        check(len(syncs) == 1 and syncs[0]["stack"] and
              app.frames(t, syncs[0]["stack"], b)[0] == "sync_site",
              "all: cudaStreamSynchronize has its stack, innermost frame sync_site")
        check(all(a["stack"] for a in t.apis if a["depth"] == 0),
              "all: every outermost call has a stack")

    # bad values: one line each, defaults used
    _, out, err, traces = app.run(extra={"CUTRACE_STACKS": "sometimes", "CUTRACE_STACK_DEPTH": "0"})
    lines = [l for l in err.splitlines() if l]
    check(len(lines) == 2 and all(l.startswith("cutrace: ") for l in lines),
          f"bad values: one warning line each ({lines})")
    if traces:
        check(any(a["stack"] for a in traces[0].apis), "bad values: defaults (launches) used")

    # fork: the child's file defines every node its records use
    rc, out, _, traces = app.run(["fork"])
    rc0f, out0f, _, _ = app.run(["fork"], traced=False)
    check((rc, out) == (rc0f, out0f), f"fork: same output and status ({out!r})")
    check(len(traces) == 2, f"fork: two trace files ({len(traces)})")
    for i, t in enumerate(traces):
        check_tree(t, f"fork file {i}")
    child = [t for t in traces if any(t.name(a["name"]) == "cudaMemsetAsync" and len(
        [x for x in t.apis if t.name(x["name"]) == "cudaMemsetAsync"]) == 1 for a in t.apis)]
    if check(len(child) == 1, "fork: the child's trace has its one memset"):
        t = child[0]
        a = [x for x in t.apis if t.name(x["name"]) == "cudaMemsetAsync"][0]
        f = app.frames(t, a["stack"], t.bias_of(app.path))
        check(f[:2] == ["child_site", "main"], f"fork: child's memset from child_site in main ({f[:2]})")


def check_settle(app, plugin):
    """stk_app settle PLUGIN: the loaded modules are listed on the writer thread while
    the program sleeps after its first CUDA calls (one TRACER record "modules" there,
    with the number of objects, which the program's first stack then describes in
    MODULE records; "unwinder" for the rest of that work), and a library loaded later with dlopen gets its MODULE record
    before the STACK record of its call site (its pc lies outside every known object)."""
    args = ["settle", plugin]
    rc0, out0, _, _ = app.run(args, traced=False)
    check(rc0 == 0 and "plugin=1 failures=0" in out0, f"settle: runs untraced ({rc0}, {out0!r})")
    rc, out, err, traces = app.run(args)
    check((rc, out, err) == (rc0, out0, ""), f"settle: same output and status ({rc}, {out!r}, {err!r})")
    if not check(len(traces) == 1, f"settle: one trace file ({len(traces)})"):
        return
    t = traces[0]
    check_tree(t, "settle")
    writer = {r["tid"] for r in t.records if r["kind"] == "thread" and t.name(r["name"]) == "cutrace-writer"}
    scans = [r for r in t.records if r["kind"] == "tracer" and t.name(r["what"]) == "modules"]
    check(len(scans) == 1 and scans[0]["tid"] in writer,
          f"settle: one TRACER 'modules' record, on the writer thread {sorted(writer)} "
          f"({[(r['tid'], r['amount']) for r in scans]})")
    for what in ("unwinder",):
        ahead = [r for r in t.records if r["kind"] == "tracer" and t.name(r["what"]) == what]
        check(len(ahead) == 1 and ahead[0]["tid"] in writer,
              f"settle: one TRACER {what!r} record, on the writer thread ({len(ahead)})")
    is_plugin = [os.path.basename(t.name(m["path"])) == os.path.basename(plugin) for m in t.modules]
    check(sum(is_plugin) == 1, f"settle: one MODULE record for the plugin ({sum(is_plugin)})")
    if scans:
        check(scans[0]["amount"] == len(t.modules) - 1,
              f"settle: the writer listed {scans[0]['amount']} objects, the file describes them "
              f"all and the plugin ({len(t.modules)} MODULE records)")
    if sum(is_plugin) != 1:
        return
    m = t.modules[is_plugin.index(True)]
    at = {id(r): i for i, r in enumerate(t.records)}
    in_plugin = [r for r in t.stack_records if m["start"] <= r["pc"] < m["end"]]
    check(len(in_plugin) == 1 and at[id(m)] < at[id(in_plugin[0])],
          f"settle: the plugin's call site is one STACK node, after the plugin's MODULE record "
          f"({len(in_plugin)} nodes)")
    sets = [a for a in t.apis if t.name(a["name"]) == "cudaMemsetAsync" and a["stack"]
            and in_plugin and t.path(a["stack"])[0] == in_plugin[0]["pc"]]
    check(len(sets) == 1, f"settle: the plugin's memset names its node ({len(sets)})")


def check_execfail(app):
    """stk_app execfail FILE: an exec that fails sends the rest to a new file of the same
    process (<host>.<pid>.1.ctr), which must describe again every MODULE and STACK node
    its records use (a stack seen before the exec is a cache hit afterwards)."""
    bad = os.path.join(scratch_dir("stk-bad-"), "not-a-program")
    with open(bad, "wb") as f:
        f.write(b"\x7fELF not a program")
    os.chmod(bad, 0o755)
    rc0, out0, _, _ = app.run(["execfail", bad], traced=False)
    rc, out, err, traces = app.run(["execfail", bad])
    check((rc, out) == (rc0, out0) and rc == 0, f"execfail: same output and status ({rc}, {out!r})")
    if not check(len(traces) == 2, f"execfail: two trace files ({len(traces)})"):
        return
    for i, t in enumerate(traces):
        check_tree(t, f"execfail file {i}")
    t = traces[1] if len(traces[1].apis) < len(traces[0].apis) else traces[0]
    deep = [a for a in t.apis if t.name(a["name"]) == "cudaMemsetAsync" and a["stack"]]
    bias = t.bias_of(app.path)
    if check(len(deep) == 1 and bias is not None,
             f"execfail: the new file has one memset with a stack and the program's MODULE ({len(deep)})"):
        f = app.frames(t, deep[0]["stack"], bias)
        check(f[:5] == ["deep_set_site"] + ["recurse_to_set"] * 3 + ["main"],
              f"execfail: the memset after the exec, from deep_set_site by recursion in main ({f[:5]})")


def check_kernels(prog):
    """stk_kernels.cu: launches from two functions in two threads, recursion."""
    rc0, out0, _, _ = prog.run(traced=False)
    rc, out, err, traces = prog.run()
    check((rc, out) == (rc0, out0) and rc == 0, f"kernels: same output and status ({rc}, {out!r})")
    if not traces:
        return
    t = traces[0]
    check_tree(t, "kernels")
    bias = t.bias_of(prog.path)
    launches = [a for a in t.apis if a["depth"] == 0 and "LaunchKernel" in t.name(a["name"])]
    check(len(launches) == 5 + 5 + 2, f"kernels: 12 launches ({len(launches)})")
    sites, deep_counts = {}, []
    for a in launches:
        if not check(a["stack"], f"kernels: launch corr {a['corr']} has a stack"):
            continue
        frames = [f or "?" for f in prog.frames(t, a["stack"], bias)]
        # innermost: nvcc's launch plumbing (__cudaLaunchKernel_helper, the
        # __device_stub__, the kernel's host function), then the launching function
        at = next((i for i, f in enumerate(frames) if "launch_" in f), None)
        if not check(at is not None and all(
                any(k in f for k in ("__cudaLaunchKernel", "__device_stub__", "add_one", "add_two"))
                for f in frames[:at]), f"kernels: launch stack is nvcc plumbing then the caller {frames}"):
            continue
        caller = next(k for k in ("launch_alpha", "launch_beta", "launch_deep") if k in frames[at])
        sites.setdefault(caller, set()).add(a["stack"])
        if caller == "launch_deep":
            deep_counts.append(sum("recurse" in f for f in frames))
    check(set(sites) == {"launch_alpha", "launch_beta", "launch_deep"},
          f"kernels: launches attributed to launch_alpha, launch_beta, launch_deep ({sorted(map(str, sites))})")
    check(len(sites.get("launch_alpha", ())) == 1 and len(sites.get("launch_beta", ())) == 1,
          "kernels: one stack per launching function")
    check(len(sites.get("launch_deep", ())) == 2, "kernels: two recursion depths, two stacks")
    check(sorted(deep_counts) == [2, 5], f"kernels: 2 and 5 recurse frames ({sorted(deep_counts)})")
    if all(len(s) == 1 for k, s in sites.items() if k != "launch_deep") and len(sites) == 3:
        check(len(set.union(*sites.values())) == 4, "kernels: four distinct stacks")


def check_exceptions(prog):
    """C++ exceptions thrown through frames that launched (stk_kernels throw): the
    program's unwinding works unchanged under every stack setting, and each launch
    has its stack."""
    rc0, out0, _, _ = prog.run(["throw", "200"], traced=False)
    check(rc0 == 0 and "caught=200 destructors=400" in out0, f"throw: runs untraced ({rc0}, {out0!r})")
    for mode in ("launches", "all"):
        rc, out, err, traces = prog.run(["throw", "200"], extra={"CUTRACE_STACKS": mode})
        check((rc, out) == (rc0, out0), f"throw, stacks {mode}: same output and status ({rc}, {out!r}, {err!r})")
        if traces:
            t = traces[0]
            bias = t.bias_of(prog.path)
            launches = [a for a in t.apis if a["depth"] == 0 and "LaunchKernel" in t.name(a["name"])]
            callers = {next((f for f in prog.frames(t, a["stack"], bias) if f and "launch_then_throw" in f), None)
                       for a in launches if a["stack"]}
            check(len(launches) == 200 and all(a["stack"] for a in launches) and len(callers) == 1
                  and None not in callers, f"throw, stacks {mode}: 200 launches from launch_then_throw "
                  f"({len(launches)}, {callers})")


def main():
    if sys.argv[1:] == ["--skip"]:
        skip("nothing to run")
    sim, lib, cutrace, app, plugin = sys.argv[1:6]
    check_app(Program(app, sim, lib, cutrace))
    check_settle(Program(app, sim, lib, cutrace), plugin)
    check_execfail(Program(app, sim, lib, cutrace))
    if len(sys.argv) > 6 and os.path.exists(sys.argv[6]):
        check_kernels(Program(sys.argv[6], sim, lib, cutrace))
        check_exceptions(Program(sys.argv[6], sim, lib, cutrace))
    sys.exit(finish())


if __name__ == "__main__":
    main()
