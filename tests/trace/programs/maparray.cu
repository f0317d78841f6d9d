// Stream-ordered sparse array mapping (test_maparray.py), simulated GPU, shared cudart:
// a sparse 2-D CUDA array (cuArray3DCreate with CUDA_ARRAY3D_SPARSE) and 2 MiB of
// physical memory (cuMemCreate). On a created non-blocking stream S:
//   ma_before (kernel), cuMemMapArrayAsync (map one tile; found with cuGetProcAddress),
//   ma_after (kernel), cuMemMapArrayAsync_ptsz on the per-thread default stream (unmap;
//   cuGetProcAddress with the per-thread flag), and a call with an empty list that fails
//   (CUDA_ERROR_INVALID_VALUE, 1) on S.
// Prints "maparray: ok"; exit status 1 when any call answered something unexpected.
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>

#include "driver_proc.h"

#define CHECK(call)                                                                 \
  do {                                                                              \
    int e_ = (int)(call);                                                           \
    if (e_) {                                                                       \
      fprintf(stderr, "maparray: %s failed: %d (line %d)\n", #call, e_, __LINE__);  \
      return 1;                                                                     \
    }                                                                               \
  } while (0)

__global__ void ma_before(float *x) { x[threadIdx.x] += 1.0f; }
__global__ void ma_after(float *x) { x[threadIdx.x] *= 2.0f; }

typedef CUresult (*map_fn)(CUarrayMapInfo *, unsigned, CUstream);

int main() {
  float *x;
  CHECK(cudaMalloc(&x, 1024 * sizeof *x));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  map_fn map = (map_fn)driver_proc("cuMemMapArrayAsync", 11010, 0);
  map_fn map_pt = (map_fn)driver_proc("cuMemMapArrayAsync", 11010, 2);
  CHECK(!map || !map_pt);
  CUDA_ARRAY3D_DESCRIPTOR d = {};
  d.Width = 1024;
  d.Height = 1024;
  d.Format = CU_AD_FORMAT_FLOAT;
  d.NumChannels = 1;
  d.Flags = CUDA_ARRAY3D_SPARSE;
  CUarray arr;
  CHECK(cuArray3DCreate(&arr, &d));
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  CUmemGenericAllocationHandle mem;
  CHECK(cuMemCreate(&mem, 2 << 20, &prop, 0));
  CUarrayMapInfo info = {};
  info.resourceType = CU_RESOURCE_TYPE_ARRAY;
  info.resource.array = arr;
  info.subresourceType = CU_ARRAY_SPARSE_SUBRESOURCE_TYPE_SPARSE_LEVEL;
  info.subresource.sparseLevel.extentWidth = 128;
  info.subresource.sparseLevel.extentHeight = 128;
  info.subresource.sparseLevel.extentDepth = 1;
  info.memOperationType = CU_MEM_OPERATION_TYPE_MAP;
  info.memHandleType = CU_MEM_HANDLE_TYPE_GENERIC;
  info.memHandle.memHandle = mem;
  info.deviceBitMask = 1;

  ma_before<<<1, 32, 0, s>>>(x);
  CHECK(cudaGetLastError());
  CHECK(map(&info, 1, (CUstream)s));
  ma_after<<<1, 32, 0, s>>>(x);
  CHECK(cudaGetLastError());
  CHECK(cudaStreamSynchronize(s));
  info.memOperationType = CU_MEM_OPERATION_TYPE_UNMAP;
  info.memHandle.memHandle = 0;
  CHECK(map_pt(&info, 1, 0));
  CHECK(cudaStreamSynchronize(cudaStreamPerThread));
  CHECK(map(&info, 0, (CUstream)s) != CUDA_ERROR_INVALID_VALUE);
  CHECK(cuMemRelease(mem));
  CHECK(cuArrayDestroy(arr));
  printf("maparray: ok\n");
  return 0;
}
