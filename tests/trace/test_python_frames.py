#!/usr/bin/env python3
"""Python frames in call stacks: a script with known functions at known lines, run by
CPython under `cutrace record --stacks=all --stack-depth 16`, launching on the
simulated GPU through ctypes.

usage: test_python_frames.py SIM_DIR CUTRACE LIBTRACE WORKLOAD_DIR [PYTHON...]

Runs the script with this interpreter (3.11 here) and with each further PYTHON given
that exists (3.12, 3.13, Debian's /usr/bin/python3.11 with libpython linked in). Known answers (SCRIPT's lines):
  - 3 memsets from step(): Python frames launch:6 < step:9 < main:22 < <module>:29,
    replacing the _PyEval_EvalFrameDefault frame in the native stack (merged between
    the ctypes frames and PyEval_EvalCode);
  - 1 memset from deep(40): the depth cap, 16 Python frames: launch:6 < deep:13 <
    deep:14 x 14;
  - 1 memset from a thread: launch:6 < worker:17 < Thread.run ... (threading.py);
  - report --by callsite: one row "script.py:6 launch" with the 5 memsets;
  - the records: one PYCODE per code object (launch 5, step 8, deep 11, worker 16,
    main 19, <module> 1), a TRACER "python 3.N frames" with amount sys.hexversion;
  - dump --chrome: "python stack" of the step launches; gaps names them;
  - --python=off and CUTRACE_PYTHON=off: no Python frames; a bad CUTRACE_PYTHON one
    line on stderr; a fork child's own file names its Python frames (the PYCODE
    records written again); Python 3.10 (when installed): Python frames off, said once on
    stderr and in a TRACER record, native stacks kept; the program's output is the
    same traced or not, every time.
"""
import glob
import json
import os
import subprocess
import sys

from harness import Harness
from rawdump import raw_records

SCRIPT = '''import ctypes, sys, threading
rt = ctypes.CDLL("libcudart.so.13")
p = ctypes.c_void_p()

def launch(value):
    return rt.cudaMemset(p, value, 4096)

def step(i):
    return launch(i + 1)

def deep(n):
    if n == 0:
        return launch(7)
    return deep(n - 1)

def worker():
    assert launch(9) == 0

def main():
    assert rt.cudaMalloc(ctypes.byref(p), 4096) == 0
    for i in range(3):
        assert step(i) == 0
    assert deep(40) == 0
    t = threading.Thread(target=worker, name="launcher")
    t.start()
    t.join()
    print("done", rt.cudaDeviceSynchronize(), rt.cudaFree(p))

main()
'''
FORK_SCRIPT = '''import ctypes, os
rt = ctypes.CDLL("libcudart.so.13")
p = ctypes.c_void_p()

def launch(v):
    return rt.cudaMemset(p, v, 4096)

def child():
    launch(3)

assert rt.cudaMalloc(ctypes.byref(p), 4096) == 0
launch(1)
pid = os.fork()
if pid == 0:
    child()
    raise SystemExit(0)
os.waitpid(pid, 0)
print("ok")
'''
NAME = "pyframes_script.py"
STEP = [(NAME, 6, "launch"), (NAME, 9, "step"), (NAME, 22, "main"), (NAME, 29, "<module>")]
DEEP = [(NAME, 6, "launch"), (NAME, 13, "deep")] + [(NAME, 14, "deep")] * 14
THREAD = [(NAME, 6, "launch"), (NAME, 17, "worker")]
FIRST_LINES = {"launch": 5, "step": 8, "deep": 11, "worker": 16, "main": 19, "<module>": 1}
PY_BIT = 1 << 63


def py_frames(stack):
    """The Python frames of a report's stack as (file base name, line, function)."""
    return [(os.path.basename(f["file"]), f["line"], f["function"]) for f in stack
            if f.get("note") == "python"]


