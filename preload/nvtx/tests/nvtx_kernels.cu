/*
 * NVTX ranges around CUDA work, for test_nvtx_kernels (runs on the simulated GPU).
 * Planted: on the main thread "step" (depth 0) holds "phase_a" (depth 1: two
 * launches of nvtx_kernel_a) and "copy" (depth 1: one cudaMemcpy DtoH); then
 * nvtx_kernel_b is launched outside any range; a worker thread launches
 * nvtx_kernel_c inside "t1_work" (depth 0), then exits with "t1_leak" open (the
 * core has buffered this thread's CUDA records by then, so this checks that the
 * range is still recorded at thread exit). Exit status 0 when CUDA succeeded.
 */
#include <pthread.h>
#include <stdio.h>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#define N 1024

extern "C" __global__ void nvtx_kernel_a(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}

extern "C" __global__ void nvtx_kernel_b(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2.0f;
}

extern "C" __global__ void nvtx_kernel_c(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 3.0f;
}

static int failed;

static void check(cudaError_t err, const char *what) {
  if (err != cudaSuccess) {
    fprintf(stderr, "nvtx_kernels: %s: %s\n", what, cudaGetErrorString(err));
    failed = 1;
  }
}

static void *worker(void *arg) {
  float *y = NULL;
  check(cudaMalloc(&y, N * sizeof(float)), "cudaMalloc (worker)");
  nvtxRangePushA("t1_work");
  nvtx_kernel_c<<<N / 256, 256>>>(y, N);
  check(cudaGetLastError(), "launch nvtx_kernel_c");
  check(cudaStreamSynchronize(0), "cudaStreamSynchronize (worker)");
  nvtxRangePop();
  check(cudaFree(y), "cudaFree (worker)");
  nvtxRangePushA("t1_leak"); /* left open: closed at thread exit, after CUDA calls */
  return arg;
}

int main(void) {
  static float host[N];
  float *x = NULL;
  check(cudaMalloc(&x, N * sizeof(float)), "cudaMalloc");
  check(cudaMemset(x, 0, N * sizeof(float)), "cudaMemset");

  nvtxRangePushA("step");
  nvtxRangePushA("phase_a");
  nvtx_kernel_a<<<N / 256, 256>>>(x, N);
  nvtx_kernel_a<<<N / 256, 256>>>(x, N);
  check(cudaGetLastError(), "launch nvtx_kernel_a");
  nvtxRangePop();
  nvtxRangePushA("copy");
  check(cudaMemcpy(host, x, sizeof host, cudaMemcpyDeviceToHost), "cudaMemcpy");
  nvtxRangePop();
  nvtxRangePop();

  nvtx_kernel_b<<<N / 256, 256>>>(x, N);
  check(cudaGetLastError(), "launch nvtx_kernel_b");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");

  pthread_t thread;
  if (pthread_create(&thread, NULL, worker, NULL) != 0) return 2;
  pthread_join(thread, NULL);
  check(cudaFree(x), "cudaFree");
  return failed;
}
