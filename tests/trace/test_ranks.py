#!/usr/bin/env python3
"""Distributed jobs on the simulated GPU: programs/comm.cu run as a 4-rank torchrun-style
job, a 2-rank Open MPI job inside a Slurm allocation, a 2-rank Slurm job with malformed
torch variables, all started by rank_launcher.py under `cutrace record`, and the forker
workload as one rank whose child keeps the rank. Asserts exactly: file names, the JOB
record of each rank (info, raw dump), devices told apart by PCI bus id and UUID
(CUDA_VISIBLE_DEVICES), ranks in gaps and report JSON and text, the straggler rank (the
one whose all-reduces are short), distributedInfo of one-rank and several-rank Chrome
documents, dump --chrome --split DIR (rank-N.json, the launcher left out), malformed
values ignored with one warning, diff between two ranks.

usage: test_ranks.py SIM_DIR CUTRACE LIBTRACE COMM_PROGRAM FORKER
"""
import json
import os
import re
import socket
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
from cttest import check, finish, require_built, scratch_dir  # noqa: E402
from rawdump import raw_records  # noqa: E402

sim_dir, cutrace, libtrace, program, forker = sys.argv[1:6]
require_built(os.path.join(sim_dir, "libcuda.so.1"), libtrace, cutrace, program, forker)
HOST = socket.gethostname().replace("/", "_")
ITERS = "10"
tmp = scratch_dir("cutrace-ranks-")
JOB_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK",
            "TORCHELASTIC_RUN_ID", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
            "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE", "MV2_COMM_WORLD_RANK",
            "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "SLURM_PROCID", "SLURM_NTASKS",
            "SLURM_LOCALID", "SLURM_NODEID", "SLURM_JOB_ID", "CUDA_VISIBLE_DEVICES",
            "LD_PRELOAD", "CUTRACE_OUTPUT")
base_env = {k: v for k, v in os.environ.items() if k not in JOB_VARS}
base_env.update(LD_LIBRARY_PATH=sim_dir, CUTRACE_PRELOAD=libtrace)


def run(*args, env=None):
    p = subprocess.run(list(args), env=env or base_env, capture_output=True, text=True,
                       timeout=180)
    return p.returncode, p.stdout, p.stderr


def launch(tag, style, nranks, slow, record_opts=()):
    """Runs the job under cutrace record; returns (data dir, {rank: pid}, launcher pid)."""
    data = os.path.join(tmp, tag)
    rc, out, err = run(cutrace, "record", "-q", *record_opts, "-o", data, "--", sys.executable,
                       os.path.join(HERE, "rank_launcher.py"), style, str(nranks), str(slow),
                       program, ITERS)
    check(rc == 0 and out.count("comm: ok") == nranks, f"{tag}: job ran: {rc} {out[-300:]} {err[-400:]}")
    # not anchored to line starts: a rank's own output may share the pipe mid-line
    pids = {int(r): int(p) for r, p in re.findall(r"rank (\d+) pid (\d+) status 0(?!\d)", out)}
    check(len(pids) == nranks, f"{tag}: the launcher named every rank's pid: {out[-500:]!r}")
    m = re.search(r"launcher pid (\d+)", out)
    return data, pids, int(m.group(1)) if m else 0, err


def rank_file(rank, pid):
    return f"rank-{rank}.{HOST}.{pid}.ctr"


def job_of(path):
    recs, strings = raw_records(cutrace, path)
    jobs = [r for r in recs if r["kind"] == "job"]
    if not jobs:
        return None, recs, strings
    j = dict(jobs[0])
    for k in ("source", "job_id", "visible_devices"):
        j[k] = strings.get(j[k]) if j[k] else None
    return j, recs, strings


def gaps_json(*paths):
    rc, out, _ = run(cutrace, "gaps", "--format", "json", *paths)
    try:
        return rc, json.loads(out)
    except ValueError:
        return rc, None


def chrome(*args):
    rc, out, err = run(cutrace, "dump", "--chrome", *args)
    try:
        return rc, json.loads(out), err
    except ValueError:
        return rc, None, err


