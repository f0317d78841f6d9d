/*
 * A thread's calls waiting for the NVTX ranges around them (range_queue.h): a ring in
 * memory for the newest calls; when it holds CT_RANGE_QUEUE_MEM, its older half is
 * appended to an unnamed temporary file, where each call keeps its place (call k of the
 * file at byte 64 k), so that a call's GPU record and a range's claim can update it
 * there in place (pread/pwrite).
 */
#include "range_queue.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNK 1024 /* calls read back from the file at a time */

_Static_assert(sizeof(ct_queued_call) == 64, "a queued call is 64 bytes in the file");
_Static_assert(CT_RANGE_QUEUE_MEM >= 2 && !(CT_RANGE_QUEUE_MEM & (CT_RANGE_QUEUE_MEM - 1)),
               "CT_RANGE_QUEUE_MEM is a power of two");

static ct_queued_call *mem_at(const ct_range_queue *q, size_t i) {
  return &q->a[(q->head + i) & (q->cap - 1)];
}

int ct_spill_io(FILE *file, uint64_t off, void *buf, size_t len, int write) {
  int fd = fileno(file);
  for (size_t done = 0; done < len;) {
    ssize_t k = write ? pwrite(fd, (char *)buf + done, len - done, (off_t)(off + done))
                      : pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
    if (k <= 0) return -1;
    done += (size_t)k;
  }
  return 0;
}

/* Reads (write = 0) or writes n calls at position pos of the file. 0, or -1. */
static int file_io(ct_range_queue *q, uint64_t pos, ct_queued_call *calls, size_t n, int write) {
  return ct_spill_io(q->file, (q->file_base + pos) * sizeof *calls, calls, n * sizeof *calls,
                     write);
}

/* Moves the older half of the ring to the end of the file. 0, or -1 (nothing moved). */
static int spill_half(ct_range_queue *q) {
  if (!q->file && !(q->file = tmpfile())) return -1;
  size_t half = q->n / 2, first = q->cap - q->head < half ? q->cap - q->head : half;
  if (file_io(q, q->nfile, mem_at(q, 0), first, 1) < 0 ||
      (half > first && file_io(q, q->nfile + first, q->a, half - first, 1) < 0))
    return -1;
  q->file_max = mem_at(q, half - 1)->max_begin;
  q->head = (q->head + half) & (q->cap - 1);
  q->n -= half;
  q->nfile += half;
  return 0;
}

/* Makes room for one call in a full ring. 0; 1 with *forgotten set when calls had to be
 * forgotten (the file failed); -1 out of memory. */
static int make_room(ct_range_queue *q, uint64_t *forgotten) {
  if (q->cap < CT_RANGE_QUEUE_MEM) {
    size_t ncap = q->cap ? q->cap * 2 : CT_RANGE_QUEUE_MEM < 64 ? CT_RANGE_QUEUE_MEM : 64;
    ct_queued_call *na = malloc(ncap * sizeof *na);
    if (!na) return -1;
    for (size_t i = 0; i < q->n; i++) na[i] = *mem_at(q, i);
    free(q->a);
    q->a = na;
    q->cap = ncap;
    q->head = 0;
    return 0;
  }
  if (!q->failed && spill_half(q) == 0) return 0;
  /* no file: the calls in it and the oldest in memory are forgotten */
  uint64_t drop = q->failed ? 1 : q->n / 2;
  *forgotten = q->nfile + drop;
  q->first_seq += q->nfile + drop;
  q->nfile = q->file_base = 0;
  q->head = (q->head + drop) & (q->cap - 1);
  q->n -= drop;
  q->failed = 1;
  return 1;
}

int ct_range_queue_push(ct_range_queue *q, const ct_queued_call *c, uint64_t *seq_out,
                        uint64_t *forgotten) {
  int rc = 0;
  if (q->n == q->cap && (rc = make_room(q, forgotten)) < 0) return -1;
  ct_queued_call *slot = mem_at(q, q->n++);
  *slot = *c;
  if (c->begin > q->last_max) q->last_max = c->begin;
  slot->max_begin = q->last_max;
  *seq_out = q->first_seq + q->nfile + q->n - 1;
  return rc;
}

