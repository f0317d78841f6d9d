/* Batch copies and managed-memory prefetches on one non-blocking stream, through the
 * runtime (cudaMemcpyBatchAsync, cudaMemPrefetchAsync, cudaMemPrefetchBatchAsync) and
 * through the driver's older ABIs (cuMemcpyBatchAsync with failIdx, asked for at 12080,
 * and cuMemPrefetchAsync with a device ordinal, at 8000, from cuGetProcAddress_v2).
 * Every host buffer is page-locked, so nothing waits for the host. Prints the stream
 * handle (the simulator's truth log names it) and "batch: ok" when every call
 * succeeded and every byte arrived. Planted (test_batch.py):
 *   1 cudaMemcpyBatchAsync: 3 HtoD copies, 1 MiB + 512 KiB + 256 KiB, pinned -> device
 *   2 cudaMemcpyBatchAsync: one HtoD and one DtoH copy of 64 KiB (mixed)
 *   3 cudaMemPrefetchAsync: 4 MiB of managed memory to device 0
 *   4 cudaMemPrefetchBatchAsync: 1 MiB + 2 MiB of managed memory to the host
 *   5 cuMemcpyBatchAsync (12.8 ABI): 2 DtoD copies of 128 KiB
 *   6 cuMemPrefetchAsync (8.0 ABI): 2 MiB of managed memory to device 0
 *   7 cudaMemcpy3DPeerAsync: device 0 to device 0, 4096 B x 16 rows x 2 slices
 *   8 cuMemcpy3DPeerAsync (from cuGetProcAddress_v2 at 4000): the same shape again
 *   9 cudaMemDiscardBatchAsync: managed 1 MiB at +1 MiB and 1 MiB at +6 MiB
 *  10 cudaMemDiscardAndPrefetchBatchAsync: managed 512 KiB at +7 MiB to device 0
 *  11 cudaMemcpy3DBatchAsync: two HtoD 3-D copies of 1024 B x 4 rows x 2 layers (pinned)
 *  12 cuMemcpy3DBatchAsync (12.8 ABI, failIdx, at 12080): one DtoD copy of 4096 B x 2 rows
 * then, on a second stream being captured into a graph (never launched):
 *  13 cudaMemcpyBatchAsync: 2 DtoD copies of 4 KiB (captured: no GPU record)
 *  14 cudaMemPrefetchAsync: refused by the simulator inside a capture
 *     (cudaErrorStreamCaptureUnsupported, the capture invalidated)
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver_proc.h"

#undef cuMemcpyBatchAsync
#undef cuMemPrefetchAsync

#define KB 1024
#define MB (1024 * 1024)

static int failed;

static void check(cudaError_t e, const char *what) {
  if (e != cudaSuccess) {
    fprintf(stderr, "batch: %s: %s\n", what, cudaGetErrorString(e));
    failed = 1;
  }
}

typedef CUresult (*batch_v1_fn)(CUdeviceptr *, CUdeviceptr *, size_t *, size_t, CUmemcpyAttributes *,
                                size_t *, size_t, size_t *, CUstream);
typedef CUresult (*prefetch_v1_fn)(CUdeviceptr, size_t, CUdevice, CUstream);

/* `batch loop N K` (bench/callgrind_launch.py): N cudaMemcpyBatchAsync calls of K
 * device-to-device copies of 256 B each on one stream, then one synchronise. */
