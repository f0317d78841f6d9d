/*
 * A plain C program (gcc -g, linked with the simulated libcudart) whose CUDA calls
 * come from known functions, for the call-stack checks of test_stacks.py:
 *
 *   memset_site     cudaMemsetAsync, SETS_A times from one call site (thread "a")
 *   copy_site       cudaMemcpyAsync, COPIES_B times from one call site (thread "b")
 *   recurse_to_set  recursion to depth 3 and to depth 9, then cudaMemsetAsync from
 *                   deep_set_site (same innermost function, different stacks)
 *   sync_site       cudaStreamSynchronize (no GPU work: captured only with "all")
 *   shared_site     cudaMemsetAsync called through via_a 4 times, then via_b 4 times,
 *                   SHARED_ROUNDS rounds, from the same stack depth: same call site
 *                   and CFA, two stacks, each repeated long enough for the site cache
 *                   to learn it (it must tell them apart)
 *
 * Usage: stk_app [fork]   With "fork", the main thread then forks a child that calls
 * cudaMemsetAsync from child_site once and exits; the parent waits for it.
 *        stk_app execfail FILE   After the same work, an exec of FILE (executable but
 * not a program: the exec fails, the tracer goes on into a new file), then
 * recurse_to_set(2) again: the same stack as before, in the new file.
 *        stk_app settle PLUGIN   After its first CUDA calls (cudaMalloc, no stack) the
 * program sleeps 300 ms, as a real GPU's context set-up would take (the tracer lists
 * the loaded modules on its writer thread meanwhile), then does the same work; then
 * it loads PLUGIN (stk_plugin.c) with dlopen and calls its stk_plugin_site once.
 * Prints one summary line; exits 0, or 1 when a CUDA call failed.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#define SETS_A 12
#define COPIES_B 7
#define BYTES 4096

#define NOINLINE __attribute__((noinline, noclone))

static int failures;

static void check(cudaError_t e, const char *what) {
  if (e != cudaSuccess) {
    fprintf(stderr, "stk_app: %s failed: %d\n", what, (int)e);
    __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
  }
}

NOINLINE void memset_site(void *dev, int value) {
  check(cudaMemsetAsync(dev, value, BYTES, 0), "cudaMemsetAsync");
  __asm__ volatile("" ::: "memory"); /* keeps the call from becoming a tail call */
}

NOINLINE void copy_site(void *dst, const void *src) {
  check(cudaMemcpyAsync(dst, src, BYTES, cudaMemcpyDeviceToDevice, 0), "cudaMemcpyAsync");
  __asm__ volatile("" ::: "memory");
}

NOINLINE void deep_set_site(void *dev) {
  check(cudaMemsetAsync(dev, 7, BYTES, 0), "cudaMemsetAsync");
  __asm__ volatile("" ::: "memory");
}

/* Calls itself `level` more times, then deep_set_site: `level` + 1 recurse_to_set frames. */
NOINLINE int recurse_to_set(void *dev, int level) {
  if (level > 0) {
    int r = recurse_to_set(dev, level - 1);
    __asm__ volatile("" ::: "memory");
    return r + 1;
  }
  deep_set_site(dev);
  return 0;
}

/* In a fork child: the call's result does not matter (CUDA need not work after fork),
 * only that it is recorded with its stack in the child's own trace file. */
NOINLINE void child_site(void *dev) {
  cudaError_t e = cudaMemsetAsync(dev, 3, BYTES, 0);
  __asm__ volatile("" ::: "memory");
  (void)e;
}

NOINLINE void sync_site(void) {
  check(cudaStreamSynchronize(0), "cudaStreamSynchronize");
  __asm__ volatile("" ::: "memory");
}

#define SHARED_ROUNDS 3
#define SHARED_RUN 4

static volatile int marker;

NOINLINE void shared_site(void *dev) {
  check(cudaMemsetAsync(dev, 5, BYTES, 0), "cudaMemsetAsync");
  __asm__ volatile("" ::: "memory");
}

/* Two callers of shared_site with the same frame layout (different bodies, so that
 * the compiler cannot fold them into one function). */
NOINLINE void via_a(void *dev) {
  marker = 1;
  shared_site(dev);
  __asm__ volatile("" ::: "memory");
}

NOINLINE void via_b(void *dev) {
  marker = 2;
  shared_site(dev);
  __asm__ volatile("" ::: "memory");
}

static void *dev_a, *dev_b;

static void *thread_a(void *arg) {
  (void)arg;
  for (int i = 0; i < SETS_A; i++) memset_site(dev_a, i);
  return NULL;
}

static void *thread_b(void *arg) {
  (void)arg;
  for (int i = 0; i < COPIES_B; i++) copy_site(dev_b, dev_a);
  return NULL;
}

int main(int argc, char **argv) {
  int do_fork = argc > 1 && !strcmp(argv[1], "fork");
  const char *plugin = argc > 2 && !strcmp(argv[1], "settle") ? argv[2] : NULL;
  const char *bad_exec = argc > 2 && !strcmp(argv[1], "execfail") ? argv[2] : NULL;
  check(cudaMalloc(&dev_a, BYTES), "cudaMalloc");
  check(cudaMalloc(&dev_b, BYTES), "cudaMalloc");
  if (plugin) {
    struct timespec settle = {0, 300000000};
    nanosleep(&settle, NULL);
  }
  pthread_t ta, tb;
  pthread_create(&ta, NULL, thread_a, NULL);
  pthread_create(&tb, NULL, thread_b, NULL);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  int levels = recurse_to_set(dev_a, 2) + recurse_to_set(dev_a, 8);
  for (int round = 0; round < SHARED_ROUNDS; round++) {
    for (int i = 0; i < SHARED_RUN; i++) via_a(dev_a);
    for (int i = 0; i < SHARED_RUN; i++) via_b(dev_a);
  }
  sync_site();
  int plugin_result = 0;
  if (plugin) {
    void *lib = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
    int (*site)(void *) = lib ? (int (*)(void *))dlsym(lib, "stk_plugin_site") : NULL;
    if (!site) {
      fprintf(stderr, "stk_app: cannot load %s: %s\n", plugin, dlerror());
      failures++;
    } else {
      check((cudaError_t)site(dev_a), "stk_plugin_site");
      plugin_result = 1;
    }
  }
  if (bad_exec) {
    char *exec_argv[] = {(char *)bad_exec, NULL};
    if (execv(bad_exec, exec_argv) == 0 || recurse_to_set(dev_a, 2) != 2) failures++;
  }
  if (do_fork) {
    pid_t child = fork();
    if (child == 0) {
      child_site(dev_a);
      exit(0); /* not _exit: the tracer writes its file at exit */
    }
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failures++;
  }
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  printf("stk_app: sets=%d copies=%d levels=%d fork=%d plugin=%d failures=%d\n", SETS_A,
         COPIES_B, levels, do_fork, plugin_result, failures);
  return failures ? 1 : 0;
}
