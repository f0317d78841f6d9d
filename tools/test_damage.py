#!/usr/bin/env python3
"""Damaged traces holding every record kind, the 1.6 ones too (KERNEL_ATTR, OCCUPANCY,
LAUNCH attr, GRAPH_KERNEL attr, DEVICE SM limits): the planted trace of planted_all.py
written one record per zstd frame (docs/format.md, "Reading damaged files"), then

- cut inside each frame (after its first byte, after its header, before its last
  byte): `dump` prints exactly the records of the whole frames before (the complete
  dump's first lines), exits 1 and says in one line "FILE: truncated (last frame
  incomplete) at offset O; N records read before it (partial result)" ("partial frame" when the cut leaves less
  than the frame's header), O the frame's start; every other reading
  command (info, report text and JSON, gaps, steps, dump --chrome, dump --perfetto,
  diff) exits 1 with the same one line when cut after the 1.6 records and after a
  launch that names them (steps adds that what was read held no steps);
- each frame's magic garbled: `dump` prints every record but that one, exit 1, one
  line naming the offset; a garbled kind byte the same ("corrupt record");
- cut right after the first kernel's GPU record: report --format json and dump --chrome
  still give that kernel its planted attributes (40 registers, 1024 bytes of static
  shared memory, 8 of local memory, 0 resident blocks per SM for 64 threads) and the
  device its SM limits; with the KERNEL_ATTR frame lost, the launches naming it have
  no attributes (and no crash).

usage: test_damage.py CUTRACE
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib"))
from cttest import check, finish, scratch_dir  # noqa: E402
import planted_all  # noqa: E402

FRAME_OVERHEAD = 16  # magic 4, frame header 1, content size 8, raw block header 3
cutrace = sys.argv[1]
tmp = scratch_dir("cutrace-damage-")


def run(*args):
    p = subprocess.run([cutrace, *args], capture_output=True, text=True, timeout=60,
                       errors="replace")
    return p.returncode, p.stdout, p.stderr


def write(name, data):
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


w = planted_all.fill(planted_all.OneRecordPerFrame())
whole = os.path.join(tmp, "whole.ctr")
w.save(whole)
data = open(whole, "rb").read()
starts, pos, prev = [], len(data) - len(w.body) - FRAME_OVERHEAD * len(w.ends), 0
for end in w.ends:
    starts.append(pos)
    pos, prev = pos + FRAME_OVERHEAD + end - prev, end
check(pos == len(data), f"frame layout: {pos} of {len(data)} bytes")
rc, out, err = run("dump", whole)
lines = out.splitlines()
kinds = [ln.split()[0] for ln in lines]
check(rc == 0 and len(lines) == len(w.ends), f"whole: dump exit {rc}, {len(lines)} lines, {err!r}")
for kind in ("kernel_attr", "occupancy", "graph_kernel", "device", "launch", "alloc", "end"):
    check(kind in kinds, f"the planted trace holds {kind}")

# Cut inside each frame: exactly the records before it.


def read(n):
    """The end of a damaged file's message: how many records came before the damage."""
    return f"{n} record{'' if n == 1 else 's'} read before it (partial result)"


wrong = []
for i, start in enumerate(starts):
    frame_end = starts[i + 1] if i + 1 < len(starts) else len(data)
    for cut in (start + 1, start + FRAME_OVERHEAD, frame_end - 1):
        path = write("cut.ctr", data[:cut])
        rc, out, err = run("dump", path)
        why = "partial frame" if cut < start + FRAME_OVERHEAD else "last frame incomplete"
        want = f"{path}: truncated ({why}) at offset {start}; {read(i)}"
        if out.splitlines() != lines[:i] or rc != 1 or err != f"cutrace dump: {want}\n":
            wrong.append((i, cut, rc, len(out.splitlines()), err))
check(not wrong, f"{len(wrong)} of {3 * len(starts)} cuts: {wrong[:3]}")

# Every reading command, cut after the KERNEL_ATTR / OCCUPANCY records and after the
# first launch naming them.
# What report, gaps, dump --chrome/--perfetto and diff say of planted_all's DROP record.
LOST = ("the tracer lost 3 records (its buffers were full: CUTRACE_BUFFER_KB); what happened "
        "near them is missing, idle time there may be work")
COMMANDS = [["info"], ["report"], ["report", "--format", "json"], ["gaps"],
            ["steps", "--range", "*"], ["dump", "--chrome", "-o", os.devnull],
            ["dump", "--perfetto", "-o", os.devnull], ["diff", whole]]
for i in (kinds.index("occupancy") + 1, kinds.index("launch") + 1):
    path = write(f"cut{i}.ctr", data[:starts[i] + 5])
    for cmd in COMMANDS:
        rc, out, err = run(*cmd, path)
        name = f"cutrace {cmd[0]}"
        want = (f"{name}: {path}: truncated (last frame incomplete) at offset {starts[i]}; "
                f"{read(i)}\n")
        if cmd[0] == "steps":  # no range in what was read: it says so, still partial (1)
            want = want.replace(" (partial result)", ", without steps (no NVTX range matches '*')")
        if cmd[0] == "diff":  # the whole trace's DROP record (3 records lost) said first
            want = f"{name}: {whole}: {LOST}\n" + want
        check(rc == 1 and err == want, f"cut before record {i}: {cmd}: exit {rc}, {err!r}")

