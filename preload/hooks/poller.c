/*
 * The poller thread ("cutrace-poller") and the GPU-to-host clock mapping.
 *
 * The poller reads every thread's queue of timed operations in order, asks
 * cuEventElapsedTime(start, end) for the duration, which also says whether both
 * events have completed (about every millisecond while work is pending, backing
 * off to 20 ms when idle), converts the two events to host
 * times and emits GPU records. It runs in relaxed capture mode so that its queries
 * never invalidate an app's global-mode capture (the reason PyTorch's watchdog
 * switched mode, pytorch PR #104555), with every signal blocked.
 *
 * Clock mapping: CUDA events only give differences (float milliseconds). Per
 * device, an anchor is: host t0, a reference event recorded on a tracer-owned
 * non-blocking stream and synchronised, host t1; the anchor's host time is the
 * midpoint and its error (t1 - t0) / 2. Successive anchors are chained by their
 * elapsed times into a GPU timeline G (nanoseconds, double). A least-squares line
 * host = a + b * G through the last anchors (up to 16, about 1.6 s) corrects drift
 * and smooths the anchors' own error; an event e is placed at
 * G(e) = G(k) + elapsed(ref_k, e) with k the anchor nearest to the call's begin
 * time (float milliseconds stay precise to a few ns within ~100 ms). A new anchor
 * is taken whenever an operation is more than 100 ms newer than the last one.
 */
#include "hooks_internal.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_ANCHORS 16
#define REANCHOR_NS 100000000ull
#define IDLE_MAX_MS 20
#define ANCHOR_TRIES 3
#define ANCHOR_GOOD_NS 2000  /* a window this narrow is not retried */

struct anchor {
  uint64_t host_ns, error_ns;
  double gpu_ns;  /* on the device's chained GPU timeline */
  CUevent ref;
};

/* Poller-only state per device. */
struct device_clock {
  int n;
  struct anchor a[MAX_ANCHORS];  /* oldest first */
  double fit_a, fit_b;           /* host = fit_a + fit_b * gpu_ns */
  uint64_t first_host_ns;
  CUstream stream;
  CUcontext ctx;
  unsigned generation;           /* clock_generation this timeline belongs to */
  int broken;                    /* anchoring failed: timings of this device are lost */
};

/* Bumped when a device is reset: its anchors' reference events are gone. */
static unsigned clock_generation[CTPH_MAX_DEVICES];

void ctph_clock_forget(int device) {
  if (device >= 0 && device < CTPH_MAX_DEVICES)
    __atomic_fetch_add(&clock_generation[device], 1, __ATOMIC_RELEASE);
}

static struct device_clock clocks[CTPH_MAX_DEVICES];
static CUcontext poller_ctx;  /* the context current on the poller thread */

struct poll_state {
  int final;                  /* drain: wait for every event */
  int blocked;                /* something pending is not complete yet */
  uint64_t emitted, lost, clamped, chained, chain_late;
};

/* Makes device's context current on the poller thread. */
static int use_device(int device) {
  CUcontext ctx = ctph_device_context(device);
  if (!ctx)
    return 0;
  if (ctx != poller_ctx) {
    if (ctph_drv.CtxSetCurrent(ctx) != CUDA_SUCCESS)
      return 0;
    poller_ctx = ctx;
  }
  struct device_clock *c = &clocks[device];
  unsigned generation = __atomic_load_n(&clock_generation[device], __ATOMIC_ACQUIRE);
  if (c->ctx != ctx || c->generation != generation) {
    /* A new context (first use, or the device was reset): start a new timeline;
     * the old reference events went with the old context. */
    c->ctx = ctx;
    c->generation = generation;
    c->stream = NULL;
    c->n = 0;
    c->first_host_ns = 0;
    c->broken = 0;
  }
  return 1;
}

/* Fits host = a + b * gpu through the device's anchors, by least squares weighted
 * by each anchor's precision (1 / (error + 250 ns)^2). */
