#!/usr/bin/env python3
"""The selection options on a planted job (ranks_scenario.py: ranks 0, 1, 2 with a gemm
on stream 1 and an all-reduce on stream 2 of device 0, ITERS = 4 times each; pid 105 a
fork child of rank 0 with one gemm; the launcher, pid 99, without a rank or GPU work).

Asserted, exactly: the kernels and files report keeps for --rank, --pid, --stream and
--kernel (substring and glob) alone and together; gaps on one rank is that rank's rows of
the unfiltered run (the analysis of the kept files is unchanged); dump --chrome, raw
dump, steps and diff keep the selected files and say what was selected (text: a line,
JSON: "selection"); bad values (unknown rank, pid, device or stream, a pattern matching
nothing, a malformed list, a selection matching no process or no GPU work) are one line
on stderr, nothing on stdout, status 2; gaps refuses --kernel and --stream, steps
--kernel, the raw dump --device.

usage: test_select_ranks.py CUTRACE
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perfetto_read  # noqa: E402
import ranks_scenario as rs  # noqa: E402
from tooltest import check, finish, run, scratch_dir  # noqa: E402

cutrace = sys.argv[1]
tmp = scratch_dir("cutrace-select-")
job = os.path.join(tmp, "job")
rs.write(job)
N = rs.ITERS
GEMM, NCCL = "gemm(float*)", "ncclDevKernel_AllReduce_Sum_f32_RING_LL"


def ok(*args):
    """cutrace ARGS, which must succeed: its stdout ("" after a failed check)."""
    rc, out, err = run(cutrace, *args)
    check(rc == 0, f"{args}: status {rc}, {err[-300:]!r}")
    return out if rc == 0 else ""


def doc(*args):
    """The JSON document cutrace ARGS --format json prints ({} when it is not one)."""
    try:
        return json.loads(ok(*args, "--format", "json"))
    except ValueError:
        return {}


def kept(*sel):
    """(kernel name -> calls, pids of the files) of report --format json with sel."""
    d = doc("report", *sel, job)
    return ({k["name"]: k["calls"] for k in d.get("kernels", [])},
            sorted(f["pid"] for f in d.get("files", [])))


every = kept()
check(every == ({GEMM: 3 * N + 1, NCCL: 3 * N}, [99, 100, 101, 102, 105]), f"unfiltered: {every}")
cases = [
    (["--rank", "0"], {GEMM: N + 1, NCCL: N}, [100, 105]),  # the fork child counts with its rank
    (["--rank", "1,2"], {GEMM: 2 * N, NCCL: 2 * N}, [101, 102]),
    (["--rank", "1", "--rank", "2"], {GEMM: 2 * N, NCCL: 2 * N}, [101, 102]),
    (["--pid", "102"], {GEMM: N, NCCL: N}, [102]),
    (["--pid=105,101"], {GEMM: N + 1, NCCL: N}, [101, 105]),
    (["--pid", "99"], {}, [99]),  # a process without GPU work: its calls (none)
    (["--stream", "2"], {NCCL: 3 * N}, [100, 101, 102]),  # files without stream 2's work left out
    (["--kernel", "nccl"], {NCCL: 3 * N}, [100, 101, 102]),
    (["--kernel", "gemm*"], {GEMM: 3 * N + 1}, [100, 101, 102, 105]),  # a glob: all of the name
    (["--kernel", "*AllReduce*"], {NCCL: 3 * N}, [100, 101, 102]),
    (["--rank", "0", "--kernel", "nccl"], {NCCL: N}, [100]),
    (["--device", "0", "--stream", "1", "--pid", "105"], {GEMM: 1}, [105]),
]
for sel, kernels, pids in cases:
    got = kept(*sel)
    check(got == (kernels, pids), f"report {sel}: {got}, want {(kernels, pids)}")

d = doc("report", "--rank", "1,2", "--kernel", "nccl", job)
check(d.get("selection") == {"devices": [], "streams": [], "pids": [], "ranks": [1, 2],
                             "kernel": "nccl"}, f"report JSON selection: {d.get('selection')}")
check(doc("report", job).get("selection", 0) is None, "report JSON without a selection: null")
text = ok("report", "--rank", "2", job)
check(text.startswith("selection: --rank 2\n"), f"report text names the selection: {text[:80]!r}")
text = ok("report", "--stream", "2", job)
check(text.startswith("selection: --stream 2 (only the selected GPU work; the CPU calls"),
      f"report text: GPU work selected, calls kept: {text[:120]!r}")
check(ok("report", job).startswith("GPU activity"), "no selection line without one")

# gaps: one rank's rows are the unfiltered run's rows of that rank
def rows(d, key, rank=None):
    """d[key] without each row's index of its process (which counts the files kept)."""
    return [{k: v for k, v in x.items() if k != "process"} for x in d.get(key, [])
            if rank is None or x.get("rank") == rank]


