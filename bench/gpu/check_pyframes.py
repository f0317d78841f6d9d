#!/usr/bin/env python3
"""Checks Python frames in the stacks of a PyTorch run recorded with `cutrace record
--stacks` (scripts/gpu-check, real GPU). Prints one markdown table row:
| case | python | GPU time at the script's lines | top call site | verdict |

usage: check_pyframes.py CASE CUTRACE TRACE_DIR
The verdict is ok when the trace says Python frames were on (a TRACER record
"python 3.N frames", none "python frames off"), and at least 95% of the GPU time
launched with a stack is attributed to a Python frame of torch_cases.py (the line of
the script that called the torch op, not torch's own Python or C++).
"""
import glob
import json
import re
import subprocess
import sys


def tracer_labels(cutrace, d):
    """The `what` strings of the TRACER records of every file in d."""
    labels = set()
    for path in sorted(glob.glob(f"{d}/*.ctr")):
        out = subprocess.run([cutrace, "dump", path], capture_output=True, text=True, timeout=300).stdout
        strings = dict(re.findall(r'^string id=(\d+) "(.*)"$', out, re.M))
        for what in re.findall(r"^tracer .*?what=(\d+)", out, re.M):
            labels.add(strings.get(what, ""))
    return labels


def main():
    case, cutrace, d = sys.argv[1:4]
    labels = tracer_labels(cutrace, d)
    on = sorted(x for x in labels if re.match(r"python \d+\.\d+ frames$", x))
    off = sorted(x for x in labels if x.startswith("python frames off"))
    p = subprocess.run([cutrace, "report", "--by", "callsite", "--format", "json", d], capture_output=True,
                       text=True, timeout=300)
    rows = json.loads(p.stdout or "{}").get("callsites", [])
    total = sum(r["gpu_ns"] for r in rows)
    mine = sum(r["gpu_ns"] for r in rows if r["file"].endswith("torch_cases.py") and
               r["stack"] and r["stack"][r["site_index"]].get("note") == "python")
    top = max(rows, key=lambda r: r["gpu_ns"], default=None)
    label = f"{top['file'].rsplit('/', 1)[-1]}:{top['line']} {top['function']}" if top else "-"
    share = 100.0 * mine / total if total else 0.0
    ok = on and not off and share >= 95.0
    print(f"| {case} | {', '.join(on + off) or 'none'} | {share:.1f}% of {total / 1e6:.3f} ms | "
          f"{label} | {'ok' if ok else 'FAIL'} |")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
