/*
 * The writer's state, shared by writer.c (the thread: start, open, wait, finish,
 * urgent flush, fork) and writer_pass.c (its rounds: drain, encode, compress, write).
 * Internal to preload/core/.
 */
#ifndef CUTRACE_PRELOAD_WRITER_H
#define CUTRACE_PRELOAD_WRITER_H

#include <pthread.h>
#include <semaphore.h>
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
  int claimed;              /* the thread was joined or detached itself (claim_thread) */
  sem_t wake;
  int stop;
  unsigned urgent_req, urgent_done;
  int warned;
  uint64_t busy_cpu_ns;     /* writer thread CPU time spent in rounds */
  uint64_t taken_records;   /* records taken from thread buffers */
};

/* One round: strings, the first records (PROCESS, JOB, ...), then every buffer up to
 * its snapshot; final (or an urgent request) also reports every drop and writes the
 * chunk as a frame. */
void ctp_writer_pass(struct writer *w, int final) CTP_HIDDEN;

/* The last round: everything left, the END record, close. */
void ctp_writer_finish_file(struct writer *w) CTP_HIDDEN;

#endif
