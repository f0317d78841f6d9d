/* Shared helpers for the bundled CUDA C workloads: argument parsing, error
 * checks, simulator detection and a tiny deterministic data generator.
 * Header-only so that each workload stays one nvcc invocation. */
#ifndef CUTRACE_WORKLOAD_H
#define CUTRACE_WORKLOAD_H

#include <cuda_runtime.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Name shown in every message; each workload sets it first thing in main. */
static const char *wl_prog = "workload";

/* Exits 1 with the failing call, its place and the CUDA error's name. */
#define WL_CHECK(call)                                                           \
  do {                                                                           \
    cudaError_t wl_err_ = (call);                                                \
    if (wl_err_ != cudaSuccess) {                                                \
      fprintf(stderr, "%s: %s:%d: %s failed: %s (%s)\n", wl_prog, __FILE__,      \
              __LINE__, #call, cudaGetErrorName(wl_err_),                        \
              cudaGetErrorString(wl_err_));                                      \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

/* Launches with <<<>>> report errors only through cudaGetLastError. */
#define WL_CHECK_LAUNCH() WL_CHECK(cudaGetLastError())

/* One positional integer argument: its name, allowed range and value
 * (preset to the default; replaced when given on the command line). */
typedef struct {
  const char *name;
  long min;
  long max;
  long value;
} wl_arg;

/* Parses argv[1..] into args[0..count) in order. Prints the usage line and
 * exits 0 for -h/--help; prints one line and exits 2 on a bad or extra
 * argument. The usage text is built from the argument names. */
static inline void wl_parse_args(int argc, char **argv, wl_arg *args, int count)
{
  char usage[256];
  int used = snprintf(usage, sizeof usage, "usage: %s", wl_prog);
  for (int i = 0; i < count && used < (int)sizeof usage; i++)
    used += snprintf(usage + used, sizeof usage - used, " [%s]", args[i].name);

  if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
    printf("%s\n", usage);
    exit(0);
  }
  if (argc - 1 > count) {
    fprintf(stderr, "%s: too many arguments (%d given, at most %d); %s\n", wl_prog,
            argc - 1, count, usage);
    exit(2);
  }
  for (int i = 0; i < argc - 1; i++) {
    const char *text = argv[i + 1];
    char *end = NULL;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno || end == text || *end != '\0' || value < args[i].min || value > args[i].max) {
      fprintf(stderr, "%s: bad %s '%s' (want an integer from %ld to %ld); %s\n", wl_prog,
              args[i].name, text, args[i].min, args[i].max, usage);
      exit(2);
    }
    args[i].value = value;
  }
}

/* True when device 0 is cutrace's simulated GPU (tests/sim), whose ordinary
 * kernels take modelled time but compute nothing. */
static inline int wl_on_simulator(void)
{
  struct cudaDeviceProp prop;
  WL_CHECK(cudaGetDeviceProperties(&prop, 0));
  return strstr(prop.name, "simulated") != NULL;
}

/* Deterministic pseudo-random float in [-1, 1) for element i of stream seed. */
static inline float wl_value(unsigned seed, unsigned long i)
{
  unsigned long x = (i + 1) * 2654435761ul ^ (seed * 40503ul + 12345ul);
  x ^= x >> 13;
  x *= 0x5bd1e995ul;
  x ^= x >> 15;
  return (float)(x % 2048) / 1024.0f - 1.0f;
}

/* Fills host[0..count) with wl_value(seed, i). */
static inline void wl_fill(float *host, unsigned long count, unsigned seed)
{
  for (unsigned long i = 0; i < count; i++)
    host[i] = wl_value(seed, i);
}

/* Host CLOCK_MONOTONIC time in nanoseconds (the clock the simulator and the
 * tracer use for the CPU timeline). */
static inline long long wl_now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* malloc that exits 1 with a message when memory runs out. */
static inline void *wl_alloc(size_t bytes)
{
  void *p = malloc(bytes ? bytes : 1);
  if (!p) {
    fprintf(stderr, "%s: out of host memory (%zu bytes)\n", wl_prog, bytes);
    exit(1);
  }
  return p;
}

/* Returns 1 when every one of the bytes equals want; otherwise prints the
 * first that does not (naming `what`) on stderr and returns 0. */
static inline int wl_bytes_are(const unsigned char *bytes, size_t count, unsigned char want, const char *what)
{
  for (size_t i = 0; i < count; i++)
    if (bytes[i] != want) {
      fprintf(stderr, "%s: %s: byte %zu = %d, want %d\n", wl_prog, what, i, bytes[i], want);
      return 0;
    }
  return 1;
}

/* Relative closeness test used by the result checks. */
static inline int wl_close(double got, double want, double tolerance)
{
  double diff = got - want;
  if (diff < 0) diff = -diff;
  double scale = want < 0 ? -want : want;
  return diff <= tolerance * (1.0 + scale);
}

#ifdef __CUDACC__
/* The GPU's global nanosecond timer (PTX %globaltimer). */
__device__ static inline unsigned long long wl_gpu_time_ns(void)
{
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/* Busy-waits for about ns nanoseconds of GPU time, so that a kernel lasts as
 * long on a real GPU as the simulator is told it does (SIMCUDA_KERNEL_US). */
__device__ static inline void wl_gpu_spin_ns(long long ns)
{
  unsigned long long start = wl_gpu_time_ns();
  while ((long long)(wl_gpu_time_ns() - start) < ns) {
  }
}
#endif

#endif
