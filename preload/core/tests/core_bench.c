/*
 * Benchmarks of the recording core (numbers for docs/performance.md):
 *   core_bench emit N     ns per ctp_emit on launch-like records (API, LAUNCH, GPU),
 *                         best of 20 rounds of N triples, the writer draining between
 *   core_bench writer N   writer throughput: N triples emitted at full speed into a
 *                         buffer that holds them all; records/s from the first emit
 *                         until the writer has taken every record (wall), and
 *                         records per second of the writer thread's CPU time
 *   core_bench bytes N [JITTER%]  N launch triples with uniform random jitter of
 *                         0.5-2 us (times JITTER%/100) on each of the four times,
 *                         paced so that nothing drops; file size / N = bytes per launch
 *   core_bench firstcall N GAP_US  host time of a new thread's first ctp_emit (its ring
 *                         taken from the pool or mapped, its THREAD record): N threads
 *                         one after another, GAP_US apart; median, p90, max in us
 *   core_bench firstburst N  the same for N threads whose first records race
 *                         (CUTRACE_RING_POOL=0 for the cost without the pool)
 * Run with CUTRACE_BUFFER_KB large enough for N triples (29 words = 232 B each).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t jitter_percent = 100;

/* Uniform noise in [0, range * jitter_percent / 100) ns (xorshift64). */
static uint64_t jitter(uint64_t range) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  range = range * jitter_percent / 100;
  return range ? rng % range : 0;
}

struct triple_state {
  uint64_t name, kernels[4], t, gpu_t, corr, tid;
};

/* Emits one launch as the hooks would: the call, its arguments, its GPU time. */
static void emit_triple(struct triple_state *s) {
  ct_record r;
  uint64_t corr = ++s->corr;
  uint64_t begin = s->t, end = begin + 2000 + jitter(800);
  s->t = end + 1500 + jitter(2000);
  r.kind = CT_KIND_API;
  r.u.api = (struct ct_api){.tid = s->tid, .name = s->name, .begin_ns = begin, .end_ns = end,
                            .corr = corr, .device = 0, .stream = 1, .result = 0, .depth = 0,
                            .flags = CT_API_TIMED};
  ctp_emit(&r);
  r.kind = CT_KIND_LAUNCH;
  r.u.launch = (struct ct_launch){.corr = corr, .kernel = s->kernels[corr & 3], .grid_x = 256,
                                  .grid_y = 1, .grid_z = 1, .block_x = 256, .block_y = 1,
                                  .block_z = 1, .shmem = 0};
  ctp_emit(&r);
  uint64_t start = s->gpu_t > end ? s->gpu_t : end + 4000 + jitter(1000);
  s->gpu_t = start + 3000 + jitter(500);
  r.kind = CT_KIND_GPU;
  r.u.gpu = (struct ct_gpu){.corr = corr, .device = 0, .stream = 1, .start_ns = start,
                            .end_ns = s->gpu_t, .type = CT_GPU_KERNEL,
                            .name = s->kernels[corr & 3]};
  ctp_emit(&r);
}

static void init_state(struct triple_state *s) {
  memset(s, 0, sizeof *s);
  s->tid = ctp_tid();
  s->name = ctp_intern("__cudaLaunchKernel");
  static const char *const k[4] = {"_Z4vaddPKfS0_Pfi", "_Z6reducePfi", "_Z5emptyv",
                                   "_Z7softmaxPKfPfi"};
  for (int i = 0; i < 4; i++) s->kernels[i] = ctp_intern(k[i]);
  s->t = s->gpu_t = ctp_now_ns();
  emit_triple(s); /* creates (and populates) this thread's buffer outside the timings */
}

/* Waits until the writer has taken every record of the calling thread. */
static void wait_drained(void) {
  for (struct ctp_tbuf *b = ctp_buffers_head(); b; b = b->next) {
    if (b->tid != ctp_tid()) continue;
    while (__atomic_load_n(&b->tail, __ATOMIC_ACQUIRE) != __atomic_load_n(&b->head, __ATOMIC_ACQUIRE)) {
      struct timespec us = {0, 20000};
      nanosleep(&us, NULL);
    }
  }
}

static uint64_t my_drops(void) {
  for (struct ctp_tbuf *b = ctp_buffers_head(); b; b = b->next)
    if (b->tid == ctp_tid()) return b->drops_total;
  return 0;
}

#define FIRST_MAX 256
static uint64_t first_ns[FIRST_MAX];
static pthread_barrier_t first_barrier;
static int first_burst;

