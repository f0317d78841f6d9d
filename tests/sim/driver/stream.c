/* Streams and the execution model.
 *
 * Every operation is scheduled when it is enqueued: start = max(enqueue time,
 * end of the previous operation on the stream, satisfied event waits, implicit
 * synchronisation with the legacy stream), end = start + modelled duration.
 * Queries compare CLOCK_MONOTONIC with those times; synchronisations sleep until
 * them. No worker threads. */
#include "sim.h"

#include <stdlib.h>
#include <string.h>

#define SIM_PTDS_SLOTS 8

static unsigned long long next_stream_id = 1;

/* This thread's per-thread default streams, one per context used. */
struct ptds_slot {
  struct sim_ctx *ctx;
  unsigned long long ctx_id; /* ctx->id then (SIMCUDA_CTX_REUSE: the address may serve a
                                newer context, which has its own per-thread streams) */
  struct sim_stream *stream;
};
static __thread struct ptds_slot ptds_slots[SIM_PTDS_SLOTS];
static pthread_key_t ptds_key;
static pthread_once_t ptds_key_once = PTHREAD_ONCE_INIT;

static uint64_t max_u64(uint64_t a, uint64_t b)
{
  return a > b ? a : b;
}

static struct sim_stream *stream_alloc(struct sim_ctx *ctx, unsigned int flags, int priority)
{
  struct sim_stream *s = calloc(1, sizeof *s);
  if (!s)
    return NULL;
  s->ctx = ctx;
  s->flags = flags;
  s->priority = priority;
  s->id = next_stream_id++;
  return s;
}

struct sim_stream *sim_stream_new_legacy(struct sim_ctx *ctx)
{
  struct sim_stream *s = stream_alloc(ctx, CU_STREAM_DEFAULT, 0);
  if (s)
    s->is_legacy = 1;
  return s;
}

/* Removes `s` from its context, remembering its tail for implicit syncs. */
static void stream_retire(struct sim_stream *s)
{
  struct sim_ctx *c = s->ctx;
  if (!(s->flags & CU_STREAM_NON_BLOCKING))
    c->retired_tail_ns = max_u64(c->retired_tail_ns, s->tail_ns);
  for (struct sim_stream **p = &c->streams; *p; p = &(*p)->ctx_next)
    if (*p == s) {
      *p = s->ctx_next;
      break;
    }
  sim_capture_forget_stream(s);
}

/* Thread exit: the per-thread default streams of the thread go away. */
static void ptds_release(void *unused)
{
  (void)unused;
  sim_lock();
  for (int i = 0; i < SIM_PTDS_SLOTS; i++)
    if (ptds_slots[i].stream) {
      struct sim_ctx *c = ptds_slots[i].ctx;
      /* Its work still counts for the context's synchronisation (unless the context's
       * address now serves a newer context: SIMCUDA_CTX_REUSE). */
      if (ptds_slots[i].ctx_id == c->id) {
        c->retired_tail_ns = max_u64(c->retired_tail_ns, ptds_slots[i].stream->tail_ns);
        stream_retire(ptds_slots[i].stream);
      }
      free(ptds_slots[i].stream);
      ptds_slots[i].stream = NULL;
      ptds_slots[i].ctx = NULL;
    }
  sim_unlock();
}

static void ptds_key_create(void)
{
  pthread_key_create(&ptds_key, ptds_release);
}

