#!/usr/bin/env python3
"""Writes a planted trace of N cudaMalloc/cudaFree pairs (format 1.5 ALLOC records, one
thread, 64 pointers in turn, 4 KiB each): the worst case for dump --chrome/--perfetto's
allocation args and memory counters, every call an allocation or a release
(docs/performance.md, "Post-processor").

usage: alloc_trace.py OUT.ctr N"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from tracewrite import TraceWriter  # noqa: E402


def main():
    out, pairs = sys.argv[1], int(sys.argv[2])
    w = TraceWriter()
    w.add("process", pid=7, start_ns=10**9)
    malloc, free = w.string("cudaMalloc"), w.string("cudaFree")
    t, corr = 10**9 + 1000, 1
    for i in range(pairs):
        ptr = 0x10000 + (i % 64) * 0x100000
        for name, release in ((malloc, 0), (free, 1)):
            w.add("api", tid=7, name=name, begin_ns=t, end_ns=t + 1000, corr=corr, device=0,
                  result=0, flags=0)
            w.add("alloc", corr=corr, ptr=ptr, bytes=0 if release else 4096, kind=1,
                  release=release)
            corr += 1
            t += 2000
    w.add("end", records=0, end_ns=t)
    w.save(out)


if __name__ == "__main__":
    main()
