/*
 * The writer thread. Every few milliseconds (or when a thread's buffer is half
 * full) it takes a snapshot of every thread buffer's head, drains the STRING
 * queue, then each buffer up to its snapshot, encoding records into one chunk
 * (common/codec.h). A chunk becomes a zstd frame when it reaches CUTRACE_FRAME_KB
 * or is CUTRACE_FLUSH_MS old, and the frame goes to the sink (sink.c: the file, or the
 * stream to a collector).
 *
 * The sink is opened by this thread before its first round (the file created and its
 * header written, or the stream connected), so the program never waits for a disk or a
 * collector: its records stay in the threads' buffers meanwhile (a full buffer drops
 * and counts, as ever). An open that fails turns tracing off.
 *
 * Why strings come first: a record that uses string S was emitted after S was
 * queued; if the snapshot saw that record, the queue append is visible when the
 * writer takes the queue's lock afterwards, so S lands in the file earlier.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "core.h"

struct writer {
  struct ctp_sink sink;     /* the trace file or the collector's stream */
  ct_chunk chunk;
  ZSTD_CCtx *cctx;
  uint8_t *out;
  size_t out_cap;
  uint64_t chunk_start_ns;
  uint64_t written_records; /* records in frames written */
  uint64_t lost_records;    /* records in frames that could not be written */
  uint64_t dropped;         /* sum of the DROP records added */
  ct_record first[CTP_WRITER_MAX_FIRST]; /* PROCESS, JOB, ...: written first */
  unsigned nfirst;
  int process_pending;
  pthread_t thread;
  int running;
  pid_t thread_tid;
  int in_thread;            /* the pass runs on the writer thread (emit TRACER records) */
  int chunk_has_program;    /* the chunk holds records other than the writer's own */
  int sem_ready;
  int sink_ready;           /* the sink is open (file created, stream connected) */
  int gave_up;              /* the sink's open failed: tracing off */
  sem_t wake;
  int stop;
  unsigned urgent_req, urgent_done;
  int warned;
  uint64_t busy_cpu_ns;     /* writer thread CPU time spent in rounds */
  uint64_t taken_records;   /* records taken from thread buffers */
};

static struct writer W = {.sink = {.fd = -1}};

/* How long exit or exec waits for an open still under way when no thread recorded
 * anything (ctp_writer_finish): a local disk or a healthy collector answers well
 * within it. */
#define CTP_WRITER_IDLE_OPEN_WAIT_MS 100
/* How long exit or exec waits for a file's open still under way (an open has no
 * deadline of its own, unlike a connect). */
#define CTP_WRITER_FILE_OPEN_WAIT_MS (CTP_SINK_EXIT_TIMEOUT_NS / 1000000)

/* Compresses and writes the current chunk as one frame, then empties it. */
static void frame_flush(struct writer *w) {
  if (!w->chunk.len) return;
  int saved = errno;
  uint64_t begin = ctp_now_ns();
  /* Nowhere to write (a lost collector, a closed descriptor): not even compressed. */
  const char *why = w->sink.fd >= 0 ? NULL : w->sink.stream ? "no connection" : "no trace file";
  size_t n = why ? 0 : ct_chunk_compress(&w->chunk, w->cctx, ctp_cfg.zstd_level, w->out, w->out_cap);
  if (!n && !why) why = "compression failed";
  if (n && w->sink.fd >= 0 && !ctp_sink_intact(&w->sink)) {
    /* The program closed our descriptor (closefrom, a daemon's clean-up) and the
     * number may now be one of its own files: never write there again. */
    w->sink.fd = -1;
    why = w->sink.stream ? "the program closed the stream's descriptor"
                         : "the program closed the trace file's descriptor";
  }
  int ok = !why && ctp_sink_write(&w->sink, w->out, n) == 0;
  if (!ok && !why) {
    why = ctp_sink_reason(&w->sink, errno);
    /* A stream cut inside a frame cannot go on: the collector would get garbage. */
    if (w->sink.stream) ctp_sink_close(&w->sink);
  }
  if (ok) {
    w->written_records += w->chunk.records;
  } else {
    w->lost_records += w->chunk.records;
    if (!w->warned) {
      w->warned = 1;
      ctp_warn("cannot %s (%s); records are being lost", ctp_sink_failure(&w->sink), why);
    }
  }
  ct_chunk_reset(&w->chunk);
  /* A frame of only the writer's own TRACER records is not reported in turn:
   * otherwise an idle process would write one frame per CUTRACE_FLUSH_MS forever. */
  if (w->in_thread && w->chunk_has_program)
    ctp_emit_tracer("flush", begin, ctp_now_ns(), ok ? n : 0);
  w->chunk_has_program = 0;
  errno = saved;
}

