#!/usr/bin/env python3
"""Python frames against a fake interpreter (programs/fake_python.c): the preload's
line decoder on every location-table form, a latin-1 name, a frame not yet started,
and its safety when what looks like CPython 3.11 is not laid out like it.

usage: test_python_fake.py SIM_DIR CUTRACE LIBTRACE WORKLOAD_DIR FAKE_PYTHON

Known answers (fake_python.c's header):
  good      stack: fake.py:106 fn_a < fake.py:208 fn_b < fake.py:0 fn_é < main, in
            place of its _PyEval_EvalFrameDefault; call site fake.py:106 fn_a; PYCODE
            records fn_a, fn_b, fn_é (first line 100), none for the frame not started
  badcode   TRACER and one stderr line "python frames off: a frame's code is not a
            code object"; the native stack (launch < _PyEval_EvalFrameDefault < main)
  unmapped  the same with "a thread's frames cannot be read"
Each prints "memset 0" and exits 0, traced as untraced.
"""
import os
import subprocess
import sys

from harness import Harness
from rawdump import raw_records


def main():
    h = Harness(sys.argv)
    fake = h.extra[0]
    env = h.env()
    for mode, why in (("good", None), ("badcode", "a frame's code is not a code object"),
                      ("unmapped", "a thread's frames cannot be read")):
        plain = subprocess.run([fake, mode], env=env, capture_output=True, text=True, timeout=60)
        data = os.path.join(h.tmp, mode + ".data")
        traced = subprocess.run([h.cutrace, "record", "-q", "-o", data, "--", fake, mode], env=env,
                                capture_output=True, text=True, timeout=60)
        h.check(plain.returncode == 0 and traced.returncode == 0 and plain.stdout == "memset 0\n" and
                traced.stdout == plain.stdout, f"{mode}: {plain.stdout!r} {traced.stdout!r} {traced.stderr!r}")
        recs, strings = raw_records(h.cutrace, os.path.join(data, sorted(os.listdir(data))[0]))
        tracer = [strings.get(r["what"]) for r in recs if r["kind"] == "tracer"]
        codes = {strings.get(r["qualname"]): r["first_line"] for r in recs if r["kind"] == "pycode"}
        rc, out, err = h.run("report", "--by", "stack", data)
        h.check("python 3.11 frames" in tracer, f"{mode}: TRACER python 3.11 frames: {tracer}")
        if why is None:
            h.check(codes == {"fn_a": 100, "fn_b": 100, "fn_\\xc3\\xa9": 100}, f"good: PYCODE {codes}")
            h.check("fake.py:106 fn_a < fake.py:208 fn_b < fake.py:0 fn_\u00e9 < main (" in out,
                    f"good: merged stack: {out!r}")
            rc, out, err = h.run("report", "--by", "callsite", data)
            h.check("fake.py:106 fn_a" in out, f"good: call site: {out!r}")
            h.check(not [t for t in tracer if t and t.startswith("python frames off")], f"good: {tracer}")
        else:
            said = "python frames off: " + why
            h.check(tracer.count(said) == 1 and traced.stderr.count(said) == 1 and not codes,
                    f"{mode}: {said!r} once in the trace and on stderr, no PYCODE: {tracer} "
                    f"{traced.stderr!r} {codes}")
            h.check("launch (fake_python.c:" in out and "< _PyEval_EvalFrameDefault (fake_python.c:" in out,
                    f"{mode}: the native stack is kept: {out!r}")
    h.finish()


if __name__ == "__main__":
    main()