def run_script(h, python, script, env, data, *opts):
    plain = subprocess.run([python, script], env=env, capture_output=True, text=True, timeout=120)
    cmd = [h.cutrace, "record", "-q", "--stacks=all", "--stack-depth", "16", *opts, "-o", data, "--",
           python, script]
    traced = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    h.check(plain.returncode == 0 and traced.returncode == 0 and traced.stdout == plain.stdout,
            f"{python} {opts}: traced output differs: {traced.stdout!r} vs {plain.stdout!r} "
            f"{plain.stderr[-300:]} {traced.stderr[-300:]}")
    return traced


def check_stacks(h, tag, data):
    rc, rep, err = h.cutrace_json("report", "--by", "stack", "--format", "json", data)
    if not h.check(rc == 0 and rep, f"{tag}: report --by stack: {err}"):
        return
    memsets = {}
    for row in rep.get("stacks", []):
        frames = py_frames(row["stack"])
        if frames[:1] == [(NAME, 6, "launch")]:
            memsets[tuple(frames)] = memsets.get(tuple(frames), 0) + row["calls"]
            funcs = [f["function"] for f in row["stack"]]
            first = next(i for i, f in enumerate(row["stack"]) if f.get("note") == "python")
            h.check("_PyEval_EvalFrameDefault" not in funcs[:first + len(frames)] and
                    any(f in funcs[:first] for f in ("PyCFuncPtr_call", "_ctypes_callproc", "ffi_call")),
                    f"{tag}: Python frames not merged in place of the evaluator: {funcs}")
            if tuple(frames) == tuple(STEP):
                h.check("PyEval_EvalCode" in funcs[first + len(frames):],
                        f"{tag}: the native frames below the script (PyEval_EvalCode) are lost: {funcs}")
    h.check(memsets.get(tuple(STEP)) == 3, f"{tag}: step's stack {STEP} x3 not in {memsets}")
    h.check(memsets.get(tuple(DEEP)) == 1, f"{tag}: deep's capped stack {DEEP} not in {memsets}")
    thread = [k for k in memsets if list(k[:2]) == THREAD]
    h.check(len(thread) == 1 and memsets[thread[0]] == 1 and len(thread[0]) > 2 and
            all(f == "threading.py" for f, _, _ in thread[0][2:]) and
            any(fn == "Thread.run" for _, _, fn in thread[0][2:]),
            f"{tag}: the thread's stack {THREAD} < threading.py's Thread.run ... not in {memsets}")
    rc, rep, err = h.cutrace_json("report", "--by", "callsite", "--format", "json", data)
    if h.check(rc == 0 and rep, f"{tag}: report --by callsite: {err}"):
        rows = {(os.path.basename(r["file"]), r["line"], r["function"]): r["calls"]
                for r in rep.get("callsites", [])}
        h.check(rows.get((NAME, 6, "launch")) == 5, f"{tag}: call site {NAME}:6 launch x5 not in {rows}")
    rc, out, err = h.run("report", "--by", "callsite", data)
    h.check(f"{NAME}:6 launch" in out, f"{tag}: text call site: {out[:800]!r}")
    rc, out, err = h.run("report", "--by", "stack", data)
    h.check(f"{NAME}:6 launch < {NAME}:9 step < {NAME}:22 main < {NAME}:29 <module>" in out,
            f"{tag}: text stack: {out[:800]!r}")


