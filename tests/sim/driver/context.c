/* Created contexts, the per-thread context stack and the cuCtx* calls. */
#include "sim.h"

#include <cudaProfiler.h>

#include <stdlib.h>
#include <string.h>

#define SIM_CTX_STACK 16

static unsigned long long next_ctx_id = 1;

static __thread struct sim_ctx *ctx_stack[SIM_CTX_STACK];
static __thread int ctx_depth;
static struct sim_ctx *reusable; /* SIMCUDA_CTX_REUSE: destroyed contexts, latest first */

void sim_ctx_release(struct sim_ctx *c)
{
  if (!sim_knobs.ctx_reuse)
    return;
  struct sim_stream *next;
  for (struct sim_stream *s = c->streams; s; s = next) {
    next = s->ctx_next;
    if (sim_handle_kind(s) == SIM_KIND_STREAM)
      sim_handle_remove(s);
    if (!s->is_per_thread) /* a thread's slot may still name its per-thread ones */
      free(s);
  }
  free(c->legacy);
  c->streams = NULL;
  c->legacy = NULL;
  c->reuse_next = reusable;
  reusable = c;
}

int sim_ctx_setup(struct sim_ctx *c, int device, unsigned int flags, int is_primary)
{
  memset(c, 0, sizeof *c);
  c->device = device;
  c->flags = flags;
  c->primary = is_primary;
  c->id = next_ctx_id++;
  c->legacy = sim_stream_new_legacy(c);
  if (!c->legacy || sim_handle_add(c, SIM_KIND_CONTEXT) != 0)
    return -1;
  return 0;
}

struct sim_ctx *sim_current_ctx(void)
{
  return ctx_depth > 0 ? ctx_stack[ctx_depth - 1] : NULL;
}

CUresult sim_require_ctx(struct sim_ctx **out)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  struct sim_ctx *c = sim_current_ctx();
  if (!c)
    return CUDA_ERROR_INVALID_CONTEXT;
  *out = c;
  return CUDA_SUCCESS;
}

/* Resolves an explicit context argument (NULL = current). */
static CUresult ctx_arg(CUcontext ctx, struct sim_ctx **out)
{
  if (!ctx)
    return sim_require_ctx(out);
  sim_lock();
  enum sim_kind k = sim_handle_kind(ctx);
  sim_unlock();
  if (k != SIM_KIND_CONTEXT)
    return CUDA_ERROR_INVALID_CONTEXT;
  *out = (struct sim_ctx *)ctx;
  return CUDA_SUCCESS;
}

/** Creates a new context on `dev` and pushes it on this thread's stack. */
SIM_API CUresult cuCtxCreate(CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags,
                             CUdevice dev)
{
  (void)ctxCreateParams;
  CUresult r = sim_check_device(dev);
  if (r != CUDA_SUCCESS)
    return r;
  if (!pctx)
    return CUDA_ERROR_INVALID_VALUE;
  if (ctx_depth >= SIM_CTX_STACK)
    return CUDA_ERROR_OUT_OF_MEMORY;
  sim_lock();
  struct sim_ctx *c = reusable;
  if (c)
    reusable = c->reuse_next;
  else
    c = malloc(sizeof *c);
  if (!c) {
    sim_unlock();
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  int failed = sim_ctx_setup(c, dev, flags, 0);
  sim_unlock();
  if (failed) {
    free(c);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  ctx_stack[ctx_depth++] = c;
  *pctx = (CUcontext)c;
  return CUDA_SUCCESS;
}

/** Destroys a created context (its handle becomes invalid; memory is kept, unless
 * SIMCUDA_CTX_REUSE=1: see sim_ctx_release). */
SIM_API CUresult cuCtxDestroy(CUcontext ctx)
{
  struct sim_ctx *c;
  CUresult r = ctx_arg(ctx, &c);
  if (r != CUDA_SUCCESS)
    return r;
  if (!ctx || c->primary)
    return CUDA_ERROR_INVALID_CONTEXT;
  sim_lock();
  uint64_t until = sim_ctx_tail_ns(c);
  sim_handle_remove(c);
  sim_ctx_release(c);
  sim_unlock();
  sim_wait_until(until);
  for (int i = 0; i < ctx_depth; i++)
    if (ctx_stack[i] == c) {
      memmove(&ctx_stack[i], &ctx_stack[i + 1], (size_t)(ctx_depth - i - 1) * sizeof ctx_stack[0]);
      ctx_depth--;
      i--;
    }
  return CUDA_SUCCESS;
}

/** Replaces the top of this thread's context stack (NULL pops it). */
SIM_API CUresult cuCtxSetCurrent(CUcontext ctx)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!ctx) {
    if (ctx_depth > 0)
      ctx_depth--;
    return CUDA_SUCCESS;
  }
  struct sim_ctx *c;
  CUresult r = ctx_arg(ctx, &c);
  if (r != CUDA_SUCCESS)
    return r;
  if (ctx_depth == 0)
    ctx_depth = 1;
  ctx_stack[ctx_depth - 1] = c;
  return CUDA_SUCCESS;
}

/** Gives this thread's current context (NULL when none). */
SIM_API CUresult cuCtxGetCurrent(CUcontext *pctx)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!pctx)
    return CUDA_ERROR_INVALID_VALUE;
  *pctx = (CUcontext)sim_current_ctx();
  return CUDA_SUCCESS;
}

