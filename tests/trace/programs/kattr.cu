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
 * `kattr errors` runs launches that fail instead (too many threads, no kernel, an error
 * left pending across a good launch) and prints what each returned and what
 * cudaPeekAtLastError and cudaGetLastError said after it: test_kattr.py compares the
 * lines with and without the tracer (the attribute and occupancy queries must not set,
 * clear or replace the runtime's last error).
 * Built twice (programs/meson.build): with the simulated libcudart.so (runtime launches)
 * and with the simulated runtime linked in statically (kattr_static: driver launches).
 * Prints "kattr: ok" and exits 0 when every CUDA call did what it should.
 */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime.h>

__global__ void heavy(float *x, int n) {
  extern __shared__ float dyn[];
  if ((int)threadIdx.x < n) x[threadIdx.x] += dyn[0];
}

__global__ void light(float *x, int n) {
  if ((int)threadIdx.x < n) x[threadIdx.x] *= 2.0f;
}

__global__ void third(float *x, int n) {
  if ((int)threadIdx.x < n) x[threadIdx.x] -= 1.0f;
}

static int failed;

static void check(cudaError_t err, const char *what) {
  if (err != cudaSuccess) {
    fprintf(stderr, "kattr: %s: %s\n", what, cudaGetErrorString(err));
    failed = 1;
  }
}

/* Launches third through cudaLaunchKernel (its own result) and prints the result, then
 * what cudaPeekAtLastError and two cudaGetLastError calls say. */
static void launch_and_show(const char *what, const void *func, unsigned threads) {
  static float *x;
  static int n = 16;
  if (!x && cudaMalloc((void **)&x, 1 << 12) != cudaSuccess)
    failed = 1;
  void *args[] = {&x, &n};
  cudaError_t launch = cudaLaunchKernel(func, dim3(1), dim3(threads), args, 0, 0);
  cudaError_t peek = cudaPeekAtLastError();
  cudaError_t last = cudaGetLastError(), then = cudaGetLastError();
  printf("errors: %s -> %s, peek %s, last %s, then %s\n", what, cudaGetErrorName(launch),
         cudaGetErrorName(peek), cudaGetErrorName(last), cudaGetErrorName(then));
}

/* `kattr errors`: launches that fail, each followed by what the runtime's error state
 * says; the lines must be the same with and without the tracer. */
static int errors(void) {
  const void *k = (const void *)third;
  launch_and_show("first launch, 2048 threads", k, 2048);
  launch_and_show("64 threads", k, 64);
  launch_and_show("known kernel, 2048 threads", k, 2048);
  launch_and_show("no kernel", (const void *)&check, 64);
  /* a failed launch's error left pending across a good launch of a new shape */
  void *args[] = {NULL, NULL};
  cudaError_t bad = cudaLaunchKernel(k, dim3(1), dim3(4096), args, 0, 0);
  printf("errors: pending %s\n", cudaGetErrorName(bad));
  launch_and_show("96 threads, an error pending", k, 96);
  third<<<1, 3000>>>(NULL, 0);
  cudaError_t peek = cudaPeekAtLastError(), last = cudaGetLastError();
  printf("errors: <<<1, 3000>>> -> peek %s, last %s, then %s\n", cudaGetErrorName(peek),
         cudaGetErrorName(last), cudaGetErrorName(cudaGetLastError()));
  cudaError_t sync = cudaDeviceSynchronize();
  printf("errors: synchronize -> %s, last %s\n", cudaGetErrorName(sync),
         cudaGetErrorName(cudaGetLastError()));
  if (failed)
    return 1;
  printf("kattr: ok\n");
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "errors"))
    return errors();
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
