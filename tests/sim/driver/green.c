/* Green contexts (CUDA 12.4) and context-wide events (12.5), minimally.
 *
 * Simulated: a device's SM resource (cuDeviceGetDevResource: all 132 SMs), a split into
 * groups of whole SM counts (cuDevSmResourceSplitByCount: groups of minCount rounded up
 * to an even number, the rest in `remaining`), a descriptor of one or more SM
 * resources of one device (cuDevResourceGenerateDesc), green contexts made from it
 * (cuGreenCtxCreate, cuGreenCtxDestroy, cuCtxFromGreenCtx, cuGreenCtxGetId,
 * cuGreenCtxGetDevResource), their streams (cuGreenCtxStreamCreate), and the
 * context-wide record and wait: cuCtxRecordEvent / cuGreenCtxRecordEvent complete the
 * event when every stream of the context (the primary context: also of its green
 * contexts) has drained its work queued so far; cuCtxWaitEvent / cuGreenCtxWaitEvent
 * hold every later operation of the context (a primary context's wait: of its green
 * contexts too) until the event's record completed.
 *
 * Not simulated: the SM partition itself (a green context's kernels take the time
 * SIMCUDA_KERNEL_US gives them, however few SMs it has), workqueue resources, the
 * split flags, captures (a context-wide record or wait on a capturing context is not
 * refused), and the "same context" rule of cuCtxRecordEvent (an event of the same
 * device's primary context or of any of its green contexts is accepted). A green
 * context's own converted context has a NULL stream like any context. */
#include "sim.h"

#include <stdlib.h>
#include <string.h>

#define SIM_SM_COUNT 132

struct sim_green {
  struct sim_ctx *ctx; /* the context cuCtxFromGreenCtx gives */
  unsigned sm_count;
  unsigned long long id;
};

struct sim_desc {
  int device;
  unsigned sm_count;
};

static unsigned long long next_green_id = 1;

/* The device a resource came from, kept in its internal bytes (+1: 0 = none). */
static void resource_set(CUdevResource *r, int device, unsigned sm_count)
{
  memset(r, 0, sizeof *r);
  r->type = CU_DEV_RESOURCE_TYPE_SM;
  r->_internal_padding[0] = (unsigned char)(device + 1);
  r->sm.smCount = sm_count;
  r->sm.minSmPartitionSize = 2;
  r->sm.smCoscheduledAlignment = 2;
}

static int resource_device(const CUdevResource *r)
{
  return r->type == CU_DEV_RESOURCE_TYPE_SM ? (int)r->_internal_padding[0] - 1 : -1;
}

/** A device's resources: its SMs (type CU_DEV_RESOURCE_TYPE_SM only). */
SIM_API CUresult cuDeviceGetDevResource(CUdevice device, CUdevResource *resource, CUdevResourceType type)
{
  CUresult r = sim_check_device(device);
  if (r != CUDA_SUCCESS)
    return r;
  if (!resource)
    return CUDA_ERROR_INVALID_VALUE;
  if (type != CU_DEV_RESOURCE_TYPE_SM)
    return CUDA_ERROR_INVALID_RESOURCE_TYPE;
  resource_set(resource, device, SIM_SM_COUNT);
  return CUDA_SUCCESS;
}

/** Splits an SM resource into groups of minCount SMs (rounded up to even). */
SIM_API CUresult cuDevSmResourceSplitByCount(CUdevResource *result, unsigned int *nbGroups,
                                             const CUdevResource *input, CUdevResource *remaining,
                                             unsigned int useFlags, unsigned int minCount)
{
  (void)useFlags;
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!nbGroups || !input)
    return CUDA_ERROR_INVALID_VALUE;
  int device = resource_device(input);
  if (device < 0)
    return CUDA_ERROR_INVALID_RESOURCE_TYPE;
  unsigned size = minCount < 2 ? 2 : (minCount + 1) / 2 * 2;
  if (size > input->sm.smCount)
    return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
  unsigned can = input->sm.smCount / size;
  if (!result) {
    *nbGroups = can;
    return CUDA_SUCCESS;
  }
  unsigned n = *nbGroups < can ? *nbGroups : can;
  for (unsigned i = 0; i < n; i++)
    resource_set(&result[i], device, size);
  if (remaining)
    resource_set(remaining, device, input->sm.smCount - n * size);
  *nbGroups = n;
  return CUDA_SUCCESS;
}

/** A descriptor of SM resources of one device, for cuGreenCtxCreate. */
SIM_API CUresult cuDevResourceGenerateDesc(CUdevResourceDesc *phDesc, CUdevResource *resources,
                                           unsigned int nbResources)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!phDesc || !resources || !nbResources)
    return CUDA_ERROR_INVALID_VALUE;
  int device = resource_device(&resources[0]);
  unsigned sms = 0;
  for (unsigned i = 0; i < nbResources; i++) {
    if (resource_device(&resources[i]) < 0)
      return CUDA_ERROR_INVALID_RESOURCE_TYPE;
    if (resource_device(&resources[i]) != device)
      return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
    sms += resources[i].sm.smCount;
  }
  struct sim_desc *d = malloc(sizeof *d);
  if (!d)
    return CUDA_ERROR_OUT_OF_MEMORY;
  d->device = device;
  d->sm_count = sms;
  sim_lock();
  int failed = sim_handle_add(d, SIM_KIND_RESOURCE_DESC);
  sim_unlock();
  if (failed) {
    free(d);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  *phDesc = (CUdevResourceDesc)d;
  return CUDA_SUCCESS;
}

