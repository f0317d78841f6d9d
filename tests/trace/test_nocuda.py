#!/usr/bin/env python3
"""Processes that never use CUDA leave no trace file (docs/preload.md, "Processes
without CUDA"), on the simulated GPU under `cutrace record`:

- a shell running /bin/true 5 times, a CUDA program (matmul_add) and ls: one trace
  file, the CUDA program's, whose parent is the shell; .nocuda lists true x5 and ls;
  record's summary counts them; info, report, gaps and steps read the directory;
- --all-processes (CUTRACE_ALL_PROCESSES=1) keeps a file for every process; a bad
  CUTRACE_ALL_PROCESSES is one line and the default;
- a static-runtime program (its file opened when the runtime looks up the driver);
- a Python parent without CUDA whose fork child then uses CUDA: the child's file only;
- a process that only loads libcudart (dlopen, no call) keeps its file (PROCESS, END);
- a Python process without CUDA: no file, one line.

- the line's append never holds the program's exit more than about 1 s: a directory
  whose open stalls 4 s (programs/slowopen.c) lets /bin/true exit after about 1 s,
  without its line; one that stalls 0.2 s gets the line.

usage: test_nocuda.py SIM_DIR CUTRACE LIBTRACE WORKLOAD_DIR ALLOC_LOOP_STATIC LIBSLOWOPEN
"""
import os
import subprocess
import sys
import time

from harness import Harness
from rawdump import raw_records

h = Harness(sys.argv)
check = h.check


def ctr_files(data):
    return sorted(f for f in os.listdir(data) if f.endswith(".ctr")) if os.path.isdir(data) else []


def nocuda_lines(data):
    path = os.path.join(data, ".nocuda")
    if not os.path.exists(path):
        return []
    text = open(path).read()
    check(len(text) % 64 == 0, f"{path}: {len(text)} bytes, not whole 64-byte lines")
    return [ln.split() for ln in text.splitlines()]


def process_of(path):
    recs, strings = raw_records(h.cutrace, path)
    procs = [r for r in recs if r["kind"] == "process"]
    return (procs[0] if procs else {}), recs, strings


def record(tag, argv, opts=(), extra=None):
    data = os.path.join(h.tmp, tag)
    p = subprocess.run([h.cutrace, "record", *opts, "-o", data, "--", *argv],
                       env=h.env(extra=extra), capture_output=True, text=True, timeout=120)
    return p, data


SHELL_ONLY = {"sh", "dash", "bash"}  # dash ends with _exit (no line), bash with exit()
matmul = h.workload("matmul_add")
script = f'echo "shell $$"; for i in 1 2 3 4 5; do /bin/true; done; {matmul} 32 2 1; ls >/dev/null'

# ---- the shell example: one file (the CUDA program's), the others counted
p, data = record("shell", ["sh", "-c", script])
check(p.returncode == 0 and "shell " in p.stdout,
      f"shell: rc {p.returncode} {p.stderr[-400:]}")
shell_pid = int(p.stdout.split("shell ")[1].split()[0]) if "shell " in p.stdout else -1
files = ctr_files(data)
check(len(files) == 1, f"shell: {len(files)} trace files, want 1 (matmul_add's): {files}")
if files:
    proc, recs, strings = process_of(os.path.join(data, files[0]))
    exe = strings.get(proc.get("exe"), "")
    check(exe.endswith("/matmul_add") and proc.get("ppid") == shell_pid,
          f"shell: the file is matmul_add's ({exe}), child of the shell {shell_pid}: {proc}")
    launches = [r for r in recs if r["kind"] == "launch"]
    check(len(launches) > 0 and any(r["kind"] == "end" for r in recs),
          f"shell: matmul_add traced whole ({len(launches)} launches)")
lines = nocuda_lines(data)
names = sorted(ln[2] for ln in lines if ln[2] not in SHELL_ONLY)
check(names == ["ls"] + ["true"] * 5, f"shell: .nocuda names {names}, want ls and true x5")
check(all(int(ln[1]) == shell_pid for ln in lines if ln[2] != "sh"),
      f"shell: the listed processes are the shell's children: {lines}")
n = len(lines)
want = f"cutrace record: {n} processes ran without CUDA (no trace file): true x5, ls"
check(want in p.stderr and "--all-processes keeps them" in p.stderr,
      f"shell: record's summary counts them ({want!r}):\n{p.stderr}")
rc, out, err = h.run("info", data)
check(rc == 0 and f"{data}: {n} processes ran without CUDA (no trace file): true x5, ls\n" in out
      and f"(parent {shell_pid})" in out, f"shell: info:\n{out}{err}")
