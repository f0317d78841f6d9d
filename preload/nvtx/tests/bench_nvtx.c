/*
 * Cost of NVTX calls as seen by a program: N nvtxRangePushA/nvtxRangePop pairs
 * (3 levels deep under one outer range), then N pushes of a registered string in a
 * domain, then N marks. Prints the calling thread's CPU nanoseconds per call or
 * pair. Run it plainly (NVTX
 * without a tool: its calls are no-ops) and under LD_PRELOAD=libtrace.so; the
 * difference is the tracer's cost. For instruction counts run it under
 * valgrind --tool=callgrind --toggle-collect=bench_push_pop (or bench_domain,
 * bench_mark) and divide the counted instructions by N.
 *
 * Usage: bench_nvtx [N]   (default 1000000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nvtx3/nvToolsExt.h>

/* CPU time of the calling thread: unlike wall time, it does not count the time the
 * thread waits for a CPU on a loaded machine (the tracer's writer thread is not in it). */
static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* n push/pop pairs of one literal name. */
__attribute__((noinline)) void bench_push_pop(long n) {
  for (long i = 0; i < n; i++) {
    nvtxRangePushA("bench_range");
    nvtxRangePop();
  }
}

/* n push/pop pairs of a registered string in a domain. */
__attribute__((noinline)) void bench_domain(long n, nvtxDomainHandle_t domain,
                                            const nvtxEventAttributes_t *attr) {
  for (long i = 0; i < n; i++) {
    nvtxDomainRangePushEx(domain, attr);
    nvtxDomainRangePop(domain);
  }
}

/* n marks. */
__attribute__((noinline)) void bench_mark(long n) {
  for (long i = 0; i < n; i++) nvtxMarkA("bench_mark");
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  if (n <= 0) {
    fprintf(stderr, "bench_nvtx: N must be a positive count\n");
    return 2;
  }
  nvtxRangePushA("bench_outer");
  nvtxRangePushA("bench_level1");
  bench_push_pop(1000); /* warm-up: NVTX initialisation, first interning */
  double t0 = now_s();
  bench_push_pop(n);
  double t1 = now_s();

  nvtxDomainHandle_t domain = nvtxDomainCreateA("bench_domain");
  nvtxEventAttributes_t attr;
  memset(&attr, 0, sizeof attr);
  attr.version = NVTX_VERSION;
  attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  attr.message.registered = nvtxDomainRegisterStringA(domain, "bench_registered");
  bench_domain(1000, domain, &attr);
  double t2 = now_s();
  bench_domain(n, domain, &attr);
  double t3 = now_s();

  bench_mark(1000);
  double t4 = now_s();
  bench_mark(n);
  double t5 = now_s();
  nvtxRangePop();
  nvtxRangePop();

  printf("push_pop_ns %.1f\ndomain_registered_push_pop_ns %.1f\nmark_ns %.1f\n",
         (t1 - t0) * 1e9 / (double)n, (t3 - t2) * 1e9 / (double)n, (t5 - t4) * 1e9 / (double)n);
  return 0;
}