/** Pushes a context on this thread's stack. */
SIM_API CUresult cuCtxPushCurrent(CUcontext ctx)
{
  struct sim_ctx *c;
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!ctx)
    return CUDA_ERROR_INVALID_CONTEXT;
  CUresult r = ctx_arg(ctx, &c);
  if (r != CUDA_SUCCESS)
    return r;
  if (ctx_depth >= SIM_CTX_STACK)
    return CUDA_ERROR_OUT_OF_MEMORY;
  ctx_stack[ctx_depth++] = c;
  return CUDA_SUCCESS;
}

/** Pops this thread's current context. */
SIM_API CUresult cuCtxPopCurrent(CUcontext *pctx)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (ctx_depth == 0)
    return CUDA_ERROR_INVALID_CONTEXT;
  struct sim_ctx *c = ctx_stack[--ctx_depth];
  if (pctx)
    *pctx = (CUcontext)c;
  return CUDA_SUCCESS;
}

/** The device of the current context. */
SIM_API CUresult cuCtxGetDevice(CUdevice *device)
{
  struct sim_ctx *c;
  CUresult r = sim_require_ctx(&c);
  if (r != CUDA_SUCCESS)
    return r;
  if (!device)
    return CUDA_ERROR_INVALID_VALUE;
  *device = c->device;
  return CUDA_SUCCESS;
}

/** The device of `ctx` (NULL = current). */
SIM_API CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
  struct sim_ctx *c;
  CUresult r = ctx_arg(ctx, &c);
  if (r != CUDA_SUCCESS)
    return r;
  if (!device)
    return CUDA_ERROR_INVALID_VALUE;
  *device = c->device;
  return CUDA_SUCCESS;
}

/** The flags of the current context. */
SIM_API CUresult cuCtxGetFlags(unsigned int *flags)
{
  struct sim_ctx *c;
  CUresult r = sim_require_ctx(&c);
  if (r != CUDA_SUCCESS)
    return r;
  if (!flags)
    return CUDA_ERROR_INVALID_VALUE;
  *flags = c->flags;
  return CUDA_SUCCESS;
}

/** The unique id of a context. */
SIM_API CUresult cuCtxGetId(CUcontext ctx, unsigned long long *ctxId)
{
  struct sim_ctx *c;
  CUresult r = ctx_arg(ctx, &c);
  if (r != CUDA_SUCCESS)
    return r;
  if (!ctxId)
    return CUDA_ERROR_INVALID_VALUE;
  *ctxId = c->id;
  return CUDA_SUCCESS;
}

/** The API version of a context (13000). */
SIM_API CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
  struct sim_ctx *c;
  CUresult r = ctx_arg(ctx, &c);
  if (r != CUDA_SUCCESS)
    return r;
  if (!version)
    return CUDA_ERROR_INVALID_VALUE;
  *version = 13000;
  return CUDA_SUCCESS;
}

/** Stream priorities range from 0 (least) to -5 (greatest), as on an H100/H200. */
SIM_API CUresult cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
  struct sim_ctx *c;
  CUresult r = sim_require_ctx(&c);
  if (r != CUDA_SUCCESS)
    return r;
  if (leastPriority)
    *leastPriority = 0;
  if (greatestPriority)
    *greatestPriority = -5;
  return CUDA_SUCCESS;
}

/* Waits for every operation of `c`; refused while a capture forbids it. */
static CUresult ctx_synchronize(struct sim_ctx *c)
{
  sim_lock();
  if (sim_capture_forbids_unsafe_call()) {
    sim_unlock();
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  uint64_t until = sim_ctx_tail_ns(c);
  sim_unlock();
  sim_wait_until(until);
  return CUDA_SUCCESS;
}

/** Waits until every operation in the current context has finished. */
SIM_API CUresult cuCtxSynchronize(void)
{
  struct sim_ctx *c;
  CUresult r = sim_require_ctx(&c);
  return r != CUDA_SUCCESS ? r : ctx_synchronize(c);
}

/** Waits until every operation in `ctx` (NULL = current) has finished. */
SIM_API CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
  struct sim_ctx *c;
  CUresult r = ctx_arg(ctx, &c);
  return r != CUDA_SUCCESS ? r : ctx_synchronize(c);
}

/** Profiler control: nothing to start or stop in the simulator; both succeed
 * (the real driver's answer when no profiler is attached). */
SIM_API CUresult cuProfilerStart(void)
{
  return CUDA_SUCCESS;
}

/** See cuProfilerStart. */
SIM_API CUresult cuProfilerStop(void)
{
  return CUDA_SUCCESS;
}

/** Context limits: fixed, H200-like values; setting is accepted. */
SIM_API CUresult cuCtxGetLimit(size_t *pvalue, CUlimit limit)
{
  struct sim_ctx *c;
  CUresult r = sim_require_ctx(&c);
  if (r != CUDA_SUCCESS)
    return r;
  if (!pvalue)
    return CUDA_ERROR_INVALID_VALUE;
  switch (limit) {
  case CU_LIMIT_STACK_SIZE: *pvalue = 1024; break;
  case CU_LIMIT_PRINTF_FIFO_SIZE: *pvalue = 1 << 20; break;
  case CU_LIMIT_MALLOC_HEAP_SIZE: *pvalue = 8 << 20; break;
  case CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT: *pvalue = 2048; break;
  case CU_LIMIT_MAX_L2_FETCH_GRANULARITY: *pvalue = 64; break;
  case CU_LIMIT_PERSISTING_L2_CACHE_SIZE: *pvalue = 0; break;
  default: return CUDA_ERROR_UNSUPPORTED_LIMIT;
  }
  return CUDA_SUCCESS;
}

/** Accepts a context limit (the simulator does not use it). */
SIM_API CUresult cuCtxSetLimit(CUlimit limit, size_t value)
{
  size_t ignored;
  (void)value;
  return cuCtxGetLimit(&ignored, limit);
}