static void refit(struct device_clock *c) {
  const struct anchor *last = &c->a[c->n - 1];
  if (c->n < 2 || last->gpu_ns - c->a[0].gpu_ns < 5e6) {
    c->fit_b = 1.0;
    c->fit_a = (double)last->host_ns - last->gpu_ns;
    return;
  }
  double sw = 0, mx = 0, my = 0, sxx = 0, sxy = 0;
  for (int i = 0; i < c->n; i++) {
    double e = (double)c->a[i].error_ns + 250.0, w = 1.0 / (e * e);
    sw += w;
    mx += w * c->a[i].gpu_ns;
    my += w * (double)(c->a[i].host_ns - c->a[0].host_ns);
  }
  mx /= sw, my /= sw;
  for (int i = 0; i < c->n; i++) {
    double e = (double)c->a[i].error_ns + 250.0, w = 1.0 / (e * e);
    double dx = c->a[i].gpu_ns - mx, dy = (double)(c->a[i].host_ns - c->a[0].host_ns) - my;
    sxx += w * dx * dx, sxy += w * dx * dy;
  }
  double b = sxx > 0 ? sxy / sxx : 1.0;
  if (b < 0.999 || b > 1.001) /* more than 1000 ppm: an anchor was disturbed */
    b = 1.0;
  c->fit_b = b;
  c->fit_a = (double)c->a[0].host_ns + my - b * mx;
}

/* Records a reference event on the device's own (idle) stream and polls it:
 * [*t0, *t1] brackets its completion, from the last query that still saw it
 * pending (or the record call) to the first that saw it complete. Polling keeps
 * the bracket to a few query costs, where a blocking synchronise would add the
 * thread's wake-up latency (tens of microseconds on a loaded host). Returns the
 * event, or NULL. */
static CUevent measure_reference(struct device_clock *c, uint64_t *t0, uint64_t *t1) {
  CUevent ref;
  if (ctph_drv.EventCreate(&ref, CU_EVENT_DEFAULT) != CUDA_SUCCESS)
    return NULL;
  uint64_t lo = ctp_now_ns(), hi = lo;
  CUresult r = ctph_drv.EventRecord(ref, c->stream);
  for (unsigned spins = 0; r == CUDA_SUCCESS; spins++) {
    uint64_t tq = ctp_now_ns();
    CUresult q = ctph_drv.EventQuery(ref);
    hi = ctp_now_ns();
    if (q == CUDA_SUCCESS)
      break;
    if (q != CUDA_ERROR_NOT_READY) {
      r = q;
      break;
    }
    lo = tq;
    if (spins >= 20000) { /* a busy device: stop spinning, wait */
      r = ctph_drv.EventSynchronize(ref);
      hi = ctp_now_ns();
      break;
    }
  }
  if (r != CUDA_SUCCESS) {
    ctph_drv.EventDestroy(ref);
    return NULL;
  }
  *t0 = lo, *t1 = hi;
  return ref;
}

/* Takes a new anchor for device (its context current): the narrowest of a few
 * measurements (a preempted one is wide). Returns 0 on failure. */
