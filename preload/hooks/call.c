/*
 * The span every wrapper opens and closes: begin/end times, corr, depth, device and
 * stream, the API record, and for outermost GPU operations the start and end events
 * recorded on the app's own stream and queued for the poller.
 *
 * Two events per timed operation by default; with CUTRACE_EVENT_CHAIN=1 an
 * operation queued behind a still-running one of the same thread on the same
 * non-blocking stream reuses its end event as its start (chain.c, and the
 * trade-off in docs/preload.md).
 *
 * Library calls (cuBLAS GEMMs) are timed through what they queue: each kernel,
 * copy or set reaching an intercepted entry point from inside an outermost library
 * call is timed on its own (its own corr and name), and the library call then gets
 * CT_API_INNER_TIMED and no GPU record. When nothing inside was timed (a library
 * whose launches are not seen), the library call is timed as one CT_GPU_GEMM
 * activity, as before. Whether an entry point's calls are timed inside is learnt
 * from its previous call: when it was, the next call records no start event of its
 * own (saving one cuEventRecord per call); a call that then shows nothing inside is
 * flagged CT_API_UNTIMED and the entry point is timed as a whole again.
 */
#include "hooks_internal.h"

__thread struct ctph_thread ctph_tls = {.cached_device = -1};

static int start_tried;

/* Per entry point: 1 when its last successful outermost call was timed through the
 * operations it queued (so the next call skips its own start event). */
static uint8_t timed_inside[CTPH_ID_COUNT];

/* ctph_on when tracing is not both on and recording: starts the tracer on first use,
 * ends a delay that is over; when still not recording, writes the calling thread's open
 * spins as they stand (every hooked entry reached while paused or over does what a poll
 * does then). Apart, so that the recording path of ctph_on stays a few instructions. */
static __attribute__((noinline, cold)) int ctph_on_slow(void) {
  if (__atomic_load_n(&ctp_enabled, __ATOMIC_RELAXED)) {
    if (ctp_window_poll())
      return 1;
    ctph_poll_break();
    return 0;
  }
  if (__atomic_load_n(&start_tried, __ATOMIC_RELAXED)) {
    ctph_poll_break();
    return 0;
  }
  __atomic_store_n(&start_tried, 1, __ATOMIC_RELAXED);
  int saved = errno;
  int on = ctp_start();
  errno = saved;
  return on;
}

int ctph_on(void) {
  if (CTP_LIKELY(__atomic_load_n(&ctp_enabled, __ATOMIC_RELAXED)) &&
      CTP_LIKELY(!__atomic_load_n(&ctp_paused, __ATOMIC_RELAXED)))
    return 1;
  return ctph_on_slow();
}

/* The stream the tracer's events go to: the per-thread default stream for stream 0
 * of a _ptsz entry point, else the app's handle (0 = legacy for plain entries). */
static inline CUstream event_stream(const ctph_call *c) {
  return c->ptsz && !c->handle ? CU_STREAM_PER_THREAD : c->handle;
}

/* Switches the calling thread to relaxed capture mode while a capture is active, so
 * that the tracer's own driver calls never invalidate an app's global-mode capture.
 * Returns 1 when it switched (*saved then holds the mode to restore). */
static inline int capture_mode_relax(CUstreamCaptureMode *saved) {
  if (CTP_LIKELY(!__atomic_load_n(&ctph_captures_active, __ATOMIC_RELAXED)) ||
      !ctph_drv.ThreadExchangeStreamCaptureMode)
    return 0;
  *saved = CU_STREAM_CAPTURE_MODE_RELAXED;
  return ctph_drv.ThreadExchangeStreamCaptureMode(saved) == CUDA_SUCCESS;
}

static inline void capture_mode_restore(int relaxed, CUstreamCaptureMode *saved) {
  if (relaxed)
    ctph_drv.ThreadExchangeStreamCaptureMode(saved);
}

