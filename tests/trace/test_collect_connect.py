"""The connect to a collector never blocks the traced program (docs/preload.md,
"Streaming to a collector"), on the simulated GPU.

programs/forkexec measures, on its own thread, how long a traced process start costs
it (forkexec_run.py): the parent's start-up (through env once: a traced wrapper that
execs), a fork child's first CUDA call after fork, and an exec'd image's start-up.
Each is a process that connects to the collector. Against a unix socket whose
listener never accepts (backlog 0, already full: every connect gets EAGAIN
until the tracer's 5 s deadline), each must stay far below that deadline (< 1 s: a
behaviour check with a large margin, not a benchmark), each process says once that it
is not tracing, and the program's output and status are unchanged. Against a
listener that starts accepting only after 1.5 s, every stream gets through complete
(clean end, the kernels of a directory run, nothing dropped), and with small buffers
the records that did not fit meanwhile are dropped and counted in the trace. A
process that records nothing and exits at once still delivers its stream. The name of
a tcp collector is resolved on the writer thread too: with a getaddrinfo that takes
2 s (programs/slowdns.c) nothing is delayed and every stream arrives, and a child
forked during the parent's getaddrinfo does not call it again (it waits for the
parent's answer); an address (tcp:127.0.0.1:PORT) never goes through getaddrinfo (a
fork during it hung the child); a name that does not resolve is one line.

Arguments: SIM_DIR CUTRACE LIBTRACE PROGRAM_DIR (harness.py; PROGRAM_DIR holds forkexec).
"""
import os
import re
import socket
import subprocess
import sys
import threading
import time

import harness
from forkexec_run import ForkExec

h = harness.Harness(sys.argv)
check = h.check
fe = ForkExec(h)  # each measure below 1 s, vs the tracer's 5 s connect deadline
run_forkexec, check_not_delayed, kernels, info_of = fe.run, fe.check_not_delayed, fe.kernels, fe.info_of


class Listener:
    """A unix socket with backlog 0 and, when fill, one connection already waiting in
    it: further connects get EAGAIN (without fill, the first connect gets in and waits
    there, never accepted; the others get EAGAIN). accept_after seconds later (None: never) it accepts every
    connection and writes each cutrace stream's bytes after the preamble line into
    out_dir/NAME, as cutrace collect would (names are unique here)."""

    def __init__(self, path, out_dir, accept_after, fill=True):
        self.path, self.out_dir = path, out_dir
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.bind(path)
        self.sock.listen(0)
        self.filler = socket.socket(socket.AF_UNIX)
        if fill:
            self.filler.connect(path)
        self.streams, self.stop = [], False
        self.thread = None
        if accept_after is not None:
            os.makedirs(out_dir)
            self.thread = threading.Thread(target=self.serve, args=(accept_after,), daemon=True)
            self.thread.start()

    def serve(self, delay):
        time.sleep(delay)
        self.sock.settimeout(0.2)
        readers = []
        while True:
            # stop read before the accept: a connection queued before close() is still
            # taken (on a loaded machine a process could connect, write its stream into
            # the socket and exit before this thread ran; its stream was then lost)
            stopping = self.stop
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                if stopping:
                    break
                continue
            r = threading.Thread(target=self.receive, args=(conn,), daemon=True)
            r.start()
            readers.append(r)
        for r in readers:
            r.join(30)

    def receive(self, conn):
        data = b""
        while True:
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
        conn.close()
        line, _, body = data.partition(b"\n")
        m = re.match(rb"CUTRACE-STREAM 1 (\S+)$", line)
        if m:  # the filler connection sends nothing
            self.streams.append(m.group(1).decode())
            with open(os.path.join(self.out_dir, m.group(1).decode()), "wb") as f:
                f.write(body)

    def close(self):
        self.stop = True
        self.filler.close()  # its reader sees the end
        if self.thread:
            self.thread.join(60)
        self.sock.close()
        os.unlink(self.path)


plain_dir = os.path.join(h.tmp, "plain")
rc, out, err, _, _ = run_forkexec(20, plain_dir)
check(rc == 0 and err == "" and out.count("copy check: ok") == 3, f"directory run: {rc} {err!r}")
reference = kernels(plain_dir)
check(reference == {"fe_work(unsigned char*)": 60}, f"directory run kernels: {reference}")

