/* Copies to, from and between CUDA arrays, through the runtime and through the driver
 * (entry points from cuGetProcAddress_v2: cuMemcpyHtoA at 3020, the _ptds / _ptsz ones
 * with the per-thread flag). Arrays: A and B, 64 x 32 float4 (rows of 1024 B); C, a
 * 32 x 8 x 4 ushort2 3-D array (4 B elements); D, a driver 1-D array of 4096 floats.
 * Host buffers: `pinned` (page-locked) and `pageable`. Prints the stream handle and
 * "arrays: ok" when every call gave its planted result and every byte arrived.
 * Planted, in this order (test_arrays.py), stream s non-blocking, else the legacy one:
 *   1 cudaMemcpy2DToArrayAsync   A <- pinned, 1024 B x 32 rows        HtoD  32768 s
 *   2 cudaMemcpy2DArrayToArray   B <- A, 512 B x 16 rows              DtoD   8192
 *   3 cudaMemcpy2DFromArrayAsync pinned <- A, 1024 B x 32 rows        DtoH  32768 s
 *   4 cudaMemcpyToArray          A (row 1) <- pageable, 2048 B        HtoD   2048
 *   5 cudaMemcpyFromArrayAsync   dev <- A, 4096 B                     DtoD   4096 s
 *   6 cudaMemcpyArrayToArray     B <- A, 1024 B, cudaMemcpyDefault    DtoD   1024
 *   7 cudaMemcpy2DToArray_ptds   A (row 2) <- pinned, 512 B x 2 rows  HtoD   1024
 *   8 cudaMemcpy3DAsync          C (2,1,1) <- pinned, 16 x 4 x 2 elements   HtoD 512 s
 *   9 cudaMemcpy3DBatchAsync     C <- dev 32 x 8 x 2 elements; dev <- A 8 x 2 x 1
 *                                elements: DtoD 2048 + 256 = 2304, count 2       s
 *  10 cuMemcpyHtoA_v2            D (+1024) <- pageable 8192           HtoD   8192
 *  11 cuMemcpyHtoAAsync_v2_ptsz  D <- pinned 4096                     HtoD   4096 s
 *  12 cuMemcpyAtoHAsync_v2       pinned <- D 16384                    DtoH  16384 s
 *  13 cuMemcpyAtoD_v2            dev <- D (+4096) 2048                DtoD   2048
 *  14 cuMemcpyDtoA_v2_ptds       D <- dev 1024                        DtoD   1024
 *  15 cuMemcpyAtoA_v2            B <- A 4096                          DtoD   4096
 *  16 cuMemcpyAtoH_v2            pageable <- D 512                    DtoH    512
 *  17 cuMemcpy2D_v2              A <- pinned (host), 256 B x 4 rows   HtoD   1024
 *  18 cudaMemcpy2DToArray        A (rows 30..33) <- pinned, 1024 B x 4 rows: fails
 *                                (past the array's 32 rows), cudaErrorInvalidValue
 *  19 cudaMemcpyFromArray        pageable <- A, 1024 B                DtoH   1024
 *  20 cudaMemcpy2DFromArray      dev <- B, 256 B x 2 rows             DtoD    512
 *  21 cudaMemcpyToArrayAsync     B <- pinned, 2048 B                  HtoD   2048 s
 *  22 cudaMemcpy3DPeerAsync      dev <- C, 32 x 8 x 1 elements        peer   1024 s
 *  23 cudaMemcpy2DToArrayAsync   B (row 4) <- pinned, 512 B x 4 rows  HtoD   2048, on a
 *                                second stream being captured: no GPU work, no truth line
 *  24 cudaMemcpy3DAsync          as call 8, into the capture too      HtoD    512
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver_proc.h"

/* the 1-D runtime array copies are deprecated, and still exported and used (nvcc includes
 * cuda_runtime.h before this file, so CUDA_ENABLE_DEPRECATED would come too late) */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

extern "C" cudaError_t cudaMemcpy2DToArray_ptds(cudaArray_t, size_t, size_t, const void *, size_t,
                                                size_t, size_t, cudaMemcpyKind);

static int failed;

static void check(cudaError_t e, const char *what) {
  if (e != cudaSuccess) {
    fprintf(stderr, "arrays: %s: %s\n", what, cudaGetErrorString(e));
    failed = 1;
  }
}

static void check_cu(CUresult r, const char *what) {
  if (r != CUDA_SUCCESS) {
    fprintf(stderr, "arrays: %s: driver error %d\n", what, (int)r);
    failed = 1;
  }
}