static int take_anchor(int device) {
  struct device_clock *c = &clocks[device];
  uint64_t t_begin = ctp_now_ns();
  if (!c->stream && ctph_drv.StreamCreate(&c->stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
    c->stream = NULL;
    return 0;
  }
  CUevent ref = NULL;
  uint64_t t0 = 0, t1 = 0;
  for (int i = 0; i < ANCHOR_TRIES && (!ref || t1 - t0 > ANCHOR_GOOD_NS); i++) {
    uint64_t a0, a1;
    CUevent e = measure_reference(c, &a0, &a1);
    if (e && (!ref || a1 - a0 < t1 - t0)) {
      if (ref)
        ctph_drv.EventDestroy(ref);
      ref = e, t0 = a0, t1 = a1;
    } else if (e) {
      ctph_drv.EventDestroy(e);
    }
  }
  if (!ref)
    return 0;
  CUresult r = CUDA_SUCCESS;
  double gpu_ns = 0;
  if (r == CUDA_SUCCESS && c->n > 0) {
    float ms = 0;
    r = ctph_drv.EventElapsedTime(&ms, c->a[c->n - 1].ref, ref);
    gpu_ns = c->a[c->n - 1].gpu_ns + (double)ms * 1e6;
  }
  if (r != CUDA_SUCCESS) {
    ctph_drv.EventDestroy(ref);
    return 0;
  }
  if (c->n == MAX_ANCHORS) {
    ctph_drv.EventDestroy(c->a[0].ref);
    memmove(&c->a[0], &c->a[1], (MAX_ANCHORS - 1) * sizeof c->a[0]);
    c->n--;
  }
  struct anchor *a = &c->a[c->n++];
  a->host_ns = t0 + (t1 - t0) / 2;
  a->error_ns = (t1 - t0) / 2;
  a->gpu_ns = gpu_ns;
  a->ref = ref;
  if (c->n == 1 && !c->first_host_ns)
    c->first_host_ns = a->host_ns;
  refit(c);
  ct_record rec = {.kind = CT_KIND_CLOCK};
  rec.u.clock.device = (uint64_t)device;
  rec.u.clock.host_ns = a->host_ns;
  /* offset: the chained GPU clock, started at the first anchor's host time, minus
   * the host clock (int64 stored as uint64): it grows with the drift. */
  rec.u.clock.offset_ns =
      (uint64_t)(int64_t)((double)c->first_host_ns + gpu_ns - (double)a->host_ns);
  rec.u.clock.error_ns = a->error_ns;
  ctp_emit(&rec);
  ctp_emit_tracer("anchor", t_begin, ctp_now_ns(), 1);
  return 1;
}

/* The anchor nearest to host time t. */
static const struct anchor *nearest_anchor(const struct device_clock *c, uint64_t t) {
  const struct anchor *best = &c->a[c->n - 1];
  uint64_t best_d = t > best->host_ns ? t - best->host_ns : best->host_ns - t;
  for (int i = c->n - 2; i >= 0; i--) {
    uint64_t d = t > c->a[i].host_ns ? t - c->a[i].host_ns : c->a[i].host_ns - t;
    if (d >= best_d)
      break; /* anchors are in time order */
    best = &c->a[i], best_d = d;
  }
  return best;
}

/* Gives up on one operation's timing. */
static void lose(struct ctph_pending *p, struct poll_state *ps) {
  ps->lost++;
  ctph_drv.EventDestroy(p->start); /* best effort: the context may be gone */
  if (!p->keep_end) /* else the launching thread still holds it */
    ctph_drv.EventDestroy(p->end);
  if (p->release)
    ctph_drv.EventDestroy(p->release);
}

/* Converts one operation if its end event completed. Returns 1 when consumed. */
static int poll_one(struct ctph_pending *p, void *arg) {
  struct poll_state *ps = arg;
  int device = (int)p->device;
  if (!use_device(device)) {
    lose(p, ps);
    return 1;
  }
  struct device_clock *c = &clocks[device];
  /* The duration doubles as the completion test: cuEventElapsedTime answers
   * CUDA_ERROR_NOT_READY while either event is pending (cuda.h), so no separate
   * cuEventQuery is needed (one driver call less per operation). */
  float ms_len = 0;
  CUresult r = ctph_drv.EventElapsedTime(&ms_len, p->start, p->end);
  if (r == CUDA_ERROR_NOT_READY) {
    if (!ps->final) {
      ps->blocked = 1;
      return 0;
    }
    r = ctph_drv.EventSynchronize(p->end);
    if (r == CUDA_SUCCESS)
      r = ctph_drv.EventElapsedTime(&ms_len, p->start, p->end);
  }
  if (r != CUDA_SUCCESS || c->broken) {
    lose(p, ps);
    return 1;
  }
  if (!c->n || p->begin_ns > c->a[c->n - 1].host_ns + REANCHOR_NS) {
    if (!take_anchor(device) && !c->n) {
      c->broken = 1;
      lose(p, ps);
      return 1;
    }
  }
  const struct anchor *a = nearest_anchor(c, p->begin_ns);
  float ms_start = 0;
  if (ctph_drv.EventElapsedTime(&ms_start, a->ref, p->start) != CUDA_SUCCESS) {
    lose(p, ps);
    return 1;
  }
  double g = a->gpu_ns + (double)ms_start * 1e6;
  double start = c->fit_a + c->fit_b * g;
  double len = (double)ms_len * 1e6 * c->fit_b;
  uint64_t start_ns = start > 0 ? (uint64_t)(start + 0.5) : 0;
  uint64_t end_ns = start_ns + (len > 0 ? (uint64_t)(len + 0.5) : 0);
  if (start_ns < p->begin_ns) {
    /* Impossible: the GPU cannot start before the call that queued it. The anchor
     * error explains a few microseconds; clamp and count (TRACER "clamp"). */
    end_ns += p->begin_ns - start_ns;
    start_ns = p->begin_ns;
    ps->clamped++;
  }
  if (start_ns < p->submitted_ns) {
    /* The start event completed before the call returned: the stream was idle when
     * the call submitted the work, or went idle while the host was late inside the
     * call (a chained start: the previous operation's end). The event measured when
     * the call began or the previous work ended, not when this work did (on the first
     * launch of a kernel that can be a module load of milliseconds): the work
     * started somewhere between then and the call's return, and is dated at the
     * return (never after its end), so that no idle time is hidden. */
    start_ns = p->submitted_ns < end_ns ? p->submitted_ns : end_ns;
    ps->chain_late += p->start_shared;
  }
  ct_record rec;
  rec.kind = CT_KIND_GPU;
  rec.u.gpu = (struct ct_gpu){
      .corr = p->corr,
      .device = p->device,
      .stream = p->stream,
      .start_ns = start_ns,
      .end_ns = end_ns,
      .type = p->type,
      .name = p->name,
  };
  ctp_emit(&rec);
  ctph_event_put(device, p->start);
  if (!p->keep_end)
    ctph_event_put(device, p->end);
  if (p->release)
    ctph_event_put(p->release_device, p->release);
  ps->chained += p->start_shared;
  ps->emitted++;
  return 1;
}

/* One pass over every queue; emits TRACER records for the work done. */
static void poll_pass(struct poll_state *ps) {
  uint64_t t0 = ctp_now_ns();
  ps->emitted = ps->lost = ps->clamped = ps->chained = ps->chain_late = 0;
  ps->blocked = 0;
  unsigned n = ctph_pending_consume(poll_one, ps);
  if (!n)
    return;
  uint64_t t1 = ctp_now_ns();
  ctp_emit_tracer(ps->final ? "drain" : "poll", t0, t1, ps->emitted);
  if (ps->clamped)
    ctp_emit_tracer("clamp", t0, t1, ps->clamped);
  if (ps->chained)
    ctp_emit_tracer("chained", t0, t1, ps->chained);
  if (ps->chain_late)
    ctp_emit_tracer("chain_late", t0, t1, ps->chain_late);
  if (ps->lost)
    ctp_emit_tracer("gpu_lost", t0, t1, ps->lost);
}

/* ------------------------------------------------------------ the thread */

static pthread_mutex_t poller_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t poller_wake = PTHREAD_COND_INITIALIZER;
static int poller_stop, poller_running;
static pthread_t poller_thread;
static pthread_once_t poller_once = PTHREAD_ONCE_INIT;

static void *poller_main(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "cutrace-poller");
  /* Its buffer now (named), so that the first anchor's TRACER span times the anchor
   * and not the ring's creation. */
  ctp_thread_ready();
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
  if (ctph_drv.ThreadExchangeStreamCaptureMode)
    ctph_drv.ThreadExchangeStreamCaptureMode(&mode);
  unsigned sleep_ms = 1;
  pthread_mutex_lock(&poller_lock);
  while (!poller_stop) {
    pthread_mutex_unlock(&poller_lock);
    struct poll_state ps = {0};
    poll_pass(&ps);
    sleep_ms = ps.blocked || ps.emitted ? 1 : sleep_ms * 2 > IDLE_MAX_MS ? IDLE_MAX_MS : sleep_ms * 2;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += (long)sleep_ms * 1000000L;
    if (until.tv_nsec >= 1000000000L)
      until.tv_sec++, until.tv_nsec -= 1000000000L;
    pthread_mutex_lock(&poller_lock);
    if (!poller_stop)
      pthread_cond_timedwait(&poller_wake, &poller_lock, &until);
  }
  pthread_mutex_unlock(&poller_lock);
  return NULL;
}

