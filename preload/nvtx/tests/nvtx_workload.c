/*
 * A program using the toolkit's NVTX v3 headers (header-only, no CUDA) with known
 * ranges, for test_nvtx_ranges. Run under libtrace.so it leaves exactly:
 *
 * main thread (tid = pid):
 *   mark "start"
 *   "outer" depth 0
 *     "inner" depth 1
 *       "wide_é€😀" depth 2 (nvtxRangePushW)
 *       "registered_op" depth 0 in domain "mydomain" (a registered string)
 *         mark "dmark" in domain "mydomain"
 *       "ascii_ex" depth 2 (nvtxRangePushEx with an ASCII message)
 *     "cross": start/end range started here, ended by the worker thread
 *   "main_leak" depth 0, never popped: closed at process exit
 *   "se_leak": start/end range never ended
 * worker thread:
 *   "t1_outer" depth 0, containing 3 x "t1_inner" depth 1
 *   "t1_leak" depth 0, never popped: closed at thread exit
 * plus one unbalanced nvtxRangePop and one unbalanced nvtxDomainRangePop (both
 * must return -1 and record nothing).
 *
 * While "outer", "cross" and "t1_outer" are open, the main thread forks a child
 * (tid = its pid) whose own trace holds exactly: "child_range" depth 1, then the
 * inherited "outer" depth 0 popped by the child (begun before the fork), and no
 * other range (the parent's worker and start/end ranges stay in the parent's trace).
 *
 * With the argument "check" it also verifies the values NVTX returns (levels and
 * -1 for the unbalanced pops), as a tool that implements NVTX must give them, and
 * that errno is unchanged by NVTX calls; exit status 3 when one is wrong.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

static int check_levels;
static int failures;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static nvtxRangeId_t cross_id;
static int worker_waiting, cross_ready, cross_done;

static void expect(const char *what, long got, long want) {
  if (check_levels && got != want) {
    fprintf(stderr, "nvtx_workload: %s returned %ld, expected %ld\n", what, got, want);
    failures++;
  }
}

static void *worker(void *arg) {
  errno = EXDEV;
  expect("push t1_outer", nvtxRangePushA("t1_outer"), 0);
  expect("errno after the worker's first push", errno, EXDEV);
  for (int i = 0; i < 3; i++) {
    expect("push t1_inner", nvtxRangePushA("t1_inner"), 1);
    expect("pop t1_inner", nvtxRangePop(), 1);
  }
  pthread_mutex_lock(&mu);
  worker_waiting = 1;
  pthread_cond_broadcast(&cv);
  while (!cross_ready) pthread_cond_wait(&cv, &mu);
  nvtxRangeEnd(cross_id);
  cross_done = 1;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
  expect("pop t1_outer", nvtxRangePop(), 0);
  expect("push t1_leak", nvtxRangePushA("t1_leak"), 0);
  return arg; /* exits with t1_leak open */
}

int main(int argc, char **argv) {
  check_levels = argc > 1 && strcmp(argv[1], "check") == 0;
  pthread_t thread;

  errno = EXDEV; /* NVTX calls, the first ones included, must leave errno alone */
  nvtxMarkA("start");
  expect("errno after the first NVTX call", errno, EXDEV);
  expect("push outer", nvtxRangePushA("outer"), 0);
  expect("push inner", nvtxRangePushA("inner"), 1);
  expect("push wide", nvtxRangePushW(L"wide_\u00e9\u20ac\U0001F600"), 2);
  expect("pop wide", nvtxRangePop(), 2);

  nvtxDomainHandle_t domain = nvtxDomainCreateA("mydomain");
  nvtxStringHandle_t registered = nvtxDomainRegisterStringA(domain, "registered_op");
  nvtxEventAttributes_t attr;
  memset(&attr, 0, sizeof attr);
  attr.version = NVTX_VERSION;
  attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  attr.message.registered = registered;
  expect("domain push registered_op", nvtxDomainRangePushEx(domain, &attr), 0);
  attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attr.message.ascii = "dmark";
  nvtxDomainMarkEx(domain, &attr);
  expect("domain pop registered_op", nvtxDomainRangePop(domain), 0);
  attr.message.ascii = "ascii_ex";
  expect("push ascii_ex", nvtxRangePushEx(&attr), 2);
  expect("pop ascii_ex", nvtxRangePop(), 2);
  expect("pop inner", nvtxRangePop(), 1);
  expect("errno after pushes, pops, domains, marks", errno, EXDEV);

  if (pthread_create(&thread, NULL, worker, NULL) != 0) return 2;
  cross_id = nvtxRangeStartA("cross");
  pthread_mutex_lock(&mu);
  while (!worker_waiting) pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);

  /* Fork while "outer", "cross" and the worker's "t1_outer" are open. */
  pid_t child = fork();
  if (child == 0) {
    expect("child push child_range", nvtxRangePushA("child_range"), 1);
    expect("child pop child_range", nvtxRangePop(), 1);
    expect("child pop outer", nvtxRangePop(), 0);
    expect("child unbalanced pop", nvtxRangePop(), -1);
    exit(failures ? 3 : 0);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    fprintf(stderr, "nvtx_workload: forked child failed (status %d)\n", status);
    failures++;
  }

  pthread_mutex_lock(&mu);
  cross_ready = 1;
  pthread_cond_broadcast(&cv);
  while (!cross_done) pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
  pthread_join(thread, NULL);

  expect("pop outer", nvtxRangePop(), 0);
  expect("unbalanced pop", nvtxRangePop(), -1);
  expect("unbalanced domain pop", nvtxDomainRangePop(domain), -1);

  expect("push main_leak", nvtxRangePushA("main_leak"), 0);
  nvtxRangeStartA("se_leak");
  return failures ? 3 : 0; /* exits with main_leak and se_leak open */
}
