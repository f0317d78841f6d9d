"""test_driver.py's vmm case (dt_app vmm, dt_vmm.c): the driver's virtual memory
management calls through their exported names."""

API_DRIVER = 0x10
CT_ALLOC_VMM = 6
MIB = 1 << 20
# entry point -> the results of its calls, in call order
RESULTS = {"cuMemCreate": [1, 0, 0, 0], "cuMemAddressReserve": [0], "cuMemMap": [0, 0, 1],
           "cuMemSetAccess": [0], "cuMemUnmap": [1, 0], "cuMemRelease": [0, 0, 0],
           "cuMemAddressFree": [0]}


def case_vmm(ctx, app, compare, check):
    """One DRIVER span per call, depth 0, no GPU work, each failing call's error kept
    (the printed results are the untraced run's); ALLOC records of kind vmm for the
    successful cuMemCreate (the handle, its bytes) and cuMemRelease (the same handle),
    none for the failing cuMemCreate, the reservation, the mappings or the access; the
    cuMemCreate on device 1 (device 0 current) recorded on device 1."""
    t, _, _ = compare(ctx, [app, "vmm"], extra={"SIMCUDA_DEVICES": "2"})
    if not t:
        return
    gpu_corrs = {g["corr"] for g in t.of("gpu")}
    for name, results in RESULTS.items():
        spans = sorted(t.apis(name), key=lambda a: a["corr"])
        check([a["result"] for a in spans] == results,
              f"vmm: {name} results {[a['result'] for a in spans]}, want {results}")
        for a in spans:
            check(a["flags"] & API_DRIVER and a["depth"] == 0 and a["corr"] not in gpu_corrs,
                  f"vmm: {name} flags {a['flags']:#x} depth {a['depth']} or timed")
    allocs = {r["corr"]: r for r in t.of("alloc")}
    creates = sorted(t.apis("cuMemCreate"), key=lambda a: a["corr"])
    releases = sorted(t.apis("cuMemRelease"), key=lambda a: a["corr"])
    got = [(allocs[a["corr"]]["bytes"], allocs[a["corr"]]["kind"], allocs[a["corr"]]["release"])
           if a["corr"] in allocs else None for a in creates + releases]
    want = [None, (2 * MIB, CT_ALLOC_VMM, 0), (4 * MIB, CT_ALLOC_VMM, 0), (2 * MIB, CT_ALLOC_VMM, 0),
            (0, CT_ALLOC_VMM, 1), (0, CT_ALLOC_VMM, 1), (0, CT_ALLOC_VMM, 1)]
    check(got == want, f"vmm: ALLOC records of the creates and releases {got}, want {want}")
    handles = [allocs[a["corr"]]["ptr"] for a in creates[1:] + releases if a["corr"] in allocs]
    check(len(handles) == 6 and handles[:3] == handles[3:] and len(set(handles[:2])) == 2
          and all(handles), f"vmm: handles created and released {handles}")
    check(len(allocs) == 6, f"vmm: {len(allocs)} ALLOC records, want 6: {list(allocs.values())}")
    check([a["device"] for a in creates] == [0, 0, 0, 1],
          f"vmm: cuMemCreate devices {[a['device'] for a in creates]}, want the last on 1")
