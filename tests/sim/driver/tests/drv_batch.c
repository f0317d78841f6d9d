/* The simulated driver's batch copies and managed-memory prefetches and discards: bytes moved,
 * argument checks, the 12.8 and 13.0 ABIs through cuGetProcAddress, stream time
 * (a prefetch lasts as long as a pinned copy of its size), capture refusal. */
#include "drv_test.h"

#include <string.h>

typedef CUresult (*batch_v1_fn)(CUdeviceptr *, CUdeviceptr *, size_t *, size_t, CUmemcpyAttributes *,
                                size_t *, size_t, size_t *, CUstream);
typedef CUresult (*prefetch_v1_fn)(CUdeviceptr, size_t, CUdevice, CUstream);

static void *proc(const char *name, int version)
{
  void *fn = NULL;
  CUdriverProcAddressQueryResult q;
  CHECK_CU(cuGetProcAddress(name, &fn, version, 0, &q));
  CHECK(fn != NULL && q == CU_GET_PROC_ADDRESS_SUCCESS);
  return fn;
}

static void test_batch_copies(CUstream s)
{
  enum { N = 4096 };
  unsigned char *host, back[2][N];
  CHECK_CU(cuMemAllocHost((void **)&host, 2 * N));
  for (int i = 0; i < 2 * N; i++)
    host[i] = (unsigned char)(i * 7);
  CUdeviceptr dev;
  CHECK_CU(cuMemAlloc(&dev, 4 * N));
  /* two host-to-device copies, then a device-to-device and a device-to-host one */
  CUdeviceptr dsts[2] = {dev, dev + N}, srcs[2] = {(CUdeviceptr)(uintptr_t)host,
                                                   (CUdeviceptr)(uintptr_t)(host + N)};
  size_t sizes[2] = {N, N}, idx0 = 0;
  CUmemcpyAttributes attr = {.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM};
  CHECK_CU(cuMemcpyBatchAsync(dsts, srcs, sizes, 2, &attr, &idx0, 1, s));
  CUdeviceptr dsts2[2] = {dev + 2 * N, (CUdeviceptr)(uintptr_t)back[0]};
  CUdeviceptr srcs2[2] = {dev, dev + N};
  CHECK_CU(cuMemcpyBatchAsync(dsts2, srcs2, sizes, 2, &attr, &idx0, 1, s));
  CHECK_CU(cuStreamSynchronize(s));
  CHECK(memcmp(back[0], host + N, N) == 0);
  CHECK_CU(cuMemcpyDtoH(back[1], dev + 2 * N, N));
  CHECK(memcmp(back[1], host, N) == 0);

  /* the documented argument rules */
  size_t bad_idx[2] = {0, 0};
  CUmemcpyAttributes attrs2[2] = {attr, attr};
  CHECK_RESULT(cuMemcpyBatchAsync(dsts, srcs, sizes, 2, &attr, &idx0, 1, NULL), CUDA_ERROR_INVALID_VALUE);
  CHECK_RESULT(cuMemcpyBatchAsync(dsts, srcs, sizes, 0, &attr, &idx0, 1, s), CUDA_ERROR_INVALID_VALUE);
  CHECK_RESULT(cuMemcpyBatchAsync(dsts, srcs, sizes, 2, attrs2, bad_idx, 2, s), CUDA_ERROR_INVALID_VALUE);
  CUmemcpyAttributes unset = {0};
  CHECK_RESULT(cuMemcpyBatchAsync(dsts, srcs, sizes, 2, &unset, &idx0, 1, s), CUDA_ERROR_INVALID_VALUE);

  /* the 12.8 ABI: failIdx names the copy refused (here the second: out of bounds) */
  batch_v1_fn v1 = (batch_v1_fn)proc("cuMemcpyBatchAsync", 12080);
  CHECK((void *)v1 != (void *)proc("cuMemcpyBatchAsync", 13000));
  size_t big[2] = {N, 8 * N}, fail = 0;
  CHECK_RESULT(v1(dsts, srcs, big, 2, &attr, &idx0, 1, &fail, s), CUDA_ERROR_INVALID_VALUE);
  CHECK(fail == 1);
  CHECK_CU(v1(dsts, srcs, sizes, 2, &attr, &idx0, 1, &fail, s));
  CHECK(fail == SIZE_MAX);
  CHECK_CU(cuStreamSynchronize(s));

  /* 3-D batches: a pitched pointer-to-pointer copy (rows of 1024 B in a 2048 B pitch),
   * the 12.8 ABI's failIdx, an array operand that is no array refused (arrays:
   * drv_array.c), zero extents refused */
  CUDA_MEMCPY3D_BATCH_OP op3;
  memset(&op3, 0, sizeof op3);
  op3.src.type = op3.dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
  op3.src.op.ptr.ptr = (CUdeviceptr)(uintptr_t)host;
  op3.src.op.ptr.rowLength = 2048;
  op3.dst.op.ptr.ptr = dev + 3 * N;
  op3.extent.width = 1024;
  op3.extent.height = 2;
  op3.extent.depth = 1;
  op3.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  CHECK_CU(cuMemcpy3DBatchAsync(1, &op3, 0, s));
  CHECK_CU(cuStreamSynchronize(s));
  CHECK_CU(cuMemcpyDtoH(back[0], dev + 3 * N, 2048));
  CHECK(memcmp(back[0], host, 1024) == 0 && memcmp(back[0] + 1024, host + 2048, 1024) == 0);
  typedef CUresult (*batch3d_v1_fn)(size_t, CUDA_MEMCPY3D_BATCH_OP *, size_t *, unsigned long long, CUstream);
  batch3d_v1_fn b3_v1 = (batch3d_v1_fn)proc("cuMemcpy3DBatchAsync", 12080);
  CUDA_MEMCPY3D_BATCH_OP two[2] = {op3, op3};
  two[1].dst.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
  CHECK_RESULT(b3_v1(2, two, &fail, 0, s), CUDA_ERROR_INVALID_HANDLE);
  CHECK(fail == 1);
  two[1] = op3;
  two[1].extent.depth = 0;
  CHECK_RESULT(cuMemcpy3DBatchAsync(2, two, 0, s), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuStreamSynchronize(s));
  CHECK_CU(cuMemFree(dev));
  CHECK_CU(cuMemFreeHost(host));
}