static void add_record(struct writer *w, const ct_record *rec) {
  if (!w->chunk.len) w->chunk_start_ns = ctp_now_ns();
  if (ct_chunk_add(&w->chunk, rec) < 0) {
    frame_flush(w);
    w->chunk_start_ns = ctp_now_ns();
    if (ct_chunk_add(&w->chunk, rec) < 0) return; /* cannot happen: cap >= one record */
  }
  if (rec->kind == CT_KIND_DROP) w->dropped += rec->u.drop.count;
  if (w->chunk.len + CT_MAX_RECORD_BYTES > ctp_cfg.frame_bytes) frame_flush(w);
}

static void add_string(void *arg, uint64_t id, const char *s, size_t len) {
  struct writer *w = arg;
  w->chunk_has_program = 1;
  if (w->chunk.len + len + CT_MAX_RECORD_BYTES > w->chunk.cap) frame_flush(w);
  if (!w->chunk.len) w->chunk_start_ns = ctp_now_ns();
  if (ct_chunk_add_string(&w->chunk, id, s, len) < 0) return;
  if (w->chunk.len + CT_MAX_RECORD_BYTES > ctp_cfg.frame_bytes) frame_flush(w);
}

/* Writes a PAUSE record (window.c's transitions). */
static void add_pause(void *arg, const ct_record *rec) {
  struct writer *w = arg;
  w->chunk_has_program = 1;
  add_record(w, rec);
}

/* Writes a DROP record for drops of b up to cumulative count total not yet in the file. */
static void add_drop(struct writer *w, struct ctp_tbuf *b, uint64_t total, uint64_t first_ns,
                     uint64_t last_ns) {
  if (total <= b->drops_written) return;
  ct_record r;
  r.kind = CT_KIND_DROP;
  r.u.drop = (struct ct_drop){.tid = b->tid, .count = total - b->drops_written,
                              .first_ns = first_ns, .last_ns = last_ns};
  b->drops_written = total;
  add_record(w, &r);
}

/* Moves b's records up to its snapshot into the chunk. */
static void drain_buffer(struct writer *w, struct ctp_tbuf *b) {
  uint64_t t = b->tail, end = b->snap_head, m = b->mask;
  const uint64_t *ring = b->ring;
  if (t != end && b->tid != (uint64_t)w->thread_tid) w->chunk_has_program = 1;
  ct_record r;
  unsigned since_release = 0;
  while (t < end) {
    uint64_t hdr = ring[t & m];
    unsigned nf = (unsigned)(hdr >> 8) & 0xff;
    if (CTP_UNLIKELY(nf > CT_MAX_FIELDS || (uint8_t)hdr >= CT_MAX_KINDS ||
                     ct_kind_nfields((uint8_t)hdr) != nf)) {
      t = end; /* not a record header: never expected; skip what is left */
      break;
    }
    r.kind = (uint8_t)hdr;
    for (unsigned i = 0; i < nf; i++) r.u.v[i] = ring[(t + 1 + i) & m];
    t += 1 + nf;
    if (r.kind == CT_KIND_DROP)
      add_drop(w, b, r.u.drop.count, r.u.drop.first_ns, r.u.drop.last_ns);
    else
      add_record(w, &r);
    w->taken_records++;
    if (++since_release == 4096) { /* give the producer its space back early */
      __atomic_store_n(&b->tail, t, __ATOMIC_RELEASE);
      since_release = 0;
    }
  }
  __atomic_store_n(&b->tail, t, __ATOMIC_RELEASE);
  __atomic_store_n(&b->kicked, 0, __ATOMIC_RELAXED);
}

