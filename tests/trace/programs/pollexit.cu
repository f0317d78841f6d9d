// Spins of queries left open when a thread or the process exits, and spins that an NVTX
// range's push or pop cuts (test_pollexit.py), simulated GPU, shared cudart.
//
// `pollexit exit N`: px_long0/1/2 (planted long: they outlast the run) on streams S0, S1,
//   S2, an event recorded after each. Thread A polls e0 with cudaEventQuery N times and
//   returns (exits mid-spin, no other call); main joins it. Thread W polls S1 with the
//   driver's cuStreamQuery N + 1 times, then sleeps in pause() (alive, mid-spin). Main
//   polls e2 N + 2 times and returns from main (the process exits with two spins open).
//   Prints "pollexit: exit ok TA TW TM" (the three threads' tids); exit status 1 when a
//   poll answered anything but not ready.
// `pollexit nvtx`: px_long0 on S0 and px_long1 on S1 (planted 300 and 400 ms), events e0,
//   e1; cudaEventQuery on e0, e1, e0, ... 3 rounds; nvtxRangePushA("inside"); 4 rounds;
//   nvtxRangePop(); then on until both are ready. Prints "pollexit: nvtx ok A0 A1" (the
//   not-ready answers after the pop, per event); exit status 1 when an answer before the
//   pop was not "not ready", or any was an error.
// `pollexit pause` (record with --capture=profiler): cudaProfilerStart; px_long0 (planted
//   1 s) on S0, event e0; thread T polls e0 3 times (not ready); main calls
//   cudaProfilerStop; T polls e0 4 times (not ready, tracing paused); main calls
//   cudaProfilerStart; T polls e0 until ready and exits. Prints "pollexit: pause ok A"
//   (T's not-ready answers after the restart).
// `pollexit quiet` (record with --capture=profiler): as `pause`, but T does not poll while
//   tracing is paused: 3 polls of e0 (not ready), main calls cudaProfilerStop then
//   cudaProfilerStart, T polls e0 until ready. Prints "pollexit: quiet ok A".
// `pollexit steps`: 3 NVTX "step" ranges, each launching px_long0/1/2 (planted 5, 8 and
//   11 ms) on S0, S1, S2 with an event after each, then polling the three events in turn
//   until all are ready. Prints "pollexit: steps ok".
// `pollexit abort` (record with --capture=profiler): px_long0 on S0 and px_long1 on S1
//   (planted long), events e0, e1. Thread T polls e0 3 times (cudaEventQuery), thread U
//   polls S1 3 times through the driver's cuStreamQuery (not ready); main calls
//   cudaProfilerStop; while paused T launches px_long2 on S2 (<<<>>>) and U records e2 on
//   S2 through the driver's cuEventRecord, then both sleep; thread V polls e1 3 times
//   (cudaEventQuery) and, while paused, begins and ends a capture on a stream of its own
//   through the driver (cuStreamBeginCapture_v2, cuStreamEndCapture); main prints
//   "pollexit: abort ok TT TU TV" and calls abort() (no exit flush: only what the
//   threads' buffers hold is written).
// `pollexit duration` (record with --duration 1; px_long0 planted 2 s): main polls e0 until
//   ready, across the end of the recording. Prints "pollexit: duration ok A" (A: the
//   not-ready answers).
// `pollexit race THREADS LOG`: THREADS threads each launch px_long0 on a stream of their
//   own (planted short), record an event after it and poll it until ready, over and over;
//   each writes the return time (CLOCK_MONOTONIC ns) and the answer of every poll to its
//   part of LOG (a file mapped shared: what they write survives the process). Main waits
//   until every thread has ended 3 spins, prints "pollexit: race ok TID..." and returns
//   from main while they poll. LOG: per thread 1 MiB: [tid, polls logged, then (time,
//   answer) pairs]; a thread stops polling (sleeps) when its part is full.
#include <cuda.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "driver_proc.h"