full = doc("gaps", job)
one = doc("gaps", "--rank", "1", job)
rank1 = rows(full, "devices", 1)
check(len(rank1) == 1 and rows(one, "devices") == rank1,
      f"gaps --rank 1: the unfiltered rank-1 device row\n{one.get('devices')}\n{rank1}")
check(one.get("devices", [{}])[0].get("busy_ns") == 700 * 1000 * N, "rank 1 busy 700 us per step")
check(rows(full, "gaps", 1) == rows(one, "gaps") and rows(one, "gaps"),
      "gaps --rank 1: the same gaps as the unfiltered run's on rank 1")
check(rows(doc("gaps", "--device", "0", job), "devices") == rows(full, "devices"),
      "gaps --device 0 (every file's only device): the unfiltered rows")
check(one.get("selection", {}).get("ranks") == [1], f"gaps JSON selection {one.get('selection')}")
summary = ok("gaps", "--summary", "--rank", "1", job)
check(summary.startswith("selection: --rank 1\n"), f"gaps --summary: {summary[:80]!r}")
check(f"(see cutrace gaps --rank=1 {job} for the fixes)" in summary,
      f"gaps --summary's advice repeats the selection: {summary!r}")

# dump --chrome, raw dump, steps, diff
out = os.path.join(tmp, "r2.json")
ok("dump", "--chrome", "--rank", "2", "--kernel", "gemm", "-o", out, job)
try:
    chrome = json.load(open(out))
except (OSError, ValueError):
    chrome = {}
ev = chrome.get("traceEvents", [])
check(sum(1 for e in ev if e.get("cat") == "kernel") == N and
      sum(1 for e in ev if e.get("cat") == "cuda_runtime") == 2 * N,
      "chrome --rank 2 --kernel gemm: N kernel slices, every call (2N) kept")
check(chrome.get("selection") == "--rank 2 --kernel gemm", f"chrome selection {chrome.get('selection')}")
pf = os.path.join(tmp, "r2.pftrace")
ok("dump", "--perfetto", "--rank", "2", "--kernel", "gemm", "-o", pf, job)
try:
    t = perfetto_read.read(pf)
except (OSError, ValueError):
    t = None
check(t is not None and not t.problems and
      sum(1 for x in t.slices if x.get("cat") == "kernel") == N,
      f"perfetto --rank 2 --kernel gemm: N kernel slices {t and t.problems}")
raw = ok("dump", "--pid", "101", job)
check([l.split()[1] for l in raw.splitlines() if l.startswith("process ")] == ["pid=101"],
      "raw dump --pid 101: one process record, pid 101's")
st = doc("steps", "--rank", "2", job)
check([p.get("pid") for p in st.get("processes", [])] == [102] and st.get("selection", {}).get("ranks") == [2],
      f"steps --rank 2: pid 102 only {[p.get('pid') for p in st.get('processes', [])]}")