def check_records(h, tag, data, python):
    hexversion = int(subprocess.run([python, "-c", "import sys; print(sys.hexversion)"],
                                    capture_output=True, text=True).stdout)
    recs, strings = [], {}
    for name in sorted(os.listdir(data)):
        r, s = raw_records(h.cutrace, os.path.join(data, name))
        recs += r
        strings.update(s)
    codes = {}
    for r in recs:
        if r["kind"] == "pycode" and strings.get(r["file"], "").endswith(NAME):
            qual = strings.get(r["qualname"])
            h.check(qual not in codes, f"{tag}: PYCODE of {qual} written twice")
            codes[qual] = r
    h.check({q: r["first_line"] for q, r in codes.items()} == FIRST_LINES,
            f"{tag}: PYCODE first lines {codes} want {FIRST_LINES}")
    by_id = {r["id"]: strings.get(r["qualname"]) for r in codes.values()}
    lines = {(by_id.get((r["pc"] >> 24) & ((1 << 39) - 1)), r["pc"] & 0xffffff)
             for r in recs if r["kind"] == "stack" and r["pc"] & PY_BIT}
    for want in [("launch", 6), ("step", 9), ("main", 22), ("<module>", 29), ("deep", 13), ("deep", 14),
                 ("worker", 17), ("main", 27)]:
        h.check(want in lines, f"{tag}: no STACK node for {want} in {sorted(lines, key=str)}")
    tracer = [strings.get(r["what"]) for r in recs if r["kind"] == "tracer" and r.get("amount") == hexversion]
    major, minor = hexversion >> 24, (hexversion >> 16) & 255
    h.check(f"python {major}.{minor} frames" in tracer, f"{tag}: TRACER python frames: {tracer}")


def check_views(h, tag, data):
    chrome = os.path.join(h.tmp, tag + ".json")
    rc, out, err = h.run("dump", "--chrome", "-o", chrome, data)
    if h.check(rc == 0, f"{tag}: dump --chrome: {err}"):
        with open(chrome) as f:
            events = json.load(f)["traceEvents"]
        stacks = {e["args"].get("python stack") for e in events if e.get("name") == "cudaMemset"}
        want = f"{NAME}:6 launch < {NAME}:9 step < {NAME}:22 main < {NAME}:29 <module>"
        h.check(want in stacks, f"{tag}: chrome python stack {want!r} not in {stacks}")
    rc, gaps, err = h.cutrace_json("gaps", "--format", "json", data)
    text = json.dumps(gaps)
    # each gap's length, cause, ending call, stack depth and Python frames, for whoever
    # reads a failure (not reproduced in 650 runs under load; the first 600 characters of
    # the JSON, its inputs, said nothing)
    ends = [(g["dur_ns"], g["cause"], (g.get("ending_call") or {}).get("api"),
             len((g.get("ending_call") or {}).get("stack", [])),
             py_frames((g.get("ending_call") or {}).get("stack", [])))
            for g in (gaps or {}).get("gaps", [])]
    h.check(rc == 0 and f'"file": "{os.path.join(h.tmp, NAME)}"' in text,
            f"{tag}: gaps' ending calls name no Python frame: status {rc} {err!r} "
            f"devices {(gaps or {}).get('devices')} gaps {ends}")


def find_python(name):
    """The real executable of interpreter `name` (python3.12): on PATH, else installed
    by pyenv or in /usr; None when there is none."""
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    version = name.replace("python", "")
    for cand in [name] + sorted(glob.glob(os.path.join(root, "versions", version + ".*", "bin", name))) + \
            [os.path.join(d, name) for d in ("/usr/local/bin", "/usr/bin")]:
        try:
            p = subprocess.run([cand, "-c", "import sys; print(sys.executable)"], capture_output=True,
                               text=True, timeout=60)
        except OSError:
            continue
        if p.returncode == 0 and p.stdout.strip():
            return p.stdout.strip()
    return None


