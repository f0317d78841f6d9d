/*
 * The NVTX part of libtrace.so: the injection entry point and handlers
 * (nvtx_inject.c), the per-thread push/pop stacks (nvtx_stack.c) and the table of
 * start/end ranges (nvtx_startend.c). Everything here is hidden.
 *
 * Names are string ids from ctp_intern (0 = none). A domain is the string id of
 * its name, 0 for NVTX's default domain.
 */
#ifndef CUTRACE_PRELOAD_NVTX_INTERNAL_H
#define CUTRACE_PRELOAD_NVTX_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

/* RANGE.flags bits (to be mirrored in include/cutrace/format.h as CT_RANGE_*). */
#ifndef CT_RANGE_UNCLOSED
#define CT_RANGE_UNCLOSED 0x1 /* still open at thread or process exit: end_ns is that exit */
#endif
#ifndef CT_RANGE_STARTEND
#define CT_RANGE_STARTEND 0x2 /* a start/end range (nvtxRangeStart/End), not push/pop */
#endif

/* Push/pop entries kept per thread; deeper pushes are counted but not recorded. */
#define NVTX_STACK_MAX 256

/* Per-thread cache of names by address (NVTX names are mostly string literals). */
#define NVTX_NAME_CACHE 64        /* entries, a power of two */
#define NVTX_NAME_CACHE_BYTES 48  /* longer names are interned every time */

/*
 * ctp_intern for a name passed to an NVTX call, through a per-thread cache keyed
 * by the string's address and checked against the cached bytes, so a reused buffer
 * with new contents gets its own id. Returns 0 for NULL or when tracing is off.
 */
uint64_t nvtx_intern_name(const char *s) CTP_HIDDEN;

/*
 * Opens a push/pop range named name in domain on the calling thread. Returns its
 * 0-based level within that domain on this thread (what nvtxRangePush returns).
 */
int nvtx_range_push(uint64_t domain, uint64_t name) CTP_HIDDEN;

/*
 * Closes the innermost open push/pop range of domain on the calling thread and
 * emits its RANGE record. Returns its level, or -1 when none is open (an
 * unbalanced pop: nothing is recorded).
 */
int nvtx_range_pop(uint64_t domain) CTP_HIDDEN;

/* Opens a start/end range; returns its id for nvtx_range_end (never 0). */
uint64_t nvtx_range_start(uint64_t domain, uint64_t name) CTP_HIDDEN;

/*
 * Closes the start/end range id (on any thread) and emits its RANGE record with the
 * starting thread's tid. Unknown or already-ended ids are ignored.
 */
void nvtx_range_end(uint64_t id) CTP_HIDDEN;

/* Emits a MARK record on the calling thread. */
void nvtx_mark(uint64_t domain, uint64_t name) CTP_HIDDEN;

/*
 * Sets up thread-exit and process-exit closing of open ranges. Idempotent and
 * thread-safe; called by InitializeInjectionNvtx2 before any handler is installed.
 */
void nvtx_ranges_init(void) CTP_HIDDEN;

/* Emits the push/pop ranges still open on every thread as CT_RANGE_UNCLOSED at now_ns. */
void nvtx_stack_close_all(uint64_t now_ns) CTP_HIDDEN;

/* Emits the start/end ranges still open as CT_RANGE_UNCLOSED at now_ns. */
void nvtx_startend_close_all(uint64_t now_ns) CTP_HIDDEN;

/* Fork child: forgets the start/end ranges of the parent (they end in its trace). */
void nvtx_startend_after_fork(void) CTP_HIDDEN;

/* Emits one RANGE record. */
/* 1 when name is the range of CUTRACE_CAPTURE=nvtx:NAME (preload/core/window.c). */
static inline int nvtx_is_capture_range(uint64_t name) {
  uint64_t want = __atomic_load_n(&ctp_capture_range_name, __ATOMIC_RELAXED);
  return CTP_UNLIKELY(want != 0) && name == want;
}

static inline void nvtx_emit_range(uint64_t tid, uint64_t domain, uint64_t name, uint64_t begin_ns,
                                   uint64_t end_ns, uint64_t depth, uint64_t flags) {
  if (CTP_UNLIKELY(__atomic_load_n(&ctp_paused, __ATOMIC_RELAXED)) && !ctp_window_saw(begin_ns))
    return; /* began and ended within a pause (preload/core/window.c) */
  ct_record rec;
  rec.kind = CT_KIND_RANGE;
  rec.nfields = 7;
  rec.str_len = 0;
  rec.str = NULL;
  rec.u.range.tid = tid;
  rec.u.range.domain = domain;
  rec.u.range.name = name;
  rec.u.range.begin_ns = begin_ns;
  rec.u.range.end_ns = end_ns;
  rec.u.range.depth = depth;
  rec.u.range.flags = flags;
  ctp_emit(&rec);
}

#endif