# Never accepted: the three starts are not delayed; one line each; exit waits at most
# for the rest of the 5 s deadline. Started through env, which execs before it records
# anything: it does not wait for its own connect either (the parent's start measures
# it) and says nothing.
path = os.path.join(h.tmp, "never.sock")
lst = Listener(path, None, None)
rc, out, err, took, ms = run_forkexec(20, "unix:" + path, wrapper=("env",))
lst.close()
check_not_delayed("never accepted", rc, out, ms)
want = f"cutrace: cannot connect to unix:{path}: Connection timed out; not tracing"
check(err.splitlines() == [want] * 3, f"never accepted: one line per process: {err!r}")
check(took < 15, f"never accepted: the run took {took:.1f} s")

# One slot: whichever process connects first waits in the backlog (its stream never
# read); the other two (in particular a fork child or an exec'd image of a process that
# is tracing) get EAGAIN until their deadline, without delaying the program.
path = os.path.join(h.tmp, "one.sock")
lst = Listener(path, None, None, fill=False)
rc, out, err, took, ms = run_forkexec(20, "unix:" + path)
lst.close()
check_not_delayed("one slot", rc, out, ms)
check(err.splitlines() == [want.replace("never.sock", "one.sock")] * 2,
      f"one slot: one line for each of two processes: {err!r}")

# Accepted after 1.5 s: not delayed either, and every stream complete.
path = os.path.join(h.tmp, "late.sock")
got_dir = os.path.join(h.tmp, "late")
lst = Listener(path, got_dir, 1.5)
rc, out, err, took, ms = run_forkexec(20, "unix:" + path)
lst.close()
check_not_delayed("accepted late", rc, out, ms)
check(err == "", f"accepted late: stderr {err!r}")
pids = sorted(re.findall(r"pid (\d+): 20 launches", out))
host = socket.gethostname().replace("/", "_") or "localhost"
check(sorted(lst.streams) == sorted(f"{host}.{p}.ctr" for p in pids),
      f"accepted late: streams {lst.streams} for pids {pids}")
for name in lst.streams:
    clean, dropped = info_of(os.path.join(got_dir, name))
    check(clean and dropped == 0, f"accepted late: {name} clean {clean}, dropped {dropped}")
check(kernels(got_dir) == reference, f"accepted late: kernels {kernels(got_dir)} vs {reference}")

# A process that records nothing and exits at once (true) still waits briefly for a
# healthy collector's answer: its stream arrives, clean (with CUTRACE_ALL_PROCESSES:
# a process without CUDA has no stream otherwise, checked below).
path = os.path.join(h.tmp, "quick.sock")
got_dir = os.path.join(h.tmp, "quick")
lst = Listener(path, got_dir, 0)
env = h.env()
env.update(LD_PRELOAD=h.libtrace, CUTRACE_OUTPUT="unix:" + path, CUTRACE_ALL_PROCESSES="1")
quick = [subprocess.Popen(["true"], env=env, stderr=subprocess.PIPE) for _ in range(5)]
errs = [p.communicate(timeout=30)[1] for p in quick]
time.sleep(0.5)
lst.close()
want = sorted(f"{host}.{p.pid}.ctr" for p in quick)
check(sorted(lst.streams) == want and errs == [b""] * 5,
      f"true: streams {sorted(lst.streams)}, expected {want}, stderr {errs}")
for name in lst.streams:
    check(info_of(os.path.join(got_dir, name)) == (True, 0), f"true: {name} ends clean")
# by default a process without CUDA connects to no collector (and counts nowhere)
path = os.path.join(h.tmp, "nocuda.sock")
lst = Listener(path, os.path.join(h.tmp, "nocuda"), 0)
env.update(CUTRACE_OUTPUT="unix:" + path)
del env["CUTRACE_ALL_PROCESSES"]
q = subprocess.run(["true"], env=env, capture_output=True, timeout=30)
time.sleep(0.3)
lst.close()
check(q.returncode == 0 and q.stderr == b"" and lst.streams == [],
      f"true without CUTRACE_ALL_PROCESSES: streams {lst.streams}")

