/*
 * Communication against compute for test_comm.py (simulated GPU, shared cudart): ITERS
 * times, a compute kernel on stream 1 and, right after, a kernel named like NCCL's
 * all-reduce on stream 2 (overlapping it when the durations say so), then a second
 * NCCL-named kernel alone on stream 2 after a join (exposed communication), and a sync.
 * The kernels compute nothing on the simulator; their names and durations
 * (SIMCUDA_KERNEL_US) are what counts.
 * usage: comm [ITERS]; exit status 0 when every CUDA call succeeded.
 */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>

__global__ void compute_gemm(float *x) { x[threadIdx.x] *= 2.0f; }
__global__ void ncclDevKernel_AllReduce_Sum_f32_RING_LL(float *x) { x[threadIdx.x] += 1.0f; }
__global__ void ncclDevKernel_Broadcast_RING_LL(float *x) { x[threadIdx.x] -= 1.0f; }

static int failed;

static void check(cudaError_t err, const char *what) {
  if (err != cudaSuccess) {
    fprintf(stderr, "comm: %s: %s\n", what, cudaGetErrorString(err));
    failed = 1;
  }
}

int main(int argc, char **argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 5;
  float *x = NULL, *y = NULL;
  cudaStream_t s1, s2;
  cudaEvent_t done;
  check(cudaMalloc(&x, 1024 * sizeof *x), "cudaMalloc x");
  check(cudaMalloc(&y, 1024 * sizeof *y), "cudaMalloc y");
  check(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), "stream 1");
  check(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking), "stream 2");
  check(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), "event");
  for (int i = 0; i < iters && !failed; i++) {
    compute_gemm<<<1, 32, 0, s1>>>(x);
    ncclDevKernel_AllReduce_Sum_f32_RING_LL<<<1, 32, 0, s2>>>(y);
    check(cudaEventRecord(done, s1), "record");
    check(cudaStreamWaitEvent(s2, done, 0), "wait");
    ncclDevKernel_Broadcast_RING_LL<<<1, 32, 0, s2>>>(x);
    check(cudaDeviceSynchronize(), "sync");
  }
  check(cudaStreamDestroy(s1), "destroy s1");
  check(cudaStreamDestroy(s2), "destroy s2");
  check(cudaFree(x), "free x");
  check(cudaFree(y), "free y");
  printf("comm: %s\n", failed ? "FAILED" : "ok");
  return failed;
}
