#!/usr/bin/env python3
"""The command line as a newcomer types it, on a generated launch loop of known content
(cutrace-gentrace FILE 200: 200 kernels of 2 us every 4 us, so 199 gaps of 2 us):
options after the traces and --name=value read as options first (report, dump, diff),
durations with a unit (gaps --min-gap 2us, dump --gap-min 2us), a valued option
without its value, info's help and messages, the JSON outputs' schema names, the process of the largest gap
in gaps --summary of several files, cutrace help COMMAND, a missing default trace, records the tracer lost, report --limit's left-out rows."""
import json
import os
import re
import subprocess
import sys

cutrace, gentrace = sys.argv[1], sys.argv[2]
import tooltest
from tooltest import check, finish, scratch


def run(*args):
    return tooltest.run(cutrace, *args)


def same(label, first, after):
    """Runs cutrace with the options first and then after the traces: same output."""
    r1, r2 = run(*first), run(*after)
    check(r1[0] == 0 and r1 == r2, f"{label}: {first} and {after} differ: {r1[0]} {r1[2]!r} / "
          f"{r2[0]} {r2[2]!r}")
    return r1[1]


with scratch("cutrace-cli-order-") as d:
    trace = os.path.join(d, "gen.4242.ctr")
    subprocess.run([gentrace, trace, "200"], check=True)

    out = same("report", ["report", "--format", "csv", "--tables", "kernels", "--limit", "1", d],
               ["report", d, "--format=csv", "--tables", "kernels", "--limit=1"])
    rows = out.splitlines()
    check(len(rows) == 2 and rows[1].startswith("kernels,") and ",200," in rows[1],
          f"report csv: the header and one kernel row of 200 calls: {rows}")
    same("report --", ["report", "--tables", "apis", "--", trace], ["report", trace, "--tables", "apis"])

    out = same("diff", ["diff", "--format", "json", "--limit", "1", trace, d],
               ["diff", trace, "--limit=1", d, "--format=json"])
    doc = json.loads(out)
    check(doc["status"] == "clean" and all(r["status"] == "same" for r in doc["kernels"]),
          f"diff of a trace with itself: every kernel same: {doc['kernels']}")

    f1, f2 = os.path.join(d, "a.json"), os.path.join(d, "b.json")
    same("dump --chrome", ["dump", "--chrome", "--gap-min", "2000", "-o", f1, trace],
         ["dump", trace, "--chrome", "-o", f2, "--gap-min=2us"])
    check(open(f1).read() == open(f2).read(), "dump --chrome: the same document either way")
    gaps = [e for e in json.load(open(f1))["traceEvents"] if e.get("cat") == "gap"]
    check(len(gaps) == 2 * 199, f"--gap-min 2us: the 199 gaps of 2 us are slices on the device's "
          f"and the stream's gap tracks: {len(gaps)}")
    rc, out, err = run("dump", "--chrome", "--gap-min", "2.5us", "-o", f2, trace)
    gaps = [e for e in json.load(open(f2))["traceEvents"] if e.get("cat") == "gap"]
    check(rc == 0 and not gaps, f"--gap-min 2.5us: no gap slice: {len(gaps)}")
    rc, out, err = run("dump", "--chrome", "--gap-min", "2 us", trace)
    check(rc == 2 and err.startswith("cutrace dump: --gap-min takes nanoseconds"), f"bad unit: {err!r}")

    # gaps: --min-gap with a unit is the same as microseconds
    n_gaps = {}
    for v in ("2", "2us", "0.002ms", "2000ns", "2.5us"):
        rc, out, err = run("gaps", "--format", "json", "--top", "1000", "--min-gap", v, trace)
        n_gaps[v] = len(json.loads(out)["gaps"]) if rc == 0 else err
    check(n_gaps == {"2": 199, "2us": 199, "0.002ms": 199, "2000ns": 199, "2.5us": 0},
          f"gaps --min-gap in any unit: {n_gaps}")
    rc, out, err = run("gaps", "--min-gap", "2 ms", trace)
    check(rc == 2 and "--min-gap takes microseconds" in err, f"gaps bad unit: {err!r}")

    # errors: one line, exit 2, nothing on stdout
    for args, want in ((["report", trace, "--limit"], "cutrace report: --limit needs a value"),
                       (["dump", trace, "--chrome", "-o"], "cutrace dump: -o needs a value"),
                       (["diff", trace, trace, "--by"], "cutrace diff: --by needs a value"),
                       (["report", trace, "--bogus"], "cutrace report: unknown option '--bogus'"),
                       (["dump", trace, "--chrome", "-o=x"], "cutrace dump: -o takes its value as the next argument: -o x, not '-o=x'"),
                       (["report", "--limit=x", trace], "cutrace report: --limit takes a number, not 'x'")):
        rc, out, err = run(*args)
        check(rc == 2 and not out and err.startswith(want) and err.count("\n") == 1,
              f"{args}: {rc} {err!r}")

    # every JSON output names its schema the same way
    schemas = {}
    for cmd in (["report"], ["gaps"], ["diff", trace]):
        rc, out, err = run(*cmd, "--format", "json", trace)
        schemas[cmd[0]] = json.loads(out).get("schema") if rc == 0 else err
    check(schemas == {"report": "cutrace-report/1", "gaps": "cutrace-gaps/1", "diff": "cutrace-diff/1"},
          f"JSON schemas: {schemas}")

    # gaps --summary (cutrace record's): the largest gap names its process when there are several
    two = os.path.join(d, "two")
    os.mkdir(two)
    for pid in ("4242", "4343"):
        subprocess.run([gentrace, "--mixed", os.path.join(two, f"gen.{pid}.ctr"), "5", pid], check=True)
    for path, want in ((two, re.compile(r"largest gap: \S+ \S+ on GPU 0 of pid (4242|4343) at \+")),
                       (os.path.join(two, "gen.4242.ctr"), re.compile(r"largest gap: \S+ \S+ on GPU 0 at \+"))):
        rc, out, err = run("gaps", "--summary", path)
        line = [l for l in out.splitlines() if l.startswith("largest gap:")]
        check(rc == 0 and len(line) == 1 and want.match(line[0]), f"gaps --summary {path}: {out!r}")
        # the findings line names the command that lists the fixes, with the same inputs
        # (first the host-bound launches: all its idle time is host_wait, the CPU outside CUDA)
        check(out.splitlines()[-1].startswith("findings: host-bound launches (cudaMemcpyAsync) up to ") and
              "pageable copies" in out.splitlines()[-1] and
              out.splitlines()[-1].endswith(f" (see cutrace gaps {path} for the fixes)"),
              f"gaps --summary {path}: findings line: {out!r}")

    # a table cut by --limit says how many rows it left out (text only)
    mixed = os.path.join(two, "gen.4242.ctr")  # 5 kernel rows, 8 API rows
    for limit, want in (("1", ["  (4 more rows: --limit 0 shows all)", "  (7 more rows: --limit 0 shows all)"]),
                        ("4", ["  (1 more row: --limit 0 shows all)", "  (4 more rows: --limit 0 shows all)"]),
                        ("0", []), ("8", [])):
        rc, out, err = run("report", "--limit", limit, "--tables", "kernels,apis", mixed)
        said = [l for l in out.splitlines() if "--limit 0 shows all" in l]
        check(rc == 0 and said == want, f"report --limit {limit}: {said}")
    rc, out, err = run("report", "--limit", "1", "--tables", "kernels", "--format", "csv", mixed)
    check(rc == 0 and "more row" not in out and len(out.splitlines()) == 2, f"csv --limit 1: {out!r}")

    # cutrace help COMMAND is COMMAND --help; a missing default trace directory says what to do
    for cmd in ("record", "collect", "report", "gaps", "steps", "diff", "dump", "info"):
        check(run("help", cmd) == run(cmd, "--help") and run(cmd, "--help")[0] == 0,
              f"cutrace help {cmd}")
    rc, out, err = run("help", "bogus")
    check(rc == 2 and err == "cutrace: unknown command 'bogus' (try: cutrace --help)\n", f"help bogus: {err!r}")
    empty = os.path.join(d, "empty")
    os.mkdir(empty)
    p = subprocess.run([os.path.abspath(cutrace), "report"], cwd=empty, capture_output=True, text=True)
    check(p.returncode == 2 and p.stderr == "cutrace report: cutrace.data: No such file or directory (the "
          "default trace directory: name a trace DIR or FILE, or record one with cutrace record -- CMD)\n",
          f"report without a trace: {p.stderr!r}")
    rc, out, err = run("report", os.path.join(empty, "cutrace.data"))
    check(rc == 2 and err.endswith("cutrace.data: No such file or directory\n"), f"a named one: {err!r}")

    # records the tracer lost (DROP records: 1000 of 2000 launches' records) are said, once per
    # file read, on stderr; a clean trace says nothing
    lossy = os.path.join(d, "lossy.ctr")
    subprocess.run([gentrace, "--drops", lossy, "2000"], check=True, capture_output=True)
    said = (f"{lossy}: the tracer lost 1000 records (its buffers were full: CUTRACE_BUFFER_KB); "
            "what happened near them is missing, idle time there may be work\n")
    for cmd in (["report"], ["gaps"], ["gaps", "--summary"], ["dump", "--chrome", "-o", f1], ["diff", trace]):
        rc, out, err = run(*cmd, lossy)
        check(rc == 0 and err == f"cutrace {cmd[0]}: {said}", f"{cmd} of lost records: {rc} {err!r}")
        rc, out, err = run(*cmd, trace)
        check(rc == 0 and err == "", f"{cmd} of a clean trace: {rc} {err!r}")

    # info: a description under --help; its messages name the command
    rc, out, err = run("info", "--help")
    check(rc == 0 and out.startswith("usage: cutrace info") and "dropped" in out, f"info --help: {out!r}")
    rc, out, err = run("info", os.path.join(d, "missing.ctr"))
    check(rc == 2 and err.startswith("cutrace info: ") and "No such file" in err, f"info missing: {err!r}")
    rc, out, err = run("info", trace)
    check(rc == 0 and "records        608 in 1 frame\n" in out, f"info: one frame: {out!r}")
    # a file that cannot be read beside one that can: partial (1) for info as for report
    bad = os.path.join(d, "bad")
    os.mkdir(bad)
    open(os.path.join(bad, "a.ctr"), "wb").write(open(trace, "rb").read())
    open(os.path.join(bad, "b.ctr"), "w").write("not a trace\n")
    for cmd in ("info", "report", "gaps"):
        rc, out, err = run(cmd, bad)
        check(rc == 1 and err == f"cutrace {cmd}: {bad}/b.ctr: not a cutrace trace (bad magic)\n",
              f"{cmd} of a good and a foreign file: {rc} {err!r}")
        rc, out, err = run(cmd, os.path.join(bad, "b.ctr"))
        check(rc == 2, f"{cmd} of the foreign file alone: {rc} {err!r}")

finish()