# A host name is resolved on the writer thread too: a name that resolves (localhost),
# even slowly, streams every process to a real collector without delaying any; one
# that does not is one line, and the program runs untraced with its own output.
out_dir = os.path.join(h.tmp, "named")
col = subprocess.Popen([h.cutrace, "collect", "-o", out_dir, "--listen", "tcp:127.0.0.1:0",
                        "--once"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
m = re.match(r"collect: listening on tcp:127\.0\.0\.1:(\d+),", col.stdout.readline())
port = m.group(1) if m else "0"
check(m is not None, "named: the collector's first line names its port")
# localhost resolved by a resolver that takes 2 s (programs/slowdns.c preloaded first):
# the program does not wait for it either
slowdns = os.path.join(h.wdir, "libslowdns.so")
slow_calls = os.path.join(h.tmp, "slow.calls")
rc, out, err, took, ms = run_forkexec(20, f"tcp:localhost:{port}",
                                      {"SLOWDNS_MS": "2000", "SLOWDNS_CALLS": slow_calls},
                                      preload=slowdns + ":")
try:
    col.communicate(timeout=30)
except subprocess.TimeoutExpired:
    col.kill()
    col.communicate()
check_not_delayed("slow localhost", rc, out, ms)
# one getaddrinfo per process image: the parent's and the exec'd image's; child A,
# forked during the parent's, waits for its answer (calling getaddrinfo there could
# find glibc's locks copied held, for ever)
slow_logged = open(slow_calls).read() if os.path.exists(slow_calls) else ""
check(slow_logged == "getaddrinfo localhost\n" * 2,
      f"slow localhost: getaddrinfo in the parent and the exec'd image only: {slow_logged!r}")
names = sorted(os.listdir(out_dir)) if os.path.isdir(out_dir) else []
check(err == "" and len(names) == 3 and all(info_of(os.path.join(out_dir, n))[0] for n in names),
      f"slow localhost: three clean streams: {names}, stderr {err!r}")
# An address (tcp:127.0.0.1:PORT) is not resolved at all: getaddrinfo takes glibc
# locks that a fork during the call leaves locked in the child, whose writer then hung
# in it for ever, and the child's exit with it (tools/test_record.py and test_collect.py
# saw it under load). programs/slowdns.c logs every call it sees.
out_dir = os.path.join(h.tmp, "numeric")
col = subprocess.Popen([h.cutrace, "collect", "-o", out_dir, "--listen", "tcp:127.0.0.1:0",
                        "--once"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
m = re.match(r"collect: listening on (tcp:127\.0\.0\.1:\d+),", col.stdout.readline())
check(m is not None, "numeric: the collector's first line names its address")
calls = os.path.join(h.tmp, "numeric.calls")
rc, out, err, took, ms = run_forkexec(5, m.group(1) if m else "tcp:127.0.0.1:1",
                                      {"SLOWDNS_MS": "0", "SLOWDNS_CALLS": calls},
                                      preload=slowdns + ":")
try:
    col.communicate(timeout=30)
except subprocess.TimeoutExpired:
    col.kill()
    col.communicate()
names = sorted(os.listdir(out_dir)) if os.path.isdir(out_dir) else []
logged = open(calls).read() if os.path.exists(calls) else ""
check(rc == 0 and err == "" and len(names) == 3 and all(info_of(os.path.join(out_dir, n))[0] for n in names)
      and logged == "", f"numeric: three clean streams {names}, no getaddrinfo call: {logged!r} {err!r}")
env = h.env()
env.update(LD_PRELOAD=h.libtrace, CUTRACE_OUTPUT="tcp:no.such.host.invalid:7878")
q = subprocess.run([h.workload("forkexec"), "--exec-stage", "0", "5"], env=env,
                   capture_output=True, text=True, timeout=60)
lines = q.stderr.splitlines()
check(q.returncode == 0 and "5 launches; copy check: ok" in q.stdout and len(lines) == 1
      and lines[0].startswith("cutrace: cannot use CUTRACE_OUTPUT: tcp:no.such.host.invalid:7878: ")
      and lines[0].endswith("; not tracing"), f"unresolvable: one line: {q.stderr!r}")

# Accepted after 1.5 s with 4 KiB buffers: what did not fit meanwhile is dropped and
# counted, the traces still end clean.
path = os.path.join(h.tmp, "small.sock")
got_dir = os.path.join(h.tmp, "small")
lst = Listener(path, got_dir, 1.5)
rc, out, err, took, ms = run_forkexec(2000, "unix:" + path, {"CUTRACE_BUFFER_KB": "4"})
lst.close()
check_not_delayed("small buffers", rc, out, ms)
check(err == "" and len(lst.streams) == 3, f"small buffers: {err!r}, streams {lst.streams}")
# each process launches its 2000 kernels while unconnected unless the machine is so
# loaded that it starts after 1.5 s: the drops are asserted over the three together
total = 0
for name in lst.streams:
    clean, dropped = info_of(os.path.join(got_dir, name))
    total += dropped
    check(clean, f"small buffers: {name} clean {clean}, dropped {dropped}")
check(total > 0, f"small buffers: no records dropped in {lst.streams}")
h.finish()
