/* Stream memory operations between two non-blocking streams, for test_valuewait.py.
 * Driver entry points from cuGetProcAddress_v2 (13000: the _v2 forms; 8000/9000: the
 * older ABI's). Planted, in this order:
 *   s2: vw_long (60 ms in test_valuewait.py: SIMCUDA_KERNEL_US), cuStreamWriteValue32(flag = 1)
 *   s1: vw_short (30 ms), cuStreamWaitValue32(flag >= 1), vw_after (1 ms)
 *   s1: cuStreamBatchMemOp: write64(flag64 = 7), wait64(flag64 == 7)
 *   s1: cuStreamWaitValue32 (8.0 ABI, flag == 1), cuStreamWriteValue64 (9.0 ABI, flag64 = 9)
 * so vw_after cannot start before vw_long's end. Prints the two streams' handles and
 * "valuewait: ok" when every call succeeded and the values are in memory. */
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "driver_proc.h"

__global__ void vw_long(int *p) { if (p) *p = 0; }
__global__ void vw_short(int *p) { if (p) *p = 0; }
__global__ void vw_after(int *p) { if (p) *p = 0; }

typedef CUresult (*value32_fn)(CUstream, CUdeviceptr, cuuint32_t, unsigned);
typedef CUresult (*value64_fn)(CUstream, CUdeviceptr, cuuint64_t, unsigned);
typedef CUresult (*batch_fn)(CUstream, unsigned, CUstreamBatchMemOpParams *, unsigned);

static int failed;

static void check(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "valuewait: %s failed\n", what);
    failed = 1;
  }
}

int main() {
  cudaStream_t s1, s2;
  unsigned long long *flags;
  check(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking) == cudaSuccess, "stream 1");
  check(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking) == cudaSuccess, "stream 2");
  check(cudaMalloc((void **)&flags, 16) == cudaSuccess, "malloc");
  check(cudaMemset(flags, 0, 16) == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess, "zero");
  value32_fn write32 = (value32_fn)driver_proc("cuStreamWriteValue32", 13000, 0);
  value32_fn wait32 = (value32_fn)driver_proc("cuStreamWaitValue32", 13000, 0);
  batch_fn batch = (batch_fn)driver_proc("cuStreamBatchMemOp", 13000, 0);
  value32_fn wait32_v1 = (value32_fn)driver_proc("cuStreamWaitValue32", 8000, 0);
  value64_fn write64_v1 = (value64_fn)driver_proc("cuStreamWriteValue64", 9000, 0);
  if (failed || !write32 || !wait32 || !batch || !wait32_v1 || !write64_v1) {
    fprintf(stderr, "valuewait: setup failed\n");
    return 1;
  }
  printf("streams %p %p\n", (void *)s1, (void *)s2);
  CUdeviceptr flag = (CUdeviceptr)(uintptr_t)flags, flag64 = flag + 8;
  vw_long<<<1, 32, 0, s2>>>(NULL);
  check(write32((CUstream)s2, flag, 1, 0) == CUDA_SUCCESS, "write32");
  vw_short<<<1, 32, 0, s1>>>(NULL);
  check(wait32((CUstream)s1, flag, 1, CU_STREAM_WAIT_VALUE_GEQ) == CUDA_SUCCESS, "wait32");
  vw_after<<<1, 32, 0, s1>>>(NULL);
  CUstreamBatchMemOpParams ops[2];
  memset(ops, 0, sizeof ops);
  ops[0].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
  ops[0].writeValue.address = flag64;
  ops[0].writeValue.value64 = 7;
  ops[1].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_64;
  ops[1].waitValue.address = flag64;
  ops[1].waitValue.value64 = 7;
  ops[1].waitValue.flags = CU_STREAM_WAIT_VALUE_EQ;
  check(batch((CUstream)s1, 2, ops, 0) == CUDA_SUCCESS, "batch");
  check(wait32_v1((CUstream)s1, flag, 1, CU_STREAM_WAIT_VALUE_EQ) == CUDA_SUCCESS, "wait32 (8.0)");
  check(write64_v1((CUstream)s1, flag64, 9, 0) == CUDA_SUCCESS, "write64 (9.0)");
  check(cudaDeviceSynchronize() == cudaSuccess, "sync");
  unsigned long long back[2] = {0, 0};
  check(cudaMemcpy(back, flags, 16, cudaMemcpyDeviceToHost) == cudaSuccess, "read back");
  check(back[0] == 1 && back[1] == 9, "values");
  if (failed) return 1;
  printf("valuewait: ok\n");
  return 0;
}
