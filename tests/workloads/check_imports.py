#!/usr/bin/env python3
"""Checks the bundled workloads' dynamic imports against the simulated CUDA stack.

usage: check_imports.py SIM_DIR [--shared EXE...] [--static EXE...]
                        [--expect EXE_NAME:SYMBOL...]

--shared: every symbol the program imports with a CUDA library's version node
  (libcudart.so.13, libcublas.so.13, libcublasLt.so.13, libcuda.so.1) must be
  defined, with that same version node, by the simulated library of that soname
  in SIM_DIR; every CUDA library the program NEEDs must exist there with that
  SONAME.
--static: the program must not NEED libcudart.so.13 nor import any cuda* or
  __cuda* symbol (nvcc's static cudart is linked in).
--expect: the named shared program must import SYMBOL (e.g. legacy_launch's
  cudaLaunchKernel), so each variant really takes the launch path it claims.
Exits 0 when all hold, 1 with one line per problem otherwise, 77 when SIM_DIR
lacks a library a program needs and that library is the driver (not written yet).
Uses readelf from binutils.
"""
import os
import re
import subprocess
import sys

CUDA_SONAMES = ("libcudart.so.13", "libcublas.so.13", "libcublasLt.so.13", "libcuda.so.1")
SYMBOL_LINE = re.compile(r"^\s*\d+:\s+[0-9a-fA-F]+\s+\d+\s+(\w+)\s+(\w+)\s+\w+\s+(\w+)\s+(\S+)")


def readelf(*args):
    """Runs readelf -W with args and returns its stdout."""
    return subprocess.run(["readelf", "-W", *args], check=True, capture_output=True, text=True).stdout


def dynamic_symbols(path):
    """Yields (name, version, defined, binding) for each dynamic symbol of path."""
    for line in readelf("--dyn-syms", path).splitlines():
        match = SYMBOL_LINE.match(line)
        if not match:
            continue
        _kind, binding, section, full = match.groups()
        full = re.sub(r"\s*\(\d+\)$", "", full)
        if "@@" in full:
            name, version = full.split("@@", 1)
        elif "@" in full:
            name, version = full.split("@", 1)
        else:
            name, version = full, None
        yield name, version, section != "UND", binding


def dynamic_tags(path, tag):
    """Returns the values of one dynamic-section tag (NEEDED, SONAME) of path."""
    values = []
    for line in readelf("-d", path).splitlines():
        if "(%s)" % tag in line:
            values.append(line.split("[", 1)[1].rstrip("]"))
    return values


def check_shared(sim_dir, program, problems, cache):
    """Appends a problem for each CUDA import of program the simulator lacks.
    Returns False when the simulated driver it needs is not built yet."""
    name = os.path.basename(program)
    needed = [lib for lib in dynamic_tags(program, "NEEDED") if lib in CUDA_SONAMES]
    if "libcudart.so.13" not in needed:
        problems.append("%s: does not NEED libcudart.so.13 (not built with -cudart shared?)" % name)
    for soname in needed:
        if soname in cache:
            continue
        path = os.path.join(sim_dir, soname)
        if not os.path.exists(path):
            if soname == "libcuda.so.1":
                return False
            problems.append("%s: needs %s, which %s does not have" % (name, soname, sim_dir))
            cache[soname] = set()
            continue
        if dynamic_tags(path, "SONAME") != [soname]:
            problems.append("%s: SONAME is %s, want %s" % (path, dynamic_tags(path, "SONAME"), soname))
        cache[soname] = {(sym, ver) for sym, ver, defined, _ in dynamic_symbols(path) if defined}
    imported = 0
    for sym, version, defined, binding in dynamic_symbols(program):
        if defined or version not in CUDA_SONAMES:
            continue
        imported += 1
        if version not in needed:
            problems.append("%s: imports %s@%s but does not NEED %s" % (name, sym, version, version))
        elif (sym, version) not in cache[version]:
            problems.append("%s: imports %s@%s, not defined by the simulated %s" % (name, sym, version, version))
    if imported == 0:
        problems.append("%s: imports no CUDA symbol at all" % name)
    print("%s: %d CUDA imports from %s checked" % (name, imported, ", ".join(needed)))
    return True


def check_static(program, problems):
    """Appends a problem when program uses the shared runtime after all."""
    name, before = os.path.basename(program), len(problems)
    if "libcudart.so.13" in dynamic_tags(program, "NEEDED"):
        problems.append("%s: NEEDs libcudart.so.13 but should carry the static runtime" % name)
    for sym, _version, defined, _binding in dynamic_symbols(program):
        if not defined and (sym.startswith("cuda") or sym.startswith("__cuda")):
            problems.append("%s: imports %s but should carry the static runtime" % (name, sym))
    if len(problems) == before:
        print("%s: static cudart, no runtime imports" % name)


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2])
        return 2
    sim_dir, mode = argv[1], None
    groups = {"--shared": [], "--static": [], "--expect": []}
    for arg in argv[2:]:
        if arg in groups:
            mode = arg
        elif mode is None:
            print("check_imports.py: %s given before --shared/--static/--expect" % arg)
            return 2
        else:
            groups[mode].append(arg)
    problems, cache, skipped = [], {}, []
    by_name = {os.path.basename(p): p for p in groups["--shared"]}
    for program in groups["--shared"]:
        if not check_shared(sim_dir, program, problems, cache):
            skipped.append(os.path.basename(program))
    for program in groups["--static"]:
        check_static(program, problems)
    for expectation in groups["--expect"]:
        name, _, symbol = expectation.partition(":")
        if name not in by_name:
            problems.append("--expect %s: no such --shared program" % expectation)
            continue
        imports = {sym for sym, _v, defined, _b in dynamic_symbols(by_name[name]) if not defined}
        if symbol not in imports:
            problems.append("%s: does not import %s" % (name, symbol))
        else:
            print("%s: imports %s as expected" % (name, symbol))
    for problem in problems:
        print("FAIL:", problem)
    if problems:
        return 1
    if skipped:
        print("skip: no simulated libcuda.so.1 yet for", ", ".join(skipped))
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
