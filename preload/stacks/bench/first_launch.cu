/*
 * first_launch: how long a program's first kernel launch takes (and its second),
 * timed by the program itself, for bench/first_launch.py: traced minus untraced is
 * what the tracer adds to them (the first call stack of the process among others).
 *
 * usage: first_launch SETTLE_MS
 *   makes its first CUDA calls (cudaFree(0), cudaMalloc: the context), sleeps
 *   SETTLE_MS (a real GPU's context and module set-up take about that long; 0:
 *   none), then launches a kernel twice, each launch timed on CLOCK_MONOTONIC, and
 *   prints "first_launch: first N ns, second M ns". Exit status 0 when every CUDA
 *   call succeeded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cuda_runtime.h>

__global__ void fl_kernel(int *x) { x[threadIdx.x] += 1; }

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

int main(int argc, char **argv) {
  long settle_ms = argc > 1 ? atol(argv[1]) : 0;
  int *device = NULL;
  if (cudaFree(0) != cudaSuccess || cudaMalloc((void **)&device, 128) != cudaSuccess) {
    fprintf(stderr, "first_launch: no CUDA device\n");
    return 1;
  }
  struct timespec settle = {settle_ms / 1000, (settle_ms % 1000) * 1000000};
  nanosleep(&settle, NULL);
  long long t0 = now_ns();
  fl_kernel<<<1, 32>>>(device);
  long long t1 = now_ns();
  fl_kernel<<<1, 32>>>(device);
  long long t2 = now_ns();
  int bad = cudaGetLastError() != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess;
  printf("first_launch: first %lld ns, second %lld ns\n", t1 - t0, t2 - t1);
  return bad;
}
