/* The execution model: FIFO order, implicit synchronisation of the legacy
 * stream, cross-stream event waits, copy timing and synchronicity, the queue
 * limit, the device clock knobs and the truth log, all checked against the
 * modelled durations (event times are exact up to the 512 ns resolution when the
 * stream is kept busy by a long "blocker" kernel while the test enqueues).
 *
 * usage: drv_timing [model|drift|badenv] */
#include "drv_test.h"

#include <string.h>
#include <unistd.h>

#define TOL_MS 0.002 /* four event ticks */

void simcuda_hint_next_launch_ns(unsigned long long ns);

static CUfunction blocker, slow, mid, plain;

/* Records `a` after a 50 ms blocker on `s`, so that `a` completes when it ends. */
static void busy_then_record(CUstream s, CUevent a)
{
  test_launch(blocker, s);
  CHECK_CU(cuEventRecord(a, s));
}

static void check_fifo(CUstream s, CUevent a, CUevent b)
{
  busy_then_record(s, a);
  test_launch(slow, s);
  CHECK_CU(cuEventRecord(b, s));
  CHECK_RESULT(cuEventQuery(b), CUDA_ERROR_NOT_READY);
  CHECK_RESULT(cuStreamQuery(s), CUDA_ERROR_NOT_READY);
  CHECK_NEAR(test_elapsed_ms(a, b), 1.0, TOL_MS);
  busy_then_record(s, a);
  test_launch(plain, s);
  test_launch(plain, s);
  CHECK_CU(cuEventRecord(b, s));
  CHECK_NEAR(test_elapsed_ms(a, b), 0.014, TOL_MS); /* default=7 */
  CHECK_CU(cuStreamSynchronize(s));
  CHECK_CU(cuStreamQuery(s));
}

static void check_implicit_sync(CUstream blocking, CUstream nonblocking, CUevent x, CUevent y)
{
  /* The legacy stream waits for a blocking stream's work... */
  busy_then_record(blocking, x);
  test_launch(slow, NULL);
  CHECK_CU(cuEventRecord(y, NULL));
  CHECK_NEAR(test_elapsed_ms(x, y), 1.0, TOL_MS);
  /* ...and a blocking stream (the per-thread one too) waits for the legacy stream. */
  busy_then_record(NULL, x);
  test_launch(slow, blocking);
  CHECK_CU(cuEventRecord(y, blocking));
  CHECK_NEAR(test_elapsed_ms(x, y), 1.0, TOL_MS);
  busy_then_record(NULL, x);
  test_launch(slow, CU_STREAM_PER_THREAD);
  CHECK_CU(cuEventRecord(y, CU_STREAM_PER_THREAD));
  CHECK_NEAR(test_elapsed_ms(x, y), 1.0, TOL_MS);
  /* A non-blocking stream is independent of the legacy stream. */
  busy_then_record(nonblocking, x);
  test_launch(slow, NULL);
  CHECK_CU(cuEventRecord(y, NULL));
  CHECK(test_elapsed_ms(x, y) < -40.0f);
  CHECK_CU(cuCtxSynchronize());
}

static void check_event_wait(CUstream s1, CUstream s2, CUevent e, CUevent f)
{
  busy_then_record(s1, e);
  CHECK_CU(cuStreamWaitEvent(s2, e, 0));
  test_launch(slow, s2);
  CHECK_CU(cuEventRecord(f, s2));
  CHECK_NEAR(test_elapsed_ms(e, f), 1.0, TOL_MS);
  CHECK_CU(cuCtxSynchronize());
}