static void final_flush(void) { ctph_gpu_drain(1); }

/* After fork the child has no poller and may not use the parent's CUDA state. The
 * parent's poller may have held poller_lock (or waited on poller_wake, or held an
 * event pool's lock) at the fork: the child's exit drain would wait for it forever
 * (a stk_app fork child hung so under AddressSanitizer's timing, scripts/asan). The
 * operations queued at the fork are the parent's to time: the child's final drain
 * would otherwise time them again, under the child's pid. */
static void after_fork_child(void) {
  ctph_gpu_timing_on = 0;
  poller_running = 0;
  pthread_mutex_init(&poller_lock, NULL);
  pthread_cond_init(&poller_wake, NULL);
  ctph_gputime_reinit_locks();
  ctph_pending_forget();
}

/* CUTRACE_EVENT_CHAIN: 0 (default) or 1, see chain.c.
 * CUTRACE_GPU_TIMING: 1 (default) times GPU work with events; 0 records CPU spans
 * only (every GPU operation then carries CT_API_UNTIMED). */
static void read_knobs(void) {
  const char *chain = getenv("CUTRACE_EVENT_CHAIN");
  if (chain && !strcmp(chain, "1"))
    ctph_chain_on = 1;
  else if (chain && *chain && strcmp(chain, "0"))
    ctp_warn("CUTRACE_EVENT_CHAIN='%.64s' is not 0 or 1; using 0", chain);
  const char *v = getenv("CUTRACE_GPU_TIMING");
  if (!v || !*v || !strcmp(v, "1"))
    return;
  if (!strcmp(v, "0")) {
    __atomic_store_n(&ctph_gpu_timing_on, 0, __ATOMIC_RELEASE);
    return;
  }
  ctp_warn("CUTRACE_GPU_TIMING='%.64s' is not 0 or 1; using 1", v);
}

