/*
 * dt_app vmm: the driver's virtual memory management calls through the exported
 * names (linked with -lcuda), for test_driver.py (vmm_case.py). Prints what each
 * call returned, the same with and without the tracer:
 *   a cuMemCreate of 4 KiB (not a multiple of the 2 MiB granularity: fails, errno
 *   set to 77 before it and printed after), cuMemAddressReserve of 8 MiB,
 *   cuMemCreate of 2 MiB and of 4 MiB, both mapped one after the other, a cuMemMap
 *   over the second mapping (fails), cuMemSetAccess read-write of the 6 MiB,
 *   cuMemsetD8 of all of it and a 2-byte cuMemcpyDtoH across the two handles, a
 *   cuMemUnmap of the first 4 MiB (cuts the second mapping: fails), cuMemUnmap of
 *   the 6 MiB, cuMemRelease of both handles, cuMemAddressFree; then, with a second
 *   device (SIMCUDA_DEVICES=2), a cuMemCreate of 2 MiB on device 1 while device 0's
 *   context is current, and its cuMemRelease.
 */
#include <cuda.h>
#include <errno.h>
#include <stdio.h>
#include <time.h>

#define MIB ((size_t)1 << 20)

/* Runs the mode; 0, or 1 after a line on stderr. */
int dt_run_vmm(void) {
  CUdevice dev;
  CUcontext ctx;
  if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx)) {
    fprintf(stderr, "dt_app: vmm: no context\n");
    return 1;
  }
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  CUmemGenericAllocationHandle odd = 0x5eed, h1 = 0, h2 = 0; /* odd: a stale value the failing call leaves */
  CUdeviceptr base = 0;
  errno = 77;
  CUresult bad_create = cuMemCreate(&odd, 4096, &prop, 0);
  int create_errno = errno;
  if (cuMemAddressReserve(&base, 8 * MIB, 0, 0, 0) || cuMemCreate(&h1, 2 * MIB, &prop, 0) ||
      cuMemCreate(&h2, 4 * MIB, &prop, 0) || cuMemMap(base, 2 * MIB, 0, h1, 0) ||
      cuMemMap(base + 2 * MIB, 4 * MIB, 0, h2, 0)) {
    fprintf(stderr, "dt_app: vmm: reserve, create, map\n");
    return 1;
  }
  CUresult bad_map = cuMemMap(base + 2 * MIB, 2 * MIB, 0, h1, 0);
  CUmemAccessDesc rw = {};
  rw.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  rw.location.id = 0;
  rw.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  unsigned char back[2] = {0, 0};
  if (cuMemSetAccess(base, 6 * MIB, &rw, 1) || cuMemsetD8(base, 9, 6 * MIB) ||
      cuMemcpyDtoH(back, base + 2 * MIB - 1, sizeof back)) {
    fprintf(stderr, "dt_app: vmm: access, set, copy\n");
    return 1;
  }
  CUresult bad_unmap = cuMemUnmap(base, 4 * MIB);
  if (cuMemUnmap(base, 6 * MIB) || cuMemRelease(h1) || cuMemRelease(h2) ||
      cuMemAddressFree(base, 8 * MIB)) {
    fprintf(stderr, "dt_app: vmm: unmap, release, free\n");
    return 1;
  }
  int devices = 0;
  CUmemGenericAllocationHandle other = 0;
  CUresult on_other = CUDA_ERROR_INVALID_DEVICE;
  if (cuDeviceGetCount(&devices) == CUDA_SUCCESS && devices > 1) {
    prop.location.id = 1;
    on_other = cuMemCreate(&other, 2 * MIB, &prop, 0);
    if (on_other == CUDA_SUCCESS && cuMemRelease(other)) {
      fprintf(stderr, "dt_app: vmm: release on device 1\n");
      return 1;
    }
  }
  printf("vmm: create of 4 KiB %d (errno %d), map over a mapping %d, partial unmap %d, bytes %d %d, "
         "create on device 1 %d\n",
         (int)bad_create, create_errno, (int)bad_map, (int)bad_unmap, back[0], back[1], (int)on_other);
  return 0;
}

/* dt_app bench_vmm N: N growth-and-shrink cycles of one 2 MiB piece as PyTorch's
 * expandable segments make them (cuMemCreate, cuMemMap, cuMemSetAccess, cuMemUnmap,
 * cuMemRelease: 5 calls) in one reservation, after 100 warm-up cycles; prints the
 * mean host time per call (for bench/callgrind_launch.py and docs/performance.md,
 * not checked by the tests). */
int dt_bench_vmm(long n) {
  CUdevice dev;
  CUcontext ctx;
  CUdeviceptr base = 0;
  if (n <= 0 || cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
      cuCtxSetCurrent(ctx) || cuMemAddressReserve(&base, 2 * MIB, 0, 0, 0)) {
    fprintf(stderr, "dt_app: bench_vmm: bad count or setup\n");
    return 1;
  }
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  CUmemAccessDesc rw = {};
  rw.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  rw.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  struct timespec t0 = {0, 0}, t1;
  for (long i = -100; i < n; i++) {
    if (i == 0)
      clock_gettime(CLOCK_MONOTONIC, &t0);
    CUmemGenericAllocationHandle h;
    if (cuMemCreate(&h, 2 * MIB, &prop, 0) || cuMemMap(base, 2 * MIB, 0, h, 0) ||
        cuMemSetAccess(base, 2 * MIB, &rw, 1) || cuMemUnmap(base, 2 * MIB) || cuMemRelease(h)) {
      fprintf(stderr, "dt_app: bench_vmm: cycle %ld\n", i);
      return 1;
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / (5.0 * n);
  printf("bench_vmm: %ld calls, %.1f ns per call\n", 5 * n, ns);
  return cuMemAddressFree(base, 2 * MIB) ? 1 : 0;
}
