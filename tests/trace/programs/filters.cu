/*
 * Work spread over two simulated devices and three streams, for test_filters.py (the
 * selection options --device, --stream, --kernel): with SIMCUDA_DEVICES=2,
 *   device 0, stream A: 3 x flt_alpha, then one copy HtoD (4 KiB);
 *   device 0, stream B: 2 x flt_beta<int> (a template: its demangled name is
 *                       "void flt_beta<int>(float*)");
 *   device 1, stream C: 4 x flt_gamma, then one memset;
 * each stream synchronized after its work, in that order.
 * Prints "filters: ok"; exit status 1 when a CUDA call failed.
 */
#include <stdio.h>

#include <cuda_runtime.h>

__global__ void flt_alpha(float *x) { x[threadIdx.x] += 1.0f; }
template <typename T> __global__ void flt_beta(float *x) { x[threadIdx.x] += (T)2; }
__global__ void flt_gamma(float *x) { x[threadIdx.x] *= 3.0f; }

static int failed;

static void check(cudaError_t err, const char *what) {
  if (err != cudaSuccess) {
    fprintf(stderr, "filters: %s: %s\n", what, cudaGetErrorString(err));
    failed = 1;
  }
}

int main(void) {
  static float host[1024];
  float *x0 = NULL, *x1 = NULL;
  cudaStream_t a, b, c;
  check(cudaSetDevice(0), "set device 0");
  check(cudaMalloc(&x0, sizeof host), "cudaMalloc x0");
  check(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking), "stream A");
  check(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking), "stream B");
  for (int i = 0; i < 3; i++) flt_alpha<<<1, 32, 0, a>>>(x0);
  check(cudaGetLastError(), "launch flt_alpha");
  check(cudaMemcpyAsync(x0, host, sizeof host, cudaMemcpyHostToDevice, a), "copy on A");
  for (int i = 0; i < 2; i++) flt_beta<int><<<1, 32, 0, b>>>(x0);
  check(cudaGetLastError(), "launch flt_beta");
  check(cudaStreamSynchronize(a), "sync A");
  check(cudaStreamSynchronize(b), "sync B");
  check(cudaSetDevice(1), "set device 1");
  check(cudaMalloc(&x1, sizeof host), "cudaMalloc x1");
  check(cudaStreamCreateWithFlags(&c, cudaStreamNonBlocking), "stream C");
  for (int i = 0; i < 4; i++) flt_gamma<<<1, 32, 0, c>>>(x1);
  check(cudaGetLastError(), "launch flt_gamma");
  check(cudaMemsetAsync(x1, 0, sizeof host, c), "memset on C");
  check(cudaStreamSynchronize(c), "sync C");
  printf("filters: %s\n", failed ? "FAILED" : "ok");
  return failed;
}