# without an argument: ./cutrace.data, the default directory, and its line
cwd = os.path.join(h.tmp, "cwd")
os.makedirs(cwd)
os.symlink(data, os.path.join(cwd, "cutrace.data"))
q = subprocess.run([os.path.abspath(h.cutrace), "info"], cwd=cwd, capture_output=True, text=True, timeout=60)
check(q.returncode == 0 and
      f"cutrace.data: {n} processes ran without CUDA (no trace file): true x5, ls\n" in q.stdout,
      f"shell: info without an argument: {q.stdout[-300:]}{q.stderr}")
for cmd in (["report"], ["gaps"], ["dump", "--chrome", "-o", os.path.join(h.tmp, "c.json")]):
    rc, out, err = h.run(*cmd, data)
    check(rc == 0, f"shell: {cmd[0]} on a directory with .nocuda: rc {rc} {err[-300:]}")
rc, out, err = h.run("steps", data)  # matmul_add marks no steps: it read the one file
check(rc == 2 and err.count("no steps") == 1, f"shell: steps: rc {rc} {err[-300:]}")


# ---- --all-processes: every process keeps its file, nothing is counted
p, data = record("all", ["sh", "-c", script], ("--all-processes",))
files = ctr_files(data)
exes = []
for f in files:
    proc, recs, strings = process_of(os.path.join(data, f))
    exes.append(os.path.basename(strings.get(proc.get("exe"), "?")))
check(p.returncode == 0 and sorted(e for e in exes if e not in SHELL_ONLY | {"?"}) ==
      ["ls", "matmul_add"] + ["true"] * 5, f"--all-processes: files of {sorted(exes)}")
check(not os.path.exists(os.path.join(data, ".nocuda")) and "ran without CUDA" not in p.stderr,
      f"--all-processes: nothing counted: {p.stderr[-300:]}")
out_dir = os.path.join(h.tmp, "env_all")
env = h.env(extra={"LD_PRELOAD": h.libtrace, "CUTRACE_OUTPUT": out_dir,
                   "CUTRACE_ALL_PROCESSES": "yes"})
q = subprocess.run(["/bin/true"], env=env, capture_output=True, text=True, timeout=60)
check(q.returncode == 0 and len(ctr_files(out_dir)) == 1 and q.stderr == "",
      f"CUTRACE_ALL_PROCESSES=yes: {ctr_files(out_dir)} {q.stderr!r}")
os.makedirs(os.path.join(h.tmp, "bad"))
env.update(CUTRACE_ALL_PROCESSES="maybe", CUTRACE_OUTPUT=os.path.join(h.tmp, "bad"))
q = subprocess.run(["/bin/true"], env=env, capture_output=True, text=True, timeout=60)
check(q.stderr == "cutrace: CUTRACE_ALL_PROCESSES='maybe' is not a boolean (1/0, yes/no); using 0\n"
      and not ctr_files(os.path.join(h.tmp, "bad")) and len(nocuda_lines(os.path.join(h.tmp, "bad"))) == 1,
      f"CUTRACE_ALL_PROCESSES=maybe: one line, the default (no file, counted): {q.stderr!r}")

# ---- a static runtime: no libcudart to see at start-up, the file opens with CUDA
p, data = record("static", [h.extra[0]])
files = ctr_files(data)
check(p.returncode == 0 and len(files) == 1 and not nocuda_lines(data),
      f"static: one file, nothing counted: {files} {p.stderr[-300:]}")
if files:
    proc, recs, strings = process_of(os.path.join(data, files[0]))
    check(sum(r["kind"] == "launch" for r in recs) > 0 and sum(r["kind"] == "alloc" for r in recs) > 0
          and recs[-1]["kind"] == "end", "static: traced whole")

# ---- Python: a parent without CUDA, a fork child that uses it; a dlopen without calls
# Parent and child write their lines to one pipe at once: each line is ONE write(2) (atomic
# on a pipe). print() makes one write per argument and separator when PYTHONUNBUFFERED is
# set (it is in this machine's environment): the lines interleaved ("child 7parent 6\n 0\n").
PROGRAM = """import ctypes, os, sys
def say(*words):
    os.write(1, (" ".join(map(str, words)) + "\\n").encode())
mode = sys.argv[1]
if mode == "fork_child_cuda":
    pid = os.fork()
    if pid == 0:
        rt = ctypes.CDLL("libcudart.so.13")
        p = ctypes.c_void_p()
        rc = rt.cudaMalloc(ctypes.byref(p), 4096) or rt.cudaFree(p)
        say("child", os.getpid(), rc)
        sys.exit(rc)
    say("parent", os.getpid())
    sys.exit(os.waitpid(pid, 0)[1])
if mode == "dlopen_only":
    ctypes.CDLL("libcudart.so.13")
print("pid", os.getpid(), flush=True)
"""
script_path = os.path.join(h.tmp, "nocuda_prog.py")
with open(script_path, "w") as f:
    f.write(PROGRAM)

