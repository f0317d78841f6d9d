/*
 * The GPU-timed calls of one thread that NVTX ranges not yet closed may still claim
 * (report_ranges.c). A RANGE record is written when its range closes, so a call made
 * inside a long range (a whole training run) is only claimed when that range's record
 * comes, possibly millions of calls later. The queue keeps every such call, in the
 * order its API record was read, with no limit on their number: the newest
 * CT_RANGE_QUEUE_MEM of them in memory, the older ones in an unnamed temporary file
 * (64 bytes a call), read back when a range claims them.
 *
 * A range claims the calls that began inside it; each call carries the latest begin of
 * the calls up to it (max_begin, never decreasing along the queue), so the calls a
 * range can claim are found by a binary search, whatever the order of the calls'
 * begins. Every call queued has a sequence number (seq); a call stays addressable by
 * it until the queue is cleared (an outermost range closed).
 */
#ifndef CUTRACE_RANGE_QUEUE_H
#define CUTRACE_RANGE_QUEUE_H

#include <stdint.h>
#include <stdio.h>

#ifndef CT_RANGE_QUEUE_MEM /* (a test sets it small) */
#define CT_RANGE_QUEUE_MEM 16384 /* calls of a thread kept in memory (1 MiB) */
#endif

/* One queued call. Until done, its GPU work is unknown and its claims are kept by the
 * caller (by corr); once done, the fields below hold the GPU record's values. */
typedef struct ct_queued_call {
  uint64_t begin;     /* the call's begin */
  uint64_t max_begin; /* the latest begin of this and every earlier call in the queue */
  uint64_t corr;
  uint64_t device, stream, start, end; /* its GPU work (done) */
  uint8_t done;       /* its GPU record was read */
  uint8_t is_copy;    /* a copy or set (else a kernel, GEMM or graph) */
  uint8_t ninst;      /* ranges that claimed it */
  uint8_t unselected; /* its GPU work is not selected (--device, ...): credited as none */
  uint8_t pad[4];
} ct_queued_call;

typedef struct ct_range_queue {
  ct_queued_call *a;  /* a ring of the newest calls (cap a power of two) */
  size_t head, n, cap;
  uint64_t first_seq; /* seq of the oldest call kept (in the file when nfile > 0) */
  uint64_t nfile;     /* calls in the temporary file: seqs [first_seq, first_seq + nfile), */
  uint64_t file_base; /* from call file_base of the file on (those before were dropped) */
  uint64_t claims;    /* ranges that looked for calls in the queue since it was cleared */
  FILE *file;         /* NULL until the first call goes there */
  uint64_t last_max;  /* max_begin of the newest call */
  uint64_t file_max;  /* max_begin of the newest call in the file */
  int failed;         /* the temporary file could not be written: no more spilling */
} ct_range_queue;

/* Called for each call a range claims, in queue order; it may change *c (its ninst,
 * nothing that orders the queue). */
typedef void (*ct_range_claim_fn)(void *user, ct_queued_call *c);

/* Appends c (its max_begin is set here); *seq_out gets its seq. Returns 0; -1 out of
 * memory (nothing kept); 1 when the temporary file failed and the oldest calls were
 * forgotten to make room (*forgotten gets how many). */
int ct_range_queue_push(ct_range_queue *q, const ct_queued_call *c, uint64_t *seq_out,
                        uint64_t *forgotten);

/* 1 when seq is still in the queue. */
int ct_range_queue_has(const ct_range_queue *q, uint64_t seq);

/* Marks call seq (still in the queue) done with the GPU work of g (its device, stream,
 * start, end and is_copy are taken). Returns 0, -1 when the file failed. */
int ct_range_queue_complete(ct_range_queue *q, uint64_t seq, const ct_queued_call *g);

/* Calls fn for every call that began in [begin, end], oldest first. last: the queue is
 * cleared next, so changes made by fn to calls in the file need not be written back.
 * Returns 0, -1 when reading or writing the file failed (some calls were missed). */
int ct_range_queue_claim(ct_range_queue *q, uint64_t begin, uint64_t end, int last,
                         ct_range_claim_fn fn, void *user);

/* Forgets every call (their seqs are no longer in the queue); keeps the file open for
 * reuse. */
void ct_range_queue_clear(ct_range_queue *q);

/* Forgets the oldest calls up to the last whose max_begin is before t (none of them
 * began at or after t: a range beginning at t or later cannot claim them); the file
 * is reused from its start once it holds none. Returns how many, or -1 when the file
 * could not be read (nothing forgotten). */
long long ct_range_queue_drop_before(ct_range_queue *q, uint64_t t);

/* Frees the queue's memory and closes its file. */
void ct_range_queue_free(ct_range_queue *q);

/* Reads (write 0) or writes (write 1) len bytes at byte offset off of file (pread or
 * pwrite until done; the FILE's buffer is not used), as the temporary files of the
 * range queue and of steps (steps_spans.c) are. Returns 0, -1 when it failed. */
int ct_spill_io(FILE *file, uint64_t off, void *buf, size_t len, int write);

#endif
