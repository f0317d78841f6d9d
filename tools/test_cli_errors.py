#!/usr/bin/env python3
"""Every reading command says the same thing the same way (planted traces, tracewrite.py):

- a truncated file (its last frame cut): the records before it are used, then one line
  "cutrace CMD: FILE: truncated (last frame incomplete) at offset O; N records read
  before it (partial result)", exit 1, for report, gaps, steps, dump (raw and --chrome),
  info and diff; steps shows the 5 whole steps before the cut; a file cut before any
  step: steps says where it stopped and that what was read held no steps, exit 1;
- a foreign file: "cutrace CMD: FILE: not a cutrace trace (bad magic)", once, exit 2;
  beside a readable one: the same line, exit 1 (partial), report, gaps, steps, dump, info;
- steps of a file without steps beside a file with steps: one line naming it, exit 1
  (partial), the other shown; of files without steps only: exit 2;
- a valued option without its value (last, "--name=", an empty argument): "cutrace CMD:
  OPT needs a value (try: cutrace CMD --help)", nothing on stdout, exit 2, in every
  command (record and collect too);
- gaps --summary of foreign files only: the one line on stderr, nothing on stdout;
- records the tracer lost (a DROP record of 7): steps says it as report and gaps do,
  with steps found, with none found and with --range matching nothing;
- "--" ends the options of every reading command (a trace named "-d.ctr");
- steps --format json names its schema, cutrace-steps/1;
- the raw dump of several files heads each with "== PATH ==" (of one file: no header);
- standard output that cannot be written (/dev/full): "cutrace CMD: standard output:
  cannot write...", exit 2, in every reading command (and help);
- report's CUDA API and memory tables have a median column (Med; CSV and JSON
  median_ns) within the histogram's 3.1 % of the planted 3 us (the mean is 22 us), and
  the memory table's count is "Calls".

usage: test_cli_errors.py CUTRACE
"""
import csv
import io
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tooltest  # noqa: E402
from tooltest import check, finish, scratch_dir  # noqa: E402
from tracewrite import TraceWriter  # noqa: E402

cutrace = os.path.abspath(sys.argv[1])
T0, US, PID = 10**9, 1000, 4242


def run(*args):
    return tooltest.run(cutrace, *args)


def steps_trace(path, steps, drop=False, api_us=(3, 3, 3, 3, 3, 3), copy_us=(1, 1, 1, 1, 1, 1)):
    """PROCESS, then per step (its own frame) an NVTX range "step" holding one launch of
    api_us[i] us and its 60 ns kernel; a DROP record of 7 after step 2 (or the last) when
    drop; END.
    Also one 1 KiB pageable-to-device copy per step, copy_us[i] us on the GPU."""
    w = TraceWriter()
    w.add("process", pid=PID, start_ns=T0)
    name, kernel = w.string("step"), w.string("_Z1kv")
    launch, copy = w.string("cudaLaunchKernel"), w.string("cudaMemcpy")
    for i in range(steps):
        b = T0 + i * 100 * US
        w.add("range", tid=PID, name=name, begin_ns=b, end_ns=b + 50 * US, depth=0)
        w.add("api", tid=PID, name=launch, begin_ns=b + 10, end_ns=b + 10 + api_us[i] * US,
              corr=2 * i + 1, flags=4)
        w.add("gpu", corr=2 * i + 1, device=0, stream=0, start_ns=b + 30, end_ns=b + 90, type=1,
              name=kernel)
        w.add("api", tid=PID, name=copy, begin_ns=b + 20 * US, end_ns=b + 30 * US,
              corr=2 * i + 2, flags=4)
        w.add("memop", corr=2 * i + 2, bytes=1024, kind=1, src_mem=3, dst_mem=1)
        w.add("gpu", corr=2 * i + 2, device=0, stream=0, start_ns=b + 21 * US,
              end_ns=b + (21 + copy_us[i]) * US, type=2)
        if drop and i == min(2, steps - 1):
            w.add("drop", tid=PID, count=7, first_ns=b, last_ns=b + 5)
        if i < steps - 1:
            w.frame()
    w.add("end", records=0, drops=7 if drop else 0, end_ns=T0 + 10**6)
    w.save(path)


