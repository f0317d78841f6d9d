/*
 * Queries of an event or a stream (cudaEventQuery, cudaStreamQuery(_ptsz); the driver's
 * cuEventQuery and cuStreamQuery(_ptsz) are in preload/driver/wrap_poll.c), coalesced:
 * a thread spinning on a query until the GPU is done makes millions of calls, so the
 * polls of one target through one entry point that answer not ready become ONE API
 * record from the first poll's start to the end of the poll that answers (ready or an
 * error), with a POLL record (format 1.12) giving the number of polls. A thread may poll
 * up to CTPH_POLL_SLOTS targets in turn (a watchdog polling the events of several
 * streams round-robin): each target has its own open sequence in the thread's state
 * (ctph_tls.poll), so its record spans its own first poll to its answer and the
 * records of targets polled in turn overlap in time. An open sequence is written when
 * it ends, or as it stands (its answer not ready) when the thread makes another traced
 * call, or when a fifth target is polled (the least recently polled one goes). A
 * sequence open when the thread exits without another call is not written; a fork
 * child forgets the sequences open in the forking thread (the parent's to write).
 */
#include "hooks_internal.h"

#include <pthread.h>
#include <string.h>

/* A fork child starts with the forking thread's open sequences: they are the parent's
 * polls (the parent writes them), so the child forgets them. */
static void poll_after_fork_child(void) {
  struct ctph_thread *t = &ctph_tls;
  memset(t->poll_key, 0, sizeof t->poll_key);
  t->polls_open = 0;
}

static void poll_fork_handler(void) { pthread_atfork(NULL, NULL, poll_after_fork_child); }
static pthread_once_t poll_fork_once = PTHREAD_ONCE_INIT;

/* Writes the record of p: a POLL record first (the detail before its call, as every
 * detail) when p stands for a sequence (more than one poll, or one not ready: the thread
 * went on before the answer), then the API record. */
static void poll_emit(const struct ctph_poll_seq *p) {
  ct_record r;
  if (p->polls > 1 || p->result == CUDA_ERROR_NOT_READY) {
    r.kind = CT_KIND_POLL;
    r.u.poll = (struct ct_poll){.corr = p->corr, .polls = p->polls};
    ctp_emit(&r);
  }
  r.kind = CT_KIND_API;
  r.u.api = (struct ct_api){
      .tid = ctp_tid(),
      .name = ctph_hook_name_id((enum ctph_id)p->id),
      .begin_ns = p->begin_ns,
      .end_ns = p->end_ns,
      .corr = p->corr,
      .device = p->device >= 0 ? (uint64_t)p->device : 0,
      .stream = p->stream,
      .result = p->result,
      .depth = p->depth,
      .flags = p->flags,
      .parent = p->parent,
      .stack = p->stack,
  };
  ctp_emit(&r);
}

/* Writes slot i's sequence as it stands and frees the slot. */
static void poll_close(struct ctph_thread *t, int i) {
  poll_emit(&t->poll[i]);
  t->poll[i].polls = 0;
  t->poll_key[i] = 0;
  t->polls_open--;
}

void ctph_poll_flush(void) {
  struct ctph_thread *t = &ctph_tls;
  if (!t->polls_open)
    return;
  int saved = errno;
  while (t->polls_open) { /* oldest first: the records of one thread in begin order */
    int oldest = -1;
    for (int i = 0; i < CTPH_POLL_SLOTS; i++)
      if (t->poll_key[i] && (oldest < 0 || t->poll[i].begin_ns < t->poll[oldest].begin_ns))
        oldest = i;
    poll_close(t, oldest);
  }
  errno = saved;
}

/* A free slot for a new sequence: when none, the least recently polled sequence is
 * written as it stands and its slot given. */