# ---- 4 ranks, torchrun style: 2 per node, CUDA_VISIBLE_DEVICES = local rank, rank 2 slow
# --all-processes: the launcher (no CUDA) keeps its file, a file without a rank among
# the ranks' (the default leaves it out: the ompi job below)
data, pids, launcher, _ = launch("torchrun", "torchrun", 4, 2, ("--all-processes",))
names = sorted(os.listdir(data)) if os.path.isdir(data) else []
want = sorted([rank_file(r, pids.get(r)) for r in range(4)] + [f"{HOST}.{launcher}.ctr"])
check(names == want, f"torchrun: file names {names}, want {want}")
paths = {r: os.path.join(data, rank_file(r, pids.get(r))) for r in range(4)}
for r in range(4):
    j, recs, strings = job_of(paths[r])
    want_job = {"known": 0x3f, "rank": r, "world_size": 4, "local_rank": r % 2,
                "local_world_size": 2, "node_rank": r // 2, "source": "RANK", "job_id": "job42",
                "visible_devices": str(r % 2)}
    got = {k: j.get(k) for k in want_job} if j else None
    check(got == want_job, f"torchrun rank {r}: JOB {got}")
    kinds = [x["kind"] for x in recs if x["kind"] != "string"]
    check(kinds[:2] == ["process", "job"], f"rank {r}: JOB right after PROCESS: {kinds[:3]}")
    devs = [x for x in recs if x["kind"] == "device"]
    # both ranks of a node use "device 0"; the mask makes them different GPUs
    want_bus = "0000:%02x:00.0" % (0x18 + r % 2)
    check(len(devs) == 1 and strings.get(devs[0]["pci_bus_id"]) == want_bus,
          f"rank {r}: device PCI bus id {[strings.get(d['pci_bus_id']) for d in devs]}")
    check(len(devs) == 1 and strings.get(devs[0]["uuid"]) ==
          "GPU-63757472-6163-652d-7369-6d6770752d0%d" % (r % 2),
          f"rank {r}: device UUID {[strings.get(d['uuid']) for d in devs]}")
j, _, _ = job_of(os.path.join(data, f"{HOST}.{launcher}.ctr"))
check(j is None, f"the launcher has no JOB record: {j}")

rc, out, _ = run(cutrace, "info", paths[2])
check(rc == 0 and "  rank           2 of 4, local rank 0 of 2, node 1 (from RANK)\n" in out,
      f"info: rank line:\n{out}")
check("  job            job42\n" in out and '  devices        CUDA_VISIBLE_DEVICES="0"\n' in out,
      f"info: job and devices lines:\n{out}")
check("pci 0000:18:00.0, GPU-63757472-6163-652d-7369-6d6770752d00)" in out,
      f"info: device ids:\n{out}")

