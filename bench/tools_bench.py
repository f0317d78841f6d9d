#!/usr/bin/env python3
"""Post-processor benchmark: time and peak memory of `cutrace report`, `cutrace gaps`
(when built), `cutrace dump --chrome`, `--perfetto` and `--csv` (to /dev/null; their output's
size from a second run, counted through a pipe), `cutrace diff` (against a
second trace of 93.5% the iterations, with and without `--per-range step`; records
are those of both) and `cutrace steps` (one step per iteration, a step every 23 records:
far more steps than a real job has; --summary, and the JSON of every step) on generated
traces of about 1M, 10M and 100M records (cutrace-gentrace --mixed: two application threads, three
streams, kernels, copies, GEMMs, syncs, NVTX ranges, tracer flushes). Prints a
markdown table. CPU time (user + sys) and peak RSS of each run come from
/usr/bin/time, so the numbers are per command, on one core (every command is
single-threaded).

usage: bench/tools_bench.py [--build DIR] [--sizes 1e6,1e7,1e8] [--dir TMPDIR]
                            [--chrome-max N] [--only CMD,...] [--keep] [--no-diff]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

RECORDS_PER_ITERATION = 23.375  # the --mixed scenario's average (gentrace.c)


def measure(argv):
    """Runs argv with stdout to /dev/null; returns (wall s, cpu s, peak RSS MiB, status).
    /usr/bin/time measures it when present: a child's ru_maxrss forked from Python would
    count Python's own pages."""
    timer = "/usr/bin/time"
    use_time = os.access(timer, os.X_OK)
    with open(os.devnull, "w") as null:
        t0 = time.monotonic()
        cmd = [timer, "-f", "@@ %U %S %M", *argv] if use_time else argv
        p = subprocess.run(cmd, stdout=null, stderr=subprocess.PIPE, text=True)
        wall = time.monotonic() - t0
    if p.returncode not in (0, 1):
        sys.exit(f"{' '.join(argv)} failed ({p.returncode}): {p.stderr}")
    if use_time:
        u, s, m = re.search(r"@@ ([\d.]+) ([\d.]+) (\d+)", p.stderr).groups()
        return wall, float(u) + float(s), int(m) / 1024.0, p.returncode
    ru = __import__("resource").getrusage(__import__("resource").RUSAGE_CHILDREN)
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0, p.returncode


def output_bytes(argv):
    """The number of bytes argv writes to its standard output (read through a pipe)."""
    n = 0
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as p:
        while True:
            chunk = p.stdout.read(1 << 20)
            if not chunk:
                break
            n += len(chunk)
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build", help="the meson build directory")
    ap.add_argument("--sizes", default="1e6,1e7,1e8", help="approximate record counts")
    ap.add_argument("--dir", default=None, help="where to write the traces (default: BUILD/bench-tools)")
    ap.add_argument("--chrome-max", type=float, default=1e8,
                    help="skip dump --chrome above this many records")
    ap.add_argument("--only", default=None,
                    help="run only these commands (comma-separated: report,gaps,steps,dump,diff)")
    ap.add_argument("--keep", action="store_true", help="keep the generated traces")
    ap.add_argument("--no-diff", dest="diff", action="store_false",
                    help="leave out the cutrace diff rows")
    a = ap.parse_args()
    cutrace = os.path.join(a.build, "tools", "cutrace")
    gentrace = os.path.join(a.build, "tools", "cutrace-gentrace")
    for exe in (cutrace, gentrace):
        if not os.access(exe, os.X_OK):
            sys.exit(f"{exe} not found: build first (ninja -C {a.build})")
    work = a.dir or os.path.join(a.build, "bench-tools")
    os.makedirs(work, exist_ok=True)
    has_gaps = subprocess.run([cutrace, "gaps", "--help"], capture_output=True).returncode == 0

    rows, sizes = [], []
    for size in (float(s) for s in a.sizes.split(",")):
        iters = max(1, int(size / RECORDS_PER_ITERATION))
        path = os.path.join(work, f"mixed-{iters}.ctr")
        if not os.path.exists(path):
            subprocess.run([gentrace, "--mixed", path, str(iters)], check=True)
        info = subprocess.run([cutrace, "info", path], capture_output=True, text=True).stdout
        records = int(re.search(r"records\s+(\d+)", info).group(1))
        mib = os.path.getsize(path) / 2**20
        cmds = [("report", [cutrace, "report", path])]
        if has_gaps:
            cmds.append(("gaps", [cutrace, "gaps", path]))
        cmds.append(("steps --summary", [cutrace, "steps", "--summary", path]))
        cmds.append(("steps --format json", [cutrace, "steps", "--format", "json", path]))
        if records <= a.chrome_max:
            cmds.append(("dump --chrome", [cutrace, "dump", "--chrome", "-o", "/dev/null", path]))
            cmds.append(("dump --perfetto", [cutrace, "dump", "--perfetto", "-o", "/dev/null", path]))
            cmds.append(("dump --csv", [cutrace, "dump", "--csv", "-o", "/dev/null", path]))
        if a.only:
            wanted = a.only.split(",")
            cmds = [c for c in cmds if c[0].split()[0] in wanted]
        for name, argv in cmds:
            wall, cpu, rss, rc = measure(argv)
            rows.append((name, records, mib, wall, cpu, records / cpu / 1e6 if cpu else 0, rss))
            print(f"  {name} on {records} records: {cpu:.2f} s CPU, {rss:.1f} MiB", file=sys.stderr)
            if name.startswith("dump"):
                out = output_bytes([x if x != "/dev/null" else "-" for x in argv])
                sizes.append((name, records, out))
        if a.diff and (not a.only or "diff" in a.only.split(",")):
            other = os.path.join(work, f"mixed-{iters}-after.ctr")
            if not os.path.exists(other):
                subprocess.run([gentrace, "--mixed", other, str(int(iters * 0.935)), "4242"],
                               check=True)
            info = subprocess.run([cutrace, "info", other], capture_output=True, text=True).stdout
            both = records + int(re.search(r"records\s+(\d+)", info).group(1))
            mib2 = mib + os.path.getsize(other) / 2**20
            for name, extra in (("diff", []), ("diff --per-range step", ["--per-range", "step"])):
                wall, cpu, rss, rc = measure([cutrace, "diff", *extra, path, other])
                rows.append((name, both, mib2, wall, cpu, both / cpu / 1e6 if cpu else 0, rss))
                print(f"  {name} on {both} records: {cpu:.2f} s CPU, {rss:.1f} MiB", file=sys.stderr)
            if not a.keep:
                os.unlink(other)
        if not a.keep:
            os.unlink(path)
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)

    print("| command | records | trace MiB | wall s | CPU s | M records/s (CPU) | peak RSS MiB |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, records, mib, wall, cpu, rate, rss in rows:
        print(f"| {name} | {records:,} | {mib:.1f} | {wall:.2f} | {cpu:.2f} | {rate:.1f} | {rss:.1f} |")
    if sizes:
        print()
        print("| export | records | output MiB | bytes per record |")
        print("|---|---:|---:|---:|")
        for name, records, out in sizes:
            print(f"| {name} | {records:,} | {out / 2**20:.1f} | {out / records:.1f} |")


if __name__ == "__main__":
    main()
