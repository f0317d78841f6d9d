#!/usr/bin/env python3
"""The scratch-directory rule of every test (cttest.scratch_dir and scratch, and the C
tests' ct_scratch_dir/ct_scratch_done through test_scratch_c): a child test run under
its own TMPDIR leaves nothing when it passed or skipped, keeps and names its
directories when a check failed, it died or CUTRACE_KEEP_TMP=1; a forked child's exit
removes nothing.

usage: test_scratch.py TEST_SCRATCH_C
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cttest import check, finish, scratch_dir  # noqa: E402

CHILD = r'''
import os, sys
sys.path.insert(0, sys.argv[2])
import cttest
mode = sys.argv[1]
d = cttest.scratch_dir("child-")
os.mkdir(os.path.join(d, "sub"))
open(os.path.join(d, "sub", "f"), "w").write("x")
with cttest.scratch("child-with-") as w:
    open(os.path.join(w, "g"), "w").write("y")
if mode == "fail":
    cttest.check(False, "planted failure")
elif mode == "raise":
    raise RuntimeError("planted exception")
elif mode == "skip":
    cttest.skip("planted skip")
elif mode == "exit":
    sys.exit(0)  # not through finish(): nothing says every check passed
elif mode == "fork":
    pid = os.fork()
    if pid == 0:
        sys.exit(0)
    os.waitpid(pid, 0)
    cttest.check(os.path.isdir(d), "a forked child's exit removed the parent's directory")
sys.exit(cttest.finish())
'''

c_program = sys.argv[1]
lib = os.path.dirname(os.path.abspath(__file__))
outer = scratch_dir("cutrace-scratch-")
# mode, environment, exit status, directories left
CASES = [("pass", {}, 0, 0), ("fail", {}, 1, 2), ("raise", {}, 1, 2), ("skip", {}, 77, 0),
         ("exit", {}, 0, 2), ("fork", {}, 0, 0), ("pass", {"CUTRACE_KEEP_TMP": "1"}, 0, 2)]
for n, (mode, extra, status, left) in enumerate(CASES):
    tmpdir = os.path.join(outer, f"py{n}")
    os.mkdir(tmpdir)
    env = dict(os.environ, TMPDIR=tmpdir, **extra)
    env.pop("CUTRACE_KEEP_TMP", None) if not extra else None
    p = subprocess.run([sys.executable, "-c", CHILD, mode, lib], env=env, capture_output=True,
                       text=True, timeout=60)
    got = sorted(os.listdir(tmpdir))
    named = sum(1 for line in p.stdout.splitlines() if line.startswith("scratch directory kept: "))
    check(p.returncode == status and len(got) == left and named == left,
          f"python {mode} {extra}: exit {p.returncode} (want {status}), left {got} "
          f"(want {left}), {named} named; stderr {p.stderr[-300:]!r}")

for n, (args, extra, left) in enumerate([(["pass"], {}, 0), (["fail"], {}, 1),
                                          (["pass"], {"CUTRACE_KEEP_TMP": "1"}, 1)]):
    tmpdir = os.path.join(outer, f"c{n}")
    os.mkdir(tmpdir)
    env = dict(os.environ, TMPDIR=tmpdir, **extra)
    env.pop("CUTRACE_KEEP_TMP", None) if not extra else None
    p = subprocess.run([c_program, *args], env=env, capture_output=True, text=True, timeout=60)
    got = os.listdir(tmpdir)
    named = sum(1 for line in p.stderr.splitlines() if line.startswith("scratch directory kept: "))
    check(p.returncode == 0 and len(got) == left and named == left
          and all(g.startswith("ct-scratch-") for g in got),
          f"C {args} {extra}: exit {p.returncode}, left {got} (want {left}), {named} named; "
          f"{p.stdout!r} {p.stderr!r}")
sys.exit(finish())