# Each frame's magic garbled: every record but that one.
wrong = []
for i, start in enumerate(starts):
    garbled = bytearray(data)
    garbled[start] = 0
    path = write("garbled.ctr", bytes(garbled))
    rc, out, err = run("dump", path)
    want = f"cutrace dump: {path}: corrupt data (no frame start) at offset {start}; "
    if out.splitlines() != lines[:i] + lines[i + 1:] or rc != 1 or not err.startswith(want) \
            or err.count("\n") != 1:
        wrong.append((i, rc, err))
check(not wrong, f"{len(wrong)} of {len(starts)} garbled frames: {wrong[:3]}")
for kind in ("kernel_attr", "occupancy", "launch", "device"):
    i = kinds.index(kind)
    garbled = bytearray(data)
    garbled[starts[i] + FRAME_OVERHEAD] = 200  # no such record kind
    path = write("kind.ctr", bytes(garbled))
    rc, out, err = run("dump", path)
    check(out.splitlines() == lines[:i] + lines[i + 1:] and rc == 1 and
          err == f"cutrace dump: {path}: corrupt record in the frame at offset {starts[i]}; "
                 f"{read(len(lines) - 1)}\n",
          f"{kind}'s kind byte garbled: exit {rc}, {err!r}")

# Cut right after the first kernel's GPU record: its attributes are there.
first_gpu = next(j for j in range(kinds.index("launch"), len(kinds)) if kinds[j] == "gpu")
path = write("first.ctr", data[:starts[first_gpu + 1] + 5])
rc, out, err = run("report", "--format", "json", path)
rows = json.loads(out or "{}").get("kernels", []) if rc == 1 else []
check([r["name"] for r in rows] == ["k()"], f"first kernel: report rows {rows}, exit {rc} {err!r}")
attrs = rows[0].get("attributes") if rows else None
want = {"launches": 1, "regs_min": 40, "regs_max": 40, "smem_min": 1024, "smem_max": 1024,
        "occupancy_pct_min": 0.0, "occupancy_pct_max": 0.0, "more_configs": False,
        "configs": [{"launches": 1, "regs": 40, "smem_static": 1024, "smem_dynamic": 0,
                     "local_bytes": 8, "block_threads": 64, "blocks_per_sm": 0,
                     "occupancy_pct": 0.0}]}
check(attrs == want, f"first kernel: attributes {attrs}")
rc, out, err = run("dump", "--chrome", path)
doc = json.loads(out or "{}") if rc == 1 else {}
kernels = [e for e in doc.get("traceEvents", []) if e.get("cat") == "kernel"]
got = [{k: e["args"].get(k) for k in ("registers per thread", "static shared memory",
                                        "local memory per thread", "resident blocks per SM")}
       for e in kernels]
check(got == [{"registers per thread": 40, "static shared memory": 1024,
               "local memory per thread": 8, "resident blocks per SM": 0}],
      f"first kernel: chrome args {got}, exit {rc} {err!r}")
props = (doc.get("deviceProperties") or [{}])[0]
check((props.get("maxThreadsPerMultiprocessor"), props.get("regsPerMultiprocessor"),
       props.get("sharedMemPerMultiprocessor")) == (2048, 65536, 233472),
      f"first kernel: device limits {props}")

# The KERNEL_ATTR frame lost: launches naming it have no attributes. The DROP record at
# the end is still read: the commands that read through the model say the tracer lost 3.
garbled = bytearray(data)
garbled[starts[kinds.index("kernel_attr")]] = 0
path = write("noattr.ctr", bytes(garbled))
rc, out, err = run("report", "--format", "json", path)
rows = {r["name"]: r for r in json.loads(out or "{}").get("kernels", [])} if rc == 1 else {}
check("k()" in rows and rows["k()"].get("attributes") is None and rows["k()"]["calls"] == 30,
      f"KERNEL_ATTR lost: k() {rows.get('k()')}, exit {rc} {err!r}")
for cmd in COMMANDS:
    rc, out, err = run(*cmd, path)
    lost = [l for l in err.splitlines() if LOST in l]
    damage = [l for l in err.splitlines() if LOST not in l]
    check(rc == 1 and len(damage) == 1 and "corrupt data (no frame start)" in damage[0] and
          lost == ([f"cutrace diff: {whole}: {LOST}"] if cmd[0] == "diff" else []) +
          ([] if cmd[0] == "info" else [f"cutrace {cmd[0]}: {path}: {LOST}"]),
          f"KERNEL_ATTR lost: {cmd}: exit {rc}, {err!r}")
print(f"{len(starts)} frames: {3 * len(starts)} cuts, {len(starts)} garbled frames")
sys.exit(finish())