typedef CUresult (*array_create_fn)(CUarray *, const CUDA_ARRAY_DESCRIPTOR *);
typedef CUresult (*array_destroy_fn)(CUarray);
typedef CUresult (*htoa_fn)(CUarray, size_t, const void *, size_t);
typedef CUresult (*htoa_async_fn)(CUarray, size_t, const void *, size_t, CUstream);
typedef CUresult (*atoh_fn)(void *, CUarray, size_t, size_t);
typedef CUresult (*atoh_async_fn)(void *, CUarray, size_t, size_t, CUstream);
typedef CUresult (*dtoa_fn)(CUarray, size_t, CUdeviceptr, size_t);
typedef CUresult (*atod_fn)(CUdeviceptr, CUarray, size_t, size_t);
typedef CUresult (*atoa_fn)(CUarray, size_t, CUarray, size_t, size_t);
typedef CUresult (*copy2d_fn)(const CUDA_MEMCPY2D *);

#define DRV(type, name, version, flags) ((type)driver_proc(name, version, flags))

/* `arrays loop N WHAT` (bench/callgrind_launch.py): N copies of 256 B on one non-blocking
 * stream, then one synchronise. WHAT: 2d (cudaMemcpy2DToArrayAsync from pinned memory),
 * 3d (cudaMemcpy3DAsync into a 3-D array of 4-byte elements: 64 x 1 x 1), htoa
 * (cuMemcpyHtoAAsync_v2), atoa (cuMemcpyAtoA_v2), plain (cudaMemcpyAsync into device
 * memory, for comparison). */
