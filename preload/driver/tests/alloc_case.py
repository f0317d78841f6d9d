"""test_driver.py's alloc case (dt_app alloc, dt_linked.c): the driver's allocation
and release calls through their exported names and cuGetProcAddress's _ptsz answers."""

API_DRIVER = 0x10
GPU_KERNEL = 1

ALLOC_SPANS = ["cuMemAlloc_v2", "cuMemFree_v2", "cuMemAllocPitch_v2", "cuMemAllocManaged",
               "cuMemAllocHost_v2", "cuMemHostAlloc", "cuMemHostRegister_v2", "cuMemHostUnregister",
               "cuMemAllocAsync", "cuMemFreeAsync", "cuMemAllocAsync_ptsz", "cuMemFreeAsync_ptsz",
               "cuMemFreeHost", "cuMemAllocFromPoolAsync", "cuMemAllocFromPoolAsync_ptsz"]


def case_alloc(ctx, app, compare, check):
    """Driver allocation and release: one DRIVER span each (exported names and the
    _ptsz answers of cuGetProcAddress), depth 0, no GPU work; the cuMemFree called
    while a kernel runs lasts until the kernel's end (the implicit synchronisation);
    a failing cuMemFree keeps its error."""
    # the kernel lasts 400 ms: the program's thread, preempted between the launch and the
    # free on a loaded machine, reached the free after a 20 ms kernel had ended (CI-like
    # load 10-30, several times in one session)
    t, _, _ = compare(ctx, [app, "alloc"], extra={"SIMCUDA_KERNEL_US": "alloc_kernel=400000"})
    if not t:
        return
    want = {n: 1 for n in ALLOC_SPANS}
    want.update(cuMemFree_v2=4, cuMemFreeHost=2, cuMemFreeAsync=2, cuMemFreeAsync_ptsz=2)
    gpu_corrs = {g["corr"] for g in t.of("gpu")}
    for name, n in want.items():
        spans = t.apis(name)
        check(len(spans) == n, f"alloc: {len(spans)} {name} spans, want {n}")
        for a in spans:
            check(a["flags"] & API_DRIVER and a["depth"] == 0 and a["corr"] not in gpu_corrs,
                  f"alloc: {name} flags {a['flags']:#x} depth {a['depth']} or timed")
            pt = name.endswith("_ptsz")
            check(bool(a["flags"] & 0x1) == pt, f"alloc: {name} PTSZ flag {a['flags']:#x}")
    results = sorted(a["result"] for a in t.apis("cuMemFree_v2"))
    check(results == [0, 0, 0, 1], f"alloc: cuMemFree results {results}")
    async_streams = {(t.name(a["name"]), a["stream"]) for a in t.of("api")
                     if t.name(a["name"]) in ("cuMemAllocAsync", "cuMemFreeAsync",
                                              "cuMemAllocFromPoolAsync")}
    check(len(async_streams) == 3 and len({s for _, s in async_streams}) == 1
          and 0 not in {s for _, s in async_streams},
          f"alloc: stream-ordered calls' stream {async_streams}")
    # ALLOC records (format 1.5): one per successful call, none for the failing free
    allocs = {r["corr"]: r for r in t.of("alloc")}
    # entry point: (bytes, CT_ALLOC_* kind, release) of its calls
    want = {"cuMemAlloc_v2": (4096, 1, 0), "cuMemAllocPitch_v2": (512 * 4, 1, 0),
            "cuMemAllocManaged": (1024, 3, 0), "cuMemAllocHost_v2": (2048, 2, 0),
            "cuMemHostAlloc": (3072, 2, 0), "cuMemHostRegister_v2": (4096, 5, 0),
            "cuMemAllocAsync": (512, 4, 0), "cuMemAllocAsync_ptsz": (512, 4, 0),
            "cuMemAllocFromPoolAsync": (768, 4, 0), "cuMemAllocFromPoolAsync_ptsz": (768, 4, 0),
            "cuMemFree_v2": (0, 1, 1), "cuMemFreeHost": (0, 2, 1), "cuMemHostUnregister": (0, 5, 1),
            "cuMemFreeAsync": (0, 4, 1), "cuMemFreeAsync_ptsz": (0, 4, 1)}
    for name, (nbytes, kind, release) in want.items():
        for a in t.apis(name):
            r = allocs.get(a["corr"])
            if a["result"]:
                check(r is None, f"alloc: failing {name} has an ALLOC record {r}")
                continue
            if check(r is not None, f"alloc: {name} corr {a['corr']} without its ALLOC record"):
                check((r["bytes"], r["kind"], r["release"]) == (nbytes, kind, release) and r["ptr"],
                      f"alloc: {name} ALLOC {r}")
    # each allocation paired with its release, in call order (one thread: corr order); an
    # address freed may be handed out again (TSan's allocator does), so pointers repeat
    live, unpaired = set(), []
    for r in sorted(allocs.values(), key=lambda r: r["corr"]):
        if r["release"] and r["ptr"] in live:
            live.remove(r["ptr"])
        elif r["release"] or r["ptr"] in live:
            unpaired.append(r)
        else:
            live.add(r["ptr"])
    releases = sum(1 for r in allocs.values() if r["release"])
    check(len(allocs) == 20 and releases == 10 and not unpaired and not live,
          f"alloc: {len(allocs)} ALLOC records, {releases} releases; each allocation released "
          f"once after it: unpaired {unpaired}, never released {sorted(live)}")
    kernel = [g for g in t.of("gpu") if g["type"] == GPU_KERNEL]
    first_free = min(t.apis("cuMemFree_v2"), key=lambda a: a["begin_ns"])
    check(len(kernel) == 1 and first_free["begin_ns"] < kernel[0]["end_ns"] <= first_free["end_ns"],
          f"alloc: cuMemFree {first_free} did not wait for the kernel {kernel}")
