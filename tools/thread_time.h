/*
 * A thread's time in the poll records of one entry point, counted once.
 *
 * The preload coalesces the queries of one target (cudaEventQuery, cuStreamQuery, ...)
 * into one record per spin, and keeps up to 4 spins open per thread: a thread polling
 * three events in turn writes three records that overlap in time (each from its own
 * first poll to its own answer). Summed, they would count the thread's wall time once
 * per target. The tools that add up CPU time (report's API table and --by callsite,
 * steps) count instead, for each record, the part of its span that no earlier record
 * of the same entry point on the same thread (and at the same depth: inner calls apart)
 * already covered, in the order the records are read: the parts add up to the union of
 * the spans, whatever the order. docs/report.md ("What is counted").
 */
#ifndef CT_THREAD_TIME_H
#define CT_THREAD_TIME_H

#include <stdint.h>

#include "model.h"

typedef struct ct_thread_time ct_thread_time;

/* A new, empty account (one per file read). NULL when out of memory. */
ct_thread_time *ct_thread_time_new(void);

/* Frees it (NULL is fine). */
void ct_thread_time_free(ct_thread_time *t);

/* 1 when s is a query of an event or a stream (a poll record, coalesced or not). */
int ct_span_is_poll(const ct_span *s);

/*
 * The time of s to count: its span (end - begin, 0 when reversed) for a call that is not
 * a query; for a query, the part of its span not covered by the queries of the same
 * entry point, thread, process and depth class counted before. Sets *oom (when not NULL)
 * and returns the whole span when memory runs out.
 */
uint64_t ct_thread_time_add(ct_thread_time *t, const ct_span *s, int *oom);

#endif