/* A new thread's first record (an API record, as a hook's), timed. */
static void *first_call_main(void *arg) {
  unsigned i = (unsigned)(uintptr_t)arg;
  if (first_burst) pthread_barrier_wait(&first_barrier);
  ct_record r;
  memset(&r, 0, sizeof r);
  r.kind = CT_KIND_API;
  uint64_t t0 = ctp_now_ns();
  r.u.api = (struct ct_api){.tid = ctp_tid(), .begin_ns = t0, .end_ns = t0, .corr = i};
  ctp_emit(&r);
  first_ns[i] = ctp_now_ns() - t0;
  return NULL;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* firstcall / firstburst: n threads' first records; prints median, p90, max (us). */
static int run_first(unsigned n, unsigned gap_us, int burst) {
  pthread_t th[FIRST_MAX];
  if (n > FIRST_MAX) n = FIRST_MAX;
  first_burst = burst;
  if (burst) pthread_barrier_init(&first_barrier, NULL, n);
  ctp_ring_pool_want(); /* as the hooks do once the runtime looks up the driver */
  for (int i = 0; i < 1000 && ctp_ring_pool_ready() < ctp_cfg.ring_pool; i++) {
    struct timespec ms = {0, 1000000}; /* a program's threads start after the tracer's */
    nanosleep(&ms, NULL);
  }
  for (unsigned i = 0; i < n; i++) {
    if (!burst) {
      struct timespec gap = {gap_us / 1000000, (long)(gap_us % 1000000) * 1000};
      nanosleep(&gap, NULL);
    }
    pthread_create(&th[i], NULL, first_call_main, (void *)(uintptr_t)i);
    if (!burst) pthread_join(th[i], NULL);
  }
  if (burst)
    for (unsigned i = 0; i < n; i++) pthread_join(th[i], NULL);
  if (getenv("CORE_BENCH_EACH"))
    for (unsigned i = 0; i < n; i++) printf("%llu ", (unsigned long long)first_ns[i] / 1000);
  qsort(first_ns, n, sizeof first_ns[0], cmp_u64);
  printf("first_us median %.1f p90 %.1f max %.1f (n %u, pool now %u)\n", first_ns[n / 2] / 1e3,
         first_ns[n * 9 / 10] / 1e3, first_ns[n - 1] / 1e3, n, ctp_ring_pool_ready());
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3 || argc > 4 || !ctp_start()) {
    fprintf(stderr, "usage: core_bench emit|writer|bytes N [JITTER%%] | firstcall N GAP_US | firstburst N\n");
    return 2;
  }
  unsigned long long n = strtoull(argv[2], NULL, 10);
  if (!strcmp(argv[1], "firstcall") && argc == 4)
    return run_first((unsigned)n, (unsigned)strtoul(argv[3], NULL, 10), 0);
  if (!strcmp(argv[1], "firstburst")) return run_first((unsigned)n, 0, 1);
  if (argc == 4) jitter_percent = strtoull(argv[3], NULL, 10);
  struct triple_state s;
  init_state(&s);
  if (!strcmp(argv[1], "emit")) {
    double best = 1e30;
    for (int round = 0; round < 20; round++) {
      wait_drained();
      uint64_t t0 = ctp_now_ns();
      for (unsigned long long i = 0; i < n; i++) emit_triple(&s);
      uint64_t t1 = ctp_now_ns();
      double ns = (double)(t1 - t0) / (3.0 * (double)n);
      if (ns < best) best = ns;
    }
    printf("emit_ns %.2f\ndrops %llu\n", best, (unsigned long long)my_drops());
    return 0;
  }
  if (!strcmp(argv[1], "writer")) {
    wait_drained();
    uint64_t t0 = ctp_now_ns();
    for (unsigned long long i = 0; i < n; i++) emit_triple(&s);
    uint64_t t1 = ctp_now_ns();
    wait_drained();
    uint64_t t2 = ctp_now_ns();
    uint64_t taken, cpu;
    ctp_writer_stats(&taken, &cpu);
    printf("producer_records_per_s %.0f\nwall_records_per_s %.0f\n"
           "writer_cpu_records_per_s %.0f\ndrops %llu\n",
           3e9 * (double)n / (double)(t1 - t0), 3e9 * (double)n / (double)(t2 - t0),
           cpu ? 1e9 * (double)taken / (double)cpu : 0.0, (unsigned long long)my_drops());
    return 0;
  }
  if (!strcmp(argv[1], "bytes")) {
    for (unsigned long long i = 0; i < n; i++) {
      emit_triple(&s);
      if (i % 10000 == 9999) wait_drained();
    }
    printf("triples %llu\ndrops %llu\n", n, (unsigned long long)my_drops());
    return 0;
  }
  return 2;
}