#define BLOCKER_MS 50
#define TOL_MS 0.002 /* four event ticks */

void simcuda_hint_next_launch_ns(unsigned long long ns);

/* Milliseconds the stream spends on a prefetch of n bytes, bracketed by events behind a
 * blocker that keeps the stream busy while they are enqueued (so that the host's
 * scheduling cannot move them); *late_ms: how much longer than the blocker the host
 * took (test_host_overrun_ms), the most the result can be over. */
static float timed_prefetch(CUstream s, CUdeviceptr p, size_t n, double *late_ms)
{
  CUevent a, b;
  CHECK_CU(cuEventCreate(&a, 0));
  CHECK_CU(cuEventCreate(&b, 0));
  CUfunction blocker = test_kernel("blocker");
  CHECK_CU(cuStreamSynchronize(s));
  unsigned long long t0 = test_now_ns();
  simcuda_hint_next_launch_ns(BLOCKER_MS * 1000000ull);
  test_launch(blocker, s);
  CHECK_CU(cuEventRecord(a, s));
  CUmemLocation dev0 = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0};
  CHECK_CU(cuMemPrefetchAsync(p, n, dev0, 0, s));
  CHECK_CU(cuEventRecord(b, s));
  *late_ms = test_host_overrun_ms(t0, BLOCKER_MS);
  CHECK_CU(cuEventSynchronize(b));
  float ms = 0;
  CHECK_CU(cuEventElapsedTime(&ms, a, b));
  CHECK_CU(cuEventDestroy(a));
  CHECK_CU(cuEventDestroy(b));
  return ms;
}

