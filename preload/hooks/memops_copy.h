/*
 * What the runtime's copy wrappers share (memops.c, memops_array.c): the sides of a
 * copy (direction and memory types), its MEMOP record, and CTPH_COPY_BODY, the body of
 * every copy wrapper.
 */
#ifndef CUTRACE_PRELOAD_HOOKS_MEMOPS_COPY_H
#define CUTRACE_PRELOAD_HOOKS_MEMOPS_COPY_H

#include "hooks_internal.h"

/* Which sides of a copy are device memory by definition (a device symbol, a CUDA
 * array): their pointer is not looked up. */
enum { DEV_NONE = 0, DEV_SRC = 1, DEV_DST = 2, DEV_BOTH = 3 };

/* A copy's direction (CT_MEMOP_*) and the memory type (CT_MEM_*) of each side. */
struct copy_sides {
  int dir, src_mem, dst_mem;
};

/* The sides of a copy; kind is a cudaMemcpyKind, or -1 for peer; device: DEV_*. */
static inline struct copy_sides find_copy_sides(int kind, const void *src, const void *dst,
                                                int device) {
  struct copy_sides s;
  s.src_mem = device & DEV_SRC ? CT_MEM_DEVICE : ctph_memory_type(src);
  s.dst_mem = device & DEV_DST ? CT_MEM_DEVICE : ctph_memory_type(dst);
  switch (kind) {
  case -1: s.dir = CT_MEMOP_P2P; break;
  case cudaMemcpyHostToHost: s.dir = CT_MEMOP_H2H; break;
  case cudaMemcpyHostToDevice: s.dir = CT_MEMOP_H2D; break;
  case cudaMemcpyDeviceToHost: s.dir = CT_MEMOP_D2H; break;
  case cudaMemcpyDeviceToDevice: s.dir = CT_MEMOP_D2D; break;
  default: s.dir = ctph_copy_direction(s.src_mem, s.dst_mem); /* cudaMemcpyDefault */
  }
  return s;
}

/* Writes the MEMOP record of a copy. */
static inline void emit_copy(uint64_t corr, uint64_t bytes, const struct copy_sides *s, int async) {
  ct_record r = {.kind = CT_KIND_MEMOP};
  r.u.memop.corr = corr;
  r.u.memop.bytes = bytes;
  r.u.memop.kind = (uint64_t)s->dir;
  r.u.memop.src_mem = (uint64_t)s->src_mem;
  r.u.memop.dst_mem = (uint64_t)s->dst_mem;
  r.u.memop.async = (uint64_t)async;
  ctp_emit(&r);
}

/* The body of every copy wrapper: CTPH_MEMOP_BODY, the MEMOP record from the copy's
 * sides (bytes evaluated once the call's end time is taken, r holding its result).
 * A timed copy finds its sides before the span closes: whether the call returned
 * before the copy was done decides how its start is bounded (call.c); an untimed
 * one after, its lookups out of the span. */
#define CTPH_COPY_BODY(sym, ptsz, stream, call_args, bytes, kind, src, dst, async, device) \
  __typeof__(&sym) real = CTPH_REAL(sym);                                              \
  if (!real)                                                                           \
    return cudaErrorSharedObjectSymbolNotFound;                                        \
  if (CTP_UNLIKELY(!ctph_on()))                                                        \
    return real call_args;                                                             \
  ctph_call c;                                                                         \
  ctph_call_begin(&c, CTPH_ID_##sym, ptsz, CT_GPU_MEMCPY, (CUstream)(stream), 0);      \
  cudaError_t r = real call_args;                                                      \
  struct copy_sides sides = {0, 0, 0};                                                 \
  int sides_found = c.traced && c.timing;                                              \
  if (sides_found) {                                                                   \
    sides = find_copy_sides((kind), (src), (dst), (device));                           \
    c.returns_early = ctph_copy_returns_early(sides.dir, sides.src_mem, sides.dst_mem, \
                                              (async));                                \
  }                                                                                    \
  CTPH_FINISH(c, r, if (!sides_found) sides = find_copy_sides((kind), (src), (dst), (device)); \
              emit_copy(c.corr, (bytes), &sides, (async)));                            \
  return r

#endif