rc, g = gaps_json(data)
if check(rc == 0 and g is not None, f"gaps json: {rc}"):
    by_path = {os.path.basename(p["path"]): p for p in g["processes"]}
    for r in range(4):
        p = by_path.get(rank_file(r, pids.get(r)), {})
        got = [p.get(k) for k in ("rank", "world_size", "local_rank", "local_world_size",
                                  "node_rank")]
        check(got == [r, 4, r % 2, 2, r // 2], f"gaps json: rank {r}: {got}")
    lp = by_path.get(f"{HOST}.{launcher}.ctr", {})
    check(lp.get("rank", 0) is None, f"gaps json: launcher rank null: {lp.get('rank', 0)}")
    s = g["comm_straggler"]
    check(g["comm_straggler_rank"] == 2 and s is not None and g["devices"][s]["rank"] == 2,
          f"gaps json: straggler rank {g['comm_straggler_rank']}, device {s}")
    check([(x["rank"], x["files"], x["devices"]) for x in g["ranks"]] ==
          [(r, 1, 1) for r in range(4)] and g["waited_for_rank"] == 2,
          f"gaps json: ranks compared {g['ranks']}, waited for {g['waited_for_rank']}")
rc, out, _ = run(cutrace, "gaps", data)
check(f"likely straggler: device 0 of rank 2 (pid {pids.get(2)} on {HOST}) spent" in out,
      f"gaps text: straggler:\n{out[-1500:]}")
check(f"{paths[1]}: rank 1 (pid {pids.get(1)} on {HOST}): " in out,
      f"gaps text: process line:\n{out[:1500]}")

rc, out, _ = run(cutrace, "report", "--per-process", "--format", "json", data)
try:
    rep = json.loads(out)
except ValueError:
    rep = None
if check(rc == 0 and rep is not None, f"report --per-process json: {rc}"):
    got = sorted((f.get("rank"), f.get("world_size"), os.path.basename(f["path"]))
                 for f in rep["processes"] if f.get("rank") is not None)
    check(got == [(r, 4, rank_file(r, pids.get(r))) for r in range(4)], f"report json ranks: {got}")
rc, out, _ = run(cutrace, "report", "--per-process", data)
check(f"== rank 3 (pid {pids.get(3)} on {HOST}) ({paths[3]})\n" in out,
      f"report text heading:\n{out[:600]}")

rc, doc, _ = chrome(paths[2])
check(rc == 0 and doc and doc["distributedInfo"] ==
      {"rank": 2, "world_size": 4, "local_rank": 0, "local_world_size": 2, "node_rank": 1},
      f"chrome one rank: distributedInfo {doc and doc.get('distributedInfo')}")
names_meta = [e["args"]["name"] for e in (doc or {}).get("traceEvents", [])
              if e.get("ph") == "M" and e.get("name") == "process_name"]
check(any(n.startswith("rank 2: ") and n.endswith(f"(pid {pids.get(2)})") for n in names_meta),
      f"chrome: process named with its rank: {names_meta}")
rc, doc, _ = chrome(data)
check(rc == 0 and doc and doc["distributedInfo"] == {"ranks": [0, 1, 2, 3], "world_size": 4},
      f"chrome all ranks: distributedInfo {doc and doc.get('distributedInfo')}")
# each rank's GPU 0 a process row of its own, named by rank, with that GPU's bus id
rows = {e["pid"]: e["args"]["name"] for e in (doc or {}).get("traceEvents", [])
        if e.get("ph") == "M" and e.get("name") == "process_name" and e["pid"] >= 10**9}
got = sorted(n.split(" (")[0] for n in rows.values())
props = sorted((d.get("rank"), d.get("pciBusId")) for d in (doc or {}).get("deviceProperties", []))
check(got == [f"rank {r} GPU 0" for r in range(4)] and
      props == [(r, "0000:%02x:00.0" % (0x18 + r % 2)) for r in range(4)],
      f"chrome all ranks: GPU rows {rows}, devices {props}")

split = os.path.join(tmp, "split")
rc, out, err = run(cutrace, "dump", "--chrome", "--split", split, data)
got = sorted(os.listdir(split)) if os.path.isdir(split) else []
check(rc == 0 and got == [f"rank-{r}.json" for r in range(4)], f"split: {rc} {got} {err}")
check(f"{HOST}.{launcher}.ctr: no rank (the launcher?): left out of {split}" in err,
      f"split: launcher left out: {err}")
for r in range(4):
    try:
        with open(os.path.join(split, f"rank-{r}.json")) as f:
            d = json.load(f)
    except (OSError, ValueError):
        d = {}
    check(d.get("distributedInfo", {}).get("rank") == r and
          d["distributedInfo"].get("world_size") == 4 and
          any(e.get("cat") == "kernel" for e in d.get("traceEvents", [])),
          f"split rank-{r}.json: {d.get('distributedInfo')}")
    props = [(x.get("id"), x.get("pciBusId")) for x in d.get("deviceProperties", [])]
    check(props == [(0, "0000:%02x:00.0" % (0x18 + r % 2))], f"split rank-{r}.json: devices {props}")
    check(f"{split}/rank-{r}.json: rank {r} (pid {pids.get(r)} on {HOST}), 1 trace file\n" in out,
          f"split: line for rank {r}: {out}")

rc, out, err = run(cutrace, "diff", "--format", "json", paths[0], paths[2])
try:
    json.loads(out)
    ok = True
except ValueError:
    ok = False
check(rc == 0 and ok, f"diff between two ranks: {rc} {err[-300:]}")

# ---- Open MPI inside a Slurm allocation: OMPI_COMM_WORLD_RANK wins over SLURM_PROCID=0
data, pids, launcher, _ = launch("ompi", "ompi", 2, 1)
# by default the launcher, which never uses CUDA, leaves no file: only its line in
# .nocuda, which info names as the ranks' parent
names = sorted(os.listdir(data)) if os.path.isdir(data) else []
check(names == sorted([".nocuda"] + [rank_file(r, pids.get(r)) for r in range(2)]),
      f"ompi: the ranks' files and .nocuda, no launcher file: {names}")
listed = open(os.path.join(data, ".nocuda")).read().splitlines() if ".nocuda" in names else []
check([ln.split()[0] for ln in listed] == [str(launcher)],
      f"ompi: .nocuda lists the launcher (pid {launcher}): {listed}")
rc, out, _ = run(cutrace, "info", data)
check(rc == 0 and out.count(f"(parent {launcher}: python") == 2 and
      "1 process ran without CUDA (no trace file): python" in out,
      f"ompi: info names the launcher as the ranks' parent, without CUDA:\n{out}")
for r in range(2):
    j, _, _ = job_of(os.path.join(data, rank_file(r, pids.get(r))))
    got = j and (j["known"], j["rank"], j["world_size"], j["local_rank"], j["source"], j["job_id"])
    check(got == (0xf, r, 2, r, "OMPI_COMM_WORLD_RANK", "991"), f"ompi rank {r}: {got}")
rc, g = gaps_json(data)
check(rc == 0 and g and g["comm_straggler_rank"] == 1, f"ompi: straggler rank {g and g['comm_straggler_rank']}")

# ---- Slurm with malformed torch variables: ignored, one warning each, rank from Slurm
data, pids, launcher, err = launch("bad", "bad", 2, 0)
check(err.count("cutrace: job identity: RANK='abc' is not a whole number; ignored\n") == 2,
      f"bad: one stderr line per rank: {err[-600:]}")
for r in range(2):
    path = os.path.join(data, rank_file(r, pids.get(r)))
    j, recs, strings = job_of(path)
    got = j and (j["known"], j["rank"], j["world_size"], j["source"])
    check(got == (0x1, r, 0, "SLURM_PROCID"), f"bad rank {r}: {got}")
    warn = [strings.get(x["what"]) for x in recs if x["kind"] == "tracer"
            and strings.get(x["what"], "").startswith("job identity:")]
    check(warn == ["job identity: RANK='abc' is not a whole number; ignored"],
          f"bad rank {r}: warnings in the trace {warn}")
    rc, out, _ = run(cutrace, "info", path)
    check("  warning        job identity: RANK='abc' is not a whole number; ignored\n" in out and
          f"  rank           {r} (from SLURM_PROCID)\n" in out, f"bad: info:\n{out}")

# ---- a fork child keeps its parent's rank (a data-loader worker belongs to its rank)
data = os.path.join(tmp, "fork")
env = dict(base_env, RANK="3", WORLD_SIZE="4")
rc, out, err = run(cutrace, "record", "-q", "-o", data, "--", forker, "5", env=env)
fpids = [int(p) for p in re.findall(r"forker: \w+ pid (\d+):", out)]
names = sorted(os.listdir(data)) if os.path.isdir(data) else []
check(rc == 0 and len(fpids) == 2 and names == sorted(rank_file(3, p) for p in fpids),
      f"fork: files {names} for pids {fpids} ({rc} {err[-300:]})")
for p in fpids:
    j, recs, _ = job_of(os.path.join(data, rank_file(3, p)))
    proc = [x for x in recs if x["kind"] == "process"]
    check(j and (j["rank"], j["world_size"], j["source"]) == (3, 4, "RANK") and proc and
          proc[0]["pid"] == p, f"fork: pid {p} is rank 3: {j}")
split = os.path.join(tmp, "fork-split")
rc, out, err = run(cutrace, "dump", "--chrome", "--split", split, data)
check(rc == 0 and sorted(os.listdir(split)) == ["rank-3.json"] and ", 2 trace files\n" in out,
      f"fork split: one document for the rank: {rc} {out} {err}")

# ---- streamed to cutrace collect: the collector writes the name the rank sends
out_dir = os.path.join(tmp, "collected")
sock = os.path.join(tmp, "collect.sock")
col = subprocess.Popen([cutrace, "collect", "-o", out_dir, "--listen", "unix:" + sock, "--once"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
first = col.stdout.readline()
check(first.startswith("collect: listening on "), f"collect: {first!r}")
env = dict(base_env, LD_PRELOAD=libtrace, CUTRACE_OUTPUT="unix:" + sock, SLURM_PROCID="12",
           SLURM_NTASKS="16", SLURM_JOB_ID="991")
p = subprocess.Popen([program, "2"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                     text=True)
out, err = p.communicate(timeout=120)
try:
    col.communicate(timeout=60)
except subprocess.TimeoutExpired:
    col.kill()
    col.communicate()
names = sorted(os.listdir(out_dir)) if os.path.isdir(out_dir) else []
check(p.returncode == 0 and names == [f"rank-12.{HOST}.{p.pid}.ctr"],
      f"collect: the file is named by rank: {names} ({p.returncode} {err[-300:]})")
if names:
    j, _, _ = job_of(os.path.join(out_dir, names[0]))
    check(j and (j["rank"], j["world_size"], j["source"], j["job_id"]) == (12, 16, "SLURM_PROCID", "991"),
          f"collect: JOB {j}")

sys.exit(finish())
