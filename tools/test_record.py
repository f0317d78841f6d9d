#!/usr/bin/env python3
"""cutrace record: the program's exit status (0, 3, killed by a signal), signals sent
to cutrace reach the program, LD_PRELOAD/CUTRACE_OUTPUT as documented, an old DIR set
aside, the error paths (no libtrace, bad command, bad options); and, when libtrace.so,
the simulated CUDA stack and the workloads are built, that a program that forks and one
that execs are traced (every process, kernels counted).
usage: test_record.py CUTRACE BUILD_ROOT"""
import json
import os
import signal
import subprocess
import sys
import time

cutrace, build = sys.argv[1], sys.argv[2]
lib = os.path.join(build, "preload", "libtrace.so")
sim = os.path.join(build, "tests", "sim")
forker = os.path.join(build, "bench", "workloads", "forker")
launch_loop = os.path.join(build, "bench", "workloads", "launch_loop")
import tooltest
from tooltest import check, finish, skip, scratch


def env_with(**kw):
    env = dict(os.environ)
    env.pop("CUTRACE_PRELOAD", None)
    env["CUTRACE_QUIET"] = "1"
    for k, v in kw.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def record(*args, env=None, timeout=60):
    p = subprocess.run([cutrace, "record", *args], capture_output=True, text=True,
                       env=env or env_with(), timeout=timeout)
    return p.returncode, p.stdout, p.stderr


