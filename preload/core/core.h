/*
 * Internal declarations shared by the files of the recording core (preload/core/).
 * The public side (for preload/hooks/) is preload/trace.h; nothing here is exported.
 *
 *   config.c   environment knobs and the one-line warnings
 *   start.c    ctp_start, output file, PROCESS record, exit and fork handling
 *   buffer.c   per-thread rings, ctp_emit, ctp_tid, ctp_next_corr
 *   intern.c   the string table and the queue of STRING records to write
 *   writer.c   the writer thread: opens the sink, runs rounds, exit / signal / fork
 *   writer_pass.c  its rounds: drain, encode, compress, write frames (writer.h)
 *   sink.c     where the frames go: a trace file, or a stream to a collector
 *   signals.c  fatal-signal handlers: urgent flush, then the program's handler
 *   exec.c     the exec family: END and close before the new image replaces this one
 *   window.c   recording windows: delay, cudaProfilerStart/Stop, duration; PAUSE records
 *   job.c      the rank in a distributed job, from the launcher's environment (job.h)
 *   nocuda.c   the line a process without CUDA (no trace file) adds to DIR/.nocuda
 */
#ifndef CUTRACE_PRELOAD_CORE_H
#define CUTRACE_PRELOAD_CORE_H

#include <pthread.h>
#include <semaphore.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "codec.h"
#include "trace.h"

#ifndef CTP_TRACER_VERSION
#define CTP_TRACER_VERSION 100 /* major * 10000 + minor * 100 + patch */
#endif

/* ---- config.c ---- */

/* The tracer's settings, read once from the environment by ctp_config_load. */
struct ctp_config {
  char output[4096];     /* CUTRACE_OUTPUT: directory of the trace files, or tcp:/unix: */
  int disabled;          /* CUTRACE_DISABLE */
  int loaded;            /* ctp_config_load ran (ctp_warn reads CUTRACE_QUIET itself before) */
  int quiet;             /* CUTRACE_QUIET: no messages at all */
  int signals;           /* CUTRACE_SIGNALS: install fatal-signal handlers */
  size_t buffer_bytes;   /* CUTRACE_BUFFER_KB: per-thread ring */
  unsigned ring_pool;    /* CUTRACE_RING_POOL: ready rings the writer keeps (0: none) */
  size_t frame_bytes;    /* CUTRACE_FRAME_KB: uncompressed chunk per frame */
  uint64_t flush_ns;     /* CUTRACE_FLUSH_MS: most age of a frame */
  int zstd_level;        /* CUTRACE_ZSTD_LEVEL */
  int capture_profiler;  /* CUTRACE_CAPTURE=profiler: record between cudaProfilerStart/Stop */
  char capture_range[256]; /* CUTRACE_CAPTURE=nvtx:NAME: record while a range NAME is open */
  uint64_t delay_ns;     /* CUTRACE_DELAY: seconds before recording begins */
  uint64_t duration_ns;  /* CUTRACE_DURATION: seconds of recording, then no more */
  int all_processes;     /* CUTRACE_ALL_PROCESSES: a file for every process image, CUDA or not */
};

#define CTP_DEFAULT_OUTPUT "cutrace.data"
#define CTP_DEFAULT_BUFFER_KB 1024
#define CTP_DEFAULT_RING_POOL 2
#define CTP_DEFAULT_FRAME_KB 1024
#define CTP_DEFAULT_FLUSH_MS 200
#define CTP_DEFAULT_ZSTD_LEVEL 1

extern struct ctp_config ctp_cfg CTP_HIDDEN;

/* Fills c from the environment; bad values get one line on stderr and the default. */
void ctp_config_load(struct ctp_config *c) CTP_HIDDEN;

/* ---- buffer.c ---- */

/*
 * One thread's single-producer / single-consumer ring of 64-bit words. A record is
 * a header word (kind | nfields << 8) followed by its nfields field values.
 * The owning thread writes and advances head; the writer reads and advances tail.
 * A DROP record in the ring carries the thread's cumulative drop count; the
 * writer turns it into the count since the last report (drops_written), and can
 * report drops itself (exit, fatal signal, thread gone) without double counting.
 */
struct ctp_tbuf {
  /* producer side (the owning thread) */
  uint64_t head;          /* words written (release-stored) */
  uint64_t cached_tail;   /* last tail seen by the producer */
  uint64_t drops_total;   /* records lost so far (only grows; release-stored) */
  uint64_t drops_pushed;  /* drops_total when the last DROP record entered the ring */
  uint64_t drop_first_ns, drop_last_ns; /* times of the drops since then */
  uint64_t tid;
  uint64_t name_id, start_ns; /* of the THREAD record, to repeat it in a new file */
  int kicked;             /* writer already woken for this buffer */
  int done;               /* thread exited: no more records (release-stored) */
  /* consumer side (the writer), on its own cache line */
  uint64_t tail __attribute__((aligned(64)));
  uint64_t snap_head;     /* head seen at the start of the current pass */
  uint64_t drops_written; /* drops reported in the file so far */
  int announce;           /* write a THREAD record first (a new file after a failed exec) */
  struct ctp_tbuf *next;  /* registry list */
  uint64_t mask;          /* ring words - 1 */
  uint64_t *ring;
};

