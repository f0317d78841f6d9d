#!/usr/bin/env python3
"""Every reading command survives damaged traces: a planted trace holding every record
kind (planted_all.py; raw zstd blocks, so that mutations reach the records themselves),
in one frame and one record per frame by turns, is mutated N times with a fixed seed
(bytes flipped, runs zeroed or duplicated, cut short, varints stretched), and `info`,
`report` (text with the kernel attribute columns, JSON, --by range, --by stack as CSV),
`gaps`, `steps`, `dump`, `dump --chrome` (with and without --queues), `dump --perfetto
--queues` and `diff` (the planted trace against the damaged one), some with --from/--to,
must end with exit status 0, 1 or 2, never a signal, and (in a sanitizer build) without
a sanitizer report.

usage: test_fuzz_cli.py CUTRACE [ITERATIONS [SEED]]
"""
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib"))
from cttest import check, finish, scratch_dir  # noqa: E402
from tracewrite import TraceWriter  # noqa: E402
import planted_all  # noqa: E402

cutrace = sys.argv[1]
iterations = int(sys.argv[2]) if len(sys.argv) > 2 else 150
seed = int(sys.argv[3]) if len(sys.argv) > 3 else 20261203
US, MS, T0 = 1000, 1000 * 1000, 10**9
tmp = scratch_dir("cutrace-fuzz-")


def planted(name="base.ctr", writer=TraceWriter):
    w = planted_all.fill(writer())
    path = os.path.join(tmp, name)
    w.save(path)
    return open(path, "rb").read()


def first_error(stderr):
    """The line of stderr that says what went wrong (a sanitizer's ERROR line first)."""
    lines = stderr.splitlines()
    for key in ("ERROR:", "runtime error", "Sanitizer"):
        hit = [ln for ln in lines if key in ln]
        if hit:
            return hit[0][:300]
    return stderr[-300:]


def redefined_strings():
    """A trace whose host, kernel and device-name strings are redefined after use (a
    damaged file): the pointers the tools keep must stay valid (the reader retires the
    old copies instead of freeing them)."""
    w = TraceWriter()
    host, kern, gpu = w.string("host"), w.string("_Z1kv"), w.string("GPU")
    w.add("process", pid=3, start_ns=T0, host=host, cmdline=host)
    w.add("device", device=0, name=gpu)
    w.string_again(host, "another host name, longer")  # before the first event
    w.string_again(gpu, "G")
    w.add("api", tid=3, name=kern, begin_ns=T0 + 1000, end_ns=T0 + 2000, corr=1, flags=4)
    w.add("launch", corr=1, kernel=kern)
    w.add("gpu", corr=1, start_ns=T0 + 3000, end_ns=T0 + 9000, type=1, name=kern)
    w.string_again(kern, "_Z1xv")
    w.add("end")
    path = os.path.join(tmp, "redefined.ctr")
    w.save(path)
    return path


def mutate(data, rng):
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(6)
        i = rng.randrange(len(b))
        if op == 0:
            b[i] ^= 1 << rng.randrange(8)
        elif op == 1:
            b[i] = rng.choice((0, 0x7F, 0x80, 0xFF, rng.randrange(256)))
        elif op == 2:
            n = rng.randint(1, 64)
            b[i:i + n] = bytes(min(n, len(b) - i))
        elif op == 3:
            n = rng.randint(1, 64)
            b[i:i] = b[i:i + n]
        elif op == 4:
            b = b[:max(1, i)]
        else:
            b[i:i] = bytes([0xFF] * rng.randint(1, 10))
    return bytes(b)


COMMANDS = [["info"], ["report"], ["report", "--format", "json"], ["report", "--by", "range"],
            ["report", "--by", "stack", "--format", "csv"], ["dump", "--chrome", "-o", os.devnull],
            ["diff", os.path.join(tmp, "base.ctr")],
            ["gaps", "--format", "json"], ["dump"], ["dump", "--chrome", "-o", os.devnull, "--queues"],
            ["dump", "--perfetto", "-o", os.devnull, "--queues", "--from", "0.5ms"],
            ["gaps", "--from", "1ms", "--to", "2ms"], ["report", "--from", "1.5ms"],
            ["steps", "--range", "*", "--format", "json"], ["steps", "--range", "*", "--to", "2ms"]]
base = planted()
# the same records one per frame: damage then also meets frame starts and headers
framed = planted("framed.ctr", planted_all.OneRecordPerFrame)
sane = subprocess.run([cutrace, "report", "--format", "json", os.path.join(tmp, "base.ctr")],
                      capture_output=True, text=True, timeout=60)
check(sane.returncode == 0 and '"gpu_total_ns"' in sane.stdout, f"the planted trace reads clean: {sane.stderr}")


def defined(prefix):
    """{value: name} of the format header's record kinds (prefix "X(") or #defines."""
    header = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "include", "cutrace",
                          "format.h")
    found = {}
    for line in open(header):
        words = line.replace("(", " ").replace(",", " ").replace(")", " ").split()
        if prefix == "X(" and line.lstrip().startswith("X("):
            found[int(words[2])] = words[1]
        elif prefix != "X(" and len(words) >= 3 and words[0] == "#define" and words[1].startswith(prefix):
            found[int(words[2])] = words[1]
    return found


# the corpus holds every record kind and MEMOP kind of the format (a new one must be
# planted too, or the fuzzing never reaches its code)
dump = subprocess.run([cutrace, "dump", os.path.join(tmp, "base.ctr")], capture_output=True,
                      text=True, timeout=60).stdout.splitlines()
held = {ln.split()[0] for ln in dump if ln.strip()}
missing = sorted(name for name in defined("X(").values() if name.lower() not in held)
check(not missing and len(held) > 20, f"record kinds not in the planted trace: {missing}")
memop_kinds = {int(w[5:]) for ln in dump if ln.startswith("memop ") for w in ln.split()
               if w.startswith("kind=")}
missing = sorted(name for value, name in defined("CT_MEMOP_").items() if value not in memop_kinds)
check(not missing and len(memop_kinds) >= 10, f"MEMOP kinds not in the planted trace: {missing}")
redef = redefined_strings()
for cmd in COMMANDS:
    p = subprocess.run([cutrace, *cmd, redef], capture_output=True, text=True, timeout=60,
                       errors="replace")
    check(p.returncode in (0, 1, 2) and "Sanitizer" not in p.stderr,
          f"redefined strings: {cmd}: exit {p.returncode} {first_error(p.stderr)}")
rng = random.Random(seed)
bad = []
for it in range(iterations):
    path = os.path.join(tmp, f"m{it % 8}.ctr")
    with open(path, "wb") as f:
        f.write(mutate(base if it % 2 == 0 else framed, rng))
    for cmd in COMMANDS:
        p = subprocess.run([cutrace, *cmd, path], capture_output=True, text=True, timeout=60,
                           errors="replace")
        if p.returncode not in (0, 1, 2) or "Sanitizer" in p.stderr or "runtime error" in p.stderr:
            keep = os.path.join(tmp, f"crash{len(bad)}.ctr")
            os.replace(path, keep)
            bad.append((it, cmd, p.returncode, keep, first_error(p.stderr)))
            break
check(not bad, f"{len(bad)} mutated traces crashed a command (seed {seed}): {bad[:2]}")
print(f"{iterations} mutated traces x {len(COMMANDS)} commands, seed {seed}")
sys.exit(finish())