p, data = record("forkchild", [sys.executable, script_path, "fork_child_cuda"])
out = {w[0]: w[1] for w in map(str.split, p.stdout.splitlines()) if len(w) >= 2}
files = ctr_files(data)
check(p.returncode == 0 and len(files) == 1, f"fork child: {files} rc {p.returncode} {p.stderr[-300:]}")
check(sorted((w[0], len(w)) for w in map(str.split, p.stdout.splitlines())) ==
      [("child", 3), ("parent", 2)], f"fork child: the program's two lines: {p.stdout!r}")
if files and "child" in out:
    proc, recs, strings = process_of(os.path.join(data, files[0]))
    apis = {strings.get(r["name"]) for r in recs if r["kind"] == "api"}
    check(proc.get("pid") == int(out["child"]) and proc.get("ppid") == int(out.get("parent", -1))
          and {"cudaMalloc", "cudaFree"} <= apis, f"fork child: its file {proc} {apis}")
check([ln[0] for ln in nocuda_lines(data)] == [out.get("parent")],
      f"fork child: the parent counted: {nocuda_lines(data)} {out}")

p, data = record("dlopen", [sys.executable, script_path, "dlopen_only"])
files = ctr_files(data)
check(p.returncode == 0 and len(files) == 1 and not nocuda_lines(data),
      f"dlopen only: the file is kept: {files} {nocuda_lines(data)} {p.stderr[-300:]}")
if files:
    proc, recs, strings = process_of(os.path.join(data, files[0]))
    kinds = sorted({r["kind"] for r in recs})
    check(p.stdout.startswith(f"pid {proc.get('pid')}\n") and "api" not in kinds and
          recs[-1]["kind"] == "end", f"dlopen only: PROCESS and END, no call: {kinds}")

p, data = record("plain", [sys.executable, script_path, "plain"])
lines = nocuda_lines(data)
check(p.returncode == 0 and not ctr_files(data) and [ln[0] for ln in lines] == [p.stdout.split()[1]]
      and lines[0][2].startswith("python"), f"python without CUDA: no file, one line: {lines}")
check("no trace was written" in p.stderr and "1 process ran without CUDA (no trace file): python"
      in p.stderr, f"python without CUDA: summary {p.stderr!r}")
# a second run into that directory (no trace file in it: not set aside as DIR.old)
# counts its own processes only
p, data = record("plain", ["/bin/true"])
check(not os.path.exists(data + ".old") and [ln[2] for ln in nocuda_lines(data)] == ["true"] and
      "1 process ran without CUDA (no trace file): true;" in p.stderr,
      f"rerun: .nocuda of the second run only: {nocuda_lines(data)} {p.stderr!r}")

# ---- a stalled filesystem: the exit waits for the line's I/O at most about 1 s
for stall_ms, want_line in ((4000, False), (200, True)):
    out_dir = os.path.join(h.tmp, f"stall{stall_ms}")
    os.makedirs(out_dir)
    env = h.env(extra={"LD_PRELOAD": h.extra[1] + ":" + h.libtrace, "CUTRACE_OUTPUT": out_dir,
                       "SLOWOPEN_DIR": out_dir, "SLOWOPEN_MS": str(stall_ms)})
    t0 = time.monotonic()
    q = subprocess.run(["/bin/true"], env=env, capture_output=True, text=True, timeout=60)
    took = time.monotonic() - t0
    time.sleep(0.1)
    lines = nocuda_lines(out_dir)
    if want_line:
        check(q.returncode == 0 and len(lines) == 1 and lines[0][2] == "true",
              f"stall {stall_ms} ms: the line written after the wait: {lines} {q.stderr!r}")
    else:  # bounded by the 1 s of I/O (plus start-up), far from the 4 s stall
        check(q.returncode == 0 and 0.9 < took < 3.0 and not lines and q.stderr == "",
              f"stall {stall_ms} ms: exit after {took:.2f} s, want about 1 s, no line: {lines} {q.stderr!r}")
h.finish()
