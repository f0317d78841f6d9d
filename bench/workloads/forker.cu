/* forker: forks before touching CUDA (a CUDA context does not survive fork),
 * then parent and child each launch fork_work LAUNCHES times, fill a buffer
 * with their own value and check it. The parent waits for the child and fails
 * when the child did. For testing that a tracer follows child processes. */
#include "workload.h"
#include <sys/wait.h>
#include <unistd.h>

#define WORK_US 10
#define BUFFER_BYTES 4096

/* Work done by both processes: lasts `ns` on a real GPU. */
__global__ void fork_work(long long ns) { wl_gpu_spin_ns(ns); }

/* The CUDA part each process runs; returns 0 when its copy check passed. */
static int run_process(const char *who, int launches, unsigned char fill)
{
  unsigned char *device, host[BUFFER_BYTES];
  WL_CHECK(cudaMalloc((void **)&device, BUFFER_BYTES));
  for (int i = 0; i < launches; i++) {
    fork_work<<<1, 1>>>(WORK_US * 1000ll);
    WL_CHECK_LAUNCH();
  }
  WL_CHECK(cudaMemset(device, fill, BUFFER_BYTES));
  WL_CHECK(cudaMemcpy(host, device, BUFFER_BYTES, cudaMemcpyDeviceToHost));
  WL_CHECK(cudaDeviceSynchronize());
  WL_CHECK(cudaFree(device));
  int ok = host[0] == fill && host[BUFFER_BYTES - 1] == fill;
  printf("forker: %s pid %d: %d launches; copy check: %s\n", who, (int)getpid(), launches,
         ok ? "ok" : "FAILED");
  fflush(stdout);
  return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
  wl_prog = "forker";
  wl_arg args[] = {{"LAUNCHES", 1, 1000000, 10}};
  wl_parse_args(argc, argv, args, 1);
  const int launches = (int)args[0].value;

  fflush(stdout);
  pid_t child = fork();
  if (child < 0) {
    perror("forker: fork");
    return 1;
  }
  if (child == 0)
    return run_process("child", launches, 0xc1);

  int failed = run_process("parent", launches, 0x9a);
  int status = 0;
  if (waitpid(child, &status, 0) != child) {
    perror("forker: waitpid");
    return 1;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "forker: child %d failed (status 0x%x)\n", (int)child, status);
    return 1;
  }
  return failed;
}