/* First of the registered buffers (newest first); walked by the writer only. */
struct ctp_tbuf *ctp_buffers_head(void) CTP_HIDDEN;

/* Unlinks and frees buffers whose threads are done and whose records were written. */
void ctp_buffers_reap(void) CTP_HIDDEN;

/* Writer thread: once ctp_ring_pool_want was called, allocates and populates rings
 * until the pool holds as many as it keeps (CUTRACE_RING_POOL, bounded by memory;
 * buffer.c), as one mapping backed by a huge page where THP allows. Nothing when
 * memory is short (the next round tries again). */
void ctp_ring_pool_fill(void) CTP_HIDDEN;

/* The calling thread (the writer) never takes a ready ring: it maps its own. */
void ctp_ring_pool_skip(void) CTP_HIDDEN;

/* Ready rings in the pool now (tests, benchmarks). */
unsigned ctp_ring_pool_ready(void) CTP_HIDDEN;

/* Rings the writer has made for the pool since start-up or the fork (tests, benchmarks). */
unsigned long ctp_ring_pool_made(void) CTP_HIDDEN;
/* Frees the spare rings (tracing gave up: nothing will take them); a thread taking one
 * at the same time keeps it (each slot is exchanged once). */
void ctp_ring_pool_drain(void) CTP_HIDDEN;

/* Fork child: frees every buffer (they hold the parent's records) and the parent's
 * spare rings, forgets tid. */
void ctp_buffers_after_fork(void) CTP_HIDDEN;

/* Locks held across fork() so the child sees consistent lists. */
void ctp_buffers_lock(void) CTP_HIDDEN;
void ctp_buffers_unlock(void) CTP_HIDDEN;

/* ---- intern.c ---- */

/* ctp_intern_n without the "tracing is on" test (used during start-up). */
uint64_t ctp_intern_always(const char *s, size_t len) CTP_HIDDEN;

/* Calls fn(arg, id, bytes, len) for every queued STRING record, in order, and empties the queue. */
void ctp_strings_drain(void (*fn)(void *arg, uint64_t id, const char *s, size_t len), void *arg)
    CTP_HIDDEN;

/* Queues every known string again, for a new file (fork child, failed exec). */
void ctp_strings_requeue_all(void) CTP_HIDDEN;

void ctp_strings_lock(void) CTP_HIDDEN;
void ctp_strings_unlock(void) CTP_HIDDEN;

/* ---- sink.c ---- */

/* Where the trace goes: a file (stream 0) or a stream to a collector (stream 1). */
struct ctp_sink {
  int fd;    /* -1 until the writer thread opened it (ctp_sink_open) */
  int stream;
  dev_t dev; /* identity of the descriptor, checked before each write */
  ino_t ino;
  char stream_name[256]; /* a stream's file name for the collector (<host>.<pid>.ctr) */
  char file_base[320];   /* a file's name without .ctr: <prefix><host>.<pid> */
  pid_t pid;             /* whose trace it is */
};

#define CTP_SINK_CONNECT_TIMEOUT_NS 5000000000ull /* connect and first send (writer thread) */
#define CTP_SINK_EXIT_TIMEOUT_NS 5000000000ull    /* sends once the final flush began */

/* At start-up: makes a directory absolute, or parses a collector's address (resolved
 * later, on the writer thread). Returns 0, or -1 after one line on stderr (not
 * tracing). */
int ctp_sink_prepare(void) CTP_HIDDEN;

/* Names the trace of pid (prefix "rank-N." or ""): the file <prefix><host>.<pid>[.<n>].ctr,
 * or the stream's name. No I/O: the writer thread opens it with ctp_sink_open. */
void ctp_sink_name(struct ctp_sink *s, const char *prefix, const char *host, pid_t pid)
    CTP_HIDDEN;

/* On the writer thread: opens a sink named by ctp_sink_name. A file: creates the
 * directory (with parents, mode 0700) and the file (O_EXCL, the first free name) and
 * writes the file header. A stream: resolves the collector's address (unless this
 * process or its parent did), connects (every resolved address in turn,
 * CTP_SINK_CONNECT_TIMEOUT_NS in all), sends the preamble and the file header.
 * Returns 0, or -1 after one line on stderr ("...; not tracing"). */
int ctp_sink_open(struct ctp_sink *s) CTP_HIDDEN;

/* Held across fork() (start.c) so that a child's sink names the writer's descriptor
 * even while it is being opened. */
void ctp_sink_lock(void) CTP_HIDDEN;
void ctp_sink_unlock(void) CTP_HIDDEN;

/* Writes all n bytes (a stream: without SIGPIPE, waiting while the collector is slow,
 * at most until the exit deadline). Returns 0, or -1 (errno). */
int ctp_sink_write(struct ctp_sink *s, const void *buf, size_t n) CTP_HIDDEN;

/* 1 when s->fd is still the descriptor ctp_sink_open opened (the program may close it). */
int ctp_sink_intact(const struct ctp_sink *s) CTP_HIDDEN;

