"""Helpers shared by cutrace's Python tests (stdlib only).

- check(cond, what): records a failed expectation in `failures` and prints
  "FAIL: what"; returns cond, so a test goes on and reports every failure.
- finish(): prints "N failure(s)"; when a check failed it exits 1 (so a test that
  calls it bare cannot pass by mistake), else returns 0 for sys.exit; SKIP (77) is
  meson's "skipped".
- require_built(*paths): exits SKIP, saying which, when one of the paths (a built
  library or program the test runs) does not exist.
- scratch_dir(prefix) / scratch(prefix): a scratch directory (under TMPDIR, else
  /tmp) with the one rule of every test: removed at exit when the test passed
  (finish() found no failure, or it was skipped), kept and named when a check failed,
  the test died or CUTRACE_KEEP_TMP=1, so that a failure's traces can be read.
- skip(why): prints "skip: why" and exits SKIP.
- callsite_markers(path): {name: line} of the `/* CALLSITE: name */` comments
  of a test program's source.
- HkTrace: one trace file as hk_read (preload/hooks/tests) prints it: records by
  kind, the strings (`S <id> <hex>`) and the STATUS line.

Nothing to install: a script finds this directory from its own path, e.g.
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "..", "..", "tests", "lib"))
"""
import atexit
import contextlib
import os
import re
import shutil
import sys
import tempfile

SKIP = 77
failures = []  # what each failed check said, in order
_scratch = []  # (pid, path) of each scratch directory made by scratch_dir
_passed = False  # finish() found no failure, or the test skipped


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
    global _passed
    print(f"{len(failures)} failure(s)")
    if failures:
        sys.exit(1)
    _passed = True
    return 0


def skip(why):
    """Prints "skip: why" and exits SKIP (scratch directories are removed)."""
    global _passed
    print(f"skip: {why}")
    _passed = True
    sys.exit(SKIP)


def _scratch_at_exit():
    """Removes this process's scratch directories when the test passed; otherwise
    names each one kept."""
    keep = not _passed or failures or os.environ.get("CUTRACE_KEEP_TMP") == "1"
    for pid, path in _scratch:
        if pid != os.getpid() or not os.path.isdir(path):
            continue  # a forked child's exit, or the test removed it itself
        if keep:
            print(f"scratch directory kept: {path}")
        else:
            shutil.rmtree(path, ignore_errors=True)


def scratch_dir(prefix="cutrace-"):
    """Makes a scratch directory (tempfile.mkdtemp(prefix=prefix)) and returns its path.

    The one rule of every test's scratch: removed when the process exits after
    finish() found no failure (or skip()/require_built() skipped the test); kept, and
    its path printed, when a check failed, the test died (an exception, an exit not
    through finish()) or CUTRACE_KEEP_TMP=1.
    """
    if not _scratch:
        atexit.register(_scratch_at_exit)
    path = tempfile.mkdtemp(prefix=prefix)
    _scratch.append((os.getpid(), path))
    return path


@contextlib.contextmanager
def scratch(prefix="cutrace-"):
    """scratch_dir(prefix) for a with block: the block's end leaves the directory to
    the same rule at exit (a failed test's directory stays readable)."""
    yield scratch_dir(prefix)


def require_built(*paths):
    """Exits SKIP ("skip: P is not built") when one of the paths does not exist."""
    for need in paths:
        if not os.path.exists(need):
            skip(f"{need} is not built")


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