static int loop(int n, int k) {
  cudaStream_t s;
  unsigned char *dev;
  if (k < 1 || k > 1024 || cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess ||
      cudaMalloc((void **)&dev, 2 * 1024 * 256) != cudaSuccess)
    return 1;
  static void *dsts[1024];
  static const void *srcs[1024];
  static size_t sizes[1024];
  for (int i = 0; i < k; i++) {
    dsts[i] = dev + (1024 + i) * 256;
    srcs[i] = dev + i * 256;
    sizes[i] = 256;
  }
  cudaMemcpyAttributes attr;
  memset(&attr, 0, sizeof attr);
  attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  size_t idx0 = 0;
  for (int i = 0; i < n; i++)
    if (cudaMemcpyBatchAsync(dsts, srcs, sizes, k, &attr, &idx0, 1, s) != cudaSuccess) return 1;
  return cudaStreamSynchronize(s) == cudaSuccess ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc == 4 && !strcmp(argv[1], "loop")) return loop(atoi(argv[2]), atoi(argv[3]));
  cudaStream_t s;
  unsigned char *host, *back, *dev, *managed;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream");
  check(cudaMallocHost((void **)&host, 2 * MB), "host");
  check(cudaMallocHost((void **)&back, 2 * MB), "back");
  check(cudaMalloc((void **)&dev, 4 * MB), "device");
  check(cudaMallocManaged((void **)&managed, 8 * MB), "managed");
  if (failed) return 1;
  for (int i = 0; i < 2 * MB; i++) host[i] = (unsigned char)(i * 13 + 1);
  printf("stream %p\n", (void *)s);

  cudaMemcpyAttributes attr;
  memset(&attr, 0, sizeof attr);
  attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  size_t idx0 = 0;
  /* 1: three host-to-device copies */
  void *dsts1[3] = {dev, dev + MB, dev + 2 * MB};
  const void *srcs1[3] = {host, host + MB, host + MB + 512 * KB};
  size_t sizes1[3] = {MB, 512 * KB, 256 * KB};
  check(cudaMemcpyBatchAsync(dsts1, srcs1, sizes1, 3, &attr, &idx0, 1, s), "batch 1");
  /* 2: one each way */
  void *dsts2[2] = {dev + 3 * MB, back};
  const void *srcs2[2] = {host + 64 * KB, dev + MB};
  size_t sizes2[2] = {64 * KB, 64 * KB};
  check(cudaMemcpyBatchAsync(dsts2, srcs2, sizes2, 2, &attr, &idx0, 1, s), "batch 2");
  /* 3, 4: prefetches */
  cudaMemLocation to_dev, to_host;
  memset(&to_dev, 0, sizeof to_dev);
  memset(&to_host, 0, sizeof to_host);
  to_dev.type = cudaMemLocationTypeDevice;
  to_dev.id = 0;
  to_host.type = cudaMemLocationTypeHost;
  check(cudaMemPrefetchAsync(managed, 4 * MB, to_dev, 0, s), "prefetch");
  void *ranges[2] = {managed, managed + 4 * MB};
  size_t range_sizes[2] = {MB, 2 * MB};
  check(cudaMemPrefetchBatchAsync(ranges, range_sizes, 2, &to_host, &idx0, 1, 0, s), "prefetch batch");
  /* 5, 6: the driver's older ABIs */
  batch_v1_fn batch_v1 = (batch_v1_fn)driver_proc("cuMemcpyBatchAsync", 12080, 0);
  prefetch_v1_fn prefetch_v1 = (prefetch_v1_fn)driver_proc("cuMemPrefetchAsync", 8000, 0);
  if (!batch_v1 || !prefetch_v1) {
    fprintf(stderr, "batch: driver entry points not found\n");
    return 1;
  }
  CUdeviceptr d = (CUdeviceptr)(uintptr_t)dev;
  CUdeviceptr dsts5[2] = {d + 3 * MB + 512 * KB, d + 3 * MB + 640 * KB}, srcs5[2] = {d, d + 128 * KB};
  size_t sizes5[2] = {128 * KB, 128 * KB}, fail_idx = 7;
  CUmemcpyAttributes dattr;
  memset(&dattr, 0, sizeof dattr);
  dattr.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  if (batch_v1(dsts5, srcs5, sizes5, 2, &dattr, &idx0, 1, &fail_idx, (CUstream)s) != CUDA_SUCCESS) {
    fprintf(stderr, "batch: cuMemcpyBatchAsync failed at %zu\n", fail_idx);
    failed = 1;
  }
  if (prefetch_v1((CUdeviceptr)(uintptr_t)managed, 2 * MB, 0, (CUstream)s) != CUDA_SUCCESS) {
    fprintf(stderr, "batch: cuMemPrefetchAsync failed\n");
    failed = 1;
  }
  /* 7, 8: 3-D copies between (here the same) devices: dev -> dev + 2 MiB -> dev + 2 MiB + 128 KiB */
  cudaMemcpy3DPeerParms peer;
  memset(&peer, 0, sizeof peer);
  peer.srcPtr = make_cudaPitchedPtr(dev, 4096, 4096, 16);
  peer.dstPtr = make_cudaPitchedPtr(dev + 2 * MB, 4096, 4096, 16);
  peer.extent = make_cudaExtent(4096, 16, 2);
  check(cudaMemcpy3DPeerAsync(&peer, s), "3-D peer copy");
  typedef CUresult (*peer3d_fn)(const CUDA_MEMCPY3D_PEER *, CUstream);
  peer3d_fn peer3d = (peer3d_fn)driver_proc("cuMemcpy3DPeerAsync", 4000, 0);
  typedef CUresult (*ctx_get_fn)(CUcontext *);
  ctx_get_fn ctx_get = (ctx_get_fn)driver_proc("cuCtxGetCurrent", 4000, 0);
  CUcontext ctx;
  CUDA_MEMCPY3D_PEER dp;
  memset(&dp, 0, sizeof dp);
  dp.srcMemoryType = dp.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  dp.srcDevice = d + 2 * MB;
  dp.dstDevice = d + 2 * MB + 128 * KB;
  dp.srcPitch = dp.dstPitch = 4096;
  dp.srcHeight = dp.dstHeight = 16;
  dp.WidthInBytes = 4096;
  dp.Height = 16;
  dp.Depth = 2;
  if (!peer3d || !ctx_get || ctx_get(&ctx) != CUDA_SUCCESS) {
    fprintf(stderr, "batch: cuMemcpy3DPeerAsync not found\n");
    return 1;
  }
  dp.srcContext = dp.dstContext = ctx;
  if (peer3d(&dp, (CUstream)s) != CUDA_SUCCESS) {
    fprintf(stderr, "batch: cuMemcpy3DPeerAsync failed\n");
    failed = 1;
  }
  /* 9, 10: discards */
  void *discards[2] = {managed + MB, managed + 6 * MB};
  size_t discard_sizes[2] = {MB, MB};
  check(cudaMemDiscardBatchAsync(discards, discard_sizes, 2, 0, s), "discard batch");
  void *dp_ranges[1] = {managed + 7 * MB};
  size_t dp_sizes[1] = {512 * KB};
  check(cudaMemDiscardAndPrefetchBatchAsync(dp_ranges, dp_sizes, 1, &to_dev, &idx0, 1, 0, s),
        "discard and prefetch batch");
  /* 11, 12: 3-D batches */
  cudaMemcpy3DBatchOp ops3d[2];
  memset(ops3d, 0, sizeof ops3d);
  for (int i = 0; i < 2; i++) {
    ops3d[i].src.type = cudaMemcpyOperandTypePointer;
    ops3d[i].src.op.ptr.ptr = host + i * 8 * KB;
    ops3d[i].dst.type = cudaMemcpyOperandTypePointer;
    ops3d[i].dst.op.ptr.ptr = dev + 3 * MB + 800 * KB + i * 8 * KB;
    ops3d[i].extent = make_cudaExtent(1024, 4, 2);
    ops3d[i].srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  }
  check(cudaMemcpy3DBatchAsync(2, ops3d, 0, s), "3-D batch");
  typedef CUresult (*batch3d_v1_fn)(size_t, CUDA_MEMCPY3D_BATCH_OP *, size_t *, unsigned long long, CUstream);
  batch3d_v1_fn batch3d_v1 = (batch3d_v1_fn)driver_proc("cuMemcpy3DBatchAsync", 12080, 0);
  CUDA_MEMCPY3D_BATCH_OP op3d;
  memset(&op3d, 0, sizeof op3d);
  op3d.src.type = op3d.dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
  op3d.src.op.ptr.ptr = d;
  op3d.dst.op.ptr.ptr = d + 3 * MB + 900 * KB;
  op3d.extent.width = 4096;
  op3d.extent.height = 2;
  op3d.extent.depth = 1;
  op3d.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  size_t fail3d = 5;
  if (!batch3d_v1 || batch3d_v1(1, &op3d, &fail3d, 0, (CUstream)s) != CUDA_SUCCESS) {
    fprintf(stderr, "batch: cuMemcpy3DBatchAsync (12.8) failed\n");
    failed = 1;
  }
  check(cudaStreamSynchronize(s), "sync");
  /* 13, 14: inside a capture */
  cudaStream_t cs;
  cudaGraph_t graph = NULL;
  check(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking), "capture stream");
  check(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal), "begin capture");
  void *dsts9[2] = {dev + 3 * MB + 768 * KB, dev + 3 * MB + 772 * KB};
  const void *srcs9[2] = {dev, dev + 4 * KB};
  size_t sizes9[2] = {4 * KB, 4 * KB};
  check(cudaMemcpyBatchAsync(dsts9, srcs9, sizes9, 2, &attr, &idx0, 1, cs), "captured batch");
  if (cudaMemPrefetchAsync(managed, MB, to_dev, 0, cs) != cudaErrorStreamCaptureUnsupported) {
    fprintf(stderr, "batch: a prefetch inside a capture was not refused\n");
    failed = 1;
  }
  if (cudaStreamEndCapture(cs, &graph) != cudaErrorStreamCaptureInvalidated) {
    fprintf(stderr, "batch: the refused prefetch did not invalidate the capture\n");
    failed = 1;
  }
  cudaGetLastError();
  /* every byte where it belongs */
  if (memcmp(back, host + MB, 64 * KB) != 0) failed = 1;
  check(cudaMemcpy(back, dev + 3 * MB + 512 * KB, 256 * KB, cudaMemcpyDeviceToHost), "read back");
  if (memcmp(back, host, 256 * KB) != 0) failed = 1;
  check(cudaMemcpy(back, dev + 2 * MB + 128 * KB, 128 * KB, cudaMemcpyDeviceToHost), "read back 3-D");
  if (memcmp(back, host, 128 * KB) != 0) failed = 1;
  check(cudaMemcpy(back, dev + 3 * MB + 800 * KB, 16 * KB, cudaMemcpyDeviceToHost), "read back 3-D batch");
  if (memcmp(back, host, 16 * KB) != 0) failed = 1;
  if (failed) {
    fprintf(stderr, "batch: bytes differ or a call failed\n");
    return 1;
  }
  printf("batch: ok\n");
  return 0;
}
