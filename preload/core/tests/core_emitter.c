/*
 * Test program for the recording core: links the core's sources directly (the
 * hooks are not needed) and emits records with planted values, so core_check can
 * verify the file exactly. Every API record it emits carries
 *   corr = (thread index + 1) * 1e9 + sequence number,  result = thread index,
 *   name = the interned string "t<thread index>-s<sequence / strings_every>".
 *
 * usage: core_emitter threads NTHREADS NREC STRINGS_EVERY
 *        core_emitter fork NREC          (parent NREC, fork, child NREC, parent NREC)
 *        core_emitter firstcalls N NREC  (rounds of N threads, indices 0.., 20.., 40..,
 *                                          that start together and emit NREC each: the
 *                                          parent's first round with a fork during it,
 *                                          the child's round, the parent's second round)
 *        core_emitter forkstress NREC    (4 threads emit NREC each while the main thread
 *                                          forks 20 children that emit 100 each, index 9)
 *        core_emitter reentry NREC       (NREC records while a SIGPROF handler on the
 *                                          same thread emits too, index 5)
 *        core_emitter closefds NREC FILE (NREC records, closes every fd >= 3, opens FILE,
 *                                          which may get the trace's old number, NREC more)
 *        core_emitter abort NREC         (NREC records then abort())
 *        core_emitter spin               (emits until killed; prints progress)
 *        core_emitter excl DIR           (forks; plants DIR/<host>.<childpid>.ctr first)
 *        core_emitter exec NREC BADFILE  (NREC, a failing exec of BADFILE, NREC more,
 *                                          then exec of "core_emitter threads 1 NREC 10")
 *        core_emitter sighandler NREC    (installs its own SIGABRT handler that exits 3,
 *                                          ignores SIGINT, NREC records, then abort())
 *        core_emitter bigstring          (one record named by a 1.5 MiB string)
 *        core_emitter start              (only starts and exits)
 *        core_emitter giveup             (starts; once tracing is off, for an output that
 *                                          cannot be opened, prints "pool N": spare rings left)
 *        core_emitter maps               (starts, prints "shared_anon N": its shared
 *                                          anonymous mappings, "/dev/zero (deleted)")
 *        core_emitter idle MS            (starts, records nothing for MS ms, prints "made N
 *                                          ready M": rings the writer made for its pool)
 *        core_emitter want               (starts, says CUDA is coming (ctp_ring_pool_want)
 *                                          without recording, prints "made N ready M" once
 *                                          the pool is full or after 2 s)
 *        core_emitter want_sandboxed     (the same where a seccomp filter denies
 *                                          MADV_POPULATE_WRITE with EPERM, or prints
 *                                          "cannot sandbox here")
 * It prints "emitted N" (records it handed to ctp_emit) and its pid.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core.h"
#include "trace.h"

#define SEQ_BASE 1000000000ull

static unsigned long long nrec, strings_every = 1000;

static void emit_api(unsigned ti, unsigned long long k) {
  char name[64];
  int n = snprintf(name, sizeof name, "t%u-s%llu", ti, k / strings_every);
  ct_record r;
  memset(&r, 0, sizeof r);
  r.kind = CT_KIND_API;
  uint64_t now = ctp_now_ns();
  r.u.api = (struct ct_api){.tid = ctp_tid(), .name = ctp_intern_n(name, (size_t)n),
                            .begin_ns = now, .end_ns = now + 100,
                            .corr = (ti + 1) * SEQ_BASE + k, .result = ti};
  ctp_emit(&r);
}

static int errno_changed;

/* run_threads: each thread, once it has emitted everything, waits here twice, so
 * that its buffer stays registered while the main thread looks at every buffer. */
static pthread_barrier_t *all_emitted;

/* Emits nrec records; checks that the tracer leaves errno alone (first use included). */
static void *thread_main(void *arg) {
  unsigned ti = (unsigned)(uintptr_t)arg;
  for (unsigned long long k = 0; k < nrec; k++) {
    errno = EDOM;
    emit_api(ti, k);
    if (errno != EDOM) __atomic_add_fetch(&errno_changed, 1, __ATOMIC_RELAXED);
  }
  if (all_emitted) {
    pthread_barrier_wait(all_emitted);
    pthread_barrier_wait(all_emitted);
  }
  return NULL;
}

/* Registered buffers not aligned as struct ctp_tbuf must be (its consumer half
 * starts a cache line). */
static int misaligned_buffers(void) {
  int n = 0;
  for (struct ctp_tbuf *b = ctp_buffers_head(); b; b = b->next)
    n += (uintptr_t)b % _Alignof(struct ctp_tbuf) != 0;
  return n;
}