/* Takes two events and records the start one on the call's stream. */
static void start_timing(ctph_call *c) {
  ctph_poller_ensure();
  if (!__atomic_load_n(&ctph_gpu_timing_on, __ATOMIC_RELAXED)) {
    c->flags |= CT_API_UNTIMED;
    return;
  }
  CUstream s = event_stream(c);
  CUstreamCaptureMode mode;
  int relaxed = capture_mode_relax(&mode);
  if (ctph_stream_capturing(s)) {
    c->flags |= CT_API_CAPTURED;
  } else if (CTP_UNLIKELY(__atomic_load_n(&ctph_captures_active, __ATOMIC_RELAXED)) &&
             (s == NULL || s == CU_STREAM_LEGACY)) {
    /* The legacy stream synchronises with every blocking stream, capturing ones
     * included: an event recorded there could break an app's capture. */
    c->flags |= CT_API_UNTIMED;
  } else if (ctph_chain_on && !c->unchained && ctph_chain_start(c)) {
    /* Starts when the previous operation on the stream ends (see chain.c). */
    c->ev_end = ctph_event_get(c->device);
    c->timing = c->ev_end != NULL;
    if (!c->timing)
      c->flags |= CT_API_UNTIMED, ctph_chain_break();
  } else {
    c->ev_start = ctph_event_get(c->device);
    c->ev_end = c->ev_start ? ctph_event_get(c->device) : NULL;
    if (c->ev_end && ctph_drv.EventRecord(c->ev_start, s) == CUDA_SUCCESS) {
      c->timing = 1;
    } else {
      if (c->ev_start)
        ctph_event_put(c->device, c->ev_start);
      if (c->ev_end)
        ctph_event_put(c->device, c->ev_end);
      c->flags |= CT_API_UNTIMED;
    }
  }
  if (c->flags & CT_API_UNTIMED)
    ctph_chain_break();
  capture_mode_restore(relaxed, &mode);
}

/*
 * The thread has no current context yet (its first CUDA call): the runtime will
 * make device 0's primary context current during the call (a thread that called
 * cudaSetDevice has its context current already). The start event is recorded with
 * that context pushed for the moment and popped again, so the thread's state is
 * unchanged. Without a known context the call stays untimed.
 */
static void start_timing_without_context(ctph_call *c) {
  CUcontext ctx = ctph_device_context(0), popped;
  if (!ctx || !ctph_drv.CtxPushCurrent || !ctph_drv.CtxPopCurrent ||
      ctph_drv.CtxPushCurrent(ctx) != CUDA_SUCCESS) {
    c->flags |= CT_API_UNTIMED;
    return;
  }
  c->device = 0;
  c->stream = ctph_stream_id(0, c->handle, c->ptsz, &c->state);
  start_timing(c);
  ctph_drv.CtxPopCurrent(&popped);
}

/* The fields every call starts with: what it is, where it was called from, no timing
 * or chaining state yet; unchained ones never take part in event chaining. */
static inline void call_init(ctph_call *c, enum ctph_id id, const void *site_ra,
                             const void *site_cfa, int unchained) {
  c->id = id;
  c->site_ra = site_ra;
  c->site_cfa = site_cfa;
  c->timing = 0;
  c->chained = 0;
  c->state = NULL;
  c->inner_op = 0;
  c->own_skipped = 0;
  c->unchained = unchained;
}