static void check_copies(CUstream s, CUevent a, CUevent b)
{
  const size_t n = 1000000;
  CUdeviceptr d1, d2;
  void *pinned;
  char *pageable = malloc(n);
  CHECK(pageable);
  memset(pageable, 7, n);
  CHECK_CU(cuMemAlloc(&d1, n));
  CHECK_CU(cuMemAlloc(&d2, n));
  CHECK_CU(cuMemAllocHost(&pinned, n));
  /* Pinned: 2 us + 1 MB at 25 GB/s, asynchronous to the host. */
  busy_then_record(s, a);
  CHECK_CU(cuMemcpyHtoDAsync(d1, pinned, n, s));
  CHECK_RESULT(cuStreamQuery(s), CUDA_ERROR_NOT_READY);
  CHECK_CU(cuEventRecord(b, s));
  CHECK_NEAR(test_elapsed_ms(a, b), 0.042, TOL_MS);
  /* Pageable: 2 us + 1 MB at 10 GB/s, and the Async call returns when done. */
  busy_then_record(s, a);
  CHECK_CU(cuMemcpyHtoDAsync(d1, pageable, n, s));
  CHECK_CU(cuStreamQuery(s));
  CHECK_CU(cuEventRecord(b, s)); /* recorded after the call returned: later */
  CHECK(test_elapsed_ms(a, b) >= 0.102 - TOL_MS);
  /* Device to device: 2 us + 1 MB at 1500 GB/s; the synchronous call does not wait. */
  busy_then_record(NULL, a);
  CHECK_CU(cuMemcpyDtoD(d2, d1, n));
  CHECK_RESULT(cuStreamQuery(NULL), CUDA_ERROR_NOT_READY);
  CHECK_CU(cuEventRecord(b, NULL));
  CHECK_NEAR(test_elapsed_ms(a, b), 0.00267, TOL_MS);
  /* A synchronous host copy returns when done. */
  test_launch(blocker, NULL);
  CHECK_CU(cuMemcpyDtoH(pageable, d2, n));
  CHECK_CU(cuStreamQuery(NULL));
  for (size_t i = 0; i < n; i += 4099)
    CHECK(pageable[i] == 7);
  CHECK_CU(cuMemFree(d1));
  CHECK_CU(cuMemFree(d2));
  CHECK_CU(cuMemFreeHost(pinned));
  free(pageable);
}

static void check_queue_limit(CUstream s)
{
  /* 1100 launches of 200 us: the 1025th waits for the first to end, the last one
   * for the 76th, so the loop cannot return before ~76 * 200 us. */
  unsigned long long t0 = test_now_ns();
  for (int i = 0; i < 1100; i++)
    test_launch(mid, s);
  unsigned long long t1 = test_now_ns();
  CHECK(t1 - t0 >= 14000000ull);
  CHECK_CU(cuStreamSynchronize(s));
}

struct host_record {
  volatile int calls;
  unsigned long long at_ns[2];
  CUstream stream_seen;
  CUresult status_seen;
};

static void host_fn(void *data)
{
  struct host_record *r = data;
  r->at_ns[0] = test_now_ns();
  __atomic_add_fetch(&r->calls, 1, __ATOMIC_SEQ_CST);
}

static void stream_callback(CUstream s, CUresult status, void *data)
{
  struct host_record *r = data;
  r->at_ns[1] = test_now_ns();
  r->stream_seen = s;
  r->status_seen = status;
  __atomic_add_fetch(&r->calls, 1, __ATOMIC_SEQ_CST);
}

/* Host functions run after the work before them, in order, on a driver thread,
 * and occupy SIMCUDA_HOST_FN_US (default 5 us) of their stream. */