/* The calling thread's per-thread default stream in `c` (lock held). */
static struct sim_stream *per_thread_stream(struct sim_ctx *c)
{
  int free_slot = -1;
  for (int i = 0; i < SIM_PTDS_SLOTS; i++) {
    if (ptds_slots[i].ctx == c && ptds_slots[i].ctx_id == c->id)
      return ptds_slots[i].stream;
    if (ptds_slots[i].ctx == c) { /* a destroyed context's, whose address was reused */
      free(ptds_slots[i].stream);
      ptds_slots[i].ctx = NULL;
      ptds_slots[i].stream = NULL;
    }
    if (!ptds_slots[i].ctx && free_slot < 0)
      free_slot = i;
  }
  if (free_slot < 0)
    return NULL;
  struct sim_stream *s = stream_alloc(c, CU_STREAM_DEFAULT, 0);
  if (!s)
    return NULL;
  s->is_per_thread = 1;
  s->ctx_next = c->streams;
  c->streams = s;
  ptds_slots[free_slot].ctx = c;
  ptds_slots[free_slot].ctx_id = c->id;
  ptds_slots[free_slot].stream = s;
  pthread_once(&ptds_key_once, ptds_key_create);
  pthread_setspecific(ptds_key, ptds_slots);
  return s;
}

CUresult sim_stream_resolve(CUstream handle, int per_thread, struct sim_stream **out)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (handle && handle != CU_STREAM_LEGACY && handle != CU_STREAM_PER_THREAD) {
    if (sim_handle_kind(handle) != SIM_KIND_STREAM)
      return CUDA_ERROR_INVALID_HANDLE;
    *out = (struct sim_stream *)handle;
    return CUDA_SUCCESS;
  }
  struct sim_ctx *c = sim_current_ctx();
  if (!c)
    return CUDA_ERROR_INVALID_CONTEXT;
  if (handle == CU_STREAM_PER_THREAD || (!handle && per_thread)) {
    struct sim_stream *s = per_thread_stream(c);
    if (!s)
      return CUDA_ERROR_OUT_OF_MEMORY;
    *out = s;
  } else {
    *out = c->legacy;
  }
  return CUDA_SUCCESS;
}

uintptr_t sim_stream_log_handle(const struct sim_stream *s)
{
  if (s->is_legacy)
    return 0;
  if (s->is_per_thread)
    return (uintptr_t)CU_STREAM_PER_THREAD;
  return (uintptr_t)s;
}

uint64_t sim_stream_ready_ns(struct sim_stream *s)
{
  uint64_t t = s->tail_ns;
  struct sim_ctx *c = s->ctx;
  if (s->is_legacy) {
    t = max_u64(t, c->retired_tail_ns);
    for (struct sim_stream *o = c->streams; o; o = o->ctx_next)
      if (!(o->flags & CU_STREAM_NON_BLOCKING))
        t = max_u64(t, o->tail_ns);
  } else if (!(s->flags & CU_STREAM_NON_BLOCKING)) {
    t = max_u64(t, c->legacy->tail_ns);
  }
  t = max_u64(t, c->wait_ns);
  if (c->parent) /* a wait of the primary context holds its green contexts too */
    t = max_u64(t, c->parent->wait_ns);
  return t;
}

uint64_t sim_ctx_tail_ns(struct sim_ctx *c)
{
  uint64_t t = max_u64(c->legacy->tail_ns, c->retired_tail_ns);
  for (struct sim_stream *o = c->streams; o; o = o->ctx_next)
    t = max_u64(t, o->tail_ns);
  return t;
}

static const char *op_kind_name(enum sim_op_kind k)
{
  switch (k) {
  case SIM_OP_KERNEL: return "kernel";
  case SIM_OP_MEMCPY: return "memcpy";
  case SIM_OP_MEMSET: return "memset";
  case SIM_OP_PREFETCH: return "prefetch";
  case SIM_OP_VALUE: return "value";
  default: return "event";
  }
}

