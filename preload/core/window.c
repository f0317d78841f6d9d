/*
 * Recording windows: when the tracer records the program and when it pauses.
 *
 *   CUTRACE_DELAY=S        nothing is recorded for the first S seconds
 *   CUTRACE_CAPTURE=profiler  recording only between cudaProfilerStart (or
 *                          cuProfilerStart) and cudaProfilerStop, like nsys
 *                          --capture-range=cudaProfilerApi
 *   CUTRACE_CAPTURE=nvtx:NAME  recording only while an NVTX range named NAME is
 *                          open on some thread (nsys --capture-range=nvtx)
 *   CUTRACE_DURATION=S     recording stops for good S seconds after it first began
 *
 * The program is recorded while all three conditions hold; every change of that
 * state is a transition, kept here until the writer takes it (ctp_window_drain) and
 * writes a PAUSE record: one when a pause begins (end 0, still open) and one when it
 * ends. The writer takes transitions after snapshotting the threads' buffers, so a
 * record emitted after a transition (which the transition happened-before) always
 * follows its PAUSE record in the file; readers can judge any gap when they reach it.
 *
 * While paused the hooks forward calls without recording them (ctph_on() is 0), but
 * keep the state they track (captures, device resets); the tracer's own threads go
 * on (the poller still times work launched before the pause). Deadlines are checked
 * by the hooks: the delay when a call finds the tracer paused, the duration at the
 * begin of every recorded call (one compare), and each takes effect at its exact time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

int ctp_paused;
uint32_t ctp_pause_epoch;
uint64_t ctp_stop_at_ns = UINT64_MAX;
uint64_t ctp_capture_range_name;

static pthread_mutex_t window_lock = PTHREAD_MUTEX_INITIALIZER;
static int delay_over = 1, duration_over;
static int range_on = 1;               /* the profiler range or an NVTX range NAME is open */
static int ranges_open;                /* NVTX ranges NAME open (CUTRACE_CAPTURE=nvtx:NAME) */
static uint64_t resume_at_ns;          /* end of CUTRACE_DELAY, 0 when none pending */
static int windows_begun;              /* recording windows that have begun */
static uint64_t pause_begin_ns;        /* the open pause */
static uint64_t pause_why;             /* its reason (string id) */
static uint64_t why_delay, why_range, why_duration;

/* Transitions the writer has not taken yet (it takes them every few milliseconds). */
static struct ct_pause *pending;
static size_t pending_n, pending_cap;

/* Queues a PAUSE record (lock held); without memory the transition is not written
 * (the pause still happens). */
static void queue(uint64_t begin_ns, uint64_t end_ns, uint64_t why) {
  if (pending_n == pending_cap) {
    size_t ncap = pending_cap ? pending_cap * 2 : 16;
    struct ct_pause *np = realloc(pending, ncap * sizeof *np);
    if (!np) return;
    pending = np;
    pending_cap = ncap;
  }
  pending[pending_n++] = (struct ct_pause){.begin_ns = begin_ns, .end_ns = end_ns, .why = why};
}

/* Re-evaluates whether to record at time now (lock held); why: the reason a pause
 * beginning now would have. */
static void settle(uint64_t now, uint64_t why) {
  int record = delay_over && range_on && !duration_over;
  int paused = __atomic_load_n(&ctp_paused, __ATOMIC_RELAXED);
  if (record && paused) {
    queue(pause_begin_ns, now, pause_why);
    if (!windows_begun++ && ctp_cfg.duration_ns)
      __atomic_store_n(&ctp_stop_at_ns, now + ctp_cfg.duration_ns, __ATOMIC_RELEASE);
    __atomic_store_n(&ctp_paused, 0, __ATOMIC_RELEASE);
  } else if (!record && !paused) {
    pause_begin_ns = now;
    pause_why = why;
    queue(now, 0, why);
    __atomic_fetch_add(&ctp_pause_epoch, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&ctp_paused, 1, __ATOMIC_RELEASE);
  }
}

