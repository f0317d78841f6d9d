/*
 * The contexts that are not a device's primary context, as the hooks know them: the
 * contexts made by cuCtxCreate and the contexts green contexts are converted to
 * (cuCtxFromGreenCtx). Each has a NULL stream and per-thread default streams of its
 * own, apart from the primary context's (preload/hooks/streams.c gives them their own
 * stream ids). Each such context gets a serial number (1, 2, ...; never reused in the
 * process), so that a context address the driver hands out again after a destroy is
 * a new context with new streams. A destroy (and a create) bumps
 * ctph_context_generation: every thread's cached answer for its current context
 * (ctph_current_device) is then looked up again, so no thread keeps the answer of a
 * context that no longer exists.
 */
#include "hooks_internal.h"
#include "map.h"

/* ctx -> v1 = its tag: serial << 1 | 1 for a green context's converted context. A
 * context not in the map is a primary context (tag 0). */
static struct ctph_map contexts = CTPH_MAP_INIT(4);
/* green context -> v1 = its converted context, v2 = that context's tag */
static struct ctph_map green_handles = CTPH_MAP_INIT(4);
static uint64_t next_serial = 1;

uint32_t ctph_context_generation;

/* A new tag (a serial never handed out before), green or not. */
static uint64_t new_tag(int green) {
  return __atomic_fetch_add(&next_serial, 1, __ATOMIC_RELAXED) << 1 | (green ? 1 : 0);
}

/* Sets ctx's tag (inserted or replaced) and makes every thread look its context up
 * again. */
static void set_tag(CUcontext ctx, uint64_t tag) {
  int inserted;
  if (ctph_map_insert(&contexts, (uintptr_t)ctx, 0, tag, 0, &inserted) && !inserted)
    (void)ctph_map_store(&contexts, (uintptr_t)ctx, 0, &tag, NULL);
  __atomic_fetch_add(&ctph_context_generation, 1, __ATOMIC_RELEASE);
}

uint64_t ctph_context_tag(CUcontext ctx) {
  uint64_t tag = 0;
  if (ctx && !ctph_map_get(&contexts, (uintptr_t)ctx, 0, &tag, NULL))
    tag = 0;
  return tag;
}

void ctph_context_created(CUcontext ctx) {
  int saved = errno;
  if (ctx)
    set_tag(ctx, new_tag(0));
  errno = saved;
}

void ctph_context_destroyed(CUcontext ctx, uint64_t tag) {
  int saved = errno;
  /* only the context that was destroyed: a new one may have the address already */
  if (ctx && tag)
    (void)ctph_map_remove_if(&contexts, (uintptr_t)ctx, 0, tag);
  __atomic_fetch_add(&ctph_context_generation, 1, __ATOMIC_RELEASE);
  errno = saved;
}

void ctph_green_context_seen(CUgreenCtx green, CUcontext ctx) {
  int saved = errno, inserted;
  uint64_t tag = ctph_context_tag(ctx);
  if (!(tag & 1)) { /* first conversion (repeated ones give the same context) */
    tag = new_tag(1);
    set_tag(ctx, tag);
  }
  uint64_t c = (uintptr_t)ctx;
  if (ctph_map_insert(&green_handles, (uintptr_t)green, 0, c, tag, &inserted) && !inserted)
    (void)ctph_map_store(&green_handles, (uintptr_t)green, 0, &c, &tag);
  errno = saved;
}

void ctph_green_context_destroyed(CUgreenCtx green) {
  int saved = errno;
  uint64_t ctx = 0, tag = 0;
  if (ctph_map_get(&green_handles, (uintptr_t)green, 0, &ctx, &tag)) {
    (void)ctph_map_remove_if(&green_handles, (uintptr_t)green, 0, ctx);
    (void)ctph_map_remove_if(&contexts, ctx, 0, tag);
  }
  __atomic_fetch_add(&ctph_context_generation, 1, __ATOMIC_RELEASE);
  errno = saved;
}
