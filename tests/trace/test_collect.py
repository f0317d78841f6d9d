"""cutrace collect and CUTRACE_OUTPUT=tcp:/unix: end to end on the simulated GPU.

Bundled workloads stream their traces to a running `cutrace collect` (unix socket,
then tcp on 127.0.0.1 with a port the collector picks); the files it writes must
report what a directory output gives, end clean, one per process (forker: two).
`cutrace record --collector`, a failed exec (a second stream). Then the failures: the
collector killed mid-run (the program still exits 0 with its
normal output and one warning; the partial file reads up to the damage), no
collector (one line, program unchanged), bad --listen (exit 2), a stream cut off by
SIGTERM, hostile names and name clashes.

Arguments: SIM_DIR CUTRACE LIBTRACE WORKLOAD_DIR (harness.py).
"""
import glob
import os
import re
import signal
import socket
import subprocess
import sys
import time

import harness

h = harness.Harness(sys.argv)
check = h.check
HOST = socket.gethostname().replace("/", "_") or "localhost"


def norm(text):
    """A workload's stdout without its numbers (timings, pids) and in a fixed order
    (forker's parent and child print in either order)."""
    return sorted(re.sub(r"\d+", "N", text).splitlines())


def traced(name, args, output, extra=None):
    """Runs a workload with libtrace.so preloaded and CUTRACE_OUTPUT=output; the
    CompletedProcess gets .pid."""
    env = h.env(extra=extra)
    env["LD_PRELOAD"] = h.libtrace
    env["CUTRACE_OUTPUT"] = output
    p = subprocess.Popen([h.workload(name), *args], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    out, err = p.communicate(timeout=120)
    done = subprocess.CompletedProcess(p.args, p.returncode, out, err)
    done.pid = p.pid
    return done


def start_collect(out_dir, listen, *extra):
    """Starts cutrace collect; returns (process, the address its first line names)."""
    p = subprocess.Popen([h.cutrace, "collect", "-o", out_dir, "--listen", listen, *extra],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = p.stdout.readline()
    m = re.match(r"collect: listening on (\S+), writing into ", first)
    check(m is not None, f"collect {listen}: first line names the address: {first!r}")
    return p, m.group(1) if m else listen


def finish_collect(p, what, timeout=60):
    """Waits for a --once collector; returns (returncode, stdout lines, stderr)."""
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        check(False, f"{what}: collect --once did not exit")
    return p.returncode, out.splitlines(), err


def kernels(path):
    """{kernel name: calls} of `cutrace report --format json`."""
    rc, doc, err = h.cutrace_json("report", "--format", "json", path)
    check(rc == 0 and doc is not None, f"report {path}: rc {rc}, {err.strip()}")
    return {k["name"]: k["calls"] for k in (doc or {}).get("kernels", [])}


def info_clean(path):
    rc, out, _ = h.run("info", path)
    return rc == 0 and re.search(r"^\s*end\s+clean\s*$", out, re.M) is not None


def streamed_run(tag, listen, name, args, nfiles):
    """A workload streamed to a --once collector, compared with a directory run."""
    out_dir = os.path.join(h.tmp, tag)
    col, addr = start_collect(out_dir, listen, "--once")
    t = traced(name, args, addr)
    rc, lines, err = finish_collect(col, tag)
    plain = traced(name, args, os.path.join(h.tmp, tag + ".dir"))
    check(t.returncode == 0 and t.stderr == "", f"{tag}: rc {t.returncode}, stderr {t.stderr!r}")
    check(norm(t.stdout) == norm(plain.stdout), f"{tag}: output differs from a directory run")
    check(rc == 0 and err == "", f"{tag}: collect rc {rc}, stderr {err!r}")
    files = sorted(glob.glob(os.path.join(out_dir, "*.ctr")))
    check(len(files) == nfiles, f"{tag}: {nfiles} file(s) expected, got {files}")
    pids = {t.pid} | {int(m) for m in re.findall(r"pid (\d+):", t.stdout)}
    want = sorted(f"{HOST}.{pid}.ctr" for pid in pids)
    check(sorted(map(os.path.basename, files)) == want, f"{tag}: names {files}, expected {want}")
    done = [l for l in lines if " from " in l]
    check(len(done) == nfiles and all(l.endswith(", closed") for l in done),
          f"{tag}: one 'closed' line per stream: {lines}")
    for f in files:
        check(info_clean(f), f"{tag}: {f} does not end clean")
        check(os.stat(f).st_mode & 0o777 == 0o600, f"{tag}: {f} mode {oct(os.stat(f).st_mode)}")
    got, ref = kernels(out_dir), kernels(os.path.join(h.tmp, tag + ".dir"))
    check(got == ref and got, f"{tag}: kernels {got} vs directory run {ref}")


# Unix socket: one process, then a fork (two streams); tcp with a port collect picks.
sock = os.path.join(h.tmp, "c.sock")
streamed_run("unix-matmul", "unix:" + sock, "matmul_add", ["64", "5", "2"], 1)
check(not os.path.exists(sock), "collect removes its unix socket at exit")
streamed_run("unix-forker", "unix:" + sock, "forker", ["20"], 2)
streamed_run("tcp-matmul", "tcp:127.0.0.1:0", "matmul_add", ["64", "5", "2"], 1)
streamed_run("tcp-forker", "tcp:127.0.0.1:0", "forker", ["20"], 2)

# cutrace record --collector: the program streams, nothing local, one line says where.
out_dir = os.path.join(h.tmp, "record")
col, addr = start_collect(out_dir, "unix:" + sock, "--once")
p = subprocess.run([os.path.abspath(h.cutrace), "record", "--collector", addr, "--",
                    os.path.abspath(h.workload("forker")), "5"],
                   env=dict(h.env(), CUTRACE_PRELOAD=os.path.abspath(h.libtrace)),
                   capture_output=True, text=True, timeout=120, cwd=h.tmp)
rc, lines, _ = finish_collect(col, "record")
check(p.returncode == 0 and p.stderr == f"cutrace record: traces sent to the collector at {addr}\n",
      f"record --collector: rc {p.returncode}, stderr {p.stderr!r}")
check(len(glob.glob(os.path.join(out_dir, "*.ctr"))) == 2 and rc == 0,
      f"record --collector: two streams, collect rc {rc}")
check(not os.path.exists(os.path.join(h.tmp, "cutrace.data")), "record --collector writes nothing local")

# A failed exec traces on into a new stream; --once waits for it; the collector numbers
# it as the preload numbers files (<host>.<pid>.1.ctr).
out_dir = os.path.join(h.tmp, "exec")
col, addr = start_collect(out_dir, "unix:" + sock, "--once")
bad = os.path.join(h.tmp, "not-a-program")
with open(bad, "w") as f:
    f.write("not an executable format\n")
os.chmod(bad, 0o755)
env = h.env()
# (CUTRACE_ALL_PROCESSES: Python without CUDA has no trace otherwise, and no stream)
env.update(LD_PRELOAD=h.libtrace, CUTRACE_OUTPUT=addr, CUTRACE_ALL_PROCESSES="1")
p = subprocess.Popen([sys.executable, "-c", "import os, sys\ntry: os.execv(sys.argv[1], ['x'])\n"
                      "except OSError as e: print('exec failed', e.errno)", bad], env=env,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
out, err = p.communicate(timeout=60)
rc, lines, cerr = finish_collect(col, "exec")
check(out.startswith("exec failed") and err == "", f"exec: {out!r} {err!r}")
names = sorted(os.listdir(out_dir))
check(names == [f"{HOST}.{p.pid}.1.ctr", f"{HOST}.{p.pid}.ctr"], f"exec: two streams: {names}")
check(rc == 0 and all(info_clean(os.path.join(out_dir, n)) for n in names),
      f"exec: collect rc {rc}, both clean")

# The collector killed mid-run: the program goes on, one warning, a readable partial file.
out_dir = os.path.join(h.tmp, "killed")
col, addr = start_collect(out_dir, "unix:" + sock)
env = h.env(extra={"SIMCUDA_KERNEL_US": "default=5", "CUTRACE_FLUSH_MS": "10"})
env.update(LD_PRELOAD=h.libtrace, CUTRACE_OUTPUT=addr)
prog = subprocess.Popen([h.workload("launch_loop"), "100000"], env=env, stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, text=True)
deadline = time.time() + 30
while time.time() < deadline and prog.poll() is None:
    sizes = [os.path.getsize(f) for f in glob.glob(os.path.join(out_dir, "*.ctr"))]
    if sizes and sizes[0] > 20000:
        break
    time.sleep(0.01)
check(prog.poll() is None, "killed: launch_loop still running when the collector is killed")
col.kill()
col.communicate()
out, err = prog.communicate(timeout=120)
plain = traced("launch_loop", ["100000"], os.path.join(h.tmp, "killed.dir"))
check(prog.returncode == 0, f"killed: program rc {prog.returncode}")
check(norm(out) == norm(plain.stdout), f"killed: output {out!r} vs {plain.stdout!r}")
lines = err.splitlines()
check(len(lines) == 1 and lines[0].startswith(f"cutrace: cannot send the trace to {addr} (")
      and lines[0].endswith("; records are being lost"), f"killed: one warning line: {lines}")
files = glob.glob(os.path.join(out_dir, "*.ctr"))
check(len(files) == 1, f"killed: one partial file: {files}")
if files:
    rc, doc, rerr = h.cutrace_json("report", "--format", "json", files[0])
    launches = sum(k["calls"] for k in (doc or {}).get("kernels", []))
    check(rc in (0, 1) and 0 < launches < 100000, f"killed: partial report rc {rc}, {launches} "
          f"kernels, {rerr.strip()}")
    check(not info_clean(files[0]), "killed: the partial file does not claim a clean end")

# A slow collector (stopped for 3 s while the program runs): records are dropped and counted, the trace
# still ends clean. One that never reads again: exit gives up after 5 s, one warning.
for tag, stop_for in (("slow", 3.0), ("stalled", None)):
    out_dir = os.path.join(h.tmp, tag)
    col, addr = start_collect(out_dir, "unix:" + sock)
    env = h.env(extra={"SIMCUDA_KERNEL_US": "default=5", "CUTRACE_BUFFER_KB": "64"})
    env.update(LD_PRELOAD=h.libtrace, CUTRACE_OUTPUT=addr)
    col.send_signal(signal.SIGSTOP)
    t0 = time.time()
    prog = subprocess.Popen([h.workload("launch_loop"), "200000"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if stop_for:
        time.sleep(stop_for)
        col.send_signal(signal.SIGCONT)
    out, err = prog.communicate(timeout=60)
    took = time.time() - t0
    col.send_signal(signal.SIGCONT)
    time.sleep(0.5)
    col.send_signal(signal.SIGINT)
    col.communicate(timeout=30)
    check(prog.returncode == 0 and "launch_loop: N=200000" in out, f"{tag}: rc {prog.returncode}")
    rc, info, _ = h.run("info", out_dir)
    if stop_for:
        dropped = re.search(r"^\s*dropped\s+(\d+)", info, re.M)
        check(err == "" and info_clean(out_dir) and dropped and int(dropped.group(1)) > 0,
              f"{tag}: drops counted, clean end: stderr {err!r}, info {info!r}")
    else:
        check(err == f"cutrace: cannot send the trace to {addr} (it took nothing for 5 s at "
              "exit; giving up); records are being lost\n", f"{tag}: one warning: {err!r}")
        check(5 <= took < 15, f"{tag}: exit gave up after about 5 s, not {took:.1f} s")
        # the cut falls inside a frame (a truncated file, status 1) or, when the socket
        # buffer happened to end on a frame boundary, after a whole frame (no END record)
        check((rc == 1 and "truncated" in info) or (rc == 0 and "no END record" in info),
              f"{tag}: partial file readable, no clean end claimed: {info!r}")

# No collector: one line, the program's output and status unchanged (unix and tcp).
free = socket.socket()
free.bind(("127.0.0.1", 0))
port = free.getsockname()[1]
free.close()
plain = traced("matmul_add", ["64", "5", "2"], os.path.join(h.tmp, "none.dir"))
for addr, why in (("unix:" + os.path.join(h.tmp, "none.sock"), "No such file or directory"),
                  (f"tcp:127.0.0.1:{port}", "Connection refused")):
    t = traced("matmul_add", ["64", "5", "2"], addr)
    check(t.returncode == plain.returncode == 0 and norm(t.stdout) == norm(plain.stdout),
          f"no collector {addr}: rc {t.returncode}, output {t.stdout!r}")
    check(t.stderr == f"cutrace: cannot connect to {addr}: {why}; not tracing\n",
          f"no collector {addr}: stderr {t.stderr!r}")

# Bad addresses and options: one line, exit 2.
for bad in (["--listen", "tcp:99999"], ["--listen", "udp:1"], ["--listen", "tcp:a:b:1"],
            ["--listen", "unix:"], ["--listen", "tcp:no.such.host.invalid:1"], ["--bogus"],
            ["--listen"], ["--listen", "unix:" + os.path.join(h.tmp, "no", "dir", "s")]):
    rc, out, err = h.run("collect", "-o", os.path.join(h.tmp, "bad"), *bad)
    check(rc == 2 and len(err.splitlines()) == 1 and err.startswith("cutrace collect: "),
          f"collect {bad}: rc {rc}, stderr {err!r}")
rc, out, err = h.run("record", "--collector", "tcp:", "--", "true")
check(rc == 2 and len(err.splitlines()) == 1, f"record --collector tcp: rc {rc}, {err!r}")


def raw_stream(addr_path, data):
    s = socket.socket(socket.AF_UNIX)
    s.connect(addr_path)
    s.sendall(data)
    return s


# Hostile names, clashes, a stream cut off by SIGTERM (every received byte kept).
out_dir = os.path.join(h.tmp, "raw")
col, addr = start_collect(out_dir, "unix:" + sock)
body = b"CUTRACE\x01" + bytes(range(256)) * 40
for pre in (b"../../evil", b"x/y.ctr", b"same.ctr", b"same.ctr"):
    raw_stream(sock, b"CUTRACE-STREAM 1 " + pre + b"\n" + body).close()
raw_stream(sock, b"GET / HTTP/1.0\r\n\r\n").close()
open_one = raw_stream(sock, b"CUTRACE-STREAM 1 open.ctr\n" + body)
time.sleep(1)
col.send_signal(signal.SIGTERM)
out, err = col.communicate(timeout=30)
open_one.close()
names = sorted(os.listdir(out_dir))
check(names == ["_._.._evil.ctr", "open.ctr", "same.1.ctr", "same.ctr", "x_y.ctr"],
      f"raw: names {names}")
for n in names:
    with open(os.path.join(out_dir, n), "rb") as f:
        check(f.read() == body, f"raw: {n} holds exactly the bytes sent after the preamble")
check(col.returncode == 1, f"raw: collect stopped with a stream open: rc {col.returncode}")
check("open.ctr from unix pid" in out and "cut off: collector stopped" in out,
      f"raw: the open stream is reported cut off: {out!r}")
check("dropped: not a cutrace stream" in out, f"raw: the HTTP request is dropped: {out!r}")
h.finish()
