/* threads: THREADS pthreads, each with its own non-blocking stream, each
 * launching thread_work LAUNCHES times, then filling a buffer with its own id
 * (cudaMemsetAsync), copying it back into pinned memory and synchronising its
 * stream. The main thread checks every thread's bytes. */
#include "workload.h"
#include <pthread.h>

#define WORK_US 20
#define BUFFER_BYTES 4096

/* Per-thread work: lasts `ns` on a real GPU. */
__global__ void thread_work(long long ns) { wl_gpu_spin_ns(ns); }

/* What one thread is told and what it reports back. */
typedef struct {
  int id;
  int launches;
  unsigned char *pinned;
} thread_job;

/* Body of each thread: launches, fill, copy back, stream synchronise. Exits the
 * process (status 1) on a CUDA error. */
static void *run_thread(void *argument)
{
  thread_job *job = (thread_job *)argument;
  cudaStream_t stream;
  unsigned char *device;
  WL_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  WL_CHECK(cudaMalloc((void **)&device, BUFFER_BYTES));
  for (int i = 0; i < job->launches; i++) {
    thread_work<<<1, 32, 0, stream>>>(WORK_US * 1000ll);
    WL_CHECK_LAUNCH();
  }
  WL_CHECK(cudaMemsetAsync(device, job->id + 1, BUFFER_BYTES, stream));
  WL_CHECK(cudaMemcpyAsync(job->pinned, device, BUFFER_BYTES, cudaMemcpyDeviceToHost, stream));
  WL_CHECK(cudaStreamSynchronize(stream));
  WL_CHECK(cudaFree(device));
  WL_CHECK(cudaStreamDestroy(stream));
  return NULL;
}

int main(int argc, char **argv)
{
  wl_prog = "threads";
  wl_arg args[] = {{"THREADS", 1, 64, 4}, {"LAUNCHES", 1, 1000000, 100}};
  wl_parse_args(argc, argv, args, 2);
  const int count = (int)args[0].value, launches = (int)args[1].value;

  WL_CHECK(cudaFree(0)); /* create the context before the threads race to */
  pthread_t *threads = (pthread_t *)wl_alloc(count * sizeof(pthread_t));
  thread_job *jobs = (thread_job *)wl_alloc(count * sizeof(thread_job));
  long long start_ns = wl_now_ns();
  for (int t = 0; t < count; t++) {
    jobs[t].id = t;
    jobs[t].launches = launches;
    WL_CHECK(cudaMallocHost((void **)&jobs[t].pinned, BUFFER_BYTES));
    memset(jobs[t].pinned, 0, BUFFER_BYTES);
    int err = pthread_create(&threads[t], NULL, run_thread, &jobs[t]);
    if (err) {
      fprintf(stderr, "threads: pthread_create: %s\n", strerror(err));
      return 1;
    }
  }
  for (int t = 0; t < count; t++)
    pthread_join(threads[t], NULL);
  long long elapsed_ns = wl_now_ns() - start_ns;

  int failures = 0;
  for (int t = 0; t < count; t++) {
    failures += !wl_bytes_are(jobs[t].pinned, BUFFER_BYTES, t + 1, "a thread's copy");
    WL_CHECK(cudaFreeHost(jobs[t].pinned));
  }
  printf("threads: THREADS=%d launches=%d each: %.3f ms host time; per-thread copy check: %s\n", count,
         launches, elapsed_ns / 1e6, failures ? "FAILED" : "ok");
  free(threads), free(jobs);
  return failures ? 1 : 0;
}