void ctp_window_init(uint64_t start_ns) {
  const char *range = ctp_cfg.capture_range;
  if (!ctp_cfg.delay_ns && !ctp_cfg.capture_profiler && !*range && !ctp_cfg.duration_ns) return;
  why_delay = ctp_intern_always("delay", 5);
  why_range = *range ? ctp_intern_always("nvtx", 4) : ctp_intern_always("profiler", 8);
  if (*range) ctp_capture_range_name = ctp_intern_always(range, strlen(range));
  why_duration = ctp_intern_always("duration", 8);
  pthread_mutex_lock(&window_lock);
  if (ctp_cfg.delay_ns) {
    delay_over = 0;
    resume_at_ns = start_ns + ctp_cfg.delay_ns;
  }
  if (ctp_cfg.capture_profiler || *range) range_on = 0;
  settle(start_ns, ctp_cfg.delay_ns ? why_delay : why_range);
  if (!ctp_paused && !windows_begun++) /* only a duration: its window begins now */
    ctp_stop_at_ns = start_ns + ctp_cfg.duration_ns;
  pthread_mutex_unlock(&window_lock);
}

int ctp_window_poll(void) {
  uint64_t at = __atomic_load_n(&resume_at_ns, __ATOMIC_RELAXED);
  if (!at || ctp_now_ns() < at) return !__atomic_load_n(&ctp_paused, __ATOMIC_ACQUIRE);
  int saved = errno;
  pthread_mutex_lock(&window_lock);
  if (resume_at_ns) {
    delay_over = 1;
    __atomic_store_n(&resume_at_ns, 0, __ATOMIC_RELAXED);
    if (!range_on && ctp_paused) {
      /* still paused, now for the range: the delay's pause ends and the range's begins,
       * so that each PAUSE record has one reason */
      queue(pause_begin_ns, at, pause_why);
      pause_begin_ns = at;
      pause_why = why_range;
      queue(at, 0, why_range);
    }
    settle(at, why_range);
  }
  pthread_mutex_unlock(&window_lock);
  errno = saved;
  return !__atomic_load_n(&ctp_paused, __ATOMIC_ACQUIRE);
}

void ctp_window_expire(void) {
  int saved = errno;
  pthread_mutex_lock(&window_lock);
  uint64_t at = __atomic_load_n(&ctp_stop_at_ns, __ATOMIC_RELAXED);
  if (at != UINT64_MAX && !duration_over) {
    duration_over = 1; /* ctp_stop_at_ns stays: a poll still ending after it is not counted */
    settle(at, why_duration);
  }
  pthread_mutex_unlock(&window_lock);
  errno = saved;
}

void ctp_window_range(int open) {
  if (!ctp_capture_range_name) return;
  int saved = errno;
  pthread_mutex_lock(&window_lock);
  ranges_open += open ? 1 : ranges_open > 0 ? -1 : 0;
  if (range_on != (ranges_open > 0)) {
    range_on = ranges_open > 0;
    settle(ctp_now_ns(), why_range);
  }
  pthread_mutex_unlock(&window_lock);
  errno = saved;
}

void ctp_window_profiler(int start) {
  if (!ctp_cfg.capture_profiler) return;
  int saved = errno;
  pthread_mutex_lock(&window_lock);
  if (range_on != start) {
    range_on = start;
    settle(ctp_now_ns(), why_range);
  }
  pthread_mutex_unlock(&window_lock);
  errno = saved;
}

int ctp_window_saw(uint64_t begin_ns) {
  if (CTP_LIKELY(!__atomic_load_n(&ctp_paused, __ATOMIC_ACQUIRE))) return 1;
  pthread_mutex_lock(&window_lock);
  int saw = ctp_paused ? windows_begun && begin_ns < pause_begin_ns : 1;
  pthread_mutex_unlock(&window_lock);
  return saw;
}

void ctp_window_drain(void (*fn)(void *arg, const ct_record *rec), void *arg) {
  struct ct_pause batch[64];
  for (;;) {
    pthread_mutex_lock(&window_lock);
    size_t n = pending_n < 64 ? pending_n : 64;
    if (!n) { /* pending is NULL until the first pause: no memcpy from it (UBSan) */
      pthread_mutex_unlock(&window_lock);
      return;
    }
    memcpy(batch, pending, n * sizeof *batch);
    memmove(pending, pending + n, (pending_n - n) * sizeof *pending);
    pending_n -= n;
    pthread_mutex_unlock(&window_lock);
    for (size_t i = 0; i < n; i++) {
      ct_record r;
      r.kind = CT_KIND_PAUSE;
      r.u.pause = batch[i];
      fn(arg, &r);
    }
  }
}

void ctp_window_requeue(void) {
  pthread_mutex_lock(&window_lock);
  pending_n = 0;
  if (ctp_paused) queue(pause_begin_ns, 0, pause_why);
  pthread_mutex_unlock(&window_lock);
}

void ctp_window_reinit_lock(void) { pthread_mutex_init(&window_lock, NULL); }