CUresult sim_submit(struct sim_stream *s, const struct sim_op *op, uint64_t *end_out)
{
  if (s->capture)
    return sim_capture_add(s, op);
  if (s->is_legacy) {
    CUresult r = sim_capture_check_legacy(s);
    if (r != CUDA_SUCCESS)
      return r;
  }
  if (op->kind == SIM_OP_EVENT) {
    uint64_t t = max_u64(sim_now_ns(), sim_stream_ready_ns(s));
    op->event->recorded = 1;
    op->event->recorded_in_capture = 0;
    op->event->capture = NULL;
    op->event->time_ns = t;
    if (end_out)
      *end_out = t;
    return CUDA_SUCCESS;
  }
  /* A stream holds at most SIM_QUEUE_DEPTH pending operations: wait for the
   * oldest one when it is full, as the real launch queue does. Other threads
   * may enqueue (or begin a capture) while the lock is dropped: look again. */
  unsigned slot;
  for (;;) {
    slot = s->pending_next % SIM_QUEUE_DEPTH;
    uint64_t oldest_end = s->pending_end[slot];
    if (oldest_end <= sim_now_ns())
      break;
    sim_unlock();
    sim_wait_until(oldest_end);
    sim_lock();
  }
  if (s->capture)
    return sim_capture_add(s, op);
  uint64_t enqueue = sim_now_ns();
  uint64_t start = max_u64(enqueue, sim_stream_ready_ns(s));
  uint64_t end = start + op->duration_ns;
  s->tail_ns = end;
  s->pending_end[slot] = end;
  s->pending_next++;
  if (op->kind == SIM_OP_MEMCPY)
    sim_copy_apply(&op->u.copy);
  else if (op->kind == SIM_OP_MEMSET)
    sim_fill_apply(&op->u.fill);
  if (op->kind == SIM_OP_HOST) {
    /* Not a GPU operation: no truth line. */
    if (sim_host_call_schedule(&op->u.host, start) != 0)
      return CUDA_ERROR_OUT_OF_MEMORY;
  } else {
    sim_truth_log(op_kind_name(op->kind), op->full_name ? op->full_name : op->name,
                  sim_stream_log_handle(s), s->ctx->device, enqueue, start, end);
  }
  if (end_out)
    *end_out = end;
  return CUDA_SUCCESS;
}

/* ---- entry points ---- */

/** Creates a stream (flags: CU_STREAM_DEFAULT or CU_STREAM_NON_BLOCKING). */
SIM_API CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
  struct sim_ctx *c;
  CUresult r = sim_require_ctx(&c);
  if (r != CUDA_SUCCESS)
    return r;
  if (!phStream || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
    return CUDA_ERROR_INVALID_VALUE;
  if (priority > 0)
    priority = 0;
  if (priority < -5)
    priority = -5;
  sim_lock();
  struct sim_stream *s = stream_alloc(c, flags, priority);
  if (s && sim_handle_add(s, SIM_KIND_STREAM) != 0) {
    free(s);
    s = NULL;
  }
  if (s) {
    s->ctx_next = c->streams;
    c->streams = s;
  }
  sim_unlock();
  if (!s)
    return CUDA_ERROR_OUT_OF_MEMORY;
  *phStream = (CUstream)s;
  return CUDA_SUCCESS;
}

/** Creates a stream with the default priority. */
SIM_API CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
  return cuStreamCreateWithPriority(phStream, Flags, 0);
}

/** Destroys a stream; work already queued on it still completes. */
SIM_API CUresult cuStreamDestroy(CUstream hStream)
{
  sim_lock();
  if (!sim_initialized || !hStream || sim_handle_kind(hStream) != SIM_KIND_STREAM) {
    sim_unlock();
    return sim_initialized ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_NOT_INITIALIZED;
  }
  struct sim_stream *s = (struct sim_stream *)hStream;
  sim_handle_remove(s);
  stream_retire(s);
  sim_unlock();
  free(s);
  return CUDA_SUCCESS;
}

