/*
 * The writer thread (its rounds: writer_pass.c). Every few milliseconds (or when a
 * thread's buffer is half full) it runs a round: what the threads recorded becomes
 * zstd frames written to the sink (sink.c: the file, or the stream to a collector).
 *
 * The sink is opened by this thread before its first round (the file created and its
 * header written, or the stream connected), so the program never waits for a disk or a
 * collector: its records stay in the threads' buffers meanwhile (a full buffer drops
 * and counts, as ever). An open that fails turns tracing off.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "writer.h"

static struct writer W = {.sink = {.fd = -1}};
static void (*round_fn)(void); /* ctp_at_writer_round */

/* How long exit or exec waits for an open still under way when no thread recorded
 * anything (ctp_writer_finish): a local disk or a healthy collector answers well
 * within it. */
#define CTP_WRITER_IDLE_OPEN_WAIT_MS 100
/* How long exit or exec waits for a file's open still under way (an open has no
 * deadline of its own, unlike a connect). */
#define CTP_WRITER_FILE_OPEN_WAIT_MS (CTP_SINK_EXIT_TIMEOUT_NS / 1000000)

/* 1 for the one caller that gets to join or detach the writer thread: whichever of
 * the thread giving up (it detaches itself, so that nobody needs to join it) and
 * the joiners (finish, join_left) comes first. */
static int claim_thread(struct writer *w) {
  return !__atomic_exchange_n(&w->claimed, 1, __ATOMIC_ACQ_REL);
}

/*
 * The sink could not be opened: tracing is off from now on (the hooks only forward, a
 * fork child or the final flush finds nothing to do), and the records buffered so far
 * are never written; the line ctp_sink_open printed says so.
 */
static void give_up_unopened(struct writer *w) {
  /* Sequentially consistent with ctp_writer_gave_up: start-up turning tracing on
   * after this thread turned it off sees gave_up and turns it off again. */
  __atomic_store_n(&w->gave_up, 1, __ATOMIC_SEQ_CST);
  __atomic_store_n(&ctp_enabled, 0, __ATOMIC_SEQ_CST);
  /* Nothing will join this thread now (tracing is off): without this its stack
   * stayed mapped for the life of the process (a thread leak TSan reported). */
  if (claim_thread(w)) pthread_detach(pthread_self());
  ctp_ring_pool_drain(); /* 2 MiB (default) that no thread will take now */
}

/*
 * The writer thread. It also writes the last frames when asked to stop, so that
 * every write() of the trace happens with all signals blocked: a SIGXFSZ (file
 * size limit) or, later, SIGPIPE caused by the trace never reaches the program.
 * The sink is opened first (ctp_sink_open: a stream's connect up to 5 s; also when
 * asked to stop meanwhile: exit waits for it, then writes what was buffered).
 */
static void *writer_main(void *arg) {
  struct writer *w = arg;
  prctl(PR_SET_NAME, "cutrace-writer", 0, 0, 0);
  /* atomic: a fatal signal's handler on any thread compares it (urgent flush) */
  __atomic_store_n(&w->thread_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELAXED);
  /* The program's first threads (its main thread, the poller) start recording at
   * once: the ready rings come before the sink, whose records wait in the rings
   * (in a process that already showed it will use CUDA; others get them when it
   * does: ctp_ring_pool_want kicks this thread, whose next round fills the pool). */
  ctp_ring_pool_skip(); /* its own ring (made off the program's path) spares one for them */
  ctp_ring_pool_fill();
  if (!__atomic_load_n(&w->sink_ready, __ATOMIC_ACQUIRE)) {
    if (ctp_sink_open(&w->sink) < 0) {
      give_up_unopened(w);
      return NULL;
    }
    __atomic_store_n(&w->sink_ready, 1, __ATOMIC_RELEASE);
  }
  w->in_thread = 1;
  uint64_t tick = ctp_cfg.flush_ns / 2;
  if (tick > 5000000) tick = 5000000;
  if (tick < 500000) tick = 500000;
  while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t ns = (uint64_t)ts.tv_nsec + tick;
    ts.tv_sec += (time_t)(ns / 1000000000ull);
    ts.tv_nsec = (long)(ns % 1000000000ull);
    sem_clockwait(&w->wake, CLOCK_MONOTONIC, &ts);
    if (__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) break;
    struct timespec c0, c1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    ctp_writer_pass(w, 0);
    ctp_ring_pool_fill(); /* after takes since the last round, or when memory was short */
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    __atomic_add_fetch(&w->busy_cpu_ns,
                       (uint64_t)((c1.tv_sec - c0.tv_sec) * 1000000000ll + (c1.tv_nsec - c0.tv_nsec)),
                       __ATOMIC_RELAXED);
    void (*fn)(void) = __atomic_load_n(&round_fn, __ATOMIC_ACQUIRE);
    if (fn && ctp_buffers_head()) fn(); /* once the process recorded something */
  }
  ctp_writer_finish_file(w);
  return NULL;
}

void ctp_writer_join_left(void) {
  struct writer *w = &W;
  if (w->running && __atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
    if (claim_thread(w)) pthread_join(w->thread, NULL);
    w->running = 0;
  }
}