static int loop(int n, const char *what) {
  cudaStream_t s;
  unsigned char *pinned, *dev;
  cudaArray_t a, c;
  cudaChannelFormatDesc f4 = cudaCreateChannelDesc<float4>();
  cudaChannelFormatDesc us2 = cudaCreateChannelDesc<ushort2>();
  if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) || cudaMallocHost((void **)&pinned, 256) ||
      cudaMalloc((void **)&dev, 256) || cudaMallocArray(&a, &f4, 64, 4) ||
      cudaMalloc3DArray(&c, &us2, make_cudaExtent(64, 2, 2)))
    return 1;
  htoa_async_fn htoa = DRV(htoa_async_fn, "cuMemcpyHtoAAsync", 3020, 0);
  atoa_fn atoa = DRV(atoa_fn, "cuMemcpyAtoA", 3020, 0);
  cudaMemcpy3DParms p;
  memset(&p, 0, sizeof p);
  p.srcPtr = make_cudaPitchedPtr(pinned, 256, 64, 1);
  p.dstArray = c;
  p.extent = make_cudaExtent(64, 1, 1);
  p.kind = cudaMemcpyHostToDevice;
  for (int i = 0; i < n; i++) {
    int r;
    if (!strcmp(what, "2d")) r = cudaMemcpy2DToArrayAsync(a, 0, 0, pinned, 256, 256, 1, cudaMemcpyHostToDevice, s);
    else if (!strcmp(what, "3d")) r = cudaMemcpy3DAsync(&p, s);
    else if (!strcmp(what, "htoa")) r = htoa((CUarray)a, 0, pinned, 256, (CUstream)s);
    else if (!strcmp(what, "atoa")) r = atoa((CUarray)a, 1024, (CUarray)a, 0, 256);
    else r = cudaMemcpyAsync(dev, pinned, 256, cudaMemcpyHostToDevice, s);
    if (r) return 1;
  }
  return cudaStreamSynchronize(s) == cudaSuccess ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc == 4 && !strcmp(argv[1], "loop")) return loop(atoi(argv[2]), argv[3]);
  enum { ROW = 1024, ROWS = 32, BYTES = ROW * ROWS, DBYTES = 4096 * 4 };
  cudaStream_t s;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream");
  printf("stream %p\n", (void *)s);
  unsigned char *pinned, *pinned_back, *dev;
  check(cudaMallocHost((void **)&pinned, 2 * BYTES), "cudaMallocHost");
  check(cudaMallocHost((void **)&pinned_back, BYTES), "cudaMallocHost");
  check(cudaMalloc((void **)&dev, 4 * BYTES), "cudaMalloc");
  unsigned char *pageable = (unsigned char *)malloc(2 * BYTES);
  if (failed || !pageable) return 1;
  for (int i = 0; i < 2 * BYTES; i++) {
    pinned[i] = (unsigned char)(i * 7 + 1);
    pageable[i] = (unsigned char)(i * 11 + 5);
  }
  cudaArray_t a, b, c;
  cudaChannelFormatDesc f4 = cudaCreateChannelDesc<float4>();
  cudaChannelFormatDesc us2 = cudaCreateChannelDesc<ushort2>();
  check(cudaMallocArray(&a, &f4, 64, ROWS), "cudaMallocArray A");
  check(cudaMallocArray(&b, &f4, 64, ROWS), "cudaMallocArray B");
  check(cudaMalloc3DArray(&c, &us2, make_cudaExtent(32, 8, 4)), "cudaMalloc3DArray C");
  cudaExtent ext;
  cudaChannelFormatDesc got;
  check(cudaArrayGetInfo(&got, &ext, NULL, c), "cudaArrayGetInfo");
  if (ext.width != 32 || ext.height != 8 || ext.depth != 4 || got.x != 16 || got.y != 16 || got.z)
    failed = 1;
  CUDA_ARRAY_DESCRIPTOR dd;
  memset(&dd, 0, sizeof dd);
  dd.Width = 4096;
  dd.Format = CU_AD_FORMAT_FLOAT;
  dd.NumChannels = 1;
  CUarray d;
  check_cu(DRV(array_create_fn, "cuArrayCreate", 3020, 0)(&d, &dd), "cuArrayCreate");
  if (failed) return 1;

  /* 1-9: the runtime */
  check(cudaMemcpy2DToArrayAsync(a, 0, 0, pinned, ROW, ROW, ROWS, cudaMemcpyHostToDevice, s), "1");
  check(cudaMemcpy2DArrayToArray(b, 0, 0, a, 0, 0, 512, 16, cudaMemcpyDeviceToDevice), "2");
  check(cudaMemcpy2DFromArrayAsync(pinned_back, ROW, a, 0, 0, ROW, ROWS, cudaMemcpyDeviceToHost, s),
        "3");
  check(cudaStreamSynchronize(s), "sync");
  if (memcmp(pinned_back, pinned, BYTES) != 0) {
    fprintf(stderr, "arrays: the bytes read back from A differ\n");
    failed = 1;
  }
  check(cudaMemcpyToArray(a, 0, 1, pageable, 2 * ROW, cudaMemcpyHostToDevice), "4");
  check(cudaMemcpyFromArrayAsync(dev, a, 0, 0, 4096, cudaMemcpyDeviceToDevice, s), "5");
  check(cudaMemcpyArrayToArray(b, 0, 0, a, 0, 0, 1024, cudaMemcpyDefault), "6");
  check(cudaMemcpy2DToArray_ptds(a, 0, 2, pinned, ROW, 512, 2, cudaMemcpyHostToDevice), "7");
  cudaMemcpy3DParms p;
  memset(&p, 0, sizeof p);
  p.srcPtr = make_cudaPitchedPtr(pinned, 64, 16, 4);
  p.dstArray = c;
  p.dstPos = make_cudaPos(2, 1, 1);
  p.extent = make_cudaExtent(16, 4, 2);
  p.kind = cudaMemcpyHostToDevice;
  check(cudaMemcpy3DAsync(&p, s), "8");
  cudaMemcpy3DBatchOp ops[2];
  memset(ops, 0, sizeof ops);
  ops[0].src.type = cudaMemcpyOperandTypePointer;
  ops[0].src.op.ptr.ptr = dev;
  ops[0].dst.type = cudaMemcpyOperandTypeArray;
  ops[0].dst.op.array.array = c;
  ops[0].extent = make_cudaExtent(32, 8, 2);
  ops[0].srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  ops[1].src.type = cudaMemcpyOperandTypeArray;
  ops[1].src.op.array.array = a;
  ops[1].dst.type = cudaMemcpyOperandTypePointer;
  ops[1].dst.op.ptr.ptr = dev + 2 * BYTES;
  ops[1].extent = make_cudaExtent(8, 2, 1);
  ops[1].srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  check(cudaMemcpy3DBatchAsync(2, ops, 0, s), "9");

  /* 10-17: the driver */
  check_cu(DRV(htoa_fn, "cuMemcpyHtoA", 3020, 0)(d, 1024, pageable, 8192), "10");
  check_cu(DRV(htoa_async_fn, "cuMemcpyHtoAAsync", 7000, 2)(d, 0, pinned, 4096, (CUstream)s), "11");
  check_cu(DRV(atoh_async_fn, "cuMemcpyAtoHAsync", 3020, 0)(pinned_back, d, 0, DBYTES, (CUstream)s),
           "12");
  check(cudaStreamSynchronize(s), "sync");
  if (memcmp(pinned_back, pinned, 4096) != 0 || memcmp(pinned_back + 4096, pageable + 3072, 4096)) {
    fprintf(stderr, "arrays: the bytes read back from D differ\n");
    failed = 1;
  }
  check_cu(DRV(atod_fn, "cuMemcpyAtoD", 3020, 0)((CUdeviceptr)dev, d, 4096, 2048), "13");
  check_cu(DRV(dtoa_fn, "cuMemcpyDtoA", 7000, 2)(d, 0, (CUdeviceptr)dev, 1024), "14");
  check_cu(DRV(atoa_fn, "cuMemcpyAtoA", 3020, 0)((CUarray)b, 0, (CUarray)a, 0, 4096), "15");
  check_cu(DRV(atoh_fn, "cuMemcpyAtoH", 3020, 0)(pageable, d, 0, 512), "16");
  CUDA_MEMCPY2D c2;
  memset(&c2, 0, sizeof c2);
  c2.srcMemoryType = CU_MEMORYTYPE_HOST;
  c2.srcHost = pinned;
  c2.srcPitch = 256;
  c2.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  c2.dstArray = (CUarray)a;
  c2.WidthInBytes = 256;
  c2.Height = 4;
  check_cu(DRV(copy2d_fn, "cuMemcpy2D", 3020, 0)(&c2), "17");

  /* 18: past the array's last row */
  cudaError_t e = cudaMemcpy2DToArray(a, 0, 30, pinned, ROW, ROW, 4, cudaMemcpyHostToDevice);
  printf("18: %s\n", cudaGetErrorName(e));
  if (e != cudaErrorInvalidValue || cudaGetLastError() != cudaErrorInvalidValue) failed = 1;

  /* 19-21: the runtime's other forms */
  check(cudaMemcpyFromArray(pageable, a, 0, 0, 1024, cudaMemcpyDeviceToHost), "19");
  check(cudaMemcpy2DFromArray(dev, 256, b, 0, 0, 256, 2, cudaMemcpyDeviceToDevice), "20");
  check(cudaMemcpyToArrayAsync(b, 0, 0, pinned, 2048, cudaMemcpyHostToDevice, s), "21");

  /* 22: a 3-D peer copy out of the 3-D array (device 0 to device 0) */
  cudaMemcpy3DPeerParms pp;
  memset(&pp, 0, sizeof pp);
  pp.srcArray = c;
  pp.dstPtr = make_cudaPitchedPtr(dev + 3 * BYTES, 128, 32, 8);
  pp.extent = make_cudaExtent(32, 8, 1);
  check(cudaMemcpy3DPeerAsync(&pp, s), "22");

  /* 23, 24: into a stream being captured (the graph is never launched) */
  cudaStream_t cs;
  cudaGraph_t graph;
  check(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking), "capture stream");
  check(cudaStreamBeginCapture(cs, cudaStreamCaptureModeGlobal), "begin capture");
  check(cudaMemcpy2DToArrayAsync(b, 0, 4, pinned, ROW, 512, 4, cudaMemcpyHostToDevice, cs), "23");
  check(cudaMemcpy3DAsync(&p, cs), "24");
  check(cudaStreamEndCapture(cs, &graph), "end capture");
  check(cudaGraphDestroy(graph), "cudaGraphDestroy");
  check(cudaStreamDestroy(cs), "cudaStreamDestroy");

  check(cudaStreamSynchronize(s), "sync");
  check(cudaDeviceSynchronize(), "sync");
  check(cudaFreeArray(a), "cudaFreeArray");
  check(cudaFreeArray(b), "cudaFreeArray");
  check(cudaFreeArray(c), "cudaFreeArray");
  check_cu(DRV(array_destroy_fn, "cuArrayDestroy", 2000, 0)(d), "cuArrayDestroy");
  check(cudaFreeHost(pinned), "cudaFreeHost");
  check(cudaFreeHost(pinned_back), "cudaFreeHost");
  check(cudaFree(dev), "cudaFree");
  check(cudaStreamDestroy(s), "cudaStreamDestroy");
  free(pageable);
  if (!failed) printf("arrays: ok\n");
  return failed;
}
