#!/usr/bin/env python3
"""Calls whose detail records (LAUNCH, MEMOP, GEMM, GRAPH_LAUNCH) land 30 ms of another
thread's records apart from their API records (detail_plant.py: the writer drained the
thread's buffer between the two while it was preempted), written detail first as the
preload writes them (CTPH_FINISH): every command still joins each call with its detail,
exactly as when the records are together. Checked: report's memcpy, GEMM and graph
tables (a GEMM timed by its kernel has its row only through its span), dump --chrome's
call slices (kernel, GEMM shape) and GPU slices (grid, block, memcpy label and bytes),
and gaps' "ended by" text. The same calls written the old way (detail right after its
API record, no split) are read alike. (Written the old way and split, the tools deliver
the calls, and the GPU work the poller wrote before the drain, without their details:
the loss this order prevents.) Kernel attributes (format 1.6): launches by one thread
that reach the file 40 ms before the KERNEL_ATTR and OCCUPANCY records they name
(written by the thread that launched the kernel first, preempted): dump --chrome's
kernel slices still carry the attributes (the model holds a kernel until its
KERNEL_ATTR record is read), exactly as when the records come first; so do launches of
a new shape of a kernel whose attributes were read, 40 ms before that shape's OCCUPANCY
record (the model holds a kernel until its shape's OCCUPANCY record is read). Call stacks
(format 1.1): launches whose STACK node's records come 40 ms later (written by the
thread that called from that path first): dump --chrome's call slices still carry the
call site and Python stack; and when only the node's parent and root come 40 ms later
(the model holds a call until its STACK node and all its ancestors are read).

usage: test_detail_order.py CUTRACE"""
import json
import os
import sys

import tooltest
from detail_plant import MIB, late_attr_file, late_shape_file, late_stack_file, split_file
from tooltest import check, finish, scratch

cutrace = sys.argv[1]


def check_report(label, path):
    rc, out, err = tooltest.run(cutrace, "report", "--format", "json", path)
    doc = json.loads(out) if rc == 0 else {}
    gemms = [(g["api"], g["m"], g["n"], g["k"], g["calls"], g["kernels"], g["inner_timed"])
             for g in doc.get("gemms", [])]
    check(gemms == [("cublasSgemm_v2", 64, 32, 16, 1, 1, 1)],
          f"{label}: report's GEMM table ({rc} {err!r}): {gemms}")
    copies = [(m["kind"], m["src"], m["dst"], m["count"], m["bytes"]) for m in doc.get("memcpy", [])]
    check(copies == [("HtoD", "pageable", "device", 1, MIB)],
          f"{label}: report's memcpy table: {copies}")
    graphs = [(g["exec"], g["launches"]) for g in doc.get("graphs", [])]
    check(graphs == [(7, 1)], f"{label}: report's graph table: {graphs}")


def check_chrome(label, path, d):
    out = os.path.join(d, "out.json")
    rc, _, err = tooltest.run(cutrace, "dump", "--chrome", "-o", out, path)
    events = json.load(open(out))["traceEvents"] if rc == 0 else []
    slices = {}
    for e in events:
        if e.get("ph") == "X" and "correlation" in e.get("args", {}):
            slices[(e["cat"], e["args"]["correlation"])] = e
    calls = {corr: slices.get(("cuda_runtime", corr), {}).get("args", {}) for corr in (1, 3, 5)}
    got = (calls[1].get("kernel"), calls[5].get("kernel"),
           tuple(calls[3].get(f) for f in ("m", "n", "k")))
    check(got == ("scale2()", "scale2()", (64, 32, 16)),
          f"{label}: call slices' kernel and GEMM args ({rc} {err!r}): {got}")
    kernel = slices.get(("kernel", 1), {})
    copy = slices.get(("gpu_memcpy", 2), {})
    got = (kernel.get("args", {}).get("grid"), kernel.get("args", {}).get("block"),
           copy.get("name"), copy.get("args", {}).get("bytes"))
    check(got == ([4, 2, 1], [128, 1, 1], "Memcpy HtoD (Pageable -> Device)", MIB),
          f"{label}: GPU slices' launch and copy args: {got}")


def check_gaps(label, path):
    rc, out, err = tooltest.run(cutrace, "gaps", path)
    check(rc == 0 and "ended by memcpy HtoD on stream 0: cudaMemcpy by thread 10" in out,
          f"{label}: gaps ({rc} {err!r}) names the copy that ended the gap:\n{out[-800:]}")


def check_attributes(label, path, d):
    out = os.path.join(d, "attr.json")
    rc, _, err = tooltest.run(cutrace, "dump", "--chrome", "-o", out, path)
    events = json.load(open(out))["traceEvents"] if rc == 0 else []
    fields = ("registers per thread", "shared memory", "resident blocks per SM",
              "theoretical occupancy %")
    got = [tuple(e["args"].get(f) for f in fields) for e in events if e.get("cat") == "kernel"]
    check(got == [(64, 1536, 8, 50.0)] * 3, f"{label}: kernel slices' attributes ({rc} {err!r}): {got}")


def check_shapes(label, path, d):
    out = os.path.join(d, "shape.json")
    rc, _, err = tooltest.run(cutrace, "dump", "--chrome", "-o", out, path)
    events = json.load(open(out))["traceEvents"] if rc == 0 else []
    fields = ("registers per thread", "shared memory", "resident blocks per SM",
              "theoretical occupancy %")
    got = [tuple(e["args"].get(f) for f in fields) for e in events if e.get("cat") == "kernel"]
    check(got == [(64, 1024, 8, 50.0)] + [(64, 1536, 6, 75.0)] * 3,
          f"{label}: kernel slices' attributes and occupancy ({rc} {err!r}): {got}")


def check_call_sites(label, path, d):
    out = os.path.join(d, "stack.json")
    rc, _, err = tooltest.run(cutrace, "dump", "--chrome", "-o", out, path)
    events = json.load(open(out))["traceEvents"] if rc == 0 else []
    got = [(e["args"].get("call site"), e["args"].get("python stack")) for e in events
           if e.get("name") == "cudaLaunchKernel"]
    check(got == [("train.py:12 step", "train.py:12 step")] * 3,
          f"{label}: call slices' call sites ({rc} {err!r}): {got}")


with scratch("ct-detail-") as d:
    for label, detail_first, split_ns in (("detail first, 30 ms apart", True, None),
                                          ("detail right after its call (old order)", False, 0)):
        path = os.path.join(d, "split.ctr")
        split_file(path, detail_first, split_ns)
        check_report(label, path)
        check_chrome(label, path, d)
        check_gaps(label, path)
    for label, late in (("kernel attributes 40 ms after the launches", True),
                        ("kernel attributes before the launches", False)):
        path = os.path.join(d, "attr.ctr")
        late_attr_file(path, late)
        check_attributes(label, path, d)
    for label, late in (("a new shape's OCCUPANCY record 40 ms after its launches", True),
                        ("a new shape's OCCUPANCY record before its launches", False)):
        path = os.path.join(d, "shape.ctr")
        late_shape_file(path, late)
        check_shapes(label, path, d)
    for label, late, ancestors_only in (
            ("STACK records 40 ms after the calls", True, False),
            ("the STACK node's parent and root 40 ms after the calls", True, True),
            ("STACK records before the calls", False, False)):
        path = os.path.join(d, "stack.ctr")
        late_stack_file(path, late, ancestors_only)
        check_call_sites(label, path, d)

finish()
