/* hk_ptsz: built with --default-stream per-thread, so that its launches, copies,
 * sets and syncs go through the _ptsz / _ptds entry points and stream 0 is each
 * thread's own default stream. Two threads, each: N launches of k_pt on stream 0,
 * a memset and a copy on stream 0, a sync. Prints what it observed. */
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

__global__ void k_pt(int v) {}

struct job {
  int n, failures;
  unsigned char first;
};

static void *worker(void *arg) {
  struct job *j = (struct job *)arg;
  unsigned char *dev, host[4096];
  if (cudaMalloc((void **)&dev, sizeof host) != cudaSuccess) {
    j->failures++;
    return NULL;
  }
  for (int i = 0; i < j->n; i++) {
    k_pt<<<2, 64>>>(i);
    if (cudaGetLastError() != cudaSuccess) j->failures++;
  }
  if (cudaMemsetAsync(dev, 0x3c, sizeof host, 0) != cudaSuccess) j->failures++;
  if (cudaMemcpy(host, dev, sizeof host, cudaMemcpyDeviceToHost) != cudaSuccess) j->failures++;
  if (cudaStreamSynchronize(0) != cudaSuccess) j->failures++;
  j->first = host[0];
  cudaFree(dev);
  return NULL;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 10;
  if (cudaFree(0) != cudaSuccess) return 1;
  pthread_t t[2];
  struct job jobs[2] = {{n, 0, 0}, {n, 0, 0}};
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, &jobs[i]);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  printf("ptsz: 2 threads x %d launches, failures %d %d, bytes %d %d\n", n, jobs[0].failures,
         jobs[1].failures, jobs[0].first, jobs[1].first);
  return jobs[0].failures + jobs[1].failures != 0;
}