int ct_range_queue_has(const ct_range_queue *q, uint64_t seq) {
  return seq >= q->first_seq && seq - q->first_seq < q->nfile + q->n;
}

int ct_range_queue_complete(ct_range_queue *q, uint64_t seq, const ct_queued_call *g) {
  uint64_t pos = seq - q->first_seq;
  ct_queued_call c, *p = &c;
  if (pos >= q->nfile) p = mem_at(q, (size_t)(pos - q->nfile));
  else if (file_io(q, pos, &c, 1, 0) < 0) return -1;
  p->done = 1;
  p->is_copy = g->is_copy;
  p->unselected = g->unselected;
  p->device = g->device;
  p->stream = g->stream;
  p->start = g->start;
  p->end = g->end;
  return p == &c ? file_io(q, pos, &c, 1, 1) : 0;
}

/* The max_begin of the call at position pos (0 = the oldest); -1 when unreadable. */
static int max_begin_at(ct_range_queue *q, uint64_t pos, uint64_t *out) {
  if (pos >= q->nfile) {
    *out = mem_at(q, (size_t)(pos - q->nfile))->max_begin;
    return 0;
  }
  ct_queued_call c;
  if (file_io(q, pos, &c, 1, 0) < 0) return -1;
  *out = c.max_begin;
  return 0;
}

/* The position of the first call whose max_begin reaches t (none before it began at or
 * after t; in memory only, without reading the file, when no call there reaches it),
 * or -1 when the file could not be read. */
static long long first_reaching(ct_range_queue *q, uint64_t t) {
  uint64_t lo = q->nfile && q->file_max < t ? q->nfile : 0, hi = q->nfile + q->n;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2, mb;
    if (max_begin_at(q, mid, &mb) < 0) return -1;
    if (mb < t) lo = mid + 1;
    else hi = mid;
  }
  return (long long)lo;
}

int ct_range_queue_claim(ct_range_queue *q, uint64_t begin, uint64_t end, int last,
                         ct_range_claim_fn fn, void *user) {
  q->claims++;
  long long first = first_reaching(q, begin);
  if (first < 0) return -1;
  uint64_t lo = (uint64_t)first;
  int rc = 0;
  if (lo < q->nfile) {
    ct_queued_call *buf = malloc(CHUNK * sizeof *buf);
    if (!buf) return -1;
    for (uint64_t pos = lo; pos < q->nfile; pos += CHUNK) {
      size_t k = q->nfile - pos < CHUNK ? (size_t)(q->nfile - pos) : CHUNK;
      if (file_io(q, pos, buf, k, 0) < 0) {
        rc = -1;
        break;
      }
      int claimed = 0;
      for (size_t i = 0; i < k; i++)
        if (buf[i].begin >= begin && buf[i].begin <= end) {
          fn(user, &buf[i]);
          claimed = 1;
        }
      if (claimed && !last && file_io(q, pos, buf, k, 1) < 0) rc = -1;
    }
    free(buf);
    lo = q->nfile;
  }
  for (size_t i = (size_t)(lo - q->nfile); i < q->n; i++) {
    ct_queued_call *c = mem_at(q, i);
    if (c->begin >= begin && c->begin <= end) fn(user, c);
  }
  return rc;
}

void ct_range_queue_clear(ct_range_queue *q) {
  q->first_seq += q->nfile + q->n;
  q->nfile = q->file_base = 0;
  q->n = q->head = 0;
  q->last_max = 0;
  q->claims = 0;
}

long long ct_range_queue_drop_before(ct_range_queue *q, uint64_t t) {
  long long k = first_reaching(q, t);
  if (k <= 0) return k;
  uint64_t drop = (uint64_t)k;
  if (drop >= q->nfile) { /* the file's calls and the oldest in memory */
    size_t from_mem = (size_t)(drop - q->nfile);
    q->head = (q->head + from_mem) & (q->cap - 1);
    q->n -= from_mem;
    q->nfile = q->file_base = 0;
    if (!q->n) q->last_max = 0;
  } else {
    q->file_base += drop;
    q->nfile -= drop;
  }
  q->first_seq += drop;
  return k;
}

void ct_range_queue_free(ct_range_queue *q) {
  free(q->a);
  if (q->file) fclose(q->file);
  memset(q, 0, sizeof *q);
}
