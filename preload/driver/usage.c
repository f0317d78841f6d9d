/*
 * "Nothing intercepted": when a process loaded libcuda (the runtime or a launcher
 * fetched cuGetProcAddress or a cu* function through us) but no call at all was
 * traced by exit, the tracer says so once on stderr (unless CUTRACE_QUIET) and writes a TRACER record
 * "nothing_intercepted" (e.g. a program that reaches the driver some way we do not
 * see, like a private export table).
 */
#include <dlfcn.h>

#include "driver_internal.h"

unsigned long ctpd_calls_seen;
static int registered;

/* Any API record at all counts: the runtime half may have seen the calls. */
static int anything_traced(void) {
  return __atomic_load_n(&ctpd_calls_seen, __ATOMIC_RELAXED) || ctp_next_corr() > 1;
}

static void check_at_exit(void) {
  void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!cuda)
    return;
  dlclose(cuda);
  if (anything_traced())
    return;
  ctp_warn("libcuda was loaded but no CUDA call was intercepted in this process");
  uint64_t now = ctp_now_ns();
  ctp_emit_tracer("nothing_intercepted", now, now, 0);
}

void ctpd_usage_init(void) {
  if (CTP_LIKELY(__atomic_load_n(&registered, __ATOMIC_RELAXED)))
    return;
  if (__atomic_exchange_n(&registered, 1, __ATOMIC_ACQ_REL))
    return;
  ctp_ring_pool_want(); /* CUDA is coming: ready rings now (also while a window pauses) */
  ctp_stacks_prepare(); /* and the call stacks' unwinder (libunwind) */
  if (ctph_on())
    ctp_at_final_flush(check_at_exit);
}
