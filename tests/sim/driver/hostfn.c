/* Host functions in streams (cuLaunchHostFunc, cuStreamAddCallback).
 *
 * A host function is an operation of SIMCUDA_HOST_FN_US on its stream: it
 * starts when the work before it has ended, and later work on the stream waits
 * for that modelled time (not for the function's real run time, which the
 * analytical model cannot know in advance). The function itself runs on one
 * driver thread at its start time, in start order, never under the driver's
 * lock, as the real driver runs them on a thread of its own. */
#include "sim.h"

#include <stdlib.h>
#include <time.h>

struct pending_call {
  struct pending_call *next;
  struct sim_host_call call;
  uint64_t when_ns;
};

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_changed;
static struct pending_call *queue; /* sorted by when_ns, FIFO among equals */
static int worker_started;

/* The worker thread does not exist in a forked child: start afresh there. */
static void forget_worker_in_child(void)
{
  pthread_mutex_init(&queue_lock, NULL);
  worker_started = 0;
  queue = NULL; /* the parent's pending calls are the parent's */
}

__attribute__((constructor)) static void register_fork_handler(void)
{
  pthread_atfork(NULL, NULL, forget_worker_in_child);
}

static void run_call(const struct sim_host_call *c)
{
  if (c->fn)
    c->fn(c->data);
  else if (c->callback)
    c->callback(c->stream, CUDA_SUCCESS, c->data);
}

/* The driver's host-function thread: runs each call once its time has come. */
static void *host_function_worker(void *unused)
{
  (void)unused;
  pthread_mutex_lock(&queue_lock);
  for (;;) {
    if (!queue) {
      pthread_cond_wait(&queue_changed, &queue_lock);
      continue;
    }
    uint64_t now = sim_now_ns();
    if (queue->when_ns > now) {
      struct timespec until = {(time_t)(queue->when_ns / 1000000000ull), (long)(queue->when_ns % 1000000000ull)};
      pthread_cond_timedwait(&queue_changed, &queue_lock, &until); /* then look again */
      continue;
    }
    struct pending_call *p = queue;
    queue = p->next;
    pthread_mutex_unlock(&queue_lock);
    run_call(&p->call);
    free(p);
    pthread_mutex_lock(&queue_lock);
  }
  return NULL;
}

/* Starts the worker once (queue_lock held). Returns 0 or -1. */
static int start_worker(void)
{
  if (worker_started)
    return 0;
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&queue_changed, &attr);
  pthread_condattr_destroy(&attr);
  pthread_attr_t thread_attr;
  pthread_attr_init(&thread_attr);
  pthread_attr_setdetachstate(&thread_attr, PTHREAD_CREATE_DETACHED);
  pthread_t thread;
  int r = pthread_create(&thread, &thread_attr, host_function_worker, NULL);
  pthread_attr_destroy(&thread_attr);
  if (r != 0)
    return -1;
  worker_started = 1;
  return 0;
}

int sim_host_call_schedule(const struct sim_host_call *call, uint64_t when_ns)
{
  struct pending_call *p = malloc(sizeof *p);
  if (!p)
    return -1;
  p->call = *call;
  p->when_ns = when_ns;
  pthread_mutex_lock(&queue_lock);
  if (start_worker() != 0) {
    pthread_mutex_unlock(&queue_lock);
    free(p);
    return -1;
  }
  struct pending_call **at = &queue;
  while (*at && (*at)->when_ns <= when_ns)
    at = &(*at)->next;
  p->next = *at;
  *at = p;
  pthread_cond_signal(&queue_changed);
  pthread_mutex_unlock(&queue_lock);
  return 0;
}

static CUresult enqueue_host_call(CUstream hStream, const struct sim_host_call *call, int per_thread)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  sim_lock();
  struct sim_stream *s;
  CUresult r = sim_stream_resolve(hStream, per_thread, &s);
  if (r == CUDA_SUCCESS) {
    struct sim_op op = {.kind = SIM_OP_HOST, .u.host = *call};
    op.duration_ns = (uint64_t)(sim_knobs.host_fn_us * 1000.0 + 0.5);
    r = sim_submit(s, &op, NULL);
  }
  sim_unlock();
  return r;
}

/** Runs fn(userData) on a driver thread once earlier work on the stream is done. */
SIM_API CUresult cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
  if (!fn)
    return CUDA_ERROR_INVALID_VALUE;
  struct sim_host_call call = {.fn = fn, .data = userData};
  return enqueue_host_call(hStream, &call, 0);
}

/** cuLaunchHostFunc through the per-thread default stream entry point. */
SIM_API CUresult cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData)
{
  if (!fn)
    return CUDA_ERROR_INVALID_VALUE;
  struct sim_host_call call = {.fn = fn, .data = userData};
  return enqueue_host_call(hStream, &call, 1);
}

/** Calls callback(hStream, CUDA_SUCCESS, userData) once earlier work is done. */
SIM_API CUresult cuStreamAddCallback(CUstream hStream, CUstreamCallback callback, void *userData,
                                     unsigned int flags)
{
  if (!callback || flags)
    return CUDA_ERROR_INVALID_VALUE;
  struct sim_host_call call = {.callback = callback, .stream = hStream, .data = userData};
  return enqueue_host_call(hStream, &call, 0);
}

/** cuStreamAddCallback through the per-thread default stream entry point. */
SIM_API CUresult cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback, void *userData,
                                          unsigned int flags)
{
  if (!callback || flags)
    return CUDA_ERROR_INVALID_VALUE;
  struct sim_host_call call = {.callback = callback, .stream = hStream, .data = userData};
  return enqueue_host_call(hStream, &call, 1);
}