/** Creates a green context on dev from a descriptor (flags: CU_GREEN_CTX_DEFAULT_STREAM). */
SIM_API CUresult cuGreenCtxCreate(CUgreenCtx *phCtx, CUdevResourceDesc desc, CUdevice dev,
                                  unsigned int flags)
{
  CUresult r = sim_check_device(dev);
  if (r != CUDA_SUCCESS)
    return r;
  if (!phCtx || flags != CU_GREEN_CTX_DEFAULT_STREAM)
    return CUDA_ERROR_INVALID_VALUE;
  struct sim_green *g = calloc(1, sizeof *g);
  struct sim_ctx *c = calloc(1, sizeof *c);
  sim_lock();
  struct sim_desc *d = (struct sim_desc *)desc;
  if (sim_handle_kind(d) != SIM_KIND_RESOURCE_DESC || d->device != dev)
    r = CUDA_ERROR_INVALID_VALUE;
  struct sim_ctx *primary = r == CUDA_SUCCESS ? sim_primary_ctx(dev) : NULL;
  if (r == CUDA_SUCCESS && (!g || !c || !primary || sim_ctx_setup(c, dev, 0, 0) != 0 ||
                            sim_handle_add(g, SIM_KIND_GREEN_CTX) != 0))
    r = CUDA_ERROR_OUT_OF_MEMORY;
  if (r == CUDA_SUCCESS) {
    g->ctx = c;
    g->sm_count = d->sm_count;
    g->id = next_green_id++;
    c->green = g;
    c->parent = primary;
    c->green_next = primary->greens;
    primary->greens = c;
  } else if (c && sim_handle_kind(c) == SIM_KIND_CONTEXT) {
    sim_handle_remove(c);
  }
  sim_unlock();
  if (r != CUDA_SUCCESS) {
    free(g);
    free(c);
    return r;
  }
  *phCtx = (CUgreenCtx)g;
  return CUDA_SUCCESS;
}

/* Resolves a green context handle (lock held). */
static struct sim_green *green_arg(CUgreenCtx h)
{
  return sim_handle_kind(h) == SIM_KIND_GREEN_CTX ? (struct sim_green *)h : NULL;
}

/** Destroys a green context once its work is done (its handles become invalid). */
SIM_API CUresult cuGreenCtxDestroy(CUgreenCtx hCtx)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  sim_lock();
  struct sim_green *g = green_arg(hCtx);
  if (!g) {
    sim_unlock();
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  struct sim_ctx *c = g->ctx;
  uint64_t until = sim_ctx_tail_ns(c);
  for (struct sim_ctx **p = &c->parent->greens; *p; p = &(*p)->green_next)
    if (*p == c) {
      *p = c->green_next;
      break;
    }
  for (struct sim_stream *s = c->streams; s; s = s->ctx_next)
    sim_handle_remove(s);
  sim_handle_remove(c);
  sim_handle_remove(g);
  sim_ctx_release(c); /* kept (a stale handle must not alias a new one) unless reused */
  sim_unlock();
  sim_wait_until(until);
  return CUDA_SUCCESS;
}

/** The context that stands for a green context (to make it current). */
SIM_API CUresult cuCtxFromGreenCtx(CUcontext *pContext, CUgreenCtx hCtx)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!pContext)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  struct sim_green *g = green_arg(hCtx);
  sim_unlock();
  if (!g)
    return CUDA_ERROR_INVALID_CONTEXT;
  *pContext = (CUcontext)g->ctx;
  return CUDA_SUCCESS;
}

/** A green context's unique id. */
SIM_API CUresult cuGreenCtxGetId(CUgreenCtx greenCtx, unsigned long long *greenCtxId)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  sim_lock();
  struct sim_green *g = green_arg(greenCtx);
  sim_unlock();
  if (!g)
    return CUDA_ERROR_INVALID_CONTEXT;
  if (!greenCtxId)
    return CUDA_ERROR_INVALID_VALUE;
  *greenCtxId = g->id;
  return CUDA_SUCCESS;
}

/** A green context's SMs. */
SIM_API CUresult cuGreenCtxGetDevResource(CUgreenCtx hCtx, CUdevResource *resource, CUdevResourceType type)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  sim_lock();
  struct sim_green *g = green_arg(hCtx);
  sim_unlock();
  if (!g)
    return CUDA_ERROR_INVALID_CONTEXT;
  if (!resource)
    return CUDA_ERROR_INVALID_VALUE;
  if (type != CU_DEV_RESOURCE_TYPE_SM)
    return CUDA_ERROR_INVALID_RESOURCE_TYPE;
  resource_set(resource, g->ctx->device, g->sm_count);
  return CUDA_SUCCESS;
}