def main():
    h = Harness(sys.argv)
    env = h.env()
    script = os.path.join(h.tmp, NAME)
    with open(script, "w") as f:
        f.write(SCRIPT)
    pythons = [sys.executable]
    for extra in h.extra:
        real = find_python(extra)
        if real:
            pythons.append(real)
        else:
            print(f"note: {extra} not found, skipped")
    for k, python in enumerate(pythons):
        tag = f"{k}-" + os.path.basename(python) + "-" + subprocess.run(
            [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True, text=True).stdout.strip()
        data = os.path.join(h.tmp, tag + ".data")
        run_script(h, python, script, env, data)
        check_stacks(h, tag, data)
        check_records(h, tag, data, python)
        check_views(h, tag, data)
        print(f"{tag}: checked")
    # off: no Python frames, same output
    for opts, extra_env in ((["--python=off"], {}), ([], {"CUTRACE_PYTHON": "off"})):
        data = os.path.join(h.tmp, "off%d.data" % len(opts))
        run_script(h, sys.executable, script, dict(env, **extra_env), data, *opts)
        rc, rep, err = h.cutrace_json("report", "--by", "stack", "--format", "json", data)
        notes = [f for row in (rep or {}).get("stacks", []) for f in row["stack"] if f.get("note") == "python"]
        h.check(rc == 0 and rep and rep.get("stacks") and not notes,
                f"python off {opts} {extra_env}: Python frames {notes[:3]} {err}")
        recs, _ = raw_records(h.cutrace, os.path.join(data, sorted(os.listdir(data))[0]))
        h.check(not [r for r in recs if r["kind"] == "pycode"], f"python off {opts}: PYCODE records")
    # fork: the child's own file names its Python frames (PYCODE records written again)
    fork_script = os.path.join(h.tmp, "pyframes_fork.py")
    with open(fork_script, "w") as f:
        f.write(FORK_SCRIPT)
    data = os.path.join(h.tmp, "fork.data")
    run_script(h, sys.executable, fork_script, env, data)
    files = sorted(os.listdir(data))
    stacks = {}
    for name in files:
        rc, rep, err = h.cutrace_json("report", "--by", "stack", "--format", "json", os.path.join(data, name))
        stacks[name] = [py_frames(r["stack"]) for r in (rep or {}).get("stacks", [])]
    want_child = [("pyframes_fork.py", 6, "launch"), ("pyframes_fork.py", 9, "child"),
                  ("pyframes_fork.py", 15, "<module>")]
    h.check(len(files) == 2 and any(want_child in v for v in stacks.values()) and
            any([("pyframes_fork.py", 6, "launch"), ("pyframes_fork.py", 12, "<module>")] in v
                for v in stacks.values()),
            f"fork: parent and child files with their Python stacks: {stacks}")

    # an interpreter older than 3.11 (no Py_Version): said once, native stacks kept
    old = find_python("python3.10")
    if old:
        data = os.path.join(h.tmp, "old.data")
        traced = run_script(h, old, script, env, data)
        why = "python frames off: Python older than 3.11 (no Py_Version)"
        h.check(traced.stderr.count(why) == 1, f"3.10: {why!r} not said once: {traced.stderr!r}")
        recs, strings = [], {}
        for name in sorted(os.listdir(data)):
            r, st = raw_records(h.cutrace, os.path.join(data, name))
            recs += r
            strings.update(st)
        h.check([strings.get(r["what"]) for r in recs if r["kind"] == "tracer"].count(why) == 1 and
                not [r for r in recs if r["kind"] == "pycode"] and
                [r for r in recs if r["kind"] == "stack"], f"3.10: TRACER {why!r} once, no PYCODE, stacks")
    else:
        print("note: python3.10 not found, the unsupported-version check skipped")
    bad = subprocess.run([h.cutrace, "record", "--python=sometimes", "-o", os.path.join(h.tmp, "no.data"),
                          "--", "true"], capture_output=True, text=True, timeout=60)
    h.check(bad.returncode == 2 and bad.stderr == "cutrace record: --python takes auto or off, not 'sometimes' (try: cutrace record --help)\n"
            and not os.path.exists(os.path.join(h.tmp, "no.data")), f"record --python=sometimes: {bad}")
    data = os.path.join(h.tmp, "bad.data")
    traced = run_script(h, sys.executable, script, dict(env, CUTRACE_PYTHON="sometimes"), data)
    h.check("CUTRACE_PYTHON='sometimes' is not auto or off; using auto" in traced.stderr,
            f"bad CUTRACE_PYTHON: {traced.stderr!r}")
    check_stacks(h, "bad-value", data)
    h.finish()


if __name__ == "__main__":
    main()