tmp = scratch_dir("cutrace-errors-")
whole = os.path.join(tmp, "whole.ctr")
steps_trace(whole, 6)
data = open(whole, "rb").read()

# ---- a truncated file: the records before the cut, then one line, exit 1 -------------
cut = os.path.join(tmp, "cut.ctr")
open(cut, "wb").write(data[:-5])  # the last frame (step 5 and END) incomplete
said = {}
for cmd in (["report"], ["gaps"], ["steps"], ["dump"], ["dump", "--chrome", "-o", os.devnull],
            ["info"], ["diff", whole]):
    rc, out, err = run(*cmd, cut)
    lines = err.splitlines()
    label = " ".join(cmd[:2] if cmd[0] == "dump" else cmd[:1])
    check(rc == 1 and len(lines) == 1 and lines[0].startswith(f"cutrace {cmd[0]}: {cut}: "),
          f"{label} of a truncated file: exit {rc}, {err!r}")
    said[label] = lines[0].split(": ", 2)[-1] if lines else err
check(len(set(said.values())) == 1 and
      all(s.startswith("truncated (last frame incomplete) at offset ") and
          s.endswith(" records read before it (partial result)") for s in said.values()),
      f"every command says the cut the same way: {said}")
rc, out, err = run("steps", "--format", "json", cut)
procs = json.loads(out).get("processes", []) if out else []
check(rc == 1 and len(procs) == 1 and procs[0]["summary"]["steps"] == 5,
      f"steps of the cut file: the 5 whole steps before it: {rc} {out[:200]!r}")
# cut inside the first frame: no step was read
first = os.path.join(tmp, "first.ctr")
frames_at = 32 + int.from_bytes(data[12:16], "little")  # header, schema (docs/format.md)
open(first, "wb").write(data[:frames_at + 20])
for args in ([], ["--range", "step"]):
    rc, out, err = run("steps", *args, first)
    check(rc == 1 and out == "" and err.count("\n") == 1 and
          err.startswith(f"cutrace steps: {first}: truncated (") and " at offset " in err and
          "read before it, without steps (" in err,
          f"steps {args} of a file cut before its first step: {rc} {err!r}")

# ---- a foreign file: one line naming it once, exit 2 ---------------------------------
foreign = os.path.join(tmp, "foreign.ctr")
open(foreign, "w").write("not a trace\n")
for cmd in (["report"], ["gaps"], ["steps"], ["dump"], ["dump", "--chrome"], ["info"]):
    rc, out, err = run(*cmd, foreign)
    check(rc == 2 and err == f"cutrace {cmd[0]}: {foreign}: not a cutrace trace (bad magic)\n",
          f"{cmd} of a foreign file: exit {rc}, {err!r}")

# gaps --summary of a foreign file only: the error, not "no GPU activity" after it
rc, out, err = run("gaps", "--summary", foreign)
check(rc == 2 and out == "" and err == f"cutrace gaps: {foreign}: not a cutrace trace (bad magic)\n",
      f"gaps --summary of a foreign file: exit {rc}, {out!r} {err!r}")

# beside a readable file: partial (1), the readable one shown, as report counts it
mixed = os.path.join(tmp, "mixed")
os.mkdir(mixed)
os.link(whole, os.path.join(mixed, "a.ctr"))
os.link(foreign, os.path.join(mixed, "b.ctr"))
for cmd in (["report"], ["gaps"], ["steps"], ["dump"], ["info"]):
    rc, out, err = run(*cmd, mixed)
    check(rc == 1 and out and err == f"cutrace {cmd[0]}: {mixed}/b.ctr: not a cutrace trace (bad magic)\n",
          f"{cmd} of a good and a foreign file: exit {rc}, {err!r}")

# a file without steps beside a file with steps: partial (1), one line naming it, the
# other file shown; files without steps only: 2
nosteps = os.path.join(tmp, "nosteps")
os.mkdir(nosteps)
os.link(whole, os.path.join(nosteps, "a.ctr"))
steps_trace(os.path.join(nosteps, "b.ctr"), 2)  # two steps: none chosen
for args in ([], ["--format", "json"], ["--summary"]):
    rc, out, err = run("steps", *args, nosteps)
    lines = err.splitlines()
    check(rc == 1 and out and len(lines) == 1 and
          lines[0].startswith(f"cutrace steps: {nosteps}/b.ctr: no steps: "),
          f"steps {args} of a file with steps and one without: exit {rc}, {err!r}")
    if args == ["--format", "json"]:
        procs = json.loads(out).get("processes", [])
        check(len(procs) == 1 and procs[0]["status"] == "ok" and procs[0]["summary"]["steps"] == 6,
              f"steps json of a file with steps and one without: {out[:200]!r}")