static int run_threads(unsigned nthreads) {
  pthread_t th[64];
  if (nthreads > 64) nthreads = 64;
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, nthreads + 1);
  all_emitted = &barrier;
  for (unsigned i = 0; i < nthreads; i++)
    pthread_create(&th[i], NULL, thread_main, (void *)(uintptr_t)i);
  pthread_barrier_wait(&barrier);
  int misaligned = misaligned_buffers();
  pthread_barrier_wait(&barrier);
  for (unsigned i = 0; i < nthreads; i++) pthread_join(th[i], NULL);
  all_emitted = NULL;
  pthread_barrier_destroy(&barrier);
  printf("emitted %llu\nerrno_changed %d\nmisaligned_buffers %d\n", nthreads * nrec, errno_changed,
         misaligned);
  return 0;
}

static int run_fork(void) {
  for (unsigned long long k = 0; k < nrec; k++) emit_api(0, k);
  fflush(stdout);
  pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    for (unsigned long long k = 0; k < nrec; k++) emit_api(1, k);
    printf("child %d emitted %llu\n", (int)getpid(), nrec);
    exit(0);
  }
  for (unsigned long long k = nrec; k < 2 * nrec; k++) emit_api(0, k);
  int st = 0;
  waitpid(child, &st, 0);
  printf("parent %d emitted %llu\n", (int)getpid(), 2 * nrec);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

#if defined(__x86_64__)
#define EMITTER_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define EMITTER_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif
#define EMITTER_POPULATE_WRITE 23 /* MADV_POPULATE_WRITE (Linux 5.14) */

/* As a sandbox's seccomp policy that lists the madvise advice values it allows: from
 * now on madvise(..., MADV_POPULATE_WRITE) fails with EPERM in every thread (the
 * writer's too). Returns 0 when that is so, -1 where it cannot be done here. */
static int deny_populate_write(void) {
#ifdef EMITTER_AUDIT_ARCH
  struct sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, EMITTER_AUDIT_ARCH, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_madvise, 0, 3),
      /* the advice's low 32 bits (little-endian) */
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, EMITTER_POPULATE_WRITE, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0)
    return -1;
  void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return -1;
  int denied = madvise(page, 4096, EMITTER_POPULATE_WRITE) != 0 && errno == EPERM;
  munmap(page, 4096);
  return denied ? 0 : -1;
#else
  return -1;
#endif
}

/* Waits up to 2 s for the writer to fill the pool of ready rings; returns how many it holds. */
static unsigned wait_pool(unsigned want) {
  for (int i = 0; i < 2000 && ctp_ring_pool_ready() < want; i++) {
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
  return ctp_ring_pool_ready();
}

static pthread_barrier_t *start_together;

/* thread_main, once every thread of its round exists: their first records race. */
static void *first_call_main(void *arg) {
  pthread_barrier_wait(start_together);
  return thread_main(arg);
}

/* Starts n threads with indices first.., which make their first calls together. */
static void round_start(pthread_t *th, unsigned n, unsigned first) {
  pthread_barrier_init(start_together, NULL, n);
  for (unsigned i = 0; i < n; i++)
    pthread_create(&th[i], NULL, first_call_main, (void *)(uintptr_t)(first + i));
}

static void round_join(pthread_t *th, unsigned n) {
  for (unsigned i = 0; i < n; i++) pthread_join(th[i], NULL);
  pthread_barrier_destroy(start_together);
}

/*
 * Many threads' first records at once, more than the pool holds, with a fork while
 * they start. Prints the pool before each round ("pool N") and in the child right
 * after the fork ("child_pool N": the parent's spare rings are not this process's).
 */
static int run_firstcalls(unsigned n) {
  pthread_t th[20];
  pthread_barrier_t barrier;
  start_together = &barrier;
  if (n > 20) n = 20;
  ctp_start();
  emit_api(63, 0); /* the main thread's own ring, and the writer running */
  printf("pool %u\n", wait_pool(2));
  round_start(th, n, 0);
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    printf("child_pool %u\n", ctp_ring_pool_ready());
    emit_api(62, 0);
    printf("child pool %u\n", wait_pool(2));
    round_start(th, n, 20);
    round_join(th, n);
    printf("child %d emitted %llu\n", (int)getpid(), n * nrec + 1);
    exit(0);
  }
  round_join(th, n);
  int st = 0;
  waitpid(child, &st, 0);
  printf("pool %u\n", wait_pool(2));
  round_start(th, n, 40);
  round_join(th, n);
  printf("emitted %llu\n", 2 * n * nrec + 1);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

static int run_forkstress(void) {
  pthread_t th[4];
  for (unsigned i = 0; i < 4; i++)
    pthread_create(&th[i], NULL, thread_main, (void *)(uintptr_t)i);
  int bad = 0;
  for (int c = 0; c < 20; c++) {
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
      for (unsigned long long k = 0; k < 100; k++) emit_api(9, k);
      exit(0);
    }
    int st = 0;
    waitpid(child, &st, 0);
    bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
  }
  for (unsigned i = 0; i < 4; i++) pthread_join(th[i], NULL);
  printf("emitted %llu\n", 4 * nrec);
  return bad;
}

