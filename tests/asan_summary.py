#!/usr/bin/env python3
"""Summary of a scripts/asan run: per test its result and the sanitizers' reports,
then the reports by place, last line "asan: N ASan report(s), L leak report(s), U
UBSan report(s), F test(s) failed". Exit status 0 only when no sanitizer reported
anything and every test passed.

usage: asan_summary.py LOGS   (LOGS/<n>/: name, testlog.json, asan.<pid>
                               files, one per process that wrote one)

A report's place is its SUMMARY line (ASan, LeakSanitizer) or the "file:line:
runtime error" line (UBSan). UBSan's runtime (GCC's libubsan) writes to stderr
whatever log_path says, and stops the process there (halt_on_error=1, scripts/asan):
its reports are found in what the test printed (the traced program's stderr, which
the tests compare with an untraced run's, or its failed exit status), each place once
per test. Lines of a log that are none of these (LeakSanitizer's "Running thread N
was not suspended", printed when a thread exits while it looks) are notes.
"""
import collections
import glob
import json
import os
import re
import sys

ASAN = re.compile(r"ERROR: AddressSanitizer: (.*)")
LEAK = re.compile(r"ERROR: LeakSanitizer: (.*)")
UBSAN = re.compile(r"([^\s'\"]+:\d+:\d+): runtime error: ([^\n\\'\"]*)")
SUMMARY = re.compile(r"SUMMARY: (?:AddressSanitizer|LeakSanitizer): (.*)")


def reports(text):
    """[(kind, place)] of the reports in a log's text: kind asan, leak or ubsan."""
    out = []
    for m in UBSAN.finditer(text):
        out.append(("ubsan", f"{m.group(1)}: {m.group(2)}"))
    for pattern, kind in ((ASAN, "asan"), (LEAK, "leak")):
        if pattern.search(text):
            s = SUMMARY.search(text)
            out.append((kind, s.group(1) if s else pattern.search(text).group(1)))
    return out


def test_result(d):
    """(meson's result, the test's FAIL lines, its whole output) of one test's directory."""
    result, fails, output = "NOT RUN", [], ""
    try:
        for line in open(os.path.join(d, "testlog.json")):
            if line.strip():
                r = json.loads(line)
                result = r["result"]
                output = (r.get("stdout") or "") + (r.get("stderr") or "")
                fails = [x for x in output.splitlines() if x.startswith("FAIL")]
    except OSError:
        pass
    return result, fails, output


def main():
    logs = sys.argv[1]
    kinds = collections.Counter()
    places = collections.Counter()
    first_at = {}
    failed = 0
    dirs = sorted(glob.glob(os.path.join(logs, "*/")), key=lambda p: int(os.path.basename(p[:-1])))
    for d in dirs:
        name = open(os.path.join(d, "name")).read().strip()
        result, fails, output = test_result(d)
        found = []
        sources = [(path, reports(open(path, errors="replace").read()))
                   for path in sorted(glob.glob(os.path.join(d, "asan.*")))]
        sources.append((os.path.join(d, "testlog.json"),
                        sorted({r for r in reports(output) if r[0] == "ubsan"})))
        for path, reps in sources:
            for kind, place in reps:
                found.append(kind)
                kinds[kind] += 1
                places[(kind, place)] += 1
                first_at.setdefault((kind, place), path)
        if result not in ("OK", "SKIP", "EXPECTEDFAIL"):
            failed += 1
        print(f"{result:>8}  {len(found):3d} report(s)  {name}")
        if result not in ("OK", "SKIP", "EXPECTEDFAIL") and not fails:
            # no FAIL line: the test stopped (a timeout: see docs/preload.md on fork
            # children under ASan)
            fails = [x for x in output.splitlines() if x.strip()][-1:]
        for line in fails[:3]:
            print(f"          {line}")
    for (kind, place), n in places.most_common():
        print(f"{n:5d}  {kind}: {place}\n         first in {first_at[(kind, place)]}")
    print(f"asan: {kinds['asan']} ASan report(s), {kinds['leak']} leak report(s), "
          f"{kinds['ubsan']} UBSan report(s), {failed} test(s) failed; reports under {logs}")
    return 1 if kinds or failed else 0


if __name__ == "__main__":
    sys.exit(main())
