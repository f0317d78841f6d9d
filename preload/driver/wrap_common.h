/*
 * The pattern of every driver wrapper (wrap_*.c): each driver.def entry gets
 *   - the exported function of its name (programs linked with -lcuda, RTLD_DEFAULT
 *     lookups, preloads stacked before us), forwarding to the next definition;
 *   - a hidden twin, handed out by cuGetProcAddress and by dlsym with a handle,
 *     forwarding to the pointer that lookup returned (ctpd_slot_<sym>).
 * Both run the family's body with the caller's return address.
 */
#ifndef CUTRACE_PRELOAD_DRIVER_WRAP_COMMON_H
#define CUTRACE_PRELOAD_DRIVER_WRAP_COMMON_H

#include "driver_internal.h"

#define CTPD_UNPAREN(...) __VA_ARGS__

#define CTPD_DEFINE(sym, ptsz, BODY, PARAMS, ARGS)                                        \
  CTP_EXPORT CUresult ctpd_x_##sym PARAMS __asm__(#sym);                                  \
  CTPD_HIDDEN void *ctpd_slot_##sym;                                                      \
  CTPD_HIDDEN CUresult ctpd_w_##sym PARAMS;                                               \
  CTP_EXPORT CUresult ctpd_x_##sym PARAMS {                                               \
    return BODY(CTPH_ID_##sym, ptsz, ctpd_next(CTPH_ID_##sym), __builtin_return_address(0), \
                CTPD_UNPAREN ARGS);                                                       \
  }                                                                                       \
  CUresult ctpd_w_##sym PARAMS {                                                          \
    return BODY(CTPH_ID_##sym, ptsz, __atomic_load_n(&ctpd_slot_##sym, __ATOMIC_ACQUIRE), \
                __builtin_return_address(0), CTPD_UNPAREN ARGS);                          \
  }

/* The MEMOP record of a copy of `bytes` bytes; dir (CT_MEMOP_*) 0: from where the
 * pointers live (src_mem / dst_mem, CT_MEM_*). */
void ctpd_emit_copy(uint64_t corr, uint64_t bytes, int dir, int src_mem, int dst_mem,
                    int async) CTPD_HIDDEN;

/* The body of a copy wrapper: a span (timed as CT_GPU_MEMCPY on stream) and, when
 * WHEN holds, its MEMOP record: bytes, dir (CT_MEMOP_*; 0: from where the pointers
 * live), SRC_MEM and DST_MEM (expressions giving each side's CT_MEM_*), async. A timed
 * copy evaluates its sides before its span closes: whether the call returned before
 * the copy was done (ctph_copy_returns_early) decides how its start is bounded
 * (preload/hooks/call.c); an untimed one after, its lookups out of the span. */
#define CTPD_COPY_BODY(id, ptsz, realp, ra, type, stream, CALL, WHEN, bytes, dir, SRC_MEM,  \
                       DST_MEM, async)                                                     \
  int src_mem_ = 0, dst_mem_ = 0, sides_found_ = 0;                                        \
  CTPD_SPAN_BODY(id, ptsz, realp, ra, type, stream, CT_GPU_MEMCPY, CALL,                   \
                 if (c.timing && (WHEN)) {                                                 \
                   src_mem_ = (SRC_MEM);                                                   \
                   dst_mem_ = (DST_MEM);                                                   \
                   sides_found_ = 1;                                                       \
                   c.returns_early = ctph_copy_returns_early(                              \
                       (dir) ? (dir) : ctph_copy_direction(src_mem_, dst_mem_), src_mem_,  \
                       dst_mem_, (async));                                                 \
                 },                                                                        \
                 if (WHEN) {                                                               \
                   if (!sides_found_) {                                                    \
                     src_mem_ = (SRC_MEM);                                                 \
                     dst_mem_ = (DST_MEM);                                                 \
                   }                                                                       \
                   ctpd_emit_copy(c.corr, (bytes), (dir), src_mem_, dst_mem_, (async));    \
                 })

/* The MEMOP record of a set of `bytes` bytes to `value` (device memory). */
void ctpd_emit_set(uint64_t corr, uint64_t bytes, uint64_t value, int async) CTPD_HIDDEN;

/* When the call is not traced (caller passes, tracing off): forward only. */
#define CTPD_UNTRACED(real, ra) (ctpd_caller_passes(ra) || CTP_UNLIKELY(!ctph_on()))

/* While the tracer is paused (preload/core/window.c) and realp exists: forwards with
 * CALL, runs TRACK (r holds the result) and returns; nothing is recorded. For the
 * wrappers whose state must stay current through a pause (captures, graph execs). */
#define CTPD_WHILE_PAUSED(fn_type, CALL, TRACK)                                        \
  if (CTP_UNLIKELY(ctph_alive() && __atomic_load_n(&ctp_paused, __ATOMIC_RELAXED)) &&   \
      realp) {                                                                         \
    ctph_poll_break(); /* the thread's open spins end at their last poll */           \
    fn_type real = (fn_type)realp;                                                     \
    CUresult r = CALL;                                                                 \
    int saved_ = errno;                                                                \
    TRACK;                                                                             \
    errno = saved_;                                                                    \
    return r;                                                                          \
  }

/* The result when no function to forward to exists. */
#define CTPD_NO_REAL CUDA_ERROR_NOT_FOUND

#define CTPD_INLINE static inline __attribute__((always_inline))

/* The body of a wrapper with no GPU name: forward when untraced, else a span
 * (gpu_type timed on stream when outermost); AFTER runs after the real call when
 * traced (r holds the result), DETAIL emits the detail record with c.corr (before the
 * API record: CTPH_FINISH). */
#define CTPD_SPAN_BODY(id, ptsz, realp, ra, type, stream, gpu_type, CALL, AFTER, DETAIL) \
  type real = (type)(realp);                                                          \
  if (!real)                                                                          \
    return CTPD_NO_REAL;                                                              \
  if (CTPD_UNTRACED(real, ra))                                                        \
    return CALL;                                                                      \
  ctpd_note_call();                                                                   \
  ctph_call c;                                                                        \
  ctph_call_begin(&c, id, ptsz, gpu_type, stream, 0);                                 \
  c.flags |= CT_API_DRIVER;                                                           \
  CUresult r = CALL;                                                                  \
  int saved_ = errno;                                                                 \
  AFTER;                                                                              \
  errno = saved_;                                                                     \
  CTPH_FINISH(c, r, DETAIL);                                                          \
  return r

#endif