static void check_host_functions(CUstream s, CUevent a, CUevent b)
{
  struct host_record r = {0};
  unsigned long long t0 = test_now_ns();
  busy_then_record(s, a);
  CHECK_CU(cuLaunchHostFunc(s, host_fn, &r));
  CHECK_CU(cuStreamAddCallback(s, stream_callback, &r, 0));
  CHECK_CU(cuEventRecord(b, s));
  CHECK(r.calls == 0);
  CHECK_NEAR(test_elapsed_ms(a, b), 0.010, TOL_MS);
  for (int i = 0; i < 5000 && r.calls < 2; i++)
    usleep(1000);
  CHECK(r.calls == 2);
  CHECK(r.at_ns[0] >= t0 + 50000000ull && r.at_ns[1] >= r.at_ns[0]);
  CHECK(r.stream_seen == s && r.status_seen == CUDA_SUCCESS);
  CHECK_RESULT(cuLaunchHostFunc(s, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
  CHECK_RESULT(cuStreamAddCallback(s, stream_callback, &r, 1), CUDA_ERROR_INVALID_VALUE);
}

/* Every line of the truth log is well formed, FIFO per stream, the "slow"
 * kernels last exactly their modelled 1000 us and the copies of check_copies
 * their modelled 42 us (pinned), 102 us (pageable) and 2.667 us (on the device). */
static void check_truth_log(const char *path)
{
  FILE *f = fopen(path, "r");
  CHECK(f);
  char kind[32], name[256];
  unsigned long handle, last_handle[64] = {0};
  unsigned long long enq, start, end, last_end[64] = {0};
  int device, lines = 0, slow_lines = 0, streams = 0, pinned = 0, pageable = 0, on_device = 0;
  while (fscanf(f, "%31s %255s %lx %d %llu %llu %llu", kind, name, &handle, &device, &enq, &start, &end) == 7) {
    lines++;
    CHECK(start >= enq && end >= start && device == 0);
    CHECK(!strcmp(kind, "kernel") || !strcmp(kind, "memcpy") || !strcmp(kind, "memset"));
    if (!strcmp(name, "slow")) {
      slow_lines++;
      CHECK(end - start == 1000000ull);
    }
    if (!strcmp(kind, "memcpy")) {
      pinned += !strcmp(name, "HtoD") && end - start == 42000ull;
      pageable += end - start == 102000ull;
      on_device += !strcmp(name, "DtoD") && end - start == 2667ull;
    }
    int i = 0;
    while (i < streams && last_handle[i] != handle)
      i++;
    if (i == streams && streams < 64)
      last_handle[streams++] = handle;
    if (i < 64) {
      CHECK(start >= last_end[i]);
      last_end[i] = end;
    }
  }
  fclose(f);
  CHECK(lines >= 1100 && slow_lines == 7);
  CHECK(pinned == 1 && pageable == 2 && on_device == 1);
}

int main(int argc, char **argv)
{
  const char *mode = argc > 1 ? argv[1] : "model";
  char truth[] = "/tmp/simcuda_truth_XXXXXX";
  if (!strcmp(mode, "badenv")) {
    setenv("SIMCUDA_KERNEL_US", "default=abc", 1);
    setenv("SIMCUDA_LAUNCH_US", "-3", 1);
    char errpath[] = "/tmp/simcuda_err_XXXXXX";
    int fd = mkstemp(errpath);
    CHECK(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    test_init();
    fflush(stderr);
    dup2(saved, 2);
    FILE *f = fopen(errpath, "r");
    char line[256];
    int complaints = 0;
    while (f && fgets(line, sizeof line, f))
      complaints += strstr(line, "simcuda: ignoring") != NULL;
    if (f)
      fclose(f);
    unlink(errpath);
    CHECK(complaints == 2);
    /* The defaults stay in force: a kernel lasts 5 us. */
    CUevent a, b;
    CHECK_CU(cuEventCreate(&a, 0));
    CHECK_CU(cuEventCreate(&b, 0));
    simcuda_hint_next_launch_ns(50000000ull);
    test_launch(test_kernel("anything"), NULL);
    CHECK_CU(cuEventRecord(a, NULL));
    test_launch(test_kernel("other"), NULL);
    CHECK_CU(cuEventRecord(b, NULL));
    CHECK_NEAR(test_elapsed_ms(a, b), 0.005, TOL_MS);
    puts("drv_timing badenv ok");
    return 0;
  }
  setenv("SIMCUDA_KERNEL_US", "default=7,blocker=50000,slow=1000,mid=200,at::native::reduce_kernel=300", 1);
  if (!strcmp(mode, "drift")) {
    setenv("SIMCUDA_CLOCK_DRIFT_PPM", "2000", 1);
    setenv("SIMCUDA_CLOCK_OFFSET_US", "-123456", 1);
  } else {
    int fd = mkstemp(truth);
    CHECK(fd >= 0);
    close(fd);
    setenv("SIMCUDA_TRUTH_FILE", truth, 1);
  }
  test_init();
  blocker = test_kernel("blocker");
  slow = test_kernel("slow");
  mid = test_kernel("mid");
  plain = test_kernel("plain");
  CUevent a, b;
  CHECK_CU(cuEventCreate(&a, 0));
  CHECK_CU(cuEventCreate(&b, CU_EVENT_BLOCKING_SYNC));
  CUstream blocking, nonblocking;
  CHECK_CU(cuStreamCreate(&blocking, CU_STREAM_DEFAULT));
  CHECK_CU(cuStreamCreate(&nonblocking, CU_STREAM_NON_BLOCKING));
  if (!strcmp(mode, "drift")) {
    /* 1000 us of host time read on a clock running 2000 ppm fast. */
    busy_then_record(nonblocking, a);
    test_launch(slow, nonblocking);
    CHECK_CU(cuEventRecord(b, nonblocking));
    CHECK_NEAR(test_elapsed_ms(a, b), 1.002, TOL_MS);
    puts("drv_timing drift ok");
    return 0;
  }
  check_fifo(nonblocking, a, b);
  check_fifo(NULL, a, b);
  /* A pattern may match the demangled name (at::native::reduce_kernel()). */
  busy_then_record(nonblocking, a);
  test_launch(test_kernel("_ZN2at6native13reduce_kernelEv"), nonblocking);
  CHECK_CU(cuEventRecord(b, nonblocking));
  CHECK_NEAR(test_elapsed_ms(a, b), 0.300, TOL_MS);
  check_implicit_sync(blocking, nonblocking, a, b);
  check_event_wait(blocking, nonblocking, a, b);
  check_copies(nonblocking, a, b);
  check_queue_limit(nonblocking);
  check_host_functions(blocking, a, b);
  CHECK_CU(cuCtxSynchronize());
  check_truth_log(truth);
  unlink(truth);
  puts("drv_timing ok");
  return 0;
}