os.unlink(os.path.join(nosteps, "a.ctr"))
steps_trace(os.path.join(nosteps, "c.ctr"), 1)
for path in (nosteps, os.path.join(nosteps, "b.ctr")):
    rc, out, err = run("steps", path)
    check(rc == 2 and err.count("no steps: ") == err.count("\n") >= 1,
          f"steps of files without steps only ({path}): exit {rc}, {err!r}")

# ---- a valued option without its value: one form everywhere ----------------------------
for cmd, opt, extra in (("report", "--limit", []), ("report", "--format", []),
                        ("report", "--from", []), ("gaps", "--top", []), ("gaps", "--min-gap", []),
                        ("gaps", "--format", ["--summary"]), ("gaps", "--to", []),
                        ("steps", "--range", []), ("steps", "--skip", []),
                        ("steps", "--to", []), ("dump", "--gap-min", ["--chrome"]),
                        ("dump", "-o", ["--chrome"]), ("diff", "--by", [whole]),
                        ("record", "-o", []), ("record", "--stack-depth", []),
                        ("collect", "-o", []), ("collect", "--listen", [])):
    want = f"cutrace {cmd}: {opt} needs a value (try: cutrace {cmd} --help)\n"
    forms = [[*extra, whole, opt], [opt, "", *extra, whole]]
    if opt.startswith("--"):  # "-o=x": refused with the form to use (test_option_modes.py)
        forms.append([opt + "=", *extra, whole])
    if cmd in ("record", "collect"):  # no traces: the option alone
        forms = [[opt], [opt + "="]] if opt != "-o" else [[opt], [opt, ""]]
    for args in forms:
        rc, out, err = run(cmd, *args)
        check(rc == 2 and out == "" and err == want, f"{cmd} {args}: exit {rc}, {err!r}")

# ---- records the tracer lost: steps says it as report and gaps do -----------------------
lossy = os.path.join(tmp, "lossy.ctr")
steps_trace(lossy, 6, drop=True)
lost = (f"{lossy}: the tracer lost 7 records (its buffers were full: CUTRACE_BUFFER_KB); what "
        "happened near them is missing, idle time there may be work\n")
for cmd in (["report"], ["gaps"], ["steps"], ["steps", "--summary"], ["report", "--by", "range"]):
    rc, out, err = run(*cmd, lossy)
    check(rc == 0 and err == f"cutrace {cmd[0]}: {lost}", f"{cmd} of lost records: {rc} {err!r}")
    rc, out, err = run(*cmd, whole)
    check(rc == 0 and err == "", f"{cmd} of a whole trace: {rc} {err!r}")
few = os.path.join(tmp, "few.ctr")  # two steps: none chosen
steps_trace(few, 2, drop=True)
for args, f in (([], few), (["--range", "nope"], lossy)):
    rc, out, err = run("steps", *args, f)
    lines = err.splitlines()
    said_lost = f"cutrace steps: {f}: " + lost.split(": ", 1)[1].rstrip()
    check(rc == 2 and len(lines) == 2 and lines[0] == said_lost
          and lines[1].startswith(f"cutrace steps: {f}: no steps: "),
          f"steps {args} without steps, records lost: {rc} {err!r}")

# ---- "--": every argument after it is a trace, in every reading command ----------------
dashed = os.path.join(tmp, "-d.ctr")
os.link(whole, dashed)
os.chdir(tmp)  # the trace named "-d.ctr", as a user would
for cmd in (["report"], ["gaps"], ["gaps", "--summary"], ["steps"], ["dump"], ["info"], ["diff", whole]):
    rc, out, err = run(*cmd, "--", "-d.ctr")
    check(rc == 0 and out and err == "", f"{cmd} -- -d.ctr: exit {rc}, {err!r}")

# ---- steps JSON names its schema ----------------------------------------------------------
rc, out, err = run("steps", "--format", "json", whole)
check(rc == 0 and json.loads(out).get("schema") == "cutrace-steps/1", f"steps schema: {out[:80]!r}")