/** Creates a stream of a green context (flags must be CU_STREAM_NON_BLOCKING). */
SIM_API CUresult cuGreenCtxStreamCreate(CUstream *phStream, CUgreenCtx greenCtx, unsigned int flags,
                                        int priority)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!phStream || flags != CU_STREAM_NON_BLOCKING)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  struct sim_green *g = green_arg(greenCtx);
  sim_unlock();
  if (!g)
    return CUDA_ERROR_INVALID_CONTEXT;
  /* cuStreamCreateWithPriority makes it in the current context: make the green one
   * current for that call (a thread-local stack; nothing else runs on it meanwhile). */
  CUresult r = cuCtxPushCurrent((CUcontext)g->ctx);
  if (r != CUDA_SUCCESS)
    return r;
  r = cuStreamCreateWithPriority(phStream, flags, priority);
  CUcontext popped;
  cuCtxPopCurrent(&popped);
  return r;
}

/* The root of a context: a green context's primary, else itself. */
static struct sim_ctx *ctx_root(struct sim_ctx *c)
{
  return c->parent ? c->parent : c;
}

/* Latest end of the work queued in c, with its green contexts' for a primary. */
static uint64_t ctx_all_tail_ns(struct sim_ctx *c)
{
  uint64_t t = sim_ctx_tail_ns(c);
  for (struct sim_ctx *g = c->greens; g; g = g->green_next) {
    uint64_t e = sim_ctx_tail_ns(g);
    t = e > t ? e : t;
  }
  return t;
}

/* A record (wait = 0) or wait (1) of context c on event hEvent (lock NOT held). */
static CUresult ctx_event(struct sim_ctx *c, CUevent hEvent, int wait)
{
  sim_lock();
  CUresult r = CUDA_SUCCESS;
  if (sim_handle_kind(c) != SIM_KIND_CONTEXT)
    r = CUDA_ERROR_INVALID_CONTEXT;
  else if (sim_handle_kind(hEvent) != SIM_KIND_EVENT)
    r = CUDA_ERROR_INVALID_HANDLE;
  struct sim_event *e = (struct sim_event *)hEvent;
  if (r == CUDA_SUCCESS && !wait && ctx_root(e->ctx) != ctx_root(c))
    r = CUDA_ERROR_INVALID_HANDLE;
  if (r == CUDA_SUCCESS && wait && e->recorded_in_capture)
    r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  if (r == CUDA_SUCCESS && !wait) {
    uint64_t now = sim_now_ns(), tail = ctx_all_tail_ns(c);
    e->recorded = 1;
    e->recorded_in_capture = 0;
    e->capture = NULL;
    e->time_ns = tail > now ? tail : now;
  } else if (r == CUDA_SUCCESS && e->recorded && e->time_ns > c->wait_ns) {
    c->wait_ns = e->time_ns;
  }
  sim_unlock();
  return r;
}

/* The context argument (NULL: the current one). */
static CUresult ctx_or_current(CUcontext h, struct sim_ctx **out)
{
  if (h) {
    *out = (struct sim_ctx *)h;
    return sim_initialized ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
  }
  return sim_require_ctx(out);
}

/** Records in hEvent all work of the context queued so far. */
SIM_API CUresult cuCtxRecordEvent(CUcontext hCtx, CUevent hEvent)
{
  struct sim_ctx *c;
  CUresult r = ctx_or_current(hCtx, &c);
  return r != CUDA_SUCCESS ? r : ctx_event(c, hEvent, 0);
}

/** Makes all later work of the context wait for hEvent. */
SIM_API CUresult cuCtxWaitEvent(CUcontext hCtx, CUevent hEvent)
{
  struct sim_ctx *c;
  CUresult r = ctx_or_current(hCtx, &c);
  return r != CUDA_SUCCESS ? r : ctx_event(c, hEvent, 1);
}

/* A green context's converted context (lock taken and released); NULL if not one. */
static struct sim_ctx *green_ctx_of(CUgreenCtx h)
{
  sim_lock();
  struct sim_green *g = sim_initialized ? green_arg(h) : NULL;
  sim_unlock();
  return g ? g->ctx : NULL;
}

/** Records in hEvent all work of the green context queued so far. */
SIM_API CUresult cuGreenCtxRecordEvent(CUgreenCtx hCtx, CUevent hEvent)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  struct sim_ctx *c = green_ctx_of(hCtx);
  return c ? ctx_event(c, hEvent, 0) : CUDA_ERROR_INVALID_CONTEXT;
}

/** Makes all later work of the green context wait for hEvent. */
SIM_API CUresult cuGreenCtxWaitEvent(CUgreenCtx hCtx, CUevent hEvent)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  struct sim_ctx *c = green_ctx_of(hCtx);
  return c ? ctx_event(c, hEvent, 1) : CUDA_ERROR_INVALID_CONTEXT;
}
