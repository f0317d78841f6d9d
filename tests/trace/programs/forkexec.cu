/*
 * Process starts under a collector for test_collect_connect.py (simulated GPU, shared
 * cudart): how long the program's own thread waits around each start of a traced
 * process, as the program itself measures it.
 *
 * usage: forkexec LAUNCHES
 *   prints "forkexec: parent pid P: main entered at NS" (CLOCK_REALTIME, for the
 *   test to compare with when it started the program); before touching CUDA (a
 *   context does not survive fork) forks
 *     child A: notes the time, makes its first CUDA call (cudaMalloc), prints
 *              "forkexec: child pid A: first CUDA call returned MS ms after fork";
 *     child B: execs this program at once as "forkexec --exec-stage NS LAUNCHES"
 *              (NS: CLOCK_REALTIME just before execv), which prints "forkexec:
 *              exec'd pid B: main entered MS ms after exec";
 *   then each of the three processes launches fe_work LAUNCHES times, fills a buffer
 *   with its own byte, copies it back, and prints "forkexec: WHO pid N: LAUNCHES
 *   launches; copy check: ok". The parent waits for both children.
 * usage: forkexec --abort LAUNCHES
 *   the same work in one process ("aborting pid N: ..."), then abort().
 * Exit status 0 when every CUDA call succeeded and every copy check passed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime.h>

#define BUFFER_BYTES 4096

__global__ void fe_work(unsigned char *x) { x[threadIdx.x] += 1; }

static long long clock_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static int check(cudaError_t err, const char *who, const char *what) {
  if (err == cudaSuccess) return 0;
  fprintf(stderr, "forkexec: %s: %s: %s\n", who, what, cudaGetErrorString(err));
  return 1;
}

/* LAUNCHES launches, a memset with fill and a copy back; 0 when all went well. The
 * buffer may already be allocated (device != NULL). */
static int gpu_work(const char *who, unsigned char *device, int launches, unsigned char fill) {
  unsigned char host[BUFFER_BYTES];
  int bad = 0;
  if (!device) bad |= check(cudaMalloc((void **)&device, BUFFER_BYTES), who, "cudaMalloc");
  if (bad) return 1;
  for (int i = 0; i < launches; i++) fe_work<<<1, 32>>>(device);
  bad |= check(cudaGetLastError(), who, "launch");
  bad |= check(cudaMemset(device, fill, BUFFER_BYTES), who, "cudaMemset");
  bad |= check(cudaMemcpy(host, device, BUFFER_BYTES, cudaMemcpyDeviceToHost), who, "cudaMemcpy");
  bad |= check(cudaDeviceSynchronize(), who, "cudaDeviceSynchronize");
  bad |= check(cudaFree(device), who, "cudaFree");
  int ok = !bad && host[0] == fill && host[BUFFER_BYTES - 1] == fill;
  printf("forkexec: %s pid %d: %d launches; copy check: %s\n", who, (int)getpid(), launches,
         ok ? "ok" : "FAILED");
  fflush(stdout);
  return ok ? 0 : 1;
}

/* Child A: the time from fork to the return of its first CUDA call. */
static int child_after_fork(long long forked_ns, int launches) {
  unsigned char *device = NULL;
  cudaError_t err = cudaMalloc((void **)&device, BUFFER_BYTES);
  long long took_ns = clock_ns(CLOCK_MONOTONIC) - forked_ns;
  if (check(err, "child", "cudaMalloc")) return 1;
  printf("forkexec: child pid %d: first CUDA call returned %.3f ms after fork\n", (int)getpid(),
         took_ns / 1e6);
  fflush(stdout);
  return gpu_work("child", device, launches, 0xc1);
}

/* Child B: execs this program at once (it records nothing before). */
static int child_exec(const char *self, const char *launches) {
  char when[32];
  snprintf(when, sizeof when, "%lld", clock_ns(CLOCK_REALTIME));
  execl(self, self, "--exec-stage", when, launches, (char *)NULL);
  fprintf(stderr, "forkexec: exec %s: %s\n", self, strerror(errno));
  return 1;
}

static int wait_ok(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return 0;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main(int argc, char **argv) {
  long long entered_rt = clock_ns(CLOCK_REALTIME);
  if (argc == 4 && strcmp(argv[1], "--exec-stage") == 0) {
    printf("forkexec: exec'd pid %d: main entered %.3f ms after exec\n", (int)getpid(),
           (entered_rt - atoll(argv[2])) / 1e6);
    fflush(stdout);
    return gpu_work("exec'd", NULL, atoi(argv[3]), 0xe0);
  }
  if (argc == 3 && strcmp(argv[1], "--abort") == 0) { /* a crash right after start-up */
    gpu_work("aborting", NULL, atoi(argv[2]), 0xab);
    abort();
  }
  if (argc != 2 || atoi(argv[1]) < 1) {
    fprintf(stderr, "usage: forkexec LAUNCHES\n");
    return 2;
  }
  int launches = atoi(argv[1]);
  printf("forkexec: parent pid %d: main entered at %lld\n", (int)getpid(), entered_rt);
  fflush(stdout);

  long long fork_ns = clock_ns(CLOCK_MONOTONIC);
  pid_t a = fork();
  if (a == 0) return child_after_fork(fork_ns, launches);
  pid_t b = a < 0 ? -1 : fork();
  if (b == 0) return child_exec(argv[0], argv[1]);
  if (a < 0 || b < 0) {
    perror("forkexec: fork");
    return 1;
  }
  int failed = gpu_work("parent", NULL, launches, 0x9a);
  int a_ok = wait_ok(a), b_ok = wait_ok(b);
  if (!a_ok || !b_ok) fprintf(stderr, "forkexec: a child failed\n");
  return failed || !a_ok || !b_ok;
}