static int poll_free_slot(struct ctph_thread *t) {
  int lru = 0;
  for (int i = 0; i < CTPH_POLL_SLOTS; i++) {
    if (!t->poll_key[i])
      return i;
    if (t->poll[i].end_ns < t->poll[lru].end_ns)
      lru = i;
  }
  poll_close(t, lru);
  return lru;
}

void ctph_poll_record(enum ctph_id id, int ptsz, uint32_t flags, uint64_t target, CUstream stream,
                      int slot, uint64_t begin_ns, uint64_t result, int not_ready,
                      const void *site_ra, const void *site_cfa) {
  struct ctph_thread *t = &ctph_tls;
  uint64_t end_ns = ctp_now_ns();
  if (slot >= 0) { /* the answer that ends an open sequence */
    struct ctph_poll_seq *p = &t->poll[slot];
    p->polls++;
    p->end_ns = end_ns;
    p->result = result;
    poll_close(t, slot);
    return;
  }
  if (CTP_UNLIKELY(begin_ns >= __atomic_load_n(&ctp_stop_at_ns, __ATOMIC_RELAXED))) {
    ctp_window_expire(); /* CUTRACE_DURATION is over: not recorded */
    return;
  }
  int device = ctph_current_device(NULL);
  struct ctph_poll_seq seq = {
      .polls = 1,
      .id = (uint32_t)id,
      .target = target,
      .begin_ns = begin_ns,
      .end_ns = end_ns,
      .corr = ctp_next_corr(),
      .stack = ctp_stack_at(0, site_ra, site_cfa),
      .parent = t->depth ? t->outer_corr : 0,
      .result = result,
      .depth = t->depth,
      .flags = flags | (ptsz ? CT_API_PTSZ : 0),
      .stream = device >= 0 && stream != CTPH_NO_STREAM ? ctph_stream_id(device, stream, ptsz, NULL)
                                                        : 0,
      .device = device,
  };
  if (!not_ready) { /* answered at once: one ordinary record of one poll */
    poll_emit(&seq);
    return;
  }
  pthread_once(&poll_fork_once, poll_fork_handler);
  int i = poll_free_slot(t);
  t->poll[i] = seq;
  t->poll_target[i] = target;
  t->poll_key[i] = (uint32_t)id + 1;
  t->polls_open++;
}

CTP_EXPORT __typeof__(cudaStreamQuery) cudaStreamQuery_ptsz;

/** cudaEventQuery, traced (coalesced polls). */
CTP_EXPORT cudaError_t cudaEventQuery(cudaEvent_t event) {
  __typeof__(&cudaEventQuery) real = CTPH_REAL(cudaEventQuery);
  if (!real)
    return cudaErrorSharedObjectSymbolNotFound;
  CTPH_POLL_BODY(cudaError_t, CTPH_ID_cudaEventQuery, 0, 0, (uintptr_t)event, CTPH_NO_STREAM,
                 !ctph_on(), real(event), cudaErrorNotReady);
}

/** cudaStreamQuery, traced (coalesced polls). */
CTP_EXPORT cudaError_t cudaStreamQuery(cudaStream_t stream) {
  __typeof__(&cudaStreamQuery) real = CTPH_REAL(cudaStreamQuery);
  if (!real)
    return cudaErrorSharedObjectSymbolNotFound;
  CTPH_POLL_BODY(cudaError_t, CTPH_ID_cudaStreamQuery, 0, 0, (uintptr_t)stream, stream,
                 !ctph_on(), real(stream), cudaErrorNotReady);
}

/** cudaStreamQuery_ptsz, traced (coalesced polls). */
CTP_EXPORT cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream) {
  __typeof__(&cudaStreamQuery) real = CTPH_REAL(cudaStreamQuery_ptsz);
  if (!real)
    return cudaErrorSharedObjectSymbolNotFound;
  CTPH_POLL_BODY(cudaError_t, CTPH_ID_cudaStreamQuery_ptsz, 1, 0, (uintptr_t)stream, stream,
                 !ctph_on(), real(stream), cudaErrorNotReady);
}