/* Query / synchronise: `wait` says whether to sleep until the stream is idle. */
static CUresult stream_query_or_sync(CUstream hStream, int per_thread, int wait)
{
  sim_lock();
  struct sim_stream *s;
  CUresult r = sim_stream_resolve(hStream, per_thread, &s);
  if (r != CUDA_SUCCESS) {
    sim_unlock();
    return r;
  }
  if (s->capture) {
    sim_capture_invalidate(s);
    sim_unlock();
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  if (s->is_legacy && sim_capture_forbids_unsafe_call()) {
    sim_unlock();
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  uint64_t until = s->tail_ns;
  sim_unlock();
  if (!wait)
    return sim_now_ns() >= until ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
  sim_wait_until(until);
  return CUDA_SUCCESS;
}

/** CUDA_SUCCESS when every operation on the stream has finished, else NOT_READY. */
SIM_API CUresult cuStreamQuery(CUstream hStream)
{
  return stream_query_or_sync(hStream, 0, 0);
}

/** cuStreamQuery through the per-thread default stream entry point. */
SIM_API CUresult cuStreamQuery_ptsz(CUstream hStream)
{
  return stream_query_or_sync(hStream, 1, 0);
}

/** Waits until every operation on the stream has finished. */
SIM_API CUresult cuStreamSynchronize(CUstream hStream)
{
  return stream_query_or_sync(hStream, 0, 1);
}

/** cuStreamSynchronize through the per-thread default stream entry point. */
SIM_API CUresult cuStreamSynchronize_ptsz(CUstream hStream)
{
  return stream_query_or_sync(hStream, 1, 1);
}

static CUresult stream_wait_event(CUstream hStream, CUevent hEvent, unsigned int flags, int per_thread)
{
  if (flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  struct sim_stream *s;
  CUresult r = sim_stream_resolve(hStream, per_thread, &s);
  if (r == CUDA_SUCCESS && sim_handle_kind(hEvent) != SIM_KIND_EVENT)
    r = CUDA_ERROR_INVALID_HANDLE;
  if (r != CUDA_SUCCESS) {
    sim_unlock();
    return r;
  }
  struct sim_event *e = (struct sim_event *)hEvent;
  if (e->recorded_in_capture) {
    /* Waiting on an event of a capture joins the stream to it (fork/join). */
    if (!sim_capture_join(s, e))
      r = CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
  } else if (s->capture) {
    /* A capturing stream cannot depend on work outside its capture. */
    if (e->recorded && !(flags & CU_EVENT_WAIT_EXTERNAL)) {
      sim_capture_invalidate(s);
      r = CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
    }
  } else if (e->recorded) {
    s->tail_ns = max_u64(s->tail_ns, e->time_ns);
  }
  sim_unlock();
  return r;
}

/** Makes later work on the stream wait for the event's last record. */
SIM_API CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
  return stream_wait_event(hStream, hEvent, Flags, 0);
}

/** cuStreamWaitEvent through the per-thread default stream entry point. */
SIM_API CUresult cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
  return stream_wait_event(hStream, hEvent, Flags, 1);
}

/* Resolves a stream for a getter (lock taken and released). */
static CUresult stream_for_getter(CUstream h, int per_thread, struct sim_stream **out)
{
  sim_lock();
  CUresult r = sim_stream_resolve(h, per_thread, out);
  sim_unlock();
  return r;
}

#define SIM_STREAM_GETTER(fn, type, arg, expr)                                 \
  static CUresult fn##_common(CUstream h, type *arg, int per_thread)           \
  {                                                                            \
    struct sim_stream *s;                                                      \
    CUresult r = stream_for_getter(h, per_thread, &s);                         \
    if (r != CUDA_SUCCESS)                                                     \
      return r;                                                                \
    if (!arg)                                                                  \
      return CUDA_ERROR_INVALID_VALUE;                                         \
    *arg = (expr);                                                             \
    return CUDA_SUCCESS;                                                       \
  }

SIM_STREAM_GETTER(stream_flags, unsigned int, flags, s->flags)
SIM_STREAM_GETTER(stream_priority, int, priority, s->priority)
SIM_STREAM_GETTER(stream_ctx, CUcontext, pctx, (CUcontext)s->ctx)
SIM_STREAM_GETTER(stream_id, unsigned long long, id, s->id)
SIM_STREAM_GETTER(stream_device, CUdevice, device, s->ctx->device)

/** The flags a stream was created with. */
SIM_API CUresult cuStreamGetFlags(CUstream h, unsigned int *flags) { return stream_flags_common(h, flags, 0); }
/** cuStreamGetFlags, per-thread default stream entry point. */
SIM_API CUresult cuStreamGetFlags_ptsz(CUstream h, unsigned int *flags) { return stream_flags_common(h, flags, 1); }
/** The priority of a stream (0 least, -5 greatest). */
SIM_API CUresult cuStreamGetPriority(CUstream h, int *p) { return stream_priority_common(h, p, 0); }
/** cuStreamGetPriority, per-thread default stream entry point. */
SIM_API CUresult cuStreamGetPriority_ptsz(CUstream h, int *p) { return stream_priority_common(h, p, 1); }
/** The context of a stream. */
SIM_API CUresult cuStreamGetCtx(CUstream h, CUcontext *c) { return stream_ctx_common(h, c, 0); }
/** cuStreamGetCtx, per-thread default stream entry point. */
SIM_API CUresult cuStreamGetCtx_ptsz(CUstream h, CUcontext *c) { return stream_ctx_common(h, c, 1); }
/** The unique id of a stream. */
SIM_API CUresult cuStreamGetId(CUstream h, unsigned long long *id) { return stream_id_common(h, id, 0); }
/** cuStreamGetId, per-thread default stream entry point. */
SIM_API CUresult cuStreamGetId_ptsz(CUstream h, unsigned long long *id) { return stream_id_common(h, id, 1); }
/** The device of a stream. */
SIM_API CUresult cuStreamGetDevice(CUstream h, CUdevice *d) { return stream_device_common(h, d, 0); }
/** cuStreamGetDevice, per-thread default stream entry point. */
SIM_API CUresult cuStreamGetDevice_ptsz(CUstream h, CUdevice *d) { return stream_device_common(h, d, 1); }

static CUresult stream_ctx_v2(CUstream h, CUcontext *pCtx, CUgreenCtx *pGreenCtx, int per_thread)
{
  struct sim_stream *s;
  CUresult r = stream_for_getter(h, per_thread, &s);
  if (r != CUDA_SUCCESS)
    return r;
  if (!pCtx)
    return CUDA_ERROR_INVALID_VALUE;
  /* a green context's stream: its green context, and its device's primary context */
  if (pGreenCtx)
    *pGreenCtx = (CUgreenCtx)s->ctx->green;
  *pCtx = (CUcontext)(s->ctx->parent ? s->ctx->parent : s->ctx);
  return CUDA_SUCCESS;
}

/** The context of a stream, or its green context (green.c). */
SIM_API CUresult cuStreamGetCtx_v2(CUstream h, CUcontext *pCtx, CUgreenCtx *pGreenCtx)
{
  return stream_ctx_v2(h, pCtx, pGreenCtx, 0);
}

/** cuStreamGetCtx_v2, per-thread default stream entry point. */
SIM_API CUresult cuStreamGetCtx_v2_ptsz(CUstream h, CUcontext *pCtx, CUgreenCtx *pGreenCtx)
{
  return stream_ctx_v2(h, pCtx, pGreenCtx, 1);
}

/** The green context of a stream (NULL for a stream of an ordinary context). */
SIM_API CUresult cuStreamGetGreenCtx(CUstream h, CUgreenCtx *phCtx)
{
  struct sim_stream *s;
  CUresult r = stream_for_getter(h, 0, &s);
  if (r != CUDA_SUCCESS)
    return r;
  if (!phCtx)
    return CUDA_ERROR_INVALID_VALUE;
  *phCtx = (CUgreenCtx)s->ctx->green;
  return CUDA_SUCCESS;
}