void ctph_call_begin_site(ctph_call *c, const void *site_ra, const void *site_cfa,
                          enum ctph_id id, int ptsz, int gpu_type, CUstream stream,
                          uint64_t gpu_name) {
  call_init(c, id, site_ra, site_cfa, 0);
  c->traced = ctph_on();
  if (CTP_UNLIKELY(ctph_tls.polls_open))
    ctph_poll_flush(); /* the thread stopped polling: its polls come first (also paused) */
  if (!c->traced)
    return;
  int saved = errno;
  c->begin_ns = ctp_now_ns();
  if (CTP_UNLIKELY(c->begin_ns >= __atomic_load_n(&ctp_stop_at_ns, __ATOMIC_RELAXED))) {
    ctp_window_expire(); /* CUTRACE_DURATION is over: this call is not recorded */
    c->traced = 0;
    errno = saved;
    return;
  }
  c->corr = ctp_next_corr();
  c->depth = ctph_tls.depth++;
  if (c->depth == 0) {
    ctph_tls.outer_corr = c->corr;
    ctph_tls.outer_is_library = gpu_type == CT_GPU_GEMM;
    ctph_tls.inner_flags = 0;
  }
  c->inner_mark = ctph_tls.inner_timed;
  c->flags = ptsz ? CT_API_PTSZ : 0;
  c->ptsz = ptsz;
  c->handle = stream;
  c->gpu_type = gpu_type;
  c->returns_early = gpu_type != CT_GPU_MEMCPY; /* a copy's wrapper says (memops.c) */
  c->gpu_name = gpu_name;
  c->device = -1;
  c->stream = 0;
  if (gpu_type) {
    c->device = ctph_current_device(NULL);
    if (c->device >= 0) {
      c->stream = ctph_stream_id(c->device, stream, ptsz, &c->state);
      if (c->depth == 0) {
        if (gpu_type == CT_GPU_GEMM && __atomic_load_n(&timed_inside[id], __ATOMIC_RELAXED))
          c->own_skipped = 1; /* expected to be timed by what it queues */
        else
          start_timing(c);
      } else if (ctph_tls.outer_is_library && gpu_type != CT_GPU_GEMM) {
        c->inner_op = 1; /* a library's own kernel, copy or set */
        start_timing(c);
      }
    } else if (c->depth == 0) {
      start_timing_without_context(c);
    }
  }
  errno = saved;
}

void ctph_call_begin_entry(ctph_call *c, const ctph_call *outer, CUstream stream,
                           uint64_t gpu_name, int timed) {
  call_init(c, outer->id, outer->site_ra, outer->site_cfa, 1);
  c->traced = outer->traced;
  if (!c->traced)
    return;
  int saved = errno;
  c->begin_ns = ctp_now_ns();
  c->corr = ctp_next_corr();
  c->depth = outer->depth + 1;
  ctph_tls.depth++; /* lowered by ctph_call_emit */
  c->inner_mark = ctph_tls.inner_timed;
  c->flags = outer->flags & CT_API_DRIVER;
  c->ptsz = 0;
  c->handle = stream;
  c->gpu_type = CT_GPU_KERNEL;
  c->returns_early = 1;
  c->gpu_name = gpu_name;
  c->stream = 0;
  c->device = ctph_current_device(NULL);
  if (c->device >= 0) {
    c->stream = ctph_stream_id(c->device, stream, 0, &c->state);
    if (timed)
      start_timing(c);
    else
      c->flags |= CT_API_UNTIMED;
  }
  errno = saved;
}

/* Records the end event and hands the operation to the poller. */
static void finish_timing(ctph_call *c, uint64_t result) {
  /* Work cannot start before it was submitted, and a call that returns before its
   * work is done submitted it before it returned: the poller dates a start event
   * that completed before this time (an idle stream, or a busy one that went idle
   * while the host was late inside the call) at this time instead (poll_one in
   * poller.c). A copy that returns only once done bounds nothing so. */
  uint64_t submitted_ns = c->returns_early ? ctp_now_ns() : 0;
  if (result == 0) {
    CUstreamCaptureMode mode;
    int relaxed = capture_mode_relax(&mode);
    CUresult r = ctph_drv.EventRecord(c->ev_end, event_stream(c));
    capture_mode_restore(relaxed, &mode);
    if (r == CUDA_SUCCESS) {
      struct ctph_pending p = {
          .corr = c->corr,
          .begin_ns = c->begin_ns,
          .submitted_ns = submitted_ns,
          .name = c->gpu_name,
          .device = (uint32_t)c->device,
          .stream = c->stream,
          .type = (uint32_t)c->gpu_type,
          .start = c->ev_start,
          .end = c->ev_end,
      };
      if (ctph_chain_on && !c->unchained)
        ctph_chain_prepare(c, &p);
      if (ctph_pending_push(&p) == 0) {
        c->flags |= CT_API_TIMED;
        if (ctph_chain_on && !c->unchained)
          ctph_chain_commit(c, &p);
        return;
      }
    }
    c->flags |= CT_API_UNTIMED;
    ctph_chain_break(); /* GPU work the chain did not see */
  }
  /* Nothing was queued: the events go back (a chained start stays with the chain). */
  if (!c->chained)
    ctph_event_put(c->device, c->ev_start);
  ctph_event_put(c->device, c->ev_end);
}