static volatile unsigned long long handler_emits;
static uint64_t handler_name;

/* Emits from a signal handler (name interned beforehand: ctp_intern may lock). */
static void on_sigprof(int sig) {
  int saved = errno;
  ct_record r;
  memset(&r, 0, sizeof r);
  r.kind = CT_KIND_API;
  r.u.api = (struct ct_api){.tid = ctp_tid(), .name = handler_name,
                            .corr = 6 * SEQ_BASE + handler_emits, .result = 5};
  ctp_emit(&r);
  handler_emits++;
  errno = saved;
}

static int run_reentry(void) {
  handler_name = ctp_intern("t5-s0");
  emit_api(0, 0); /* the thread's buffer exists before the first signal */
  signal(SIGPROF, on_sigprof);
  struct itimerval it = {{0, 20}, {0, 20}};
  setitimer(ITIMER_PROF, &it, NULL);
  for (unsigned long long k = 1; k < nrec; k++) emit_api(0, k);
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_PROF, &off, NULL);
  printf("emitted %llu\nhandler %llu\n", nrec, handler_emits);
  return 0;
}

static int run_closefds(const char *file) {
  for (unsigned long long k = 0; k < nrec; k++) emit_api(0, k);
  struct timespec wait = {0, 300000000}; /* the first records reach the file */
  nanosleep(&wait, NULL);
  for (int fd = 3; fd < 1024; fd++) close(fd);
  int own = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (own < 0 || write(own, "program data\n", 13) != 13) return 1;
  for (unsigned long long k = nrec; k < 2 * nrec; k++) emit_api(0, k);
  nanosleep(&wait, NULL); /* frames are due while the program's file is open */
  close(own);
  printf("own fd %d\nemitted %llu\n", own, 2 * nrec);
  return 0;
}

static int run_excl(const char *dir) {
  int go[2];
  if (pipe(go) < 0) return 1;
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    char c;
    close(go[1]);
    while (read(go[0], &c, 1) < 0 && errno == EINTR) {}
    nrec = 10;
    for (unsigned long long k = 0; k < nrec; k++) emit_api(0, k);
    exit(0);
  }
  char host[256] = {0}, path[1024];
  gethostname(host, sizeof host - 1);
  snprintf(path, sizeof path, "%s/%s.%d.ctr", dir, host, (int)child);
  char victim[1024];
  snprintf(victim, sizeof victim, "%s/victim", dir);
  if (symlink(victim, path) < 0) perror("symlink");
  printf("child %d planted %s\n", (int)child, path);
  close(go[0]);
  if (write(go[1], "x", 1) != 1) return 1;
  int st = 0;
  waitpid(child, &st, 0);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

static void app_abort_handler(int sig) {
  static const char msg[] = "app handler ran\n";
  ssize_t w = write(1, msg, sizeof msg - 1);
  (void)w;
  _exit(sig == SIGABRT ? 3 : 4);
}

