#!/usr/bin/env python3
"""The command an advice line prints works when pasted into a shell, whatever the trace
directory is called: `cutrace gaps --summary`'s "(see cutrace gaps ... for the fixes)"
and the same line at the end of `cutrace record`, for directories named with a space, a
single quote, $, a backquote, a backslash, a newline, * and a leading '-'. Each advice
command is run by sh (cutrace found on PATH) and must print what `cutrace gaps` prints
for that directory and those options run without a shell. Also the quoting itself:
plain words stay as they are, the others inside single quotes with ' as '\\''.

usage: test_advice_quote.py CUTRACE PLANTRACE BUILD_ROOT
"""
import os
import re
import shutil
import subprocess
import sys

from tooltest import check, finish, scratch

cutrace, plantrace, build = (os.path.abspath(a) for a in sys.argv[1:4])
sim = os.path.join(build, "tests", "sim")
launch_loop = os.path.join(build, "bench", "workloads", "launch_loop")

NAMES = ["plain_dir", "with space", "it's", "$HOME", "`echo no`", "back\\slash", "new\nline",
         "star*", "-dash", "~tilde", "mix 'a' \"b\" $(c) \\d"]


def advice_of(text):
    """The command of the advice line: from 'see ' to ' for the fixes)'."""
    m = re.search(r"\(see (cutrace gaps.*?) for the fixes\)", text, re.S)
    return m.group(1) if m else None


def check_pasted(d, label, command, want_args):
    """Runs command with sh, cutrace on PATH; compares with cutrace gaps WANT_ARGS."""
    env = dict(os.environ, PATH=os.path.join(d, "bin") + os.pathsep + os.environ["PATH"])
    got = subprocess.run(["sh", "-c", command], capture_output=True, text=True, env=env, cwd=d)
    want = subprocess.run([cutrace, "gaps", *want_args], capture_output=True, text=True, cwd=d)
    check(want.returncode == 0 and "GPU" in want.stdout, f"{label}: gaps itself {want.stderr!r}")
    check(got.returncode == 0 and got.stdout == want.stdout,
          f"{label}: pasted {command!r}: status {got.returncode}, stderr {got.stderr!r}")


with scratch("cutrace-advice-quote-") as d:
    os.mkdir(os.path.join(d, "bin"))
    os.symlink(cutrace, os.path.join(d, "bin", "cutrace"))
    trace = os.path.join(d, "planted.ctr")
    subprocess.run([plantrace, trace], check=True, stdout=subprocess.DEVNULL)

    for name in NAMES:
        sub = os.path.join(d, name)
        os.mkdir(sub)
        shutil.copy(trace, os.path.join(sub, "p.ctr"))
        for opts in ([], ["--from", "1ms"]):
            # the directory as a user types it: relative, after -- when it looks like an option
            args = ["gaps", "--summary", *opts] + (["--", name] if name.startswith("-") else [name])
            p = subprocess.run([cutrace, *args], capture_output=True, text=True, cwd=d)
            cmd = advice_of(p.stdout)
            check(p.returncode == 0 and cmd is not None, f"{name!r}: no advice line {p.stdout!r}")
            if cmd is None:
                continue
            want = (["--from=1ms"] if opts else []) + ["--", name]
            check_pasted(d, f"gaps --summary {opts} {name!r}", cmd, want)

    # the quoting, exactly: words as a reader expects them
    for name, quoted in (("plain_dir", "plain_dir"), ("it's", "'it'\\''s'"),
                         ("$HOME", "'$HOME'"), ("-dash", "-- -dash"), ("with space", "'with space'")):
        args = ["gaps", "--summary"] + (["--", name] if name.startswith("-") else [name])
        p = subprocess.run([cutrace, *args], capture_output=True, text=True, cwd=d)
        check(advice_of(p.stdout) == "cutrace gaps " + quoted,
              f"{name!r} quoted as {advice_of(p.stdout)!r}, want {'cutrace gaps ' + quoted!r}")

    # cutrace record's summary on the simulated GPU: the same advice, pasted
    if not (os.path.exists(launch_loop) and os.path.isdir(sim)):
        print("SKIP: launch_loop or the simulated CUDA stack not built: record not tested")
    else:
        env = dict(os.environ, CUTRACE_QUIET="1",
                   LD_LIBRARY_PATH=sim + (":" + os.environ["LD_LIBRARY_PATH"]
                                          if os.environ.get("LD_LIBRARY_PATH") else ""))
        env.pop("CUTRACE_PRELOAD", None)
        env.pop("LD_PRELOAD", None)
        for name in ("rec it's $x", "-rec\nnl"):
            p = subprocess.run([cutrace, "record", "-o", name, "--", launch_loop, "20"],
                               capture_output=True, text=True, env=env, cwd=d, timeout=120)
            cmd = advice_of(p.stderr)
            check(p.returncode == 0 and cmd is not None,
                  f"record -o {name!r}: status {p.returncode}, no advice in {p.stderr!r}")
            if cmd:
                check_pasted(d, f"record -o {name!r}", cmd, ["--", name])

finish()