/* A library call timed by its inner operations: its own events go back unused. */
static void give_back_timing(ctph_call *c) {
  if (!c->chained) /* a chained start belongs to the chain (or an inner operation) */
    ctph_event_put(c->device, c->ev_start);
  ctph_event_put(c->device, c->ev_end);
}

/* After a library call: what its inner operations said about it, and what its entry
 * point's next call should expect. inside: at least one inner operation was timed. */
static void settle_library_call(ctph_call *c, uint64_t result, int inside) {
  if (inside) {
    c->flags = (c->flags & ~(uint32_t)CT_API_UNTIMED) | CT_API_INNER_TIMED;
  } else if (c->own_skipped && result == 0) {
    /* Expected inner operations that did not come: the work (if any) went untimed. */
    c->flags |= ctph_tls.inner_flags & CT_API_CAPTURED ? CT_API_CAPTURED : CT_API_UNTIMED;
  }
  if (c->depth != 0 || result != 0)
    return;
  uint8_t expect = (uint8_t)inside;
  if (!inside && ctph_tls.inner_flags)
    return; /* inner operations were seen but could not be timed (capture): keep */
  if (__atomic_load_n(&timed_inside[c->id], __ATOMIC_RELAXED) != expect)
    __atomic_store_n(&timed_inside[c->id], expect, __ATOMIC_RELAXED);
}

void ctph_call_settle(ctph_call *c, uint64_t result) {
  int library = c->gpu_type == CT_GPU_GEMM;
  int inside = library && ctph_tls.inner_timed != c->inner_mark;
  if (c->timing) {
    if (inside)
      give_back_timing(c);
    else
      finish_timing(c, result);
  }
  if (library)
    settle_library_call(c, result, inside);
  if (result != 0)
    c->flags &= ~(uint32_t)CT_API_UNTIMED; /* a failed call queued no GPU work */
  if (c->inner_op) {
    ctph_tls.inner_flags |= c->flags & (CT_API_TIMED | CT_API_CAPTURED | CT_API_UNTIMED);
    if (c->flags & CT_API_TIMED)
      ctph_tls.inner_timed++;
  }
  c->end_ns = ctp_now_ns();
  if (c->device < 0) {
    c->device = ctph_current_device(NULL);
    if (c->device >= 0 && c->handle != CTPH_NO_STREAM)
      c->stream = ctph_stream_id(c->device, c->handle, c->ptsz, NULL);
  } else if (!c->gpu_type && c->handle != CTPH_NO_STREAM) {
    c->stream = ctph_stream_id(c->device, c->handle, c->ptsz, NULL);
  }
}

void ctph_call_emit(ctph_call *c, uint64_t result) {
  ct_record r;
  r.kind = CT_KIND_API;
  r.u.api = (struct ct_api){
      .tid = ctp_tid(),
      .name = ctph_hook_name_id(c->id),
      .begin_ns = c->begin_ns,
      .end_ns = c->end_ns,
      .corr = c->corr,
      .device = c->device >= 0 ? (uint64_t)c->device : 0,
      .stream = c->stream,
      .result = result,
      .depth = c->depth,
      .flags = c->flags,
      .parent = c->depth ? ctph_tls.outer_corr : 0,
      .stack = c->depth == 0 ? ctp_stack_at(c->gpu_type != 0, c->site_ra, c->site_cfa, c->end_ns) : 0,
  };
  ctp_emit(&r);
  ctph_tls.depth--;
}
