#!/usr/bin/env python3
"""A Python interpreter driving the CUDA runtime through ctypes, under `cutrace record`.

usage: test_python_ctypes.py SIM_DIR CUTRACE LIBTRACE WORKLOAD_DIR

ctypes.CDLL loads libcudart RTLD_LOCAL and finds each function with dlsym on its
handle, as Python extension modules and loaders do: the calls must behave exactly
as untraced (same printed results) and be traced as runtime calls, with the copies'
and sets' MEMOP and GPU records and, with --stacks, call stacks through the
interpreter. Known answers: 3 iterations of a 4 KiB cudaMemset (value i) and a
4 KiB cudaMemcpy back, each checked by the script.
"""
import os
import subprocess
import sys

from harness import Harness

SCRIPT = r'''
import ctypes, sys
rt = ctypes.CDLL("libcudart.so.13")
p = ctypes.c_void_p()
assert rt.cudaMalloc(ctypes.byref(p), 4096) == 0
buf = (ctypes.c_ubyte * 4096)()
for i in range(3):
    assert rt.cudaMemset(p, i + 1, 4096) == 0
    assert rt.cudaMemcpy(buf, p, 4096, 2) == 0        # cudaMemcpyDeviceToHost
    print("iteration", i, "byte", buf[0], buf[4095])
print("sync", rt.cudaDeviceSynchronize(), "free", rt.cudaFree(p))
'''


def main():
    h = Harness(sys.argv)
    env = h.env()
    plain = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True,
                           timeout=120)
    if not h.check(plain.returncode == 0, f"untraced python: {plain.stderr[-400:]}"):
        h.finish()
    data = os.path.join(h.tmp, "py.data")
    traced = subprocess.run([h.cutrace, "record", "-q", "--stacks=all", "-o", data, "--", sys.executable,
                             "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=120)
    h.check(traced.returncode == 0 and traced.stdout == plain.stdout,
            f"traced python differs: {traced.returncode} {traced.stdout!r} vs {plain.stdout!r} {traced.stderr[-400:]}")
    rc, rep, err = h.cutrace_json("report", "--format", "json", data)
    if h.check(rc == 0 and rep, f"report: {err}"):
        calls = {a["name"]: a["calls"] for a in rep.get("apis", [])}
        for name, n in (("cudaMalloc", 1), ("cudaMemset", 3), ("cudaMemcpy", 3), ("cudaDeviceSynchronize", 1),
                        ("cudaFree", 1)):
            h.check(calls.get(name) == n, f"{name}: {calls.get(name)} calls traced, want {n} ({calls})")
        mem = {(m["kind"], m["count"]) for m in rep.get("memcpy", [])}
        h.check(any(k.lower().startswith("memset") and c == 3 for k, c in mem) and
                any(k == "DtoH" and c == 3 for k, c in mem), f"memory operations {mem}")
    rc, out, err = h.run("report", "--by", "stack", data)
    h.check(rc == 0 and ("ffi_call" in out or "_ctypes" in out or "python" in out.lower()),
            f"stacks through the interpreter (ctypes' ffi_call, python): {out[:600]!r} {err!r}")
    h.finish()


if __name__ == "__main__":
    main()
