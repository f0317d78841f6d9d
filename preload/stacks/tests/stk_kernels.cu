/*
 * Kernel launches from known host functions, for test_stacks.py (nvcc -g -cudart
 * shared): launch_alpha in one thread and launch_beta in another, 5 launches each
 * from one call site, then launch_deep reached through recurse() at two recursion
 * depths (2 launches, two different stacks with the same innermost frames).
 * Prints one line; exits 0, or 1 when a CUDA call failed.
 *
 * "stk_kernels throw N": N times, launch_then_throw launches a kernel and throws a
 * C++ exception caught two frames up (in catch_it), with a destructor run during
 * unwinding: C++ exception unwinding must work unchanged while the tracer's
 * (privately loaded) libunwind takes stacks. Prints the exceptions caught and the
 * destructors run.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <pthread.h>
#include <stdexcept>

#include <cuda_runtime.h>

#define LAUNCHES 5
#define NOINLINE __attribute__((noinline))

static int failures;

__global__ void add_one(int *x) { x[threadIdx.x] += 1; }
__global__ void add_two(int *x) { x[threadIdx.x] += 2; }

static void check(cudaError_t e, const char *what) {
  if (e != cudaSuccess) {
    fprintf(stderr, "stk_kernels: %s failed: %s\n", what, cudaGetErrorString(e));
    __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
  }
}

NOINLINE void launch_alpha(int *x) {
  add_one<<<1, 32>>>(x);
  check(cudaGetLastError(), "add_one launch");
}

NOINLINE void launch_beta(int *x) {
  add_two<<<1, 32>>>(x);
  check(cudaGetLastError(), "add_two launch");
}

NOINLINE void launch_deep(int *x) {
  add_one<<<1, 32>>>(x);
  check(cudaGetLastError(), "add_one launch");
}

/* level more recurse() frames, then launch_deep. */
NOINLINE int recurse(int *x, int level) {
  if (level > 0) {
    int r = recurse(x, level - 1);
    __asm__ volatile("" ::: "memory");
    return r + 1;
  }
  launch_deep(x);
  return 0;
}

static int destructors;

struct counts_destruction {
  ~counts_destruction() { destructors++; }
};

NOINLINE void launch_then_throw(int *x, int i) {
  counts_destruction guard;
  add_one<<<1, 32>>>(x);
  check(cudaGetLastError(), "add_one launch");
  throw std::runtime_error(i % 2 ? "odd" : "even");
}

NOINLINE void pass_through(int *x, int i) {
  counts_destruction guard;
  launch_then_throw(x, i);
}

NOINLINE int catch_it(int *x, int i) {
  try {
    pass_through(x, i);
  } catch (const std::runtime_error &e) {
    return strcmp(e.what(), i % 2 ? "odd" : "even") == 0;
  }
  return 0;
}

static int *dev_a, *dev_b;

static void *thread_alpha(void *) {
  for (int i = 0; i < LAUNCHES; i++) launch_alpha(dev_a);
  check(cudaStreamSynchronize(0), "cudaStreamSynchronize");
  return nullptr;
}

static void *thread_beta(void *) {
  for (int i = 0; i < LAUNCHES; i++) launch_beta(dev_b);
  check(cudaStreamSynchronize(0), "cudaStreamSynchronize");
  return nullptr;
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "throw")) {
    int n = atoi(argv[2]), caught = 0;
    check(cudaMalloc(&dev_a, 32 * sizeof(int)), "cudaMalloc");
    for (int i = 0; i < n; i++) caught += catch_it(dev_a, i);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    printf("stk_kernels: throws=%d caught=%d destructors=%d failures=%d\n", n, caught, destructors,
           failures);
    return failures || caught != n ? 1 : 0;
  }
  check(cudaMalloc(&dev_a, 32 * sizeof(int)), "cudaMalloc");
  check(cudaMalloc(&dev_b, 32 * sizeof(int)), "cudaMalloc");
  pthread_t ta, tb;
  pthread_create(&ta, nullptr, thread_alpha, nullptr);
  pthread_create(&tb, nullptr, thread_beta, nullptr);
  pthread_join(ta, nullptr);
  pthread_join(tb, nullptr);
  int levels = recurse(dev_a, 1) + recurse(dev_a, 4);
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  printf("stk_kernels: launches=%d levels=%d failures=%d\n", 2 * LAUNCHES + 2, levels, failures);
  return failures ? 1 : 0;
}