have_lib = os.path.exists(lib)
with scratch("cutrace-record-") as d:
    out = os.path.join(d, "rec")
    # Error paths first (they need no libtrace).
    rc, o, e = record("-o", out, "--", "true", env=env_with(CUTRACE_PRELOAD=os.path.join(d, "nope.so")))
    check(rc == 127 and "CUTRACE_PRELOAD" in e and e.count("\n") == 1, f"missing libtrace: {rc} {e!r}")
    fake = os.path.join(d, "libfake.so")
    open(fake, "wb").close()  # a preload that ld.so cannot load: it warns, the program still runs
    rc, o, e = record("-q", "-o", out, "--", "no-such-command-xyz", env=env_with(CUTRACE_PRELOAD=fake))
    check(rc == 127 and "no-such-command-xyz" in e and "No such file" in e, f"bad command: {rc} {e!r}")
    rc, o, e = record()
    check(rc == 2 and "no command" in e, f"no command: {rc} {e!r}")
    rc, o, e = record("--bogus", "true")
    check(rc == 2 and "unknown option" in e, f"bad option: {rc} {e!r}")
    rc, o, e = record("--help")
    check(rc == 0 and "usage: cutrace record" in o, "--help")

    if not have_lib:
        if tooltest.failures:
            finish()
        skip(f"{lib} not built; the rest needs it")
    env = env_with(LD_PRELOAD=None)

    # Exit statuses.
    for code in (0, 3):
        rc, o, e = record("-q", "-o", out, "--", "sh", "-c", f"exit {code}", env=env)
        check(rc == code, f"exit {code}: got {rc} {e!r}")
    rc, o, e = record("-q", "-o", out, "--", "sh", "-c", "kill -KILL $$", env=env)
    check(rc == 128 + 9 and "killed by signal 9" in e, f"killed: {rc} {e!r}")

    # Environment: libtrace first in LD_PRELOAD, what was there kept; absolute output.
    rc, o, e = record("-q", "-o", out, "--", "sh", "-c",
                      'echo "$LD_PRELOAD"; echo "$CUTRACE_OUTPUT"; echo "$NVTX_INJECTION64_PATH"',
                      env=env_with(LD_PRELOAD="libm.so.6"))
    lines = o.splitlines()
    real = os.path.realpath(lib)
    check(rc == 0 and lines[:3] == [f"{real}:libm.so.6", os.path.realpath(out), real],
          f"environment: {lines}")

    # A DIR holding traces is set aside as DIR.old. (dash exits with _exit: a shell that
    # exits at once leaves no file, its writer thread had no time to create it.)
    rc, o, e = record("-q", "--all-processes", "-o", out, "--", "sleep", "0.5", env=env)
    check(any(f.endswith(".ctr") for f in os.listdir(out)), "traces written into DIR")
    rc, o, e = record("-q", "-o", out, "--", "true", env=env)
    check(rc == 0 and os.path.isdir(out + ".old") and
          any(f.endswith(".ctr") for f in os.listdir(out + ".old")), "old traces set aside")

    # Signals sent to cutrace reach the program. The program sleeps in 0.1 s steps, not
    # in one time.sleep(30): CPython runs a Python-level handler only from its eval
    # loop, and a signal caught after the loop's last check but before clock_nanosleep
    # starts (here: SIGTERM arriving while the child, preempted on a loaded host, is
    # between printing 'ready' and sleeping) sets the handler's flag without
    # interrupting the sleep, so one long sleep ran its 30 s (gdb on such a hang:
    # is_tripped and Handlers[SIGTERM].tripped set, the sleep's deadline 30 s after a
    # start later than the signal was sent). A signal that never reaches Python (the
    # tracer's handler not passing it on) still runs the loop out: status 3, or killed.
    prog = ("import signal, sys, time\n"
            "signal.signal(signal.SIGTERM, lambda *a: sys.exit(7))\n"
            "print('ready', flush=True)\n"
            "for _ in range(300):\n"
            "    time.sleep(0.1)\n"
            "sys.exit(3)\n")
    p = subprocess.Popen([cutrace, "record", "-q", "-o", out, "--", sys.executable, "-c", prog],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    ready = p.stdout.readline()
    t0 = time.monotonic()
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    check(ready.strip() == "ready" and p.returncode == 7 and time.monotonic() - t0 < 15,
          f"SIGTERM forwarded: rc {p.returncode}")
    p.stdout.close()
    p.stderr.close()

    # Fork and exec on the simulated GPU.
    if not (os.path.exists(forker) and os.path.exists(launch_loop) and os.path.isdir(sim)):
        print("SKIP: workloads or the simulated CUDA stack not built: fork/exec not tested")
    else:
        genv = env_with(LD_PRELOAD=None,
                        LD_LIBRARY_PATH=sim + (":" + os.environ["LD_LIBRARY_PATH"]
                                               if os.environ.get("LD_LIBRARY_PATH") else ""))
        fork_dir = os.path.join(d, "fork")
        rc, o, e = record("-o", fork_dir, "--", forker, "12", env=genv)
        check(rc == 0 and o.count("copy check: ok") == 2, f"forker ran: {rc} {o!r} {e!r}")
        check("cutrace record:" in e, f"summary printed: {e!r}")
        p = subprocess.run([cutrace, "report", "--per-process", "--format", "json", "--tables",
                            "kernels", fork_dir], capture_output=True, text=True)
        procs = json.loads(p.stdout)["processes"] if p.returncode == 0 else []
        counts = sorted(sum(k["calls"] for k in pr["kernels"] if k["name"].startswith("fork_work"))
                        for pr in procs)
        check(counts == [12, 12] and len({pr["pid"] for pr in procs}) == 2,
              f"parent and child each traced with 12 kernels: {counts} {p.stderr!r}")

        # real traces as Chrome traces: nested tracks, every GPU event linked to its call
        matmul = os.path.join(build, "bench", "workloads", "matmul_add")
        mm_dir = os.path.join(d, "matmul")
        if os.path.exists(matmul):
            rc, o, e = record("-q", "-o", mm_dir, "--", matmul, env=genv)
            check(rc == 0, f"matmul_add ran: {rc} {e!r}")
        for label, src in (("forker", fork_dir), ("matmul_add", mm_dir)):
            p = subprocess.run([cutrace, "dump", "--chrome", src], capture_output=True, text=True)
            doc = json.loads(p.stdout) if p.returncode == 0 else {"traceEvents": []}
            tooltest.check_nesting(doc, f"{label}'s Chrome trace")
            ev = doc["traceEvents"]
            gpu = [e for e in ev if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
            fin = {(e["id"], e["pid"], e["tid"], e["ts"]) for e in ev if e["ph"] == "f"}
            linked = sum(1 for g in gpu if any((i, g["pid"], g["tid"], g["ts"]) in fin
                                              for i in (g["args"]["correlation"],
                                                        g["args"]["correlation"] | 1 << 40)))
            check(len(gpu) >= 20 and linked == len(gpu),
                  f"{label}: {linked} of {len(gpu)} GPU events linked ({p.stderr!r})")

        # NVTX ranges of a real program: report --by range attributes its kernels
        nvtx_prog = os.path.join(build, "preload", "nvtx", "tests", "nvtx_kernels")
        if os.path.exists(nvtx_prog):
            nv_dir = os.path.join(d, "nvtx")
            rc, o, e = record("-q", "-o", nv_dir, "--", nvtx_prog, env=genv)
            p = subprocess.run([cutrace, "report", "--by", "range", "--format", "json", nv_dir],
                               capture_output=True, text=True)
            got = {r["name"]: (r["calls"], r["kernels"], r["activities"])
                   for r in (json.loads(p.stdout)["ranges"] if p.returncode == 0 else [])}
            want = {"step": (1, 2, 3), "phase_a": (1, 2, 2), "copy": (1, 0, 1), "t1_work": (1, 1, 1)}
            check(rc == 0 and all(got.get(k) == v for k, v in want.items()),
                  f"nvtx_kernels ranges: {got} {p.stderr!r}")

        exec_dir = os.path.join(d, "exec")
        rc, o, e = record("-q", "-o", exec_dir, "--", "sh", "-c", f"exec {launch_loop} 50", env=genv)
        check(rc == 0 and "launch_loop: N=50" in o, f"exec ran: {rc} {o!r} {e!r}")
        p = subprocess.run([cutrace, "report", "--format", "json", "--tables", "kernels", exec_dir],
                           capture_output=True, text=True)
        kernels = json.loads(p.stdout)["kernels"] if p.returncode == 0 else []
        tiny = sum(k["calls"] for k in kernels if k["name"].startswith("tiny"))
        check(tiny == 51, f"the exec'd program traced: {tiny} tiny kernels {p.stderr!r}")

finish()
