/* Helpers shared by the simulated driver's test programs (linked with -lcuda
 * against the simulator). */
#ifndef SIM_DRIVER_TEST_H
#define SIM_DRIVER_TEST_H

#include <cuda.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Fails the test with the location and the expression. */
#define CHECK(cond)                                                                \
  do {                                                                             \
    if (!(cond)) {                                                                 \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);     \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

/* Fails unless `call` returns `want`. */
#define CHECK_RESULT(call, want)                                                   \
  do {                                                                             \
    CUresult r_ = (call);                                                          \
    if (r_ != (want)) {                                                            \
      fprintf(stderr, "%s:%d: %s -> %d, expected %d\n", __FILE__, __LINE__, #call, \
              (int)r_, (int)(want));                                               \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

#define CHECK_CU(call) CHECK_RESULT(call, CUDA_SUCCESS)

/* Fails unless |got - want| <= tol. */
#define CHECK_NEAR(got, want, tol)                                                 \
  do {                                                                             \
    double g_ = (got), w_ = (want);                                                \
    if (!(fabs(g_ - w_) <= (tol))) {                                               \
      fprintf(stderr, "%s:%d: %s = %.6f, expected %.6f +- %g\n", __FILE__, __LINE__, \
              #got, g_, w_, (double)(tol));                                        \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

/* Initialises the driver and makes device 0's primary context current. */
static inline CUcontext test_init(void)
{
  CUdevice dev;
  CUcontext ctx;
  CHECK_CU(cuInit(0));
  CHECK_CU(cuDeviceGet(&dev, 0));
  CHECK_CU(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK_CU(cuCtxSetCurrent(ctx));
  return ctx;
}

/* A kernel handle called `name` (the simulator accepts any image). */
static inline CUfunction test_kernel(const char *name)
{
  static const char image[] = ".version 8.0\n.target sm_90\n";
  CUmodule module;
  CUfunction f;
  CHECK_CU(cuModuleLoadData(&module, image));
  CHECK_CU(cuModuleGetFunction(&f, module, name));
  return f;
}

/* Launches `f` with one block of 32 threads on `stream`. */
static inline void test_launch(CUfunction f, CUstream stream)
{
  CHECK_CU(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL));
}

/* Milliseconds between two records (both must be complete). */
static inline float test_elapsed_ms(CUevent a, CUevent b)
{
  float ms = 0;
  CHECK_CU(cuEventSynchronize(b));
  CHECK_CU(cuEventSynchronize(a));
  CHECK_CU(cuEventElapsedTime(&ms, a, b));
  return ms;
}

/* CLOCK_MONOTONIC in ns. */
static inline unsigned long long test_now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/* How much longer than busy_ms the host has taken since t0 (test_now_ns), 0 unless it
 * was preempted that long: the most its scheduling can have moved events enqueued
 * since t0 behind a blocker of busy_ms launched then (a loaded machine). */
static inline double test_host_overrun_ms(unsigned long long t0, double busy_ms)
{
  double took_ms = (double)(test_now_ns() - t0) / 1e6;
  return took_ms > busy_ms ? took_ms - busy_ms : 0.0;
}

#endif
