#!/usr/bin/env python3
"""Compares cutrace's view of a run with torch.profiler's (CUPTI) view of the same steps.

usage: compare.py CASE CUTRACE_CHROME.json KINETO.json WALL_PLAIN WALL_CUTRACE WALL_PROFILER

Both inputs are Chrome trace JSON: cutrace's from `cutrace dump --chrome`, Kineto's
from torch.profiler's export_chrome_trace. Kernels (cat "kernel") are matched by
name, in order of start time, over the window Kineto covers (the profiled steps
only); cutrace's trace covers the whole process, so its last occurrences are used.
Prints one markdown table row:
| case | kernels (kineto) | found by cutrace | median |d| us | worst |d| us (>=10us kernels) |
within 2us/5% | GPU busy kineto ms | GPU busy cutrace ms | slowdown cutrace | slowdown profiler |
"""
import json
import statistics
import sys
from collections import defaultdict


def name_key(name):
    """A kernel name in a form both demanglers agree on: CUPTI writes templates as
    "void f<a<b> >(...)", __cxa_demangle as "void f<a<b>>(...)"; some tools drop the
    leading "void " of a template kernel."""
    name = name.strip()
    if name.startswith("void "):
        name = name[5:]
    return "".join(name.split())


def kernels(path):
    """Returns {name key: [(ts_us, dur_us), ...]} of the kernel events in a Chrome trace."""
    with open(path) as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    out = defaultdict(list)
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            out[name_key(e["name"])].append((float(e["ts"]), float(e.get("dur", 0))))
    for v in out.values():
        v.sort()
    return out


def busy_ms(ks):
    """Union of kernel intervals in ms."""
    iv = sorted((ts, ts + d) for v in ks.values() for ts, d in v)
    total, cur_s, cur_e = 0.0, None, None
    for s, e in iv:
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total / 1000.0


def main():
    case, ct_path, kin_path = sys.argv[1:4]
    wall_plain, wall_ct, wall_prof = map(float, sys.argv[4:7])
    ct, kin = kernels(ct_path), kernels(kin_path)
    total = sum(len(v) for v in kin.values())
    found = 0
    diffs, big_diffs, within = [], [], 0
    ct_window = {}
    for name, kv in kin.items():
        cv = ct.get(name, [])
        tail = cv[-len(kv):] if len(cv) >= len(kv) else cv
        ct_window[name] = tail
        found += min(len(kv), len(cv))
        for (_, kd), (_, cd) in zip(kv, tail):
            d = abs(kd - cd)
            diffs.append(d)
            if kd >= 10.0:
                big_diffs.append(d)
                if d <= max(2.0, 0.05 * kd):
                    within += 1
    for name, kv in kin.items():  # what cutrace missed, for the case's compare.err
        if len(ct.get(name, [])) < len(kv):
            print(f"compare: {case}: kineto has {len(kv)} x {name[:160]}, cutrace "
                  f"{len(ct.get(name, []))}", file=sys.stderr)
    med = statistics.median(diffs) if diffs else float("nan")
    worst = max(big_diffs) if big_diffs else float("nan")
    share = f"{within}/{len(big_diffs)}" if big_diffs else "n/a"
    print(f"| {case} | {total} | {found} ({100.0 * found / total if total else 0:.0f}%) | "
          f"{med:.2f} | {worst:.2f} | {share} | {busy_ms(kin):.3f} | {busy_ms(ct_window):.3f} | "
          f"{wall_ct / wall_plain:.2f}x | {wall_prof / wall_plain:.2f}x |")


if __name__ == "__main__":
    main()