static void test_prefetches(CUstream s)
{
  enum { MB = 1 << 20 };
  CUdeviceptr managed, device;
  CHECK_CU(cuMemAllocManaged(&managed, 8 * MB, CU_MEM_ATTACH_GLOBAL));
  CHECK_CU(cuMemAlloc(&device, MB));
  /* 8 MiB at 25 GB/s + 2 us latency */
  double late;
  float ms = timed_prefetch(s, managed, 8 * MB, &late);
  CHECK_NEAR(ms, (8.0 * MB / 25.0 + 2000.0) / 1e6 + late / 2, TOL_MS + late / 2);
  CUmemLocation host = {.type = CU_MEM_LOCATION_TYPE_HOST}, dev9 = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 9};
  CHECK_CU(cuMemPrefetchAsync(managed, MB, host, 0, s));
  CHECK_RESULT(cuMemPrefetchAsync(managed, MB, host, 1, s), CUDA_ERROR_INVALID_VALUE);
  CHECK_RESULT(cuMemPrefetchAsync(managed, MB, dev9, 0, s), CUDA_ERROR_INVALID_DEVICE);
  CHECK_RESULT(cuMemPrefetchAsync(device, MB, host, 0, s), CUDA_ERROR_INVALID_VALUE);
  CHECK_RESULT(cuMemPrefetchAsync(managed, 9 * MB, host, 0, s), CUDA_ERROR_INVALID_VALUE);
  prefetch_v1_fn v1 = (prefetch_v1_fn)proc("cuMemPrefetchAsync", 8000);
  CHECK_CU(v1(managed, MB, CU_DEVICE_CPU, s));
  CHECK_CU(v1(managed, MB, 0, s));
  CHECK_RESULT(v1(managed, MB, 9, s), CUDA_ERROR_INVALID_DEVICE);

  CUdeviceptr ptrs[3] = {managed, managed + MB, managed + 4 * MB};
  size_t sizes[3] = {MB, MB, 2 * MB}, idx0 = 0, bad_idx[2] = {0, 3};
  CUmemLocation locs[2] = {host, host};
  CHECK_CU(cuMemPrefetchBatchAsync(ptrs, sizes, 3, &host, &idx0, 1, 0, s));
  CHECK_RESULT(cuMemPrefetchBatchAsync(ptrs, sizes, 3, locs, bad_idx, 2, 0, s), CUDA_ERROR_INVALID_VALUE);
  CHECK_RESULT(cuMemPrefetchBatchAsync(ptrs, sizes, 0, &host, &idx0, 1, 0, s), CUDA_ERROR_INVALID_VALUE);

  /* discards: managed memory only, flags 0; with a prefetch, a prefetch's rules */
  CHECK_CU(cuMemDiscardBatchAsync(ptrs, sizes, 3, 0, s));
  CHECK_RESULT(cuMemDiscardBatchAsync(ptrs, sizes, 3, 1, s), CUDA_ERROR_INVALID_VALUE);
  CUdeviceptr not_managed[1] = {device};
  size_t one_mb[1] = {MB};
  CHECK_RESULT(cuMemDiscardBatchAsync(not_managed, one_mb, 1, 0, s), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuMemDiscardAndPrefetchBatchAsync(ptrs, sizes, 3, &host, &idx0, 1, 0, s));
  CHECK_RESULT(cuMemDiscardAndPrefetchBatchAsync(not_managed, one_mb, 1, &host, &idx0, 1, 0, s),
               CUDA_ERROR_INVALID_VALUE);

  /* refused inside a capture, which it invalidates */
  CHECK_CU(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CHECK_RESULT(cuMemPrefetchAsync(managed, MB, host, 0, s), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  CUgraph g = NULL;
  CHECK_RESULT(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  CHECK_CU(cuStreamSynchronize(s));
  CHECK_CU(cuMemFree(managed));
  CHECK_CU(cuMemFree(device));
}

int main(void)
{
  test_init();
  CUstream s;
  CHECK_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  test_batch_copies(s);
  test_prefetches(s);
  CHECK_CU(cuStreamDestroy(s));
  printf("ok\n");
  return 0;
}
