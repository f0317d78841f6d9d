#!/usr/bin/env python3
"""Checks `cutrace report --by range --format json` of a torch_cases.py --emit-nvtx run.

usage: check_nvtx.py CASE REPORT.json

Prints one markdown table row: the case's own record_function range (calls, kernels
attributed, GPU ms), how many aten:: ranges were seen and how many of them have
kernels. Exit status 0 when the case's range exists with kernels inside it and at
least one aten:: range has kernels, else 1.
"""
import json
import sys


def main():
    case, path = sys.argv[1:3]
    with open(path) as f:
        ranges = json.load(f).get("ranges", [])
    # emit_nvtx names ranges "<op>, seq = N" and may append argument shapes: match
    # on the leading name.
    mine = [r for r in ranges if r["name"].split(",")[0] == case]
    aten = [r for r in ranges if r["name"].startswith("aten::")]
    aten_k = [r for r in aten if r.get("kernels", 0) > 0]
    calls = sum(r["calls"] for r in mine)
    kernels = sum(r.get("kernels", 0) for r in mine)
    gpu_ms = sum(r.get("gpu_ns", 0) for r in mine) / 1e6
    ok = calls > 0 and kernels > 0 and aten_k
    top = ", ".join(r["name"].split(",")[0] for r in sorted(aten_k, key=lambda r: -r.get("gpu_ns", 0))[:3])
    print(f"| {case} | {calls} | {kernels} | {gpu_ms:.3f} | {len(aten)} | {len(aten_k)} | {top} | "
          f"{'ok' if ok else 'FAILED'} |")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
