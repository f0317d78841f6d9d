/* CUDA array allocations and releases, through the runtime and through the driver
 * (entry points from cuGetProcAddress_v2). Prints "arrayalloc: ok" when every call gave
 * its planted result. Planted, in this order (test_arrayalloc.py): bytes asked for,
 * element size x width x height x depth (a mipmapped array: summed over its levels).
 *   1 cudaMallocArray          float4, 64 x 32                       32768
 *   2 cudaMallocArray          uchar1, 1000 (1-D)                     1000
 *   3 cudaMalloc3DArray        float, 16 x 8 x 4                      2048
 *   4 cudaMalloc3DArray        short2, 8 x 8, 3 layers (layered)       768
 *   5 cudaMallocMipmappedArray float, 64 x 32, 4 levels:
 *                              (2048 + 512 + 128 + 32) x 4           10880
 *   6 cudaMallocMipmappedArray uchar4, 16 x 16 x 16, 3 levels:
 *                              (4096 + 512 + 64) x 4                 18688
 *   7 cudaMallocArray          a 24-bit channel: fails (cudaErrorInvalidChannelDescriptor)
 *   8 cudaFreeArray            array 1
 *   9 cudaFreeArray            array 3
 *  10 cudaFreeMipmappedArray   mipmapped array 5
 *  11 cudaFreeArray            NULL: succeeds, releases nothing
 *  12 cuArrayCreate_v2         half x 2, 100 x 10                     4000
 *  13 cuArray3DCreate_v2       float, 32 x 32 x 2                     8192
 *  14 cuMipmappedArrayCreate   ushort, 32 (1-D), 6 levels: 63 x 2      126
 *  15 cuArray3DCreate_v2       uchar x 4, 8 x 8, cubemap (6 faces)     1536
 *  16 cuArrayDestroy           array 12
 *  17 cuArrayDestroy           array 13
 *  18 cuMipmappedArrayDestroy  mipmapped array 14
 *  19 cuArrayDestroy           array 12 again: fails (CUDA_ERROR_INVALID_HANDLE)
 *  20 cuMipmappedArrayCreate   float, 8 x 8, 3 layers (layered), 2 levels: the layers
 *                              do not shrink: (64 + 16) x 3 x 4          960
 *  21 cuArray3DCreate_v2       float, 16 x 16, sparse: no memory taken yet    0
 * Left allocated at the end: 2, 4, 6 (runtime), 15, 20 and 21 (driver):
 * 1000 + 768 + 18688 + 1536 + 960 + 0 = 22952 bytes.
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver_proc.h"

static int failed;

static void expect(cudaError_t e, cudaError_t want, const char *what) {
  if (e != want) {
    fprintf(stderr, "arrayalloc: %s: %s\n", what, cudaGetErrorString(e));
    failed = 1;
  }
}

static void expect_cu(CUresult r, CUresult want, const char *what) {
  if (r != want) {
    fprintf(stderr, "arrayalloc: %s: driver error %d\n", what, (int)r);
    failed = 1;
  }
}

typedef CUresult (*array_create_fn)(CUarray *, const CUDA_ARRAY_DESCRIPTOR *);
typedef CUresult (*array3d_create_fn)(CUarray *, const CUDA_ARRAY3D_DESCRIPTOR *);
typedef CUresult (*mipmap_create_fn)(CUmipmappedArray *, const CUDA_ARRAY3D_DESCRIPTOR *, unsigned);
typedef CUresult (*array_destroy_fn)(CUarray);
typedef CUresult (*mipmap_destroy_fn)(CUmipmappedArray);

/* `arrayalloc loop N WHAT` (bench/callgrind_launch.py): N allocations, each released at
 * once, of a 64 x 64 float array: WHAT runtime (cudaMallocArray / cudaFreeArray), mipmap
 * (cudaMallocMipmappedArray of 4 levels / cudaFreeMipmappedArray) or driver
 * (cuArray3DCreate_v2 / cuArrayDestroy from cuGetProcAddress_v2). */
