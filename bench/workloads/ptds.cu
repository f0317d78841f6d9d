/* ptds: built with `--default-stream per-thread`, so stream 0 means each
 * thread's own default stream and the runtime entry points used are the
 * _ptsz/_ptds forms (__cudaLaunchKernel_ptsz, cudaMemcpy_ptds, ...). THREADS
 * threads each launch ptds_work LAUNCHES times on their default stream, fill a
 * buffer with their id, copy it back and synchronise; main checks the bytes. */
#include "workload.h"
#include <pthread.h>

#define WORK_US 20
#define BUFFER_BYTES 4096

/* Per-thread default-stream work: lasts `ns` on a real GPU. */
__global__ void ptds_work(long long ns) { wl_gpu_spin_ns(ns); }

/* What one thread is told and what it copies back. */
typedef struct {
  int id;
  int launches;
  unsigned char host[BUFFER_BYTES];
} ptds_job;

/* Body of each thread; exits the process (status 1) on a CUDA error. */
static void *run_thread(void *argument)
{
  ptds_job *job = (ptds_job *)argument;
  unsigned char *device;
  WL_CHECK(cudaMalloc((void **)&device, BUFFER_BYTES));
  for (int i = 0; i < job->launches; i++) {
    ptds_work<<<1, 32>>>(WORK_US * 1000ll);
    WL_CHECK_LAUNCH();
  }
  WL_CHECK(cudaMemset(device, job->id + 1, BUFFER_BYTES));
  WL_CHECK(cudaMemcpy(job->host, device, BUFFER_BYTES, cudaMemcpyDeviceToHost));
  WL_CHECK(cudaStreamSynchronize(0));
  WL_CHECK(cudaFree(device));
  return NULL;
}

int main(int argc, char **argv)
{
  wl_prog = "ptds";
  wl_arg args[] = {{"THREADS", 1, 64, 2}, {"LAUNCHES", 1, 1000000, 50}};
  wl_parse_args(argc, argv, args, 2);
  const int count = (int)args[0].value, launches = (int)args[1].value;

  WL_CHECK(cudaFree(0));
  pthread_t *threads = (pthread_t *)wl_alloc(count * sizeof(pthread_t));
  ptds_job *jobs = (ptds_job *)wl_alloc(count * sizeof(ptds_job));
  for (int t = 0; t < count; t++) {
    jobs[t].id = t;
    jobs[t].launches = launches;
    memset(jobs[t].host, 0, BUFFER_BYTES);
    int err = pthread_create(&threads[t], NULL, run_thread, &jobs[t]);
    if (err) {
      fprintf(stderr, "ptds: pthread_create: %s\n", strerror(err));
      return 1;
    }
  }
  for (int t = 0; t < count; t++)
    pthread_join(threads[t], NULL);
  WL_CHECK(cudaDeviceSynchronize());

  int failures = 0;
  for (int t = 0; t < count; t++)
    failures += !wl_bytes_are(jobs[t].host, BUFFER_BYTES, t + 1, "a thread's copy");
  printf("ptds: THREADS=%d launches=%d each on the per-thread default stream; copy check: %s\n", count,
         launches, failures ? "FAILED" : "ok");
  free(threads), free(jobs);
  return failures ? 1 : 0;
}
