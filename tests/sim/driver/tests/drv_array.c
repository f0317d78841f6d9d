/* The simulated driver's CUDA arrays: creation and descriptors (element sizes, formats
 * refused), the 1-D array copies with bytes checked through a round trip, 2-D and 3-D
 * copies with array sides (offsets, bounds), a 3-D batch with array operands (extent in
 * elements), bad handles, the copies' stream time, and destruction; mipmapped arrays (their
 * levels' bytes) and external semaphores (import, signal, wait, destroy). */
#include "drv_test.h"

#include <string.h>

enum { W = 64, H = 8, D = 2, ELEM = 8 }; /* a 3-D array of 2 x float */

/* The simulator's private knob: the calling thread's next launch lasts ns. */
void simcuda_hint_next_launch_ns(unsigned long long ns);

static void test_create(void)
{
  CUarray a1, a3;
  CUDA_ARRAY_DESCRIPTOR d1 = {.Width = 4096, .Format = CU_AD_FORMAT_UNSIGNED_INT16, .NumChannels = 4};
  CHECK_CU(cuArrayCreate(&a1, &d1));
  CUDA_ARRAY3D_DESCRIPTOR d3 = {.Width = W, .Height = H, .Depth = D, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 2};
  CHECK_CU(cuArray3DCreate(&a3, &d3));
  CUDA_ARRAY3D_DESCRIPTOR got;
  CHECK_CU(cuArray3DGetDescriptor(&got, a1));
  CHECK(got.Width == 4096 && got.Height == 0 && got.Depth == 0 && got.NumChannels == 4
        && got.Format == CU_AD_FORMAT_UNSIGNED_INT16);
  CHECK_CU(cuArray3DGetDescriptor(&got, a3));
  CHECK(got.Width == W && got.Height == H && got.Depth == D && got.Format == CU_AD_FORMAT_FLOAT);
  CUDA_ARRAY_DESCRIPTOR got2;
  CHECK_CU(cuArrayGetDescriptor(&got2, a1));
  CHECK(got2.Width == 4096 && got2.NumChannels == 4);
  CHECK_RESULT(cuArrayGetDescriptor(&got2, a3), CUDA_ERROR_INVALID_VALUE);
  /* refused: 3 channels, a block-compressed format (not simulated), no width */
  CUarray bad;
  CUDA_ARRAY_DESCRIPTOR three = {.Width = 8, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 3};
  CHECK_RESULT(cuArrayCreate(&bad, &three), CUDA_ERROR_INVALID_VALUE);
  CUDA_ARRAY_DESCRIPTOR bc = {.Width = 8, .Height = 8, .Format = CU_AD_FORMAT_BC1_UNORM, .NumChannels = 4};
  CHECK_RESULT(cuArrayCreate(&bad, &bc), CUDA_ERROR_NOT_SUPPORTED);
  CUDA_ARRAY_DESCRIPTOR none = {.Width = 0, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1};
  CHECK_RESULT(cuArrayCreate(&bad, &none), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuArrayDestroy(a1));
  CHECK_CU(cuArrayDestroy(a3));
  CHECK_RESULT(cuArrayDestroy(a1), CUDA_ERROR_INVALID_HANDLE);
  CHECK_RESULT(cuArray3DGetDescriptor(&got, a3), CUDA_ERROR_INVALID_HANDLE);
}