#define CHECK(call)                                                                \
  do {                                                                             \
    int e_ = (int)(call);                                                          \
    if (e_) {                                                                      \
      fprintf(stderr, "pollexit: %s failed: %d (line %d)\n", #call, e_, __LINE__); \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

__global__ void px_long0(float *x) { x[threadIdx.x] *= 2.0f; }
__global__ void px_long1(float *x) { x[threadIdx.x] *= 3.0f; }
__global__ void px_long2(float *x) { x[threadIdx.x] *= 4.0f; }

typedef CUresult (*stream_query_fn)(CUstream);

static cudaStream_t s[3];
static cudaEvent_t e[3];
static long polls_n;
static long tid_a, tid_w;
static sem_t w_done;

static long my_tid(void) { return (long)syscall(SYS_gettid); }

/* Thread A: polls_n not-ready polls of e0, then returns mid-spin. */
static void *spin_then_exit(void *arg) {
  (void)arg;
  tid_a = my_tid();
  for (long i = 0; i < polls_n; i++) CHECK(cudaEventQuery(e[0]) != cudaErrorNotReady);
  return NULL;
}

/* Thread W: polls_n + 1 not-ready polls of S1 through the driver, then sleeps mid-spin. */
static void *spin_then_sleep(void *arg) {
  stream_query_fn query = (stream_query_fn)arg;
  tid_w = my_tid();
  for (long i = 0; i < polls_n + 1; i++) CHECK(query((CUstream)s[1]) != CUDA_ERROR_NOT_READY);
  sem_post(&w_done);
  for (;;) pause();
  return NULL;
}

static sem_t t_polled, main_paused, main_resumed;
static long pause_after;
static int quiet; /* `quiet`: T does not poll while tracing is paused */

/* Thread T of `pause`: 3 polls of e0, 4 more while main has tracing paused, then on. */
static void *spin_over_pause(void *arg) {
  (void)arg;
  for (int i = 0; i < 3; i++) CHECK(cudaEventQuery(e[0]) != cudaErrorNotReady);
  sem_post(&t_polled);
  while (sem_wait(&main_paused) != 0) {
  }
  for (int i = 0; i < 4 && !quiet; i++) CHECK(cudaEventQuery(e[0]) != cudaErrorNotReady);
  sem_post(&t_polled);
  while (sem_wait(&main_resumed) != 0) {
  }
  cudaError_t r;
  while ((r = cudaEventQuery(e[0])) == cudaErrorNotReady) pause_after++;
  CHECK(r);
  return NULL;
}

typedef CUresult (*event_record_fn)(CUevent, CUstream);
static sem_t abort_polled, abort_paused, abort_done;
static long tid_t, tid_u;

/* Thread T of `abort`: 3 polls of e0, then a launch while tracing is paused. */
static void *abort_spin_launch(void *arg) {
  float *x = (float *)arg;
  tid_t = my_tid();
  for (int i = 0; i < 3; i++) CHECK(cudaEventQuery(e[0]) != cudaErrorNotReady);
  sem_post(&abort_polled);
  while (sem_wait(&abort_paused) != 0) {
  }
  px_long2<<<1, 32, 0, s[2]>>>(x + 96);
  sem_post(&abort_done);
  for (;;) pause();
  return NULL;
}

typedef CUresult (*begin_capture_fn)(CUstream, CUstreamCaptureMode);
typedef CUresult (*end_capture_fn)(CUstream, CUgraph *);
static long tid_v;

/* Thread V of `abort`: 3 polls of e1, then a capture begun and ended through the driver
 * on a stream of its own while tracing is paused (calls kept track of while paused). */
static void *abort_spin_capture(void *arg) {
  (void)arg;
  tid_v = my_tid();
  begin_capture_fn begin = (begin_capture_fn)driver_proc("cuStreamBeginCapture", 10010, 0);
  end_capture_fn end = (end_capture_fn)driver_proc("cuStreamEndCapture", 10000, 0);
  cudaStream_t mine;
  CHECK(!begin || !end || cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking));
  for (int i = 0; i < 3; i++) CHECK(cudaEventQuery(e[1]) != cudaErrorNotReady);
  sem_post(&abort_polled);
  while (sem_wait(&abort_paused) != 0) {
  }
  CUgraph graph;
  CHECK(begin((CUstream)mine, CU_STREAM_CAPTURE_MODE_RELAXED));
  CHECK(end((CUstream)mine, &graph));
  sem_post(&abort_done);
  for (;;) pause();
  return NULL;
}

/* Thread U of `abort`: 3 polls of S1 through the driver, then a driver event record
 * while tracing is paused. */
static void *abort_spin_record(void *arg) {
  (void)arg;
  tid_u = my_tid();
  stream_query_fn query = (stream_query_fn)driver_proc("cuStreamQuery", 2000, 0);
  event_record_fn record = (event_record_fn)driver_proc("cuEventRecord", 2000, 0);
  CHECK(!query || !record);
  for (int i = 0; i < 3; i++) CHECK(query((CUstream)s[1]) != CUDA_ERROR_NOT_READY);
  sem_post(&abort_polled);
  while (sem_wait(&abort_paused) != 0) {
  }
  CHECK(record((CUevent)e[2], (CUstream)s[2]));
  sem_post(&abort_done);
  for (;;) pause();
  return NULL;
}

#define RACE_PART (1u << 17) /* 8-byte words per thread in the log: 1 MiB */
static uint64_t *race_log;
static int race_threads;
static int race_spins[64];

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A thread of `race`: launch, record, poll until ready, forever; every poll logged. */
static void *race_thread(void *arg) {
  long me = (long)arg;
  uint64_t *part = race_log + (size_t)me * RACE_PART;
  cudaStream_t st;
  cudaEvent_t ev;
  float *x;
  CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  CHECK(cudaMalloc(&x, 32 * sizeof *x));
  __atomic_store_n(&part[0], (uint64_t)my_tid(), __ATOMIC_RELEASE);
  uint64_t n = 0;
  for (;;) {
    px_long0<<<1, 32, 0, st>>>(x);
    CHECK(cudaEventRecord(ev, st));
    cudaError_t r;
    do {
      if (2 + 2 * n + 2 > RACE_PART)
        for (;;) pause(); /* full */
      r = cudaEventQuery(ev);
      part[2 + 2 * n] = mono_ns();
      part[2 + 2 * n + 1] = (uint64_t)r;
      __atomic_store_n(&part[1], ++n, __ATOMIC_RELEASE);
    } while (r == cudaErrorNotReady);
    CHECK(r);
    __atomic_add_fetch(&race_spins[me], 1, __ATOMIC_RELEASE);
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc == 4 && argv[1][0] == 'r') {
    race_threads = atoi(argv[2]);
    CHECK(race_threads < 1 || race_threads > 64);
    size_t bytes = (size_t)race_threads * RACE_PART * sizeof(uint64_t);
    int fd = open(argv[3], O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd < 0 || ftruncate(fd, (off_t)bytes) != 0);
    race_log = (uint64_t *)mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(race_log == MAP_FAILED);
    pthread_t t[64];
    for (long i = 0; i < race_threads; i++)
      CHECK(pthread_create(&t[i], NULL, race_thread, (void *)i));
    for (int i = 0; i < race_threads; i++)
      while (__atomic_load_n(&race_spins[i], __ATOMIC_ACQUIRE) < 3) usleep(1000);
    printf("pollexit: race ok");
    for (int i = 0; i < race_threads; i++)
      printf(" %llu", (unsigned long long)race_log[(size_t)i * RACE_PART]);
    printf("\n");
    fflush(stdout);
    return 0; /* the threads poll on while the process exits */
  }
  if (argc == 2 && (argv[1][0] == 'p' || argv[1][0] == 'q' || argv[1][0] == 'a'))
    CHECK(cudaProfilerStart());
  float *x;
  CHECK(cudaMalloc(&x, 1024 * sizeof *x));
  for (int i = 0; i < 3; i++) {
    CHECK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
    CHECK(cudaEventCreateWithFlags(&e[i], cudaEventDisableTiming));
  }
  px_long0<<<1, 32, 0, s[0]>>>(x + 32);
  CHECK(cudaEventRecord(e[0], s[0]));
  px_long1<<<1, 32, 0, s[1]>>>(x + 64);
  CHECK(cudaEventRecord(e[1], s[1]));
  if (argc == 3 && argv[1][0] == 'e') {
    px_long2<<<1, 32, 0, s[2]>>>(x + 96);
    CHECK(cudaEventRecord(e[2], s[2]));
    polls_n = atol(argv[2]);
    stream_query_fn query = (stream_query_fn)driver_proc("cuStreamQuery", 2000, 0);
    CHECK(!query || polls_n < 1 || sem_init(&w_done, 0, 0));
    pthread_t a, w;
    CHECK(pthread_create(&a, NULL, spin_then_exit, NULL));
    CHECK(pthread_join(a, NULL));
    CHECK(pthread_create(&w, NULL, spin_then_sleep, (void *)query));
    while (sem_wait(&w_done) != 0) {
    }
    for (long i = 0; i < polls_n + 2; i++) CHECK(cudaEventQuery(e[2]) != cudaErrorNotReady);
    printf("pollexit: exit ok %ld %ld %ld\n", tid_a, tid_w, my_tid());
    fflush(stdout);
    return 0; /* mid-spin: main's and W's spins open */
  }
  if (argc == 2 && argv[1][0] == 'n') {
    for (int round = 0; round < 3; round++)
      for (int i = 0; i < 2; i++) CHECK(cudaEventQuery(e[i]) != cudaErrorNotReady);
    nvtxRangePushA("inside");
    for (int round = 0; round < 4; round++)
      for (int i = 0; i < 2; i++) CHECK(cudaEventQuery(e[i]) != cudaErrorNotReady);
    nvtxRangePop();
    long after[2] = {0, 0};
    int done[2] = {0, 0};
    for (int i = 0; !done[0] || !done[1]; i ^= 1) {
      if (done[i]) continue;
      cudaError_t r = cudaEventQuery(e[i]);
      if (r == cudaErrorNotReady) {
        after[i]++;
        continue;
      }
      CHECK(r);
      done[i] = 1;
    }
    CHECK(cudaDeviceSynchronize());
    printf("pollexit: nvtx ok %ld %ld\n", after[0], after[1]);
    return 0;
  }
  if (argc == 2 && argv[1][0] == 's') {
    CHECK(cudaEventQuery(e[0]) == cudaErrorNotReady ? cudaDeviceSynchronize() : cudaSuccess);
    for (int step = 0; step < 3; step++) {
      nvtxRangePushA("step");
      px_long0<<<1, 32, 0, s[0]>>>(x + 32);
      px_long1<<<1, 32, 0, s[1]>>>(x + 64);
      px_long2<<<1, 32, 0, s[2]>>>(x + 96);
      for (int i = 0; i < 3; i++) CHECK(cudaEventRecord(e[i], s[i]));
      int done[3] = {0, 0, 0}, left = 3;
      for (int i = 0; left; i = (i + 1) % 3) {
        if (done[i]) continue;
        cudaError_t r = cudaEventQuery(e[i]);
        if (r == cudaErrorNotReady) continue;
        CHECK(r);
        done[i] = 1;
        left--;
      }
      nvtxRangePop();
    }
    printf("pollexit: steps ok\n");
    return 0;
  }
  if (argc == 2 && (argv[1][0] == 'p' || argv[1][0] == 'q')) {
    quiet = argv[1][0] == 'q';
    CHECK(sem_init(&t_polled, 0, 0) || sem_init(&main_paused, 0, 0) ||
          sem_init(&main_resumed, 0, 0));
    pthread_t t;
    CHECK(pthread_create(&t, NULL, spin_over_pause, NULL));
    while (sem_wait(&t_polled) != 0) {
    }
    CHECK(cudaProfilerStop());
    sem_post(&main_paused);
    while (sem_wait(&t_polled) != 0) {
    }
    CHECK(cudaProfilerStart());
    sem_post(&main_resumed);
    CHECK(pthread_join(t, NULL));
    CHECK(cudaDeviceSynchronize());
    printf("pollexit: %s ok %ld\n", quiet ? "quiet" : "pause", pause_after);
    return 0;
  }
  if (argc == 2 && argv[1][0] == 'a') {
    CHECK(sem_init(&abort_polled, 0, 0) || sem_init(&abort_paused, 0, 0) ||
          sem_init(&abort_done, 0, 0));
    pthread_t tt, tu, tv;
    CHECK(pthread_create(&tt, NULL, abort_spin_launch, x));
    CHECK(pthread_create(&tu, NULL, abort_spin_record, NULL));
    CHECK(pthread_create(&tv, NULL, abort_spin_capture, NULL));
    for (int i = 0; i < 3; i++)
      while (sem_wait(&abort_polled) != 0) {
      }
    CHECK(cudaProfilerStop());
    for (int i = 0; i < 3; i++) sem_post(&abort_paused);
    for (int i = 0; i < 3; i++)
      while (sem_wait(&abort_done) != 0) {
      }
    printf("pollexit: abort ok %ld %ld %ld\n", tid_t, tid_u, tid_v);
    fflush(stdout);
    abort();
  }
  if (argc == 2 && argv[1][0] == 'd') {
    long not_ready = 0;
    cudaError_t r;
    while ((r = cudaEventQuery(e[0])) == cudaErrorNotReady) not_ready++;
    CHECK(r);
    printf("pollexit: duration ok %ld\n", not_ready);
    return 0;
  }
  fprintf(stderr, "usage: pollexit exit N | pollexit abort | pollexit duration | pollexit race THREADS LOG | pollexit nvtx | pollexit pause | pollexit quiet | pollexit steps\n");
  return 2;
}
