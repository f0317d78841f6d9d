/*
 * Concurrency check for test_nvtx_stress: THREADS threads each run ROUNDS rounds of
 *   push "s_outer" (depth 0), push "s_inner" (depth 1), start "s_cross", pop, pop
 * and publish the start/end id; after a barrier each thread ends the ROUNDS ids
 * of its neighbour ((t + 1) % THREADS), so every start/end range ends on another
 * thread while the others keep the table busy. All of it runs twice, with fresh
 * threads the second time (they reuse the per-thread states of the first batch).
 *
 * Usage: nvtx_stress THREADS ROUNDS (at most 16 threads). Exit 3 when a level NVTX
 * returned was wrong.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <nvtx3/nvToolsExt.h>

#define MAX_THREADS 16

static int threads, rounds;
static nvtxRangeId_t *ids; /* [thread][round] */
static pthread_barrier_t barrier;
static int wrong_levels;

static void *run(void *arg) {
  int t = (int)(long)arg;
  for (int r = 0; r < rounds; r++) {
    int a = nvtxRangePushA("s_outer");
    int b = nvtxRangePushA("s_inner");
    ids[t * rounds + r] = nvtxRangeStartA("s_cross");
    int c = nvtxRangePop();
    int d = nvtxRangePop();
    if (a != 0 || b != 1 || c != 1 || d != 0) __atomic_add_fetch(&wrong_levels, 1, __ATOMIC_RELAXED);
  }
  pthread_barrier_wait(&barrier);
  int neighbour = (t + 1) % threads;
  for (int r = 0; r < rounds; r++) nvtxRangeEnd(ids[neighbour * rounds + r]);
  return NULL;
}

/* Runs one batch of threads; returns 0 when all were created and joined. */
static int run_batch(void) {
  pthread_t tid[MAX_THREADS];
  if (pthread_barrier_init(&barrier, NULL, (unsigned)threads) != 0) return -1;
  for (int t = 0; t < threads; t++)
    if (pthread_create(&tid[t], NULL, run, (void *)(long)t) != 0) return -1;
  for (int t = 0; t < threads; t++) pthread_join(tid[t], NULL);
  pthread_barrier_destroy(&barrier);
  return 0;
}

int main(int argc, char **argv) {
  threads = argc > 1 ? atoi(argv[1]) : 4;
  rounds = argc > 2 ? atoi(argv[2]) : 1000;
  if (threads < 2 || threads > MAX_THREADS || rounds < 1) {
    fprintf(stderr, "nvtx_stress: THREADS must be 2..16 and ROUNDS positive\n");
    return 2;
  }
  ids = calloc((size_t)threads * (size_t)rounds, sizeof *ids);
  if (!ids) return 2;
  if (run_batch() != 0 || run_batch() != 0) return 2;
  free(ids);
  if (wrong_levels) {
    fprintf(stderr, "nvtx_stress: %d rounds saw wrong levels\n", wrong_levels);
    return 3;
  }
  return 0;
}