/* 1-D copies: host -> array -> device -> array -> array -> host, bytes compared. */
static void test_linear(CUstream s)
{
  enum { N = 4096 * 8 };
  CUarray a, b;
  CUDA_ARRAY_DESCRIPTOR d = {.Width = 4096, .Format = CU_AD_FORMAT_UNSIGNED_INT16, .NumChannels = 4};
  CHECK_CU(cuArrayCreate(&a, &d));
  CHECK_CU(cuArrayCreate(&b, &d));
  unsigned char *host, *back = malloc(N);
  CHECK_CU(cuMemAllocHost((void **)&host, N));
  for (int i = 0; i < N; i++)
    host[i] = (unsigned char)(i * 13 + 1);
  CUdeviceptr dev;
  CHECK_CU(cuMemAlloc(&dev, N));
  CHECK_CU(cuMemcpyHtoA(a, 0, host, N / 2));
  CHECK_CU(cuMemcpyHtoAAsync(a, N / 2, host + N / 2, N / 2, s));
  CHECK_CU(cuStreamSynchronize(s));
  CHECK_CU(cuMemcpyAtoD(dev, a, 0, N));
  CHECK_CU(cuMemcpyDtoA(b, 0, dev, N));
  CHECK_CU(cuMemcpyAtoA(a, 0, b, 0, N));
  memset(back, 0, N);
  CHECK_CU(cuMemcpyAtoH(back, a, 0, N / 4));
  CHECK_CU(cuMemcpyAtoHAsync(back + N / 4, a, N / 4, 3 * N / 4, s));
  CHECK_CU(cuStreamSynchronize(s));
  CHECK(memcmp(back, host, N) == 0);
  /* bounds: one byte past the end; a device pointer that is no allocation; no array */
  CHECK_RESULT(cuMemcpyHtoA(a, 1, host, N), CUDA_ERROR_INVALID_VALUE);
  CHECK_RESULT(cuMemcpyDtoA(a, 0, (CUdeviceptr)(uintptr_t)back, 16), CUDA_ERROR_INVALID_VALUE);
  CHECK_RESULT(cuMemcpyAtoH(back, (CUarray)(uintptr_t)back, 0, 16), CUDA_ERROR_INVALID_HANDLE);
  /* stream time: a pinned 32 KiB copy into an array behind a 50 ms kernel ends
   * latency + bytes / pinned bandwidth after the kernel (default knobs: 2 us, 25 GB/s);
   * a host that took longer than the kernel to enqueue (preempted) widens the bound */
  CUfunction k = test_kernel("busy");
  unsigned long long t0 = test_now_ns();
  simcuda_hint_next_launch_ns(50000000);
  CHECK_CU(cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
  CUevent e0, e1;
  CHECK_CU(cuEventCreate(&e0, 0));
  CHECK_CU(cuEventCreate(&e1, 0));
  CHECK_CU(cuEventRecord(e0, s));
  CHECK_CU(cuMemcpyHtoAAsync(a, 0, host, N, s));
  CHECK_CU(cuEventRecord(e1, s));
  double late_us = test_host_overrun_ms(t0, 50.0) * 1000.0;
  CHECK_CU(cuEventSynchronize(e1));
  float ms;
  CHECK_CU(cuEventElapsedTime(&ms, e0, e1));
  CHECK_NEAR(ms * 1000.0, 2.0 + N / 25000.0 + late_us / 2, 1.0 + late_us / 2);
  CHECK_CU(cuArrayDestroy(a));
  CHECK_CU(cuArrayDestroy(b));
  CHECK_CU(cuMemFree(dev));
  CHECK_CU(cuMemFreeHost(host));
  free(back);
}

/* 2-D and 3-D copies with array sides; a 3-D batch whose extent counts elements. */
static void test_shaped(CUstream s)
{
  CUarray a;
  CUDA_ARRAY3D_DESCRIPTOR d = {.Width = W, .Height = H, .Depth = D, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 2};
  CHECK_CU(cuArray3DCreate(&a, &d));
  size_t bytes = (size_t)W * ELEM * H * D;
  unsigned char *host = malloc(bytes), *back = calloc(1, bytes);
  for (size_t i = 0; i < bytes; i++)
    host[i] = (unsigned char)(i * 5 + 3);
  /* the whole array from host memory, then its layer 1, rows 2..5, bytes 64..191 back */
  CUDA_MEMCPY3D c;
  memset(&c, 0, sizeof c);
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = host;
  c.srcPitch = W * ELEM;
  c.srcHeight = H;
  c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  c.dstArray = a;
  c.WidthInBytes = W * ELEM;
  c.Height = H;
  c.Depth = D;
  CHECK_CU(cuMemcpy3D(&c));
  CUDA_MEMCPY2D c2;
  memset(&c2, 0, sizeof c2);
  c2.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  c2.srcArray = a;
  c2.srcXInBytes = 64;
  c2.srcY = 2;
  c2.dstMemoryType = CU_MEMORYTYPE_HOST;
  c2.dstHost = back;
  c2.dstPitch = 128;
  c2.WidthInBytes = 128;
  c2.Height = 4;
  CHECK_CU(cuMemcpy2D(&c2));
  for (int y = 0; y < 4; y++)
    CHECK(memcmp(back + y * 128, host + (2 + y) * W * ELEM + 64, 128) == 0);
  c2.srcY = H - 3; /* rows past the array */
  CHECK_RESULT(cuMemcpy2D(&c2), CUDA_ERROR_INVALID_VALUE);
  c.srcZ = 0;
  c.dstZ = 1; /* two layers from layer 1: past the array */
  CHECK_RESULT(cuMemcpy3D(&c), CUDA_ERROR_INVALID_VALUE);
  /* a 3-D batch: layer 1 of the array into a tightly packed host buffer, the extent in
   * elements (64 x 8 x 1 elements of 8 bytes) */
  CUDA_MEMCPY3D_BATCH_OP op;
  memset(&op, 0, sizeof op);
  op.src.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
  op.src.op.array.array = a;
  op.src.op.array.offset.z = 1;
  op.dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
  unsigned char *pinned;
  CHECK_CU(cuMemAllocHost((void **)&pinned, W * ELEM * H));
  op.dst.op.ptr.ptr = (CUdeviceptr)(uintptr_t)pinned;
  op.extent.width = W;
  op.extent.height = H;
  op.extent.depth = 1;
  op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  CHECK_CU(cuMemcpy3DBatchAsync(1, &op, 0, s));
  CHECK_CU(cuStreamSynchronize(s));
  CHECK(memcmp(pinned, host + W * ELEM * H, W * ELEM * H) == 0);
  op.extent.width = W + 1; /* one element past a row */
  CHECK_RESULT(cuMemcpy3DBatchAsync(1, &op, 0, s), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuArrayDestroy(a));
  CHECK_CU(cuMemFreeHost(pinned));
  free(host);
  free(back);
}

/* Mipmapped arrays: their levels' bytes charged against the device's memory, the level
 * count bounded by the largest extent, bad handles. */
static void test_mipmap(void)
{
  size_t free0, free1, total;
  CHECK_CU(cuMemGetInfo(&free0, &total));
  CUDA_ARRAY3D_DESCRIPTOR d = {64, 32, 0, CU_AD_FORMAT_FLOAT, 1, 0};
  CUmipmappedArray m;
  CHECK_CU(cuMipmappedArrayCreate(&m, &d, 4));
  CHECK_CU(cuMemGetInfo(&free1, &total));
  CHECK(free0 - free1 == (64 * 32 + 32 * 16 + 16 * 8 + 8 * 4) * 4);
  CUDA_ARRAY3D_DESCRIPTOR layered = {8, 8, 6, CU_AD_FORMAT_UNSIGNED_INT8, 4, CUDA_ARRAY3D_LAYERED};
  CUmipmappedArray l;
  CHECK_CU(cuMipmappedArrayCreate(&l, &layered, 2));
  CHECK_CU(cuMemGetInfo(&free0, &total));
  CHECK(free1 - free0 == (8 * 8 + 4 * 4) * 6 * 4); /* layers do not shrink */
  CHECK_RESULT(cuMipmappedArrayCreate(&m, &d, 8), CUDA_ERROR_INVALID_VALUE); /* 1 + log2(64) = 7 */
  CHECK_RESULT(cuMipmappedArrayCreate(&m, &d, 0), CUDA_ERROR_INVALID_VALUE);
  CHECK_RESULT(cuArrayDestroy((CUarray)m), CUDA_ERROR_INVALID_HANDLE);
  CHECK_CU(cuMipmappedArrayDestroy(m));
  CHECK_CU(cuMipmappedArrayDestroy(l));
  CHECK_RESULT(cuMipmappedArrayDestroy(m), CUDA_ERROR_INVALID_HANDLE);
  CHECK_CU(cuMemGetInfo(&free1, &total));
  CHECK(free1 - free0 == (64 * 32 + 32 * 16 + 16 * 8 + 8 * 4) * 4 + (8 * 8 + 4 * 4) * 6 * 4);
}

/* External semaphores: a wait after a CUDA signal of its value waits for that signal; a
 * wait no CUDA signal satisfies waits SIMCUDA_EXTSEM_US (0 here: not at all); bad
 * handles. */
static void test_extsem(CUstream s)
{
  CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC desc = {.type = CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD};
  desc.handle.fd = 3;
  CUexternalSemaphore e;
  CHECK_CU(cuImportExternalSemaphore(&e, &desc));
  CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS sp = {0};
  CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS wp = {0};
  sp.params.fence.value = 4;
  wp.params.fence.value = 4;
  CHECK_CU(cuSignalExternalSemaphoresAsync(&e, &sp, 1, s));
  CHECK_CU(cuWaitExternalSemaphoresAsync(&e, &wp, 1, NULL));
  CHECK_CU(cuCtxSynchronize());
  CHECK_CU(cuDestroyExternalSemaphore(e));
  CHECK_RESULT(cuWaitExternalSemaphoresAsync(&e, &wp, 1, s), CUDA_ERROR_INVALID_HANDLE);
  CHECK_RESULT(cuDestroyExternalSemaphore(e), CUDA_ERROR_INVALID_HANDLE);
  desc.type = 0;
  CHECK_RESULT(cuImportExternalSemaphore(&e, &desc), CUDA_ERROR_INVALID_VALUE);
}

int main(void)
{
  test_init();
  CUstream s;
  CHECK_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  test_create();
  test_linear(s);
  test_shaped(s);
  test_mipmap();
  test_extsem(s);
  /* the array entry points through cuGetProcAddress, as a runtime finds them */
  void *fn = NULL;
  CUdriverProcAddressQueryResult q;
  CHECK_CU(cuGetProcAddress("cuMemcpyAtoHAsync", &fn, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &q));
  CHECK(fn != NULL && q == CU_GET_PROC_ADDRESS_SUCCESS);
  CHECK_CU(cuGetProcAddress("cuArray3DGetDescriptor", &fn, 3020, 0, &q));
  CHECK(fn == (void *)cuArray3DGetDescriptor);
  CHECK_CU(cuStreamDestroy(s));
  printf("ok\n");
  return 0;
}
