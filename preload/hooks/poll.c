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
 * call, or when a fifth target is polled (the least recently polled one goes), and as it
 * stands too (ending at its last poll) when the thread pushes or pops an NVTX range,
 * polls or calls while tracing is paused or over, exits (a pthread key destructor, run
 * before the core's), or exits the process (the final flush writes the exiting thread's,
 * then those of the other polling threads, found in a table of up to POLL_OWNERS
 * threads; since 2026-12-07 evening: before, all those were lost). A fork child forgets
 * the sequences open in the forking thread (the parent's to write).
 */
#include "hooks_internal.h"

#include <pthread.h>
#include <string.h>

/* The threads that have polled (their ctph_tls), so that the final flush at process exit
 * writes the spins they have open; a thread takes a free entry at its first sequence and
 * gives it back at exit. Lock-free: a poll may come from a signal handler. A thread
 * beyond POLL_OWNERS still writes its spins at its own exit, not at the process's. */
#define POLL_OWNERS 256
static struct ctph_thread *poll_owners[POLL_OWNERS];
static pthread_key_t poll_exit_key;
static int poll_exit_key_made;

static void poll_final(void);

/* A fork child starts with the forking thread's open sequences: they are the parent's
 * polls (the parent writes them), so the child forgets them, and the other threads
 * (the parent's) leave the table; the forking thread keeps its entry, under its new tid. */
static void poll_after_fork_child(void) {
  struct ctph_thread *t = &ctph_tls;
  memset(t->poll_key, 0, sizeof t->poll_key);
  t->polls_open = 0;
  t->poll_tid = ctp_tid();
  for (int i = 0; i < POLL_OWNERS; i++)
    if (i != t->poll_owner - 1)
      __atomic_store_n(&poll_owners[i], NULL, __ATOMIC_RELAXED);
}

static void poll_setup(void) {
  pthread_atfork(NULL, NULL, poll_after_fork_child);
  ctp_at_final_flush(poll_final);
}
static pthread_once_t poll_setup_once = PTHREAD_ONCE_INIT;

/* pthread key destructor: the thread exits with spins open (it polled last). */
static void poll_thread_exit(void *arg) {
  struct ctph_thread *t = arg;
  ctph_poll_flush();
  t->poll_armed = 0;
  if (t->poll_owner) {
    __atomic_store_n(&poll_owners[t->poll_owner - 1], NULL, __ATOMIC_RELEASE);
    t->poll_owner = 0;
  }
}

/*
 * glibc runs pthread key destructors in the order the keys were created, and the core
 * drops a thread's records once its own key destructor has run: this key, made by a
 * constructor that runs before the core's (as nvtx_stack.c's), lets the spins a thread
 * leaves open at its exit still be written.
 */
__attribute__((constructor(150))) static void poll_exit_key_early(void) {
  int saved = errno;
  if (pthread_key_create(&poll_exit_key, poll_thread_exit) == 0) poll_exit_key_made = 1;
  errno = saved;
}

/* The thread's first sequence: its exit key and its entry in the table. */
static void poll_register(struct ctph_thread *t) {
  pthread_once(&poll_setup_once, poll_setup);
  t->poll_armed = 1;
  t->poll_tid = ctp_tid();
  if (!poll_exit_key_made) return; /* no exit key: an entry would outlive its thread */
  pthread_setspecific(poll_exit_key, t);
  for (int i = 0; i < POLL_OWNERS && !t->poll_owner; i++) {
    struct ctph_thread *none = NULL;
    if (__atomic_compare_exchange_n(&poll_owners[i], &none, t, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_RELAXED))
      t->poll_owner = i + 1;
  }
}

/* Writes the record of p, a sequence of thread tid: a POLL record first (the detail
 * before its call, as every detail) when p stands for a sequence (more than one poll, or
 * one not ready: the thread went on before the answer), then the API record. */
static void poll_emit_as(const struct ctph_poll_seq *p, uint64_t tid) {
  ct_record r;
  if (p->polls > 1 || p->result == CUDA_ERROR_NOT_READY) {
    r.kind = CT_KIND_POLL;
    r.u.poll = (struct ct_poll){.corr = p->corr, .polls = p->polls};
    ctp_emit(&r);
  }
  r.kind = CT_KIND_API;
  r.u.api = (struct ct_api){
      .tid = tid,
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

/* poll_emit_as for the calling thread's own sequence. */
static void poll_emit(const struct ctph_poll_seq *p) { poll_emit_as(p, ctp_tid()); }

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
    if (oldest < 0) { /* the final flush took them (another thread exiting the process) */
      t->polls_open = 0;
      break;
    }
    poll_close(t, oldest);
  }
  errno = saved;
}

void ctph_poll_break(void) {
  if (CTP_UNLIKELY(ctph_tls.polls_open)) ctph_poll_flush();
}

/* At process exit (or exec), on the exiting thread, before the core's last records: its
 * own spins, then the other polling threads' (still running: their spins as they stand,
 * read as the owner may be updating them; a spin the owner ends at this very moment may
 * be written twice). The owners' slots are freed, not their counts: their next look
 * finds no slot in use (ctph_poll_flush copes). */
static void poll_final(void) {
  ctph_poll_flush();
  for (int i = 0; i < POLL_OWNERS; i++) {
    struct ctph_thread *o = __atomic_load_n(&poll_owners[i], __ATOMIC_ACQUIRE);
    if (!o || o == &ctph_tls) continue;
    for (int k = 0; k < CTPH_POLL_SLOTS; k++) {
      if (!__atomic_load_n(&o->poll_key[k], __ATOMIC_RELAXED)) continue;
      struct ctph_poll_seq p = o->poll[k];
      __atomic_store_n(&o->poll_key[k], 0, __ATOMIC_RELAXED);
      if (p.polls) poll_emit_as(&p, o->poll_tid);
    }
  }
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
      .stack = ctp_stack_at(0, site_ra, site_cfa, end_ns),
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
  if (CTP_UNLIKELY(!t->poll_armed)) poll_register(t);
  if (!t->polls_open) /* (open ones were checked against it by this poll's ctph_poll_slot) */
    t->poll_epoch = __atomic_load_n(&ctp_pause_epoch, __ATOMIC_RELAXED);
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
