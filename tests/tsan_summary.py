#!/usr/bin/env python3
"""Summary of a scripts/tsan run: per test its result and TSan's reports, then the
reports by place, last line "tsan: N race report(s), M other report(s), F test(s)
failed (E of them explained)". Exit status 0 only when TSan reported nothing and
every failed test is explained.

usage: tsan_summary.py LOGS   (LOGS/<n>/: name, testlog.json, tsan.<pid> files)

A failed test is explained, and named so, when
- every FAIL line is a timing check against the simulator's truth ("... from the
  truth", "only N of M operations comparable": launch calls that outlast their
  kernel, tests/trace/test_workloads.py; "off by N ns": a GPU time dated from an
  event, the hooks test's event chain): TSan slows the traced program 5-15x, which
  such checks cannot absorb;
- TSan stopped a fork child with "dup thread with used id": a child of a threaded
  process that starts a thread (the tracer's writer) is beyond TSan (its runtime
  keeps the parent's threads; google/sanitizers wiki, ThreadSanitizerCppManual,
  "fork"), so that test's fork-child checks fail.
"""
import collections
import glob
import json
import os
import re
import sys

SEP = "==================\n"
FORK_LIMIT = "dup thread with used id"
TIMING = re.compile(r"from the truth|operations comparable|off by (up to )?\d+ ns")


def reports(path):
    """(kind, summary, text) of each report in one TSan log file, and its other lines."""
    text = open(path, errors="replace").read()
    out, other = [], []
    for chunk in text.split(SEP):
        m = re.search(r"WARNING: ThreadSanitizer: ([^(\n]+)", chunk)
        if m:
            s = re.search(r"SUMMARY: ThreadSanitizer: (.*)", chunk)
            out.append((m.group(1).strip(), s.group(1) if s else m.group(1).strip(), chunk))
        else:
            other += [line for line in chunk.splitlines()
                      if "ThreadSanitizer" in line and "reported" not in line]
    return out, other


def main():
    logs = sys.argv[1]
    kinds = collections.Counter()
    places = collections.Counter()
    first_at = {}
    failed = explained = 0
    for d in sorted(glob.glob(os.path.join(logs, "*/")), key=lambda p: int(os.path.basename(p[:-1]))):
        name = open(os.path.join(d, "name")).read().strip()
        result, fails = "NOT RUN", []
        try:
            for line in open(os.path.join(d, "testlog.json")):
                if line.strip():
                    r = json.loads(line)
                    result = r["result"]
                    fails = [x for x in r.get("stdout", "").splitlines() if x.startswith("FAIL")]
        except OSError:
            pass
        n_reports, fork_limit, runtime = 0, 0, []
        for path in glob.glob(os.path.join(d, "tsan.*")):
            reps, other = reports(path)
            for kind, summary, text in reps:
                n_reports += 1
                kinds[kind] += 1
                places[summary] += 1
                first_at.setdefault(summary, path)
            fork_limit += sum(FORK_LIMIT in line for line in other)
            runtime += [line for line in other if FORK_LIMIT not in line]
        note = ""
        if result not in ("OK", "SKIP", "EXPECTEDFAIL"):
            failed += 1
            if fails and all(TIMING.search(x) for x in fails):
                note = "explained: timing checks only (TSan's slowdown)"
            elif fork_limit:
                note = f"explained: {fork_limit} fork child(ren) stopped by TSan ({FORK_LIMIT})"
            else:
                note = "NOT explained: " + "; ".join(fails[:3])
            explained += note.startswith("explained")
        elif fork_limit:
            note = f"{fork_limit} fork child(ren) stopped by TSan ({FORK_LIMIT})"
        print(f"{result:>8}  {n_reports:3d} report(s)  {name}" + (f"\n          {note}" if note else ""))
        for line in sorted(set(runtime)):
            print(f"          TSan runtime: {line.strip()}")
            kinds["runtime error"] += 1
    for summary, n in places.most_common():
        print(f"{n:5d}  {summary}\n         first in {first_at[summary]}")
    races = kinds.pop("data race", 0)
    print(f"tsan: {races} race report(s), {sum(kinds.values())} other report(s), {failed} test(s)"
          f" failed ({explained} of them explained); reports under {logs}")
    return 1 if races or kinds or failed > explained else 0


if __name__ == "__main__":
    sys.exit(main())