# ---- the raw dump: one header per file when there are several ----------------------------
two = os.path.join(tmp, "two")
os.mkdir(two)
steps_trace(os.path.join(two, "a.ctr"), 3)
steps_trace(os.path.join(two, "b.ctr"), 4)
rc, out, err = run("dump", two)
heads = [(i, l) for i, l in enumerate(out.splitlines()) if l.startswith("==")]
n_a = len(run("dump", os.path.join(two, "a.ctr"))[1].splitlines())
check(rc == 0 and [l for _, l in heads] == [f"== {two}/a.ctr ==", f"== {two}/b.ctr =="] and
      heads[0][0] == 0 and heads[1][0] == n_a + 1, f"raw dump of two files: headers {heads}")
rc, out, err = run("dump", whole)
check(rc == 0 and not any(l.startswith("==") for l in out.splitlines()),
      "raw dump of one file: no header")
# an unreadable file beside readable ones: partial (1), as report says it
os.link(foreign, os.path.join(two, "c.ctr"))
rc, out, err = run("dump", two)
check(rc == 1 and err == f"cutrace dump: {two}/c.ctr: not a cutrace trace (bad magic)\n",
      f"raw dump of a good and a foreign file: {rc} {err!r}")

# ---- output that cannot be written: one line, exit 2, never a silent 0 -------------------
if os.path.exists("/dev/full"):
    for cmd in (["report"], ["gaps"], ["steps"], ["steps", "--format", "json"], ["dump"],
                ["dump", "--chrome"], ["info"], ["diff", whole], ["help", "report"]):
        with open("/dev/full", "w") as full:
            p = subprocess.run([cutrace, *cmd] + ([] if cmd[0] == "help" else [whole]),
                               stdout=full, stderr=subprocess.PIPE, text=True)
        name = cmd[1] if cmd[0] == "help" else cmd[0]
        check(p.returncode == 2 and
              p.stderr.startswith(f"cutrace {name}: standard output: cannot write") and
              p.stderr.count("\n") == 1, f"{cmd} > /dev/full: exit {p.returncode}, {p.stderr!r}")

# ---- report: the API table's median, the memory table's Calls ----------------------------
spread = os.path.join(tmp, "spread.ctr")
spread_us = (1, 2, 3, 4, 100)  # mean 22 us, median 3 us
steps_trace(spread, 5, api_us=spread_us, copy_us=spread_us)
rc, out, err = run("report", "--tables", "apis,memcpy", spread)
lines = out.splitlines()
api_head = next((l.split() for l in lines if l.strip().startswith("Total  Calls")), [])
mem_head = next((l.split() for l in lines if l.strip().startswith("GPU %")), [])
check(rc == 0 and api_head[:5] == ["Total", "Calls", "Avg", "Med", "Min"] and
      mem_head[:7] == ["GPU", "%", "Total", "Calls", "Bytes", "Avg", "Med"],
      f"report headers: {api_head} {mem_head}")
for table, key in (("apis", "cudaLaunchKernel"), ("memcpy", "HtoD")):
    rc, out, err = run("report", "--format", "csv", "--tables", table, spread)
    rows = {r["name" if table == "apis" else "kind"]: r
            for r in csv.DictReader(io.StringIO(out))} if rc == 0 else {}
    med = int(rows.get(key, {}).get("median_ns", 0))
    check(abs(med - 3000) <= 3000 * 0.031 and rows[key]["avg_ns"] == "22000",
          f"{table} csv median_ns {med} (planted 3 us, avg 22 us): {rows.get(key)}")
    doc = json.loads(run("report", "--format", "json", "--tables", table, spread)[1])
    json_med = [r["median_ns"] for r in doc[table] if r.get("name", r.get("kind")) == key]
    check(json_med == [med], f"{table} json median_ns: {doc[table]}")
    row = next((l for l in lines if l.endswith(key) or (key == "HtoD" and " HtoD " in l)), "")
    cells = row.split()
    at = 5 if table == "apis" else 8  # after Total (2), Calls, Avg (2); memory: GPU %, Bytes (2)
    check(cells[at:at + 2] == [f"{med / 1000:.3f}", "us"], f"{table} text Med column: {row!r}")

sys.exit(finish())