static int loop(int n, const char *what) {
  cudaChannelFormatDesc desc = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
  array3d_create_fn create = (array3d_create_fn)driver_proc("cuArray3DCreate", 3020, 0);
  array_destroy_fn destroy = (array_destroy_fn)driver_proc("cuArrayDestroy", 2000, 0);
  CUDA_ARRAY3D_DESCRIPTOR d = {64, 64, 0, CU_AD_FORMAT_FLOAT, 1, 0};
  expect(cudaFree(0), cudaSuccess, "cudaFree(0)");
  for (int i = 0; i < n && !failed; i++) {
    if (!strcmp(what, "runtime")) {
      cudaArray_t a;
      expect(cudaMallocArray(&a, &desc, 64, 64, 0), cudaSuccess, "cudaMallocArray");
      expect(cudaFreeArray(a), cudaSuccess, "cudaFreeArray");
    } else if (!strcmp(what, "mipmap")) {
      cudaMipmappedArray_t m;
      expect(cudaMallocMipmappedArray(&m, &desc, make_cudaExtent(64, 64, 0), 4, 0), cudaSuccess,
             "cudaMallocMipmappedArray");
      expect(cudaFreeMipmappedArray(m), cudaSuccess, "cudaFreeMipmappedArray");
    } else if (create && destroy) {
      CUarray a;
      expect_cu(create(&a, &d), CUDA_SUCCESS, "cuArray3DCreate_v2");
      expect_cu(destroy(a), CUDA_SUCCESS, "cuArrayDestroy");
    } else {
      failed = 1;
    }
  }
  return failed;
}

