/*
 * The classic cause of GPU idle time that a caching allocator avoids, for
 * test_alloc.py (simulated GPU): ITERS (6) steps, each cudaMalloc of a buffer, one
 * launch of a_work on it, and cudaFree of it (which waits for a_work: the implicit
 * synchronisation), so the GPU sits idle from a_work's end until the next step's
 * launch while the CPU frees and allocates. Then once each: cudaMallocHost /
 * cudaFreeHost, cudaHostAlloc, cudaMallocManaged, cudaMallocPitch, cudaHostRegister /
 * cudaHostUnregister, cudaMallocAsync / cudaFreeAsync on a created stream, and the
 * same through the per-thread default stream (the _ptsz entry points).
 * Built twice (programs/meson.build): with the simulated libcudart.so (shared) and
 * with the simulated runtime linked in statically (alloc_loop_static), which reaches
 * libcuda.so.1 only through cuGetProcAddress, like nvcc's default static cudart.
 * Prints "alloc_loop: ok" and exits 0 when every CUDA call succeeded.
 */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>

#define ITERS 6
#define BYTES (1u << 20)

extern "C" cudaError_t cudaMallocAsync_ptsz(void **, size_t, cudaStream_t);
extern "C" cudaError_t cudaFreeAsync_ptsz(void *, cudaStream_t);

__global__ void a_work(float *x) { x[threadIdx.x] += 1.0f; }

static int failed;

static void check(cudaError_t err, const char *what) {
  if (err != cudaSuccess) {
    fprintf(stderr, "alloc_loop: %s: %s\n", what, cudaGetErrorString(err));
    failed = 1;
  }
}

int main(void) {
  check(cudaFree(0), "cudaFree(0)");
  for (int i = 0; i < ITERS; i++) {
    float *x = NULL;
    check(cudaMalloc(&x, BYTES), "cudaMalloc");
    a_work<<<1, 256>>>(x);
    check(cudaGetLastError(), "launch");
    check(cudaFree(x), "cudaFree");
  }
  void *h = NULL, *h2 = NULL, *m = NULL, *p = NULL, *a = NULL, *b = NULL;
  size_t pitch = 0;
  static char registered[8192] __attribute__((aligned(4096)));
  cudaStream_t s;
  check(cudaMallocHost(&h, 4096), "cudaMallocHost");
  check(cudaFreeHost(h), "cudaFreeHost");
  check(cudaHostAlloc(&h2, 4096, cudaHostAllocPortable), "cudaHostAlloc");
  check(cudaFreeHost(h2), "cudaFreeHost 2");
  check(cudaMallocManaged(&m, 4096), "cudaMallocManaged");
  check(cudaFree(m), "cudaFree managed");
  check(cudaMallocPitch(&p, &pitch, 100, 8), "cudaMallocPitch");
  check(cudaFree(p), "cudaFree pitched");
  check(cudaHostRegister(registered, sizeof registered, 0), "cudaHostRegister");
  check(cudaHostUnregister(registered), "cudaHostUnregister");
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cudaMallocAsync(&a, 4096, s), "cudaMallocAsync");
  check(cudaFreeAsync(a, s), "cudaFreeAsync");
  check(cudaMallocAsync_ptsz(&b, 4096, 0), "cudaMallocAsync_ptsz");
  check(cudaFreeAsync_ptsz(b, 0), "cudaFreeAsync_ptsz");
  check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  printf("alloc_loop: %s\n", failed ? "FAILED" : "ok");
  return failed;
}
