"""Helpers shared by cutrace's Python tests (stdlib only).

- check(cond, what): records a failed expectation in `failures` and prints
  "FAIL: what"; returns cond, so a test goes on and reports every failure.
- finish(): prints "N failure(s)"; when a check failed it exits 1 (so a test that
  calls it bare cannot pass by mistake), else returns 0 for sys.exit; SKIP (77) is
  meson's "skipped".
- require_built(*paths): exits SKIP, saying which, when one of the paths (a built
  library or program the test runs) does not exist.
- callsite_markers(path): {name: line} of the `/* CALLSITE: name */` comments
  of a test program's source.
- HkTrace: one trace file as hk_read (preload/hooks/tests) prints it: records by
  kind, the strings (`S <id> <hex>`) and the STATUS line.

Nothing to install: a script finds this directory from its own path, e.g.
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "..", "..", "tests", "lib"))
"""
import os
import re
import sys

SKIP = 77
failures = []  # what each failed check said, in order


def check(cond, what):
    """Records and prints a failed expectation (the test goes on); returns cond."""
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


def finish():
    """Prints the number of failures; exits 1 when a check failed, else returns 0.

    Exiting here, not only returning the status, keeps a test whose last line is a
    bare finish() (not sys.exit(finish())) from passing with failures: five tests did.
    """
    print(f"{len(failures)} failure(s)")
    if failures:
        sys.exit(1)
    return 0


def require_built(*paths):
    """Exits SKIP ("skip: P is not built") when one of the paths does not exist."""
    for need in paths:
        if not os.path.exists(need):
            print(f"skip: {need} is not built")
            sys.exit(SKIP)


def callsite_markers(path):
    """{name: line} of the `/* CALLSITE: name */` comments of a source file."""
    out = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            m = re.search(r"/\* CALLSITE: (\w+) \*/", line)
            if m:
                out[m.group(1)] = n
    return out


class HkTrace:
    """One trace file as hk_read prints it: a record per line (`<kind> k=v ...`,
    integer fields, the kind in "_kind"), the strings (`S <id> <hex>`) and the
    STATUS line (damaged: None before it, then whether it says damaged)."""

    def __init__(self, text):
        self.strings = {}
        self.records = []
        self.damaged = None
        for line in text.splitlines():
            parts = line.split()
            if not parts:
                continue
            if parts[0] == "S":
                self.strings[int(parts[1])] = bytes.fromhex(parts[2] if len(parts) > 2 else "").decode(
                    "utf-8", "replace")
            elif parts[0] == "STATUS":
                self.damaged = parts[1] != "damaged=0"
            else:
                rec = {k: int(v) for k, v in (p.split("=", 1) for p in parts[1:])}
                rec["_kind"] = parts[0]
                self.records.append(rec)

    def of(self, kind):
        return [r for r in self.records if r["_kind"] == kind]

    def name(self, sid):
        return self.strings.get(sid, "")

    def apis(self, name=None):
        """API records, of one entry point when name is given."""
        return [r for r in self.of("api") if name is None or self.name(r["name"]) == name]

    def by_corr(self, kind):
        """{corr: [records of kind]}."""
        out = {}
        for r in self.of(kind):
            out.setdefault(r["corr"], []).append(r)
        return out