/*
 * One round: strings, the first records (PROCESS, JOB, ...), then every buffer. Drops not yet in
 * the ring are reported for exited threads, and for every thread when the round
 * is final or urgent (a fatal signal); final also always writes the chunk.
 */
static void pass(struct writer *w, int final) {
  unsigned urgent = __atomic_load_n(&w->urgent_req, __ATOMIC_ACQUIRE);
  struct ctp_tbuf *list = ctp_buffers_head();
  for (struct ctp_tbuf *b = list; b; b = b->next)
    b->snap_head = __atomic_load_n(&b->head, __ATOMIC_ACQUIRE);
  ctp_strings_drain(add_string, w);
  if (w->process_pending) {
    w->chunk_has_program = 1;
    for (unsigned i = 0; i < w->nfirst; i++) add_record(w, &w->first[i]);
    w->process_pending = 0;
  }
  /* After the snapshot: every record in it that followed a pause's beginning or end
   * comes after that PAUSE record (window.c). */
  ctp_window_drain(add_pause, w);
  for (struct ctp_tbuf *b = list; b; b = b->next) {
    if (b->announce) {
      ct_record t;
      t.kind = CT_KIND_THREAD;
      t.u.thread = (struct ct_thread){.tid = b->tid, .name = b->name_id, .start_ns = b->start_ns};
      add_record(w, &t);
      b->announce = 0;
    }
    drain_buffer(w, b);
    int done = __atomic_load_n(&b->done, __ATOMIC_ACQUIRE);
    if ((done && b->tail == __atomic_load_n(&b->head, __ATOMIC_ACQUIRE)) || final ||
        urgent != w->urgent_done)
      add_drop(w, b, __atomic_load_n(&b->drops_total, __ATOMIC_ACQUIRE), b->drop_first_ns,
               b->drop_last_ns);
  }
  if (!final) ctp_buffers_reap();
  if (w->chunk.len &&
      (final || urgent != w->urgent_done || ctp_now_ns() - w->chunk_start_ns >= ctp_cfg.flush_ns))
    frame_flush(w);
  __atomic_store_n(&w->urgent_done, urgent, __ATOMIC_RELEASE);
}

/* The last round: everything left, the END record, close. */
static void finish_file(struct writer *w) {
  w->in_thread = 0; /* no TRACER records: nothing would write them */
  pass(w, 0);       /* a thread that exited meanwhile: its last DROP */
  pass(w, 1);
  ct_record end;
  end.kind = CT_KIND_END;
  end.u.end = (struct ct_end){.records = w->written_records + w->chunk.records,
                              .drops = w->dropped + w->lost_records,
                              .end_ns = ctp_now_ns()};
  add_record(w, &end);
  frame_flush(w);
  ctp_sink_close(&w->sink);
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
  w->thread_tid = (pid_t)syscall(SYS_gettid);
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
    pass(w, 0);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    __atomic_add_fetch(&w->busy_cpu_ns,
                       (uint64_t)((c1.tv_sec - c0.tv_sec) * 1000000000ll + (c1.tv_nsec - c0.tv_nsec)),
                       __ATOMIC_RELAXED);
  }
  finish_file(w);
  return NULL;
}

void ctp_writer_join_left(void) {
  struct writer *w = &W;
  if (w->running && __atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
    pthread_join(w->thread, NULL);
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
    pthread_join(w->thread, NULL);
    w->running = 0;
  }
}

int ctp_writer_urgent_flush(unsigned timeout_ms) {
  struct writer *w = &W;
  if (!w->running || (pid_t)syscall(SYS_gettid) == w->thread_tid) return 0;
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