# NVTX-range attribution (report --by range, steps) reads records apart from the model:
# the same selection (rank 1: gemm 300 us on stream 1, all-reduce 400 us on stream 2)
for sel, kernels, gpu in ((["--stream", "2"], N, 400_000 * N), (["--kernel", "gemm"], N, 300_000 * N),
                          ([], 2 * N, 700_000 * N)):
    rg = {r["name"]: r for r in doc("report", "--by", "range", "--rank", "1", *sel, job).get("ranges", [])}
    got = (rg.get("step", {}).get("kernels"), rg.get("step", {}).get("gpu_ns"))
    check(got == (kernels, gpu), f"report --by range --rank 1 {sel}: {got}, want {(kernels, gpu)}")
st = doc("steps", "--rank", "1", "--stream", "2", job)
rows_ = (st.get("processes") or [{}])[0].get("steps", [])
check([(x["gpu_work_ns"], x["device_busy_ns"], x["kernels"]) for x in rows_] == [(400_000, 400_000, 1)] * N,
      f"steps --stream 2: each step's GPU work is the all-reduce's 400 us: {rows_[:1]}")
df = doc("diff", "--stream", "2", job, job)
check(df.get("selection", {}).get("streams") == [2], f"diff selection {df.get('selection')}")
k = {r.get("name"): r for r in df.get("kernels", [])}
check(set(k) == {NCCL}, f"diff --stream 2: only the all-reduce {sorted(k)}")


def refused(args, msg):
    """cutrace ARGS: status 2, stdout empty, one stderr line holding msg."""
    rc, out, err = run(cutrace, *args)
    check(rc == 2 and out == "" and err.count("\n") == 1 and msg in err,
          f"{args}: status {rc}, stdout {out[:60]!r}, stderr {err!r} (want {msg!r})")


for args, msg in [
    (["report", "--rank", "5", job], "--rank 5: no such rank in these traces (ranks: 0, 1, 2)"),
    (["gaps", "--pid", "7", job], "--pid 7: no such pid in these traces (pids: 99, 100, 101, 102, 105)"),
    (["report", "--pid", "100", "--rank", "1", job], "the selection (--pid 100 --rank 1) matches no process"),
    (["report", "--device", "1", job], "--device 1: no such device in these traces (devices: 0)"),
    (["dump", "--csv", "--stream", "3", job], "--stream 3: no such stream in these traces (streams: 1, 2)"),
    (["report", "--kernel", "sgemm", job], "--kernel sgemm: no GPU work's name matches it"),
    (["report", "--pid", "99", "--device", "0", job],
     "--device 0: no such device in the selected processes' traces (no device)"),
    (["report", "--pid", "100", "--stream", "2", "--kernel", "gemm", job],
     "the selection (--pid 100 --stream 2 --kernel gemm) matches no GPU work in the selected"),
    (["report", "--device", "0", "--from", "20s", job], "matches no GPU work in these traces (within --from/--to)"),
    (["report", "--device", "0,x", job], "--device takes a list of device numbers"),
    (["steps", "--rank", "1,", job], "--rank takes a list of ranks"),
    (["diff", "--pid", "-1", job, job], "--pid takes a list of process ids"),
    (["report", "--kernel", "a", "--kernel", "b", job], "--kernel is given twice"),
    (["report", job, "--device"], "--device needs a value"),
    (["gaps", "--kernel", "gemm", job], "--kernel does not apply"),
    (["gaps", "--stream", "1", job], "--stream does not apply"),
    (["steps", "--kernel", "gemm", job], "--kernel does not apply"),
    (["dump", "--device", "0", job], "--device does not apply: it needs --chrome, --perfetto or --csv"),
    (["report", "--rank", "1", "-"], "needs trace files, not standard input"),
]:
    refused(args, msg)
check(not os.path.exists(os.path.join(tmp, "none.json")), "")
rc, out, err = run(cutrace, "dump", "--chrome", "--device", "3", "-o", os.path.join(tmp, "none.json"), job)
check(rc == 2 and not os.path.exists(os.path.join(tmp, "none.json")),
      f"dump --chrome with a bad selection writes no file: {rc} {err!r}")
sys.exit(finish())
