/*
 * A storm of fork children for test_forkstorm.py (simulated GPU, shared cudart).
 *
 * usage: forkstorm IDLE BUSY
 *   forks IDLE children that make no CUDA call and BUSY children that each make one
 *   cudaMalloc, launch fs_kernel once and synchronise; every child then waits until
 *   the parent has forked them all (a pipe the parent closes), and they all exit()
 *   at once. The parent, which touched no CUDA before, then launches fs_kernel once
 *   itself and prints "forkstorm: IDLE idle, BUSY busy children; F failed".
 *   Exit status 0 when every child exited 0 and every CUDA call succeeded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_runtime.h>

__global__ void fs_kernel(int *x) { x[threadIdx.x] += 1; }

/* One cudaMalloc, one launch, one synchronisation: 0 when all succeeded. */
static int one_launch(void) {
  int *device = NULL;
  if (cudaMalloc((void **)&device, 128) != cudaSuccess) return 1;
  fs_kernel<<<1, 32>>>(device);
  return cudaGetLastError() != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: forkstorm IDLE BUSY\n");
    return 2;
  }
  int idle = atoi(argv[1]), busy = atoi(argv[2]);
  int gate[2];
  if (pipe(gate) < 0) return 1;
  fflush(stdout);
  for (int i = 0; i < idle + busy; i++) {
    pid_t child = fork();
    if (child < 0) return 1;
    if (child == 0) {
      close(gate[1]);
      int bad = i >= idle ? one_launch() : 0;
      char c;
      while (read(gate[0], &c, 1) > 0) {} /* until the parent closes its end */
      exit(bad); /* not _exit: the tracer finishes a file at exit */
    }
  }
  close(gate[1]); /* all forked: the children exit together */
  int failed = 0, status = 0;
  while (wait(&status) > 0) failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  failed += one_launch();
  printf("forkstorm: %d idle, %d busy children; %d failed\n", idle, busy, failed);
  return failed != 0;
}