static void poller_start_once(void) {
  read_knobs();
  if (!__atomic_load_n(&ctph_gpu_timing_on, __ATOMIC_ACQUIRE))
    return;
  pthread_atfork(NULL, NULL, after_fork_child);
  ctp_at_final_flush(final_flush);
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  if (pthread_create(&poller_thread, NULL, poller_main, NULL) == 0)
    poller_running = 1;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void ctph_poller_ensure(void) { pthread_once(&poller_once, poller_start_once); }

void ctph_gpu_drain(int final) {
  int saved = errno;
  if (final) {
    pthread_mutex_lock(&poller_lock);
    int running = poller_running;
    poller_stop = 1;
    poller_running = 0;
    pthread_cond_signal(&poller_wake);
    pthread_mutex_unlock(&poller_lock);
    if (running)
      pthread_join(poller_thread, NULL);
    __atomic_store_n(&ctph_gpu_timing_on, 0, __ATOMIC_RELEASE);
  }
  if (!final && poller_running) {
    /* The poller is the only consumer: wake it and wait for the queues to empty. */
    for (int i = 0; i < 5000 && !ctph_pending_empty(); i++) {
      pthread_mutex_lock(&poller_lock);
      pthread_cond_signal(&poller_wake);
      pthread_mutex_unlock(&poller_lock);
      struct timespec ms = {0, 1000000};
      nanosleep(&ms, NULL);
    }
    errno = saved;
    return;
  }
  /* With the poller stopped (or never started), this thread may consume. */
  if (!poller_running && ctph_drv.loaded) {
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    if (ctph_drv.ThreadExchangeStreamCaptureMode)
      ctph_drv.ThreadExchangeStreamCaptureMode(&mode);
    CUcontext saved_ctx = NULL;
    ctph_drv.CtxGetCurrent(&saved_ctx);
    CUcontext was = poller_ctx;
    poller_ctx = saved_ctx;
    struct poll_state ps = {.final = 1};
    poll_pass(&ps);
    if (poller_ctx != saved_ctx)
      ctph_drv.CtxSetCurrent(saved_ctx);
    poller_ctx = was;
    if (ctph_drv.ThreadExchangeStreamCaptureMode)
      ctph_drv.ThreadExchangeStreamCaptureMode(&mode);
  }
  errno = saved;
}
