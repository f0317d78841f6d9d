/*
 * Kernel attributes and occupancy (format 1.6), for test_kattr.py (simulated GPU, where
 * SIMCUDA_KERNEL_ATTRS plants each kernel's registers, static shared memory and local
 * memory). Two kernels, each launched with two block sizes:
 *   heavy <<<264, 256>>> x3 and <<<132, 128, 16384 bytes dynamic shared memory>>> x2,
 *   light <<<1024, 1024>>> x4 and <<<66, 96>>> x1.
 * Before light's first launch the program leaves an error pending (cudaSetDevice of a
 * device that does not exist) and checks after that launch that cudaGetLastError still
 * returns it, once, then cudaSuccess: the tracer must not ask the runtime then (that
 * launch has no attributes; the next one has).
 * Built twice (programs/meson.build): with the simulated libcudart.so (runtime launches)
 * and with the simulated runtime linked in statically (kattr_static: driver launches).
 * Prints "kattr: ok" and exits 0 when every CUDA call did what it should.
 */
#include <stdio.h>

#include <cuda_runtime.h>

__global__ void heavy(float *x, int n) {
  extern __shared__ float dyn[];
  if ((int)threadIdx.x < n) x[threadIdx.x] += dyn[0];
}

__global__ void light(float *x, int n) {
  if ((int)threadIdx.x < n) x[threadIdx.x] *= 2.0f;
}

static int failed;

static void check(cudaError_t err, const char *what) {
  if (err != cudaSuccess) {
    fprintf(stderr, "kattr: %s: %s\n", what, cudaGetErrorString(err));
    failed = 1;
  }
}

int main(void) {
  float *x = NULL;
  check(cudaMalloc((void **)&x, 1 << 20), "cudaMalloc");
  for (int i = 0; i < 3; i++) {
    heavy<<<264, 256>>>(x, 16);
    check(cudaGetLastError(), "heavy 256");
  }
  for (int i = 0; i < 2; i++) {
    heavy<<<132, 128, 16384>>>(x, 16);
    check(cudaGetLastError(), "heavy 128");
  }
  /* an error left pending across light's first launch */
  cudaError_t pending = cudaSetDevice(99);
  light<<<1024, 1024>>>(x, 16);
  cudaError_t first = cudaGetLastError(), second = cudaGetLastError();
  if (pending == cudaSuccess || first != pending || second != cudaSuccess) {
    fprintf(stderr, "kattr: pending error %d, then %d and %d\n", (int)pending, (int)first,
            (int)second);
    failed = 1;
  }
  for (int i = 0; i < 3; i++) {
    light<<<1024, 1024>>>(x, 16);
    check(cudaGetLastError(), "light 1024");
  }
  light<<<66, 96>>>(x, 16);
  check(cudaGetLastError(), "light 96");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  check(cudaFree(x), "cudaFree");
  if (failed)
    return 1;
  printf("kattr: ok\n");
  return 0;
}
