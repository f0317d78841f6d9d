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
 * polls or reaches any hooked entry while tracing is paused or over (ctph_on), polls past
 * the end of the recording (CUTRACE_DURATION: that poll not counted), exits (a pthread
 * key destructor, run before the core's), or exits the process (the final flush writes
 * the exiting thread's, then those of the other polling threads, found in a table with
 * no cap; since 2026-12-07 evening: before, all those were lost). A fork child forgets
 * the sequences open in the forking thread (the parent's to write).
 *
 * The final flush reads other threads' spins while they may go on polling: whoever
 * writes a spin first claims its key with one compare-and-swap (the thread ending it, or
 * the final flush, which marks it CTPH_POLL_KEY_FINAL while it copies), so each spin is
 * written once; the owner updates a spin's polls, end and result under a per-slot
 * sequence lock (ctph_poll_extend: plain stores on x86), so the copy is one state the
 * spin had, never half of two (since session 15, 2026-12-07; before, a spin ending at that moment
 * could be written twice, and one read mid-update torn).
 */
#include "hooks_internal.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>

/*
 * The threads that have polled (their ctph_tls), so that the final flush at process exit
 * writes the spins they have open; a thread takes a free entry at its first sequence and
 * gives it back at exit. Lock-free: a poll may come from a signal handler. No cap: the
 * table is a list of page-sized chunks, the first static, the others mapped (mmap, safe
 * in a signal handler) when every entry is taken, linked with one compare-and-swap and
 * never unmapped (a table as large as the most threads that polled at once). Only a
 * thread that finds every entry taken and cannot map a chunk has none: its spins are
 * written at its own exit, not at the process's (counted: poll_unlisted).
 */
#define POLL_CHUNK_ENTRIES (4096 / sizeof(void *) - 1)
struct poll_chunk {
  struct ctph_thread *entry[POLL_CHUNK_ENTRIES];
  struct poll_chunk *next;
};
static struct poll_chunk poll_owners;
/* The entry the final flush is reading now (a thread exiting meanwhile waits for it). */
static struct ctph_thread **poll_final_at;
/* An entry the final flush has taken: not free, not a thread. */
#define POLL_ENTRY_TAKEN ((struct ctph_thread *)(uintptr_t)1)
static uint64_t poll_unlisted; /* polling threads with no entry (every mmap failed) */
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
  for (struct poll_chunk *c = &poll_owners; c; c = c->next)
    for (size_t i = 0; i < POLL_CHUNK_ENTRIES; i++)
      if (&c->entry[i] != t->poll_owner) __atomic_store_n(&c->entry[i], NULL, __ATOMIC_RELAXED);
  __atomic_store_n(&poll_final_at, NULL, __ATOMIC_RELAXED);
}

static void poll_setup(void) {
  pthread_atfork(NULL, NULL, poll_after_fork_child);
  ctp_at_final_flush(poll_final);
}
static pthread_once_t poll_setup_once = PTHREAD_ONCE_INIT;

/* pthread key destructor: the thread exits with spins open (it polled last). Its entry is
 * given back; when the final flush took it (another thread is exiting the process), the
 * thread waits until the final flush is done reading it (its state dies with it). */
