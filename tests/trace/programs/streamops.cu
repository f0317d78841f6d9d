/* Stream memory-operation batches told apart, for test_streamops.py. Driver entry points
 * from cuGetProcAddress_v2 at 13000 (the _v2 forms). Each stream is non-blocking; a host
 * function sleeps 20 ms (its stream's time on the simulator: SIMCUDA_HOST_FN_US=20000),
 * untimed by the tracer. so_a and so_c last 50 ms on the simulator and s2 starts with
 * so_hold (50 ms), so that what follows each is queued before the GPU reaches it: a host
 * preempted while it enqueues (a loaded machine) moves nothing unless it is held longer
 * than that. Planted, in this order:
 *   s1: so_a (50 ms), host function, cuStreamBatchMemOp(write32 flag = 1, write64
 *       flag64 = 2), so_b (1 ms): so_b waits behind the host function, not behind a
 *       value: the batch only writes;
 *   sync;
 *   s3: so_c (50 ms);
 *   s2: so_hold (50 ms), host function, cuStreamWriteValue32(flag2 = 1);
 *   s3: cuStreamBatchMemOp(wait flag2 >= 1, write32 flag3 = 3), so_d (1 ms): so_d waits
 *       for s2's write, which comes after s2's host function, at least 20 ms after
 *       so_c's end (so_hold was launched after so_c).
 * Prints "streamops: ok" when every call succeeded and the values are in memory. */
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "driver_proc.h"

__global__ void so_hold(int *p) { if (p) *p = 0; }
__global__ void so_a(int *p) { if (p) *p = 0; }
__global__ void so_b(int *p) { if (p) *p = 0; }
__global__ void so_c(int *p) { if (p) *p = 0; }
__global__ void so_d(int *p) { if (p) *p = 0; }

typedef CUresult (*value32_fn)(CUstream, CUdeviceptr, cuuint32_t, unsigned);
typedef CUresult (*batch_fn)(CUstream, unsigned, CUstreamBatchMemOpParams *, unsigned);

static int failed;

static void check(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "streamops: %s failed\n", what);
    failed = 1;
  }
}

/* A host function holding its stream for 20 ms. */
static void CUDART_CB sleep_20ms(void *) { usleep(20000); }

static void set_write32(CUstreamBatchMemOpParams *op, CUdeviceptr addr, cuuint32_t value) {
  op->writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  op->writeValue.address = addr;
  op->writeValue.value = value;
}

int main() {
  cudaStream_t s1, s2, s3;
  unsigned long long *flags;
  check(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking) == cudaSuccess, "stream 1");
  check(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking) == cudaSuccess, "stream 2");
  check(cudaStreamCreateWithFlags(&s3, cudaStreamNonBlocking) == cudaSuccess, "stream 3");
  check(cudaMalloc((void **)&flags, 32) == cudaSuccess, "malloc");
  check(cudaMemset(flags, 0, 32) == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess, "zero");
  value32_fn write32 = (value32_fn)driver_proc("cuStreamWriteValue32", 13000, 0);
  batch_fn batch = (batch_fn)driver_proc("cuStreamBatchMemOp", 13000, 0);
  if (failed || !write32 || !batch) {
    fprintf(stderr, "streamops: setup failed\n");
    return 1;
  }
  CUdeviceptr flag = (CUdeviceptr)(uintptr_t)flags, flag64 = flag + 8, flag2 = flag + 16,
              flag3 = flag + 24;
  CUstreamBatchMemOpParams ops[2];

  /* writes only: so_b waits for the host function */
  so_a<<<1, 32, 0, s1>>>(NULL);
  check(cudaLaunchHostFunc(s1, sleep_20ms, NULL) == cudaSuccess, "host function 1");
  memset(ops, 0, sizeof ops);
  set_write32(&ops[0], flag, 1);
  ops[1].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
  ops[1].writeValue.address = flag64;
  ops[1].writeValue.value64 = 2;
  check(batch((CUstream)s1, 2, ops, 0) == CUDA_SUCCESS, "writes-only batch");
  so_b<<<1, 32, 0, s1>>>(NULL);
  check(cudaDeviceSynchronize() == cudaSuccess, "sync 1");

  /* a wait: so_d waits for stream 2's write after its host function */
  so_c<<<1, 32, 0, s3>>>(NULL);
  so_hold<<<1, 32, 0, s2>>>(NULL);
  check(cudaLaunchHostFunc(s2, sleep_20ms, NULL) == cudaSuccess, "host function 2");
  check(write32((CUstream)s2, flag2, 1, 0) == CUDA_SUCCESS, "write32");
  memset(ops, 0, sizeof ops);
  ops[0].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
  ops[0].waitValue.address = flag2;
  ops[0].waitValue.value = 1;
  ops[0].waitValue.flags = CU_STREAM_WAIT_VALUE_GEQ;
  set_write32(&ops[1], flag3, 3);
  check(batch((CUstream)s3, 2, ops, 0) == CUDA_SUCCESS, "wait batch");
  so_d<<<1, 32, 0, s3>>>(NULL);
  check(cudaDeviceSynchronize() == cudaSuccess, "sync 2");

  unsigned long long back[4] = {0, 0, 0, 0};
  check(cudaMemcpy(back, flags, 32, cudaMemcpyDeviceToHost) == cudaSuccess, "read back");
  check((unsigned)back[0] == 1 && back[1] == 2 && (unsigned)back[2] == 1 && (unsigned)back[3] == 3,
        "values");
  if (failed) return 1;
  printf("streamops: ok\n");
  return 0;
}