int ctp_writer_start(const struct ctp_sink *s, const ct_record *first, unsigned nfirst) {
  struct writer *w = &W;
  ctp_writer_join_left();
  size_t cap = ctp_cfg.frame_bytes;
  if (cap < CT_MAX_STRING_BYTES + 4096) cap = CT_MAX_STRING_BYTES + 4096;
  if (!w->chunk.buf && ct_chunk_init(&w->chunk, cap) < 0) return -1;
  ct_chunk_reset(&w->chunk);
  if (!w->cctx) w->cctx = ZSTD_createCCtx();
  if (!w->out) {
    w->out_cap = ct_chunk_bound(cap);
    w->out = malloc(w->out_cap);
  }
  if (!w->cctx || !w->out) return -1;
  if (!w->sem_ready) {
    if (sem_init(&w->wake, 0, 0) < 0) return -1;
    w->sem_ready = 1;
  }
  w->sink = *s;
  if (nfirst > CTP_WRITER_MAX_FIRST) nfirst = CTP_WRITER_MAX_FIRST;
  memcpy(w->first, first, nfirst * sizeof *first);
  w->nfirst = nfirst;
  w->gave_up = 0;
  w->claimed = 0;
  __atomic_store_n(&w->sink_ready, 0, __ATOMIC_RELEASE);
  w->process_pending = 1;
  w->stop = 0;
  w->written_records = w->lost_records = w->dropped = 0;
  /* Threads that already recorded (a new file after a failed exec) are announced again. */
  for (struct ctp_tbuf *b = ctp_buffers_head(); b; b = b->next) b->announce = 1;

  /* The thread starts with every signal blocked: the program never sees it. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(&w->thread, NULL, writer_main, w);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0) {
    w->sink.fd = -1;
    return -1;
  }
  w->running = 1;
  return 0;
}

void ctp_at_writer_round(void (*fn)(void)) {
  void (*none)(void) = NULL;
  if (!__atomic_compare_exchange_n(&round_fn, &none, fn, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    ctp_warn("more than one writer-round callback; one is ignored");
}

void ctp_writer_kick(void) {
  if (W.sem_ready) {
    int saved = errno;
    sem_post(&W.wake);
    errno = saved;
  }
}

int ctp_writer_running(void) { return W.running; }

int ctp_writer_gave_up(void) { return __atomic_load_n(&W.gave_up, __ATOMIC_SEQ_CST); }

void ctp_writer_stats(uint64_t *records, uint64_t *cpu_ns) {
  *records = __atomic_load_n(&W.taken_records, __ATOMIC_RELAXED);
  *cpu_ns = __atomic_load_n(&W.busy_cpu_ns, __ATOMIC_RELAXED);
}

/* Waits up to ms for the writer's open to succeed or fail. Returns 1 when it did. */
static int wait_opened(unsigned ms) {
  for (unsigned i = 0; i <= ms; i++) {
    if (__atomic_load_n(&W.sink_ready, __ATOMIC_ACQUIRE) ||
        __atomic_load_n(&W.gave_up, __ATOMIC_SEQ_CST))
      return 1;
    struct timespec one_ms = {0, 1000000};
    if (i < ms) nanosleep(&one_ms, NULL);
  }
  return 0;
}

void ctp_writer_finish(void) {
  struct writer *w = &W;
  if (w->running) { /* the thread writes the rest, END, and closes */
    ctp_sink_exit_deadline();
    __atomic_store_n(&w->stop, 1, __ATOMIC_RELEASE);
    sem_post(&w->wake);
    /* Still opening and no thread has recorded anything (a wrapper that only execs
     * or exits: env, a shell): its trace is worth a short wait, not the connect
     * deadline. A file's open has no deadline (a stalled network filesystem): at most
     * the exit timeout. Past either the thread finishes on its own if the process
     * outlives the open; a new writer joins it first. */
    if (!__atomic_load_n(&w->sink_ready, __ATOMIC_ACQUIRE)) {
      if (!ctp_buffers_head() && !wait_opened(CTP_WRITER_IDLE_OPEN_WAIT_MS)) return;
      if (!w->sink.stream && !wait_opened(CTP_WRITER_FILE_OPEN_WAIT_MS)) {
        ctp_warn("cannot write the trace (its file in %s was not open %u s after exit "
                 "began; giving up); records are being lost",
                 ctp_cfg.output, (unsigned)(CTP_WRITER_FILE_OPEN_WAIT_MS / 1000));
        return;
      }
    }
    if (claim_thread(w)) pthread_join(w->thread, NULL);
    w->running = 0;
  }
}

int ctp_writer_urgent_flush(unsigned timeout_ms) {
  struct writer *w = &W;
  if (!w->running || (pid_t)syscall(SYS_gettid) == __atomic_load_n(&w->thread_tid, __ATOMIC_RELAXED))
    return 0;
  unsigned i = 0; /* a sink still opening (a local file: microseconds) is waited for */
  for (; !__atomic_load_n(&w->sink_ready, __ATOMIC_ACQUIRE); i++) {
    if (i >= timeout_ms || __atomic_load_n(&w->gave_up, __ATOMIC_SEQ_CST)) return 0;
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
  unsigned req = __atomic_add_fetch(&w->urgent_req, 1, __ATOMIC_ACQ_REL);
  sem_post(&w->wake);
  for (; i < timeout_ms; i++) {
    if ((int)(__atomic_load_n(&w->urgent_done, __ATOMIC_ACQUIRE) - req) >= 0) return 1;
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
  return 0;
}

void ctp_writer_after_fork(void) {
  struct writer *w = &W;
  w->running = 0;
  w->thread_tid = 0;
  w->in_thread = 0;
  ctp_sink_close(&w->sink); /* the parent's file or stream (even connecting): the parent's */
  w->sink_ready = 0;
  if (w->chunk.buf) ct_chunk_reset(&w->chunk); /* the parent's records */
  if (w->cctx) ZSTD_freeCCtx(w->cctx);  /* may have been mid-compression */
  w->cctx = NULL;
  if (w->sem_ready) sem_init(&w->wake, 0, 0);
  w->urgent_req = w->urgent_done = 0;
  w->process_pending = 0;
  w->stop = 0;
}