static void poll_thread_exit(void *arg) {
  struct ctph_thread *t = arg;
  ctph_poll_flush();
  t->poll_armed = 0;
  struct ctph_thread **entry = t->poll_owner;
  if (!entry) return;
  t->poll_owner = NULL;
  if (__atomic_exchange_n(entry, NULL, __ATOMIC_SEQ_CST) == t) return;
  while (__atomic_load_n(&poll_final_at, __ATOMIC_SEQ_CST) == entry) sched_yield();
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

/* A free entry of the table for t, adding a chunk when every entry is taken; NULL when
 * none can be had. */
static struct ctph_thread **poll_take_entry(struct ctph_thread *t) {
  for (struct poll_chunk *c = &poll_owners;;) {
    for (size_t i = 0; i < POLL_CHUNK_ENTRIES; i++) {
      struct ctph_thread *none = NULL;
      if (!__atomic_load_n(&c->entry[i], __ATOMIC_RELAXED) &&
          __atomic_compare_exchange_n(&c->entry[i], &none, t, 0, __ATOMIC_ACQ_REL,
                                      __ATOMIC_RELAXED))
        return &c->entry[i];
    }
    struct poll_chunk *next = __atomic_load_n(&c->next, __ATOMIC_ACQUIRE);
    if (!next) {
      void *m = mmap(NULL, sizeof *next, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
      if (m == MAP_FAILED) return NULL;
      if (__atomic_compare_exchange_n(&c->next, &next, (struct poll_chunk *)m, 0,
                                      __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        next = m;
      else
        munmap(m, sizeof *next); /* another thread linked one first: next is it */
    }
    c = next;
  }
}

/* The thread's first sequence: its exit key and its entry in the table. */
static void poll_register(struct ctph_thread *t) {
  pthread_once(&poll_setup_once, poll_setup);
  t->poll_armed = 1;
  t->poll_tid = ctp_tid();
  if (!poll_exit_key_made) return; /* no exit key: an entry would outlive its thread */
  pthread_setspecific(poll_exit_key, t);
  int saved = errno;
  t->poll_owner = poll_take_entry(t);
  errno = saved;
  if (!t->poll_owner) __atomic_fetch_add(&poll_unlisted, 1, __ATOMIC_RELAXED);
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

/* Frees slot i and writes its sequence as it stands, unless the final flush (another
 * thread, exiting the process) claimed it first: its key is taken back with one
 * compare-and-swap, so each spin is written once, by whoever claims it. */
static void poll_close(struct ctph_thread *t, int i) {
  uint32_t key = __atomic_load_n(&t->poll_key[i], __ATOMIC_RELAXED);
  t->polls_open--;
  if (key == 0 || key == CTPH_POLL_KEY_FINAL ||
      !__atomic_compare_exchange_n(&t->poll_key[i], &key, 0, 0, __ATOMIC_ACQ_REL,
                                   __ATOMIC_RELAXED))
    return;
  poll_emit(&t->poll[i]);
  t->poll[i].polls = 0;
}

/* The thread's open slot that began first, or -1. */
static int poll_oldest(const struct ctph_thread *t) {
  int oldest = -1;
  for (int i = 0; i < CTPH_POLL_SLOTS; i++) {
    uint32_t key = __atomic_load_n(&t->poll_key[i], __ATOMIC_RELAXED);
    if (key && key != CTPH_POLL_KEY_FINAL &&
        (oldest < 0 || t->poll[i].begin_ns < t->poll[oldest].begin_ns))
      oldest = i;
  }
  return oldest;
}

void ctph_poll_flush(void) {
  struct ctph_thread *t = &ctph_tls;
  if (!t->polls_open)
    return;
  int saved = errno;
  while (t->polls_open) { /* oldest first: the records of one thread in begin order */
    int oldest = poll_oldest(t);
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

void ctph_poll_late(void) {
  ctp_window_expire();
  ctph_poll_flush();
}

/* Copies slot k of thread o, a spin the final flush has claimed, as one state it had: the
 * owner may still be updating it (at most its poll under way). Returns 0 when the owner
 * stayed in the middle of an update for 1 s (a stopped thread): the spin is lost. */
static int poll_copy(struct ctph_thread *o, int k, struct ctph_poll_seq *p) {
  uint64_t give_up_ns = 0;
  for (int tries = 0;; tries++) {
    uint32_t before = __atomic_load_n(&o->poll_change[k], __ATOMIC_ACQUIRE);
    if (before & 1) { /* an update under way: its thread may be descheduled (load) */
      if (tries < 64) continue;
      uint64_t now = ctp_now_ns();
      if (!give_up_ns) give_up_ns = now + 1000000000u; /* 1 s: a stopped thread */
      if (now >= give_up_ns) return 0;
      sched_yield();
      continue;
    }
    const struct ctph_poll_seq *q = &o->poll[k];
    /* the fields set when the spin opened, before its key (claimed: acquired) */
    *p = (struct ctph_poll_seq){.id = q->id, .target = q->target, .begin_ns = q->begin_ns,
                                .corr = q->corr, .stack = q->stack, .parent = q->parent,
                                .depth = q->depth, .flags = q->flags, .stream = q->stream,
                                .device = q->device};
    /* those its polls update */
    p->polls = __atomic_load_n(&q->polls, __ATOMIC_RELAXED);
    p->end_ns = __atomic_load_n(&q->end_ns, __ATOMIC_RELAXED);
    p->result = __atomic_load_n(&q->result, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&o->poll_change[k], __ATOMIC_RELAXED) == before) return 1;
  }
  return 0;
}

/* Writes the spins open in thread o (not the calling thread), each claimed first: a spin
 * its owner closes at the same moment is written by one of them only. */
static void poll_final_thread(struct ctph_thread *o) {
  for (int k = 0; k < CTPH_POLL_SLOTS; k++) {
    uint32_t key = __atomic_load_n(&o->poll_key[k], __ATOMIC_RELAXED);
    if (!key || key == CTPH_POLL_KEY_FINAL ||
        !__atomic_compare_exchange_n(&o->poll_key[k], &key, CTPH_POLL_KEY_FINAL, 0,
                                     __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
      continue;
    struct ctph_poll_seq p;
    int whole = poll_copy(o, k, &p);
    __atomic_store_n(&o->poll_key[k], 0, __ATOMIC_RELEASE); /* the owner's to reuse */
    if (whole && p.polls) poll_emit_as(&p, o->poll_tid);
  }
}

/* At process exit (or exec), on the exiting thread, before the core's last records: its
 * own spins, then the other polling threads' (still running: their spins as they stand).
 * Each entry of the table is taken (a thread exiting meanwhile waits while its entry is
 * read, poll_final_at); the owners' slots are freed, not their counts: their next look
 * finds no slot in use (ctph_poll_flush copes). */
static void poll_final(void) {
  ctph_poll_flush();
  for (struct poll_chunk *c = &poll_owners; c; c = __atomic_load_n(&c->next, __ATOMIC_ACQUIRE))
    for (size_t i = 0; i < POLL_CHUNK_ENTRIES; i++) {
      if (!__atomic_load_n(&c->entry[i], __ATOMIC_RELAXED)) continue;
      __atomic_store_n(&poll_final_at, &c->entry[i], __ATOMIC_SEQ_CST);
      struct ctph_thread *o = __atomic_exchange_n(&c->entry[i], POLL_ENTRY_TAKEN, __ATOMIC_SEQ_CST);
      if (o && o != POLL_ENTRY_TAKEN && o != &ctph_tls) poll_final_thread(o);
      __atomic_store_n(&poll_final_at, NULL, __ATOMIC_SEQ_CST);
    }
}

/* A free slot for a new sequence: when none, the least recently polled sequence is
 * written as it stands and its slot given (a slot the final flush is copying is neither). */
static int poll_free_slot(struct ctph_thread *t) {
  for (;;) {
    int lru = -1;
    for (int i = 0; i < CTPH_POLL_SLOTS; i++) {
      uint32_t key = __atomic_load_n(&t->poll_key[i], __ATOMIC_ACQUIRE);
      if (!key)
        return i;
      if (key != CTPH_POLL_KEY_FINAL && (lru < 0 || t->poll[i].end_ns < t->poll[lru].end_ns))
        lru = i;
    }
    if (lru >= 0) {
      poll_close(t, lru);
      return lru;
    }
    sched_yield(); /* every slot being copied by the final flush (one at a time): soon free */
  }
}

void ctph_poll_record(enum ctph_id id, int ptsz, uint32_t flags, uint64_t target, CUstream stream,
                      int slot, uint64_t begin_ns, uint64_t result, int not_ready,
                      const void *site_ra, const void *site_cfa) {
  struct ctph_thread *t = &ctph_tls;
  uint64_t end_ns = ctp_now_ns();
  if (slot >= 0) { /* the answer that ends an open sequence */
    if (CTP_UNLIKELY(end_ns >= __atomic_load_n(&ctp_stop_at_ns, __ATOMIC_RELAXED))) {
      ctph_poll_late(); /* CUTRACE_DURATION over: the answer came after it, not counted */
      return;
    }
    struct ctph_poll_seq *p = &t->poll[slot];
    uint32_t change = t->poll_change[slot];
    __atomic_store_n(&t->poll_change[slot], change + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    __atomic_store_n(&p->polls, p->polls + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&p->end_ns, end_ns, __ATOMIC_RELAXED);
    __atomic_store_n(&p->result, result, __ATOMIC_RELAXED);
    __atomic_store_n(&t->poll_change[slot], change + 2, __ATOMIC_RELEASE);
    poll_close(t, slot);
    return;
  }
  if (CTP_UNLIKELY(begin_ns >= __atomic_load_n(&ctp_stop_at_ns, __ATOMIC_RELAXED))) {
    ctph_poll_late(); /* CUTRACE_DURATION is over: not recorded */
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
  t->poll[i] = seq; /* a free slot: no other thread reads it */
  t->poll_target[i] = target;
  __atomic_store_n(&t->poll_key[i], (uint32_t)id + 1, __ATOMIC_RELEASE);
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
