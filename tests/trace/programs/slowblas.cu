/*
 * A library-like stand-in for cuBLAS, for test_slowcall.py (simulated GPU): its
 * cublasSgemm_v2 does a planted amount of host "setup" (a busy wait on the monotonic
 * clock: the first call first_us, the others rest_us, set by slowblas_plan) and then
 * launches one kernel, slowblas_gemm, on stream 0 from inside the call, as cuBLAS
 * launches its kernels: the tracer's cublasSgemm_v2 hook sees the call, and the launch
 * as a depth-1 call inside it. With a tail, the call then goes on for that long,
 * recording an event every 10 us (cudaEventRecord: traced, no GPU work), before it
 * returns (it ends long after its kernel: the gap before the
 * kernel is judged before the call is read). Built as libslowblas.so
 * (programs/meson.build); the program links it instead of libcublas.
 */
#include <stdint.h>
#include <time.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

static unsigned first_us, rest_us, tail_us, calls;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__global__ void slowblas_gemm(float *c) { c[threadIdx.x] += 1.0f; }

/* The setup time of the first call and of every later one, and the time each goes on
 * after its launch, in microseconds. */
extern "C" void slowblas_plan(unsigned first, unsigned rest, unsigned tail) {
  first_us = first;
  rest_us = rest;
  tail_us = tail;
  calls = 0;
}

/* The handle's stream: always the default stream. */
extern "C" cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t *stream) {
  (void)handle;
  *stream = 0;
  return CUBLAS_STATUS_SUCCESS;
}

/* Spins for the planted setup time, then launches slowblas_gemm on C. */
extern "C" cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const float *alpha, const float *A, int lda,
                                         const float *B, int ldb, const float *beta, float *C,
                                         int ldc) {
  (void)handle, (void)transa, (void)transb, (void)m, (void)n, (void)k, (void)alpha, (void)A;
  (void)lda, (void)B, (void)ldb, (void)beta, (void)ldc;
  uint64_t until = now_ns() + 1000ull * (calls++ ? rest_us : first_us);
  while (now_ns() < until) {
  }
  slowblas_gemm<<<1, 32>>>(C);
  cudaError_t err = cudaGetLastError();
  static cudaEvent_t ev;
  if (tail_us && !ev) (void)cudaEventCreate(&ev);
  uint64_t end = now_ns() + 1000ull * tail_us, next = 0;
  while (tail_us && now_ns() < end)
    if (now_ns() >= next) { /* every 10 us: 3,000 records in 30 ms, no more (no drops) */
      (void)cudaEventRecord(ev, 0);
      next = now_ns() + 10000;
    }
  return err == cudaSuccess ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}
