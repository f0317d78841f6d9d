/*
 * The pauses of one traced process (PAUSE records, format 1.3): the intervals in which
 * the tracer recorded nothing of the program (CUTRACE_DELAY, CUTRACE_CAPTURE=profiler,
 * CUTRACE_DURATION). What happened then is unknown: GPU idle time that touches a pause
 * is not idle time anyone can explain, and the tools leave it out.
 */
#ifndef CUTRACE_PAUSES_H
#define CUTRACE_PAUSES_H

#include <stddef.h>
#include <stdint.h>

#include "cutrace/format.h"

/* One pause: [begin_ns, end_ns); end_ns UINT64_MAX while still open (to the end). */
typedef struct ct_pause_span {
  uint64_t begin_ns, end_ns;
  const char *why; /* "delay", "profiler", "nvtx", "duration"; owned by the caller */
} ct_pause_span;

/* Pauses in time order. Zero-initialise. */
typedef struct ct_pause_list {
  ct_pause_span *v;
  size_t n, cap;
} ct_pause_list;

/*
 * Adds a PAUSE record: a new pause, or the end of the open one that began at the
 * same time (the writer writes a pause when it begins and again when it ends).
 * why must outlive the list. Returns 0, or -1 when memory runs out.
 */
int ct_pauses_add(ct_pause_list *l, const struct ct_pause *rec, const char *why);

/* 1 when some pause intersects [a, b] (an open pause reaches to the end). */
int ct_pauses_touch(const ct_pause_list *l, uint64_t a, uint64_t b);

/* Paused time within [a, b]. */
uint64_t ct_pauses_within(const ct_pause_list *l, uint64_t a, uint64_t b);

/* Frees the list's memory and empties it. */
void ct_pauses_free(ct_pause_list *l);

#endif