static int run_sighandler(void) {
  struct sigaction act, seen;
  memset(&act, 0, sizeof act);
  act.sa_handler = app_abort_handler;
  sigemptyset(&act.sa_mask);
  if (sigaction(SIGABRT, &act, NULL) < 0) return 1;
  sigaction(SIGABRT, NULL, &seen);
  printf("sees its handler %d\n", seen.sa_handler == app_abort_handler);
  signal(SIGINT, SIG_IGN);
  raise(SIGINT);
  printf("survived SIGINT\n");
  for (unsigned long long k = 0; k < nrec; k++) emit_api(0, k);
  printf("emitted %llu\n", nrec);
  abort();
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  setvbuf(stdout, NULL, _IOLBF, 0);
  printf("pid %d\n", (int)getpid());
  const char *mode = argv[1];
  if (!strcmp(mode, "threads") && argc == 5) {
    nrec = strtoull(argv[3], NULL, 10);
    strings_every = strtoull(argv[4], NULL, 10);
    if (!strings_every) strings_every = 1;
    return run_threads((unsigned)atoi(argv[2]));
  }
  if (!strcmp(mode, "fork") && argc == 3) {
    nrec = strtoull(argv[2], NULL, 10);
    return run_fork();
  }
  if (!strcmp(mode, "reentry") && argc == 3) {
    nrec = strtoull(argv[2], NULL, 10);
    return run_reentry();
  }
  if (!strcmp(mode, "closefds") && argc == 4) {
    nrec = strtoull(argv[2], NULL, 10);
    return run_closefds(argv[3]);
  }
  if (!strcmp(mode, "firstcalls") && argc == 4) {
    nrec = strtoull(argv[3], NULL, 10);
    return run_firstcalls((unsigned)atoi(argv[2]));
  }
  if (!strcmp(mode, "forkstress") && argc == 3) {
    nrec = strtoull(argv[2], NULL, 10);
    return run_forkstress();
  }
  if (!strcmp(mode, "abort") && argc == 3) {
    nrec = strtoull(argv[2], NULL, 10);
    for (unsigned long long k = 0; k < nrec; k++) emit_api(0, k);
    printf("emitted %llu\n", nrec);
    abort();
  }
  if (!strcmp(mode, "spin")) {
    for (unsigned long long k = 0;; k++) {
      emit_api(0, k);
      if (k % 1000 == 999) {
        printf("emitted %llu\n", k + 1);
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
      }
    }
  }
  if (!strcmp(mode, "excl") && argc == 3) return run_excl(argv[2]);
  if (!strcmp(mode, "exec") && argc == 4) {
    nrec = strtoull(argv[2], NULL, 10);
    for (unsigned long long k = 0; k < nrec; k++) emit_api(0, k);
    char *bad_argv[] = {argv[3], NULL};
    errno = 0;
    int rc = execv(argv[3], bad_argv);
    printf("failed exec %d errno %d\n", rc, errno);
    for (unsigned long long k = nrec; k < 2 * nrec; k++) emit_api(0, k);
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return 1;
    self[n] = 0;
    execl(self, "core_emitter", "threads", "1", argv[2], "10", (char *)NULL);
    return 1;
  }
  if (!strcmp(mode, "sighandler") && argc == 3) {
    nrec = strtoull(argv[2], NULL, 10);
    return run_sighandler();
  }
  if (!strcmp(mode, "bigstring")) {
    size_t len = 3u << 19;
    char *big = malloc(len);
    memset(big, 'x', len);
    memcpy(big, "t0-s", 4);
    ct_record r;
    memset(&r, 0, sizeof r);
    r.kind = CT_KIND_API;
    r.u.api = (struct ct_api){.tid = ctp_tid(), .name = ctp_intern_n(big, len),
                              .corr = SEQ_BASE, .result = 0};
    ctp_emit(&r);
    free(big);
    printf("emitted 1\n");
    return 0;
  }
  if (!strcmp(mode, "start")) {
    printf("enabled %d\n", ctp_start());
    return 0;
  }
  if (!strcmp(mode, "giveup")) {
    ctp_start();
    emit_api(0, 0);
    /* Up to 2 s for the writer to fill the pool, fail to open and give up. */
    for (int i = 0; i < 2000 && (ctp_is_enabled() || ctp_ring_pool_ready()); i++) {
      struct timespec ms = {0, 1000000};
      nanosleep(&ms, NULL);
    }
    printf("enabled %d\npool %u\n", ctp_is_enabled(), ctp_ring_pool_ready());
    return 0;
  }
  if (!strcmp(mode, "idle") && argc == 3) {
    ctp_start();
    unsigned long ms = strtoul(argv[2], NULL, 10);
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
    printf("made %lu ready %u\n", ctp_ring_pool_made(), ctp_ring_pool_ready());
    return 0;
  }
  if (!strcmp(mode, "want") || !strcmp(mode, "want_sandboxed")) {
    ctp_start();
    if (!strcmp(mode, "want_sandboxed") && deny_populate_write() != 0) {
      printf("cannot sandbox here\n");
      return 0;
    }
    ctp_ring_pool_want();
    unsigned ready = wait_pool(ctp_cfg.ring_pool);
    printf("made %lu ready %u\n", ctp_ring_pool_made(), ready);
    return 0;
  }
  if (!strcmp(mode, "maps")) {
    printf("enabled %d\n", ctp_start());
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4096];
    int shared_anon = 0;
    while (maps && fgets(line, sizeof line, maps))
      shared_anon += strstr(line, " rw-s ") && strstr(line, "/dev/zero (deleted)");
    if (maps) fclose(maps);
    printf("shared_anon %d\n", shared_anon);
    return 0;
  }
  fprintf(stderr, "core_emitter: bad arguments\n");
  return 2;
}