int main(int argc, char **argv) {
  if (argc == 4 && !strcmp(argv[1], "loop")) return loop(atoi(argv[2]), argv[3]);
  cudaArray_t a1, a2, a3, a4;
  cudaMipmappedArray_t m5, m6;
  cudaChannelFormatDesc float4_desc = cudaCreateChannelDesc(32, 32, 32, 32, cudaChannelFormatKindFloat);
  cudaChannelFormatDesc uchar1_desc = cudaCreateChannelDesc(8, 0, 0, 0, cudaChannelFormatKindUnsigned);
  cudaChannelFormatDesc float_desc = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
  cudaChannelFormatDesc short2_desc = cudaCreateChannelDesc(16, 16, 0, 0, cudaChannelFormatKindSigned);
  cudaChannelFormatDesc uchar4_desc = cudaCreateChannelDesc(8, 8, 8, 8, cudaChannelFormatKindUnsigned);
  cudaChannelFormatDesc bad_desc = cudaCreateChannelDesc(24, 0, 0, 0, cudaChannelFormatKindUnsigned);
  expect(cudaFree(0), cudaSuccess, "cudaFree(0)");
  expect(cudaMallocArray(&a1, &float4_desc, 64, 32, 0), cudaSuccess, "1 cudaMallocArray");
  expect(cudaMallocArray(&a2, &uchar1_desc, 1000, 0, 0), cudaSuccess, "2 cudaMallocArray");
  expect(cudaMalloc3DArray(&a3, &float_desc, make_cudaExtent(16, 8, 4), 0), cudaSuccess,
         "3 cudaMalloc3DArray");
  expect(cudaMalloc3DArray(&a4, &short2_desc, make_cudaExtent(8, 8, 3), cudaArrayLayered),
         cudaSuccess, "4 cudaMalloc3DArray");
  expect(cudaMallocMipmappedArray(&m5, &float_desc, make_cudaExtent(64, 32, 0), 4, 0), cudaSuccess,
         "5 cudaMallocMipmappedArray");
  expect(cudaMallocMipmappedArray(&m6, &uchar4_desc, make_cudaExtent(16, 16, 16), 3, 0),
         cudaSuccess, "6 cudaMallocMipmappedArray");
  cudaArray_t bad;
  expect(cudaMallocArray(&bad, &bad_desc, 16, 16, 0), cudaErrorInvalidChannelDescriptor,
         "7 cudaMallocArray");
  cudaGetLastError();
  expect(cudaFreeArray(a1), cudaSuccess, "8 cudaFreeArray");
  expect(cudaFreeArray(a3), cudaSuccess, "9 cudaFreeArray");
  expect(cudaFreeMipmappedArray(m5), cudaSuccess, "10 cudaFreeMipmappedArray");
  expect(cudaFreeArray(NULL), cudaSuccess, "11 cudaFreeArray(NULL)");

  array_create_fn array_create = (array_create_fn)driver_proc("cuArrayCreate", 3020, 0);
  array3d_create_fn array3d_create = (array3d_create_fn)driver_proc("cuArray3DCreate", 3020, 0);
  mipmap_create_fn mipmap_create = (mipmap_create_fn)driver_proc("cuMipmappedArrayCreate", 5000, 0);
  array_destroy_fn array_destroy = (array_destroy_fn)driver_proc("cuArrayDestroy", 2000, 0);
  mipmap_destroy_fn mipmap_destroy = (mipmap_destroy_fn)driver_proc("cuMipmappedArrayDestroy", 5000, 0);
  if (!array_create || !array3d_create || !mipmap_create || !array_destroy || !mipmap_destroy) {
    fprintf(stderr, "arrayalloc: a driver entry point is missing\n");
    return 1;
  }
  CUarray d12, d13, d15;
  CUmipmappedArray d14;
  CUDA_ARRAY_DESCRIPTOR desc12 = {100, 10, CU_AD_FORMAT_HALF, 2};
  expect_cu(array_create(&d12, &desc12), CUDA_SUCCESS, "12 cuArrayCreate_v2");
  CUDA_ARRAY3D_DESCRIPTOR desc13 = {32, 32, 2, CU_AD_FORMAT_FLOAT, 1, 0};
  expect_cu(array3d_create(&d13, &desc13), CUDA_SUCCESS, "13 cuArray3DCreate_v2");
  CUDA_ARRAY3D_DESCRIPTOR desc14 = {32, 0, 0, CU_AD_FORMAT_UNSIGNED_INT16, 1, 0};
  expect_cu(mipmap_create(&d14, &desc14, 6), CUDA_SUCCESS, "14 cuMipmappedArrayCreate");
  CUDA_ARRAY3D_DESCRIPTOR desc15 = {8, 8, 6, CU_AD_FORMAT_UNSIGNED_INT8, 4, CUDA_ARRAY3D_CUBEMAP};
  expect_cu(array3d_create(&d15, &desc15), CUDA_SUCCESS, "15 cuArray3DCreate_v2");
  expect_cu(array_destroy(d12), CUDA_SUCCESS, "16 cuArrayDestroy");
  expect_cu(array_destroy(d13), CUDA_SUCCESS, "17 cuArrayDestroy");
  expect_cu(mipmap_destroy(d14), CUDA_SUCCESS, "18 cuMipmappedArrayDestroy");
  expect_cu(array_destroy(d12), CUDA_ERROR_INVALID_HANDLE, "19 cuArrayDestroy");
  CUmipmappedArray d20;
  CUDA_ARRAY3D_DESCRIPTOR desc20 = {8, 8, 3, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_LAYERED};
  expect_cu(mipmap_create(&d20, &desc20, 2), CUDA_SUCCESS, "20 cuMipmappedArrayCreate");
  CUarray d21;
  CUDA_ARRAY3D_DESCRIPTOR desc21 = {16, 16, 0, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_SPARSE};
  expect_cu(array3d_create(&d21, &desc21), CUDA_SUCCESS, "21 cuArray3DCreate_v2");
  expect(cudaDeviceSynchronize(), cudaSuccess, "cudaDeviceSynchronize");
  if (failed) return 1;
  printf("arrayalloc: ok\n");
  return 0;
}