/* Closes s if it is still ours; s->fd = -1. */
void ctp_sink_close(struct ctp_sink *s) CTP_HIDDEN;

/* "write the trace" / "send the trace to ADDR", and the reason for errno err. */
const char *ctp_sink_failure(const struct ctp_sink *s) CTP_HIDDEN;
const char *ctp_sink_reason(const struct ctp_sink *s, int err) CTP_HIDDEN;

/* The final flush begins: stream sends give up CTP_SINK_EXIT_TIMEOUT_NS from now. */
void ctp_sink_exit_deadline(void) CTP_HIDDEN;

/* ---- writer.c ---- */

#define CTP_WRITER_MAX_FIRST 8

/*
 * Starts the writer on sink s (named, not yet open: the thread opens it first,
 * ctp_sink_open), with the records to write first (the
 * PROCESS record, then JOB and its warnings: at most CTP_WRITER_MAX_FIRST),
 * and starts its thread. Returns 0, or -1 (nothing started).
 */
int ctp_writer_start(const struct ctp_sink *s, const ct_record *first, unsigned nfirst)
    CTP_HIDDEN;

/* Waits for a writer that ctp_writer_finish left opening its sink to end: before a new
 * sink is named after a failed exec. A stream: at most its connect deadline, then the
 * exit deadline of its sends; a file: as long as its open takes. */
void ctp_writer_join_left(void) CTP_HIDDEN;

/* Wakes the writer (async-signal-safe). */
void ctp_writer_kick(void) CTP_HIDDEN;

/* Final flush: the writer thread drains everything, writes END, closes, and ends. A
 * sink still being opened is waited for: at most 100 ms when no thread recorded
 * anything, else a stream until its connect deadline, a file at most
 * CTP_SINK_EXIT_TIMEOUT_NS (then one line, and the thread is left to itself). */
void ctp_writer_finish(void) CTP_HIDDEN;

/*
 * From a signal handler: asks the writer to write everything recorded so far (once its
 * sink is open: waited for too) and waits up to timeout_ms in all. Async-signal-safe.
 * Returns 1 when it was written.
 */
int ctp_writer_urgent_flush(unsigned timeout_ms) CTP_HIDDEN;

/* Fork child: forgets the parent's writer (its thread does not exist here). */
void ctp_writer_after_fork(void) CTP_HIDDEN;

/* Records the writer thread has taken from buffers, and the CPU time it spent doing so. */
void ctp_writer_stats(uint64_t *records, uint64_t *cpu_ns) CTP_HIDDEN;

/* 1 while the writer thread runs. */
int ctp_writer_running(void) CTP_HIDDEN;

/* 1 when the writer's sink could not be opened and it turned tracing off (read
 * after turning tracing on: sequentially consistent with the writer's own store). */
int ctp_writer_gave_up(void) CTP_HIDDEN;

/* ---- start.c ---- */

/* 1 in a fork child until its first record opens its file. */
extern int ctp_file_pending CTP_HIDDEN;

/* Opens the fork child's file and starts its writer (its first record; buffer.c). */
void ctp_file_open(void) CTP_HIDDEN;

/*
 * Before an exec: the final flush (callbacks, the rest, END, close). Returns 1 when
 * it was done (this process is the tracing one), 0 otherwise.
 */
int ctp_exec_finish(void) CTP_HIDDEN;

/* After an exec that failed: tracing on again, into a new file (<host>.<pid>.<n>.ctr). */
void ctp_exec_resume(void) CTP_HIDDEN;

/* ---- nocuda.c ---- */

/* At the exit of a process that leaves no trace file (it did not use CUDA): appends its
 * line (pid, ppid, name) to CUTRACE_OUTPUT/.nocuda, if that directory exists, on a
 * short-lived thread whose I/O is waited for at most 1 s (the program never waits
 * longer for the tracer's I/O). Nothing when streaming to a collector. Keeps errno. */
void ctp_nocuda_note(pid_t pid, pid_t ppid, const char *exe) CTP_HIDDEN;

/* ---- window.c ---- */

/* Sets the initial state from the settings (paused when CUTRACE_DELAY or
 * CUTRACE_CAPTURE=profiler asks); start_ns is the tracer's start. Before tracing is on. */
void ctp_window_init(uint64_t start_ns) CTP_HIDDEN;

/* Calls fn(arg, rec) for each PAUSE record not yet written, in order (the writer,
 * after snapshotting the buffers). */
void ctp_window_drain(void (*fn)(void *arg, const ct_record *rec), void *arg) CTP_HIDDEN;

/* A new file (fork child, failed exec): forgets the untaken transitions and queues
 * the open pause again, if any. */
void ctp_window_requeue(void) CTP_HIDDEN;

/* Fork child: the lock may have been held by a thread that does not exist here. */
void ctp_window_reinit_lock(void) CTP_HIDDEN;

/* ---- signals.c ---- */

/* Installs the fatal-signal handlers (where the program did not ignore the signal). */
void ctp_signals_install(void) CTP_HIDDEN;

#endif
