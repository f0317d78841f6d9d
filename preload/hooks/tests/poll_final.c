/*
 * The final flush of spins other threads have open (poll.c's poll_final), linked with poll.c
 * and stand-ins for the rest of the tracer (records are kept in memory), each race made to
 * happen at a chosen point:
 *
 * claim: thread O opens a spin and looks its slot up for one more poll (as a query wrapper
 *   does before its real call); the final flush runs then (main); O's poll answers ready
 *   and ends the spin. The spin must be written once: by the final flush (on main: 1 poll,
 *   not ready), O's answer finding it claimed.
 * torn: thread O opens a spin (1 poll, end E1), begins an update as ctph_poll_extend does
 *   (sequence odd, polls 2) and stops there; the final flush starts on another thread; after
 *   100 ms O writes end E2 and ends the update. The spin written must be (2 polls, E2),
 *   never (2, E1): the final flush waited for the update.
 * many: THREADS (1200: beyond the first chunk of the table of polling threads, 511) threads
 *   each open a spin and wait; the final flush must write each one's spin, once, as its tid
 *   (on main, not the thread at its own exit afterwards).
 * exit: thread O opens a spin and exits while another thread runs the final flush in a loop
 *   over fresh entries (ROUNDS times): each spin written once, never read after its thread
 *   is gone (under TSan: no report).
 *
 * Exit 0 when all held, 1 otherwise (what was wrong printed).
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hooks_internal.h"

/* ---- stand-ins for the tracer around poll.c */
__thread struct ctph_thread ctph_tls = {.cached_device = -1};
void *ctph_real_table[CTPH_ID_COUNT];
uint32_t ctp_pause_epoch;
uint64_t ctp_stop_at_ns = UINT64_MAX;
static void (*final_fn)(void);
static pthread_mutex_t emitted_lock = PTHREAD_MUTEX_INITIALIZER;
#define MAX_RECORDS 8192
static struct emitted {
  uint64_t tid, corr, polls, end_ns, result;
  uint64_t writer; /* the thread that wrote it */
} emitted[MAX_RECORDS];
static size_t emitted_n;
static uint64_t next_corr;

void *ctph_real_resolve(enum ctph_id id) { (void)id; return NULL; }
uint64_t ctph_hook_name_id(enum ctph_id id) { return (uint64_t)id; }
int ctph_current_device(CUcontext *ctx) { (void)ctx; return 0; }
uint32_t ctph_stream_id(int device, CUstream handle, int per_thread,
                        struct ctph_stream_state **state) {
  (void)device, (void)handle, (void)per_thread, (void)state;
  return 1;
}
uint64_t ctp_stack_at(int gpu_work, const void *ra, const void *cfa, uint64_t after_ns) {
  (void)gpu_work, (void)ra, (void)cfa, (void)after_ns;
  return 0;
}
uint64_t ctp_next_corr(void) { return __atomic_add_fetch(&next_corr, 1, __ATOMIC_RELAXED); }
uint64_t ctp_tid(void) { return (uint64_t)syscall(SYS_gettid); }
void ctp_window_expire(void) {}
int ctph_on(void) { return 1; }
void ctp_at_final_flush(void (*fn)(void)) { final_fn = fn; }

/* Keeps API records (the POLL record before each gives its polls). */
void ctp_emit(const ct_record *rec) {
  static __thread uint64_t polls_of_next; /* the POLL record just before, this thread */
  if (rec->kind == CT_KIND_POLL) {
    polls_of_next = rec->u.poll.polls;
    return;
  }
  if (rec->kind != CT_KIND_API) return;
  pthread_mutex_lock(&emitted_lock);
  if (emitted_n < MAX_RECORDS)
    emitted[emitted_n++] = (struct emitted){rec->u.api.tid, rec->u.api.corr,
                                            polls_of_next ? polls_of_next : 1,
                                            rec->u.api.end_ns, rec->u.api.result, ctp_tid()};
  pthread_mutex_unlock(&emitted_lock);
  polls_of_next = 0;
}

/* ---- the scenarios */
static int failures;
#define EXPECT(cond, ...)                  \
  do {                                     \
    if (!(cond)) {                         \
      failures++;                          \
      printf("FAIL: " __VA_ARGS__);        \
      printf("\n");                        \
    }                                      \
  } while (0)

static const enum ctph_id ID = CTPH_ID_cudaEventQuery;

/* Opens a spin of target on the calling thread: one not-ready poll from begin to end. */
static uint64_t open_spin(uint64_t target, uint64_t begin_ns) {
  ctph_poll_record(ID, 0, 0, target, CTPH_NO_STREAM, -1, begin_ns, CUDA_ERROR_NOT_READY, 1, NULL,
                   NULL);
  int slot = ctph_poll_slot(&ctph_tls, ID, target);
  return slot >= 0 ? ctph_tls.poll[slot].corr : 0;
}

/* The records written of corr (count), the last in *out. */
static int records_of(uint64_t corr, struct emitted *out) {
  int n = 0;
  pthread_mutex_lock(&emitted_lock);
  for (size_t i = 0; i < emitted_n; i++)
    if (emitted[i].corr == corr) {
      n++;
      if (out) *out = emitted[i];
    }
  pthread_mutex_unlock(&emitted_lock);
  return n;
}

static sem_t go_final, final_done;
static uint64_t claim_corr;

static void *claim_owner(void *arg) {
  (void)arg;
  claim_corr = open_spin(0x1000, 100);
  int slot = ctph_poll_slot(&ctph_tls, ID, 0x1000); /* a poll begins: its slot found */
  sem_post(&go_final);
  while (sem_wait(&final_done) != 0) {
  }
  /* its real call answered ready: the wrapper's answer path */
  ctph_poll_record(ID, 0, 0, 0x1000, CTPH_NO_STREAM, slot, 0, CUDA_SUCCESS, 0, NULL, NULL);
  ctph_poll_flush();
  return NULL;
}

static void scenario_claim(void) {
  pthread_t o;
  pthread_create(&o, NULL, claim_owner, NULL);
  while (sem_wait(&go_final) != 0) {
  }
  if (!final_fn) {
    printf("FAIL: the final flush was not registered\n");
    exit(1);
  }
  final_fn();
  sem_post(&final_done);
  pthread_join(o, NULL);
  struct emitted e = {0};
  int n = records_of(claim_corr, &e);
  EXPECT(claim_corr && n == 1 && e.polls == 1 && e.result == CUDA_ERROR_NOT_READY &&
             e.writer == ctp_tid(),
         "claim: spin %llu written %d times (want once: by the final flush, 1 poll, not ready; "
         "last: %llu polls, result %llu)",
         (unsigned long long)claim_corr, n, (unsigned long long)e.polls,
         (unsigned long long)e.result);
}

static sem_t torn_updating;
static uint64_t torn_corr;

static void *torn_final(void *arg) {
  (void)arg;
  final_fn();
  return NULL;
}

static void *torn_owner(void *arg) {
  (void)arg;
  struct ctph_thread *t = &ctph_tls;
  torn_corr = open_spin(0x2000, 200); /* 1 poll, end E1 = its ctp_now_ns() */
  int i = ctph_poll_slot(t, ID, 0x2000);
  /* ctph_poll_extend's steps, stopped half-way: sequence odd, polls 2, end not yet */
  uint32_t change = __atomic_load_n(&t->poll_change[i], __ATOMIC_RELAXED);
  __atomic_store_n(&t->poll_change[i], change + 1, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_RELEASE);
  __atomic_store_n(&t->poll[i].polls, 2, __ATOMIC_RELAXED);
  sem_post(&torn_updating);
  usleep(100000); /* the final flush runs meanwhile */
  __atomic_store_n(&t->poll[i].end_ns, UINT64_C(222222), __ATOMIC_RELAXED);
  __atomic_store_n(&t->poll_change[i], change + 2, __ATOMIC_RELEASE);
  sem_post(&go_final); /* the final flush may finish; this thread stays until it has */
  while (sem_wait(&final_done) != 0) {
  }
  return NULL;
}

static void scenario_torn(void) {
  pthread_t o, f;
  pthread_create(&o, NULL, torn_owner, NULL);
  while (sem_wait(&torn_updating) != 0) {
  }
  pthread_create(&f, NULL, torn_final, NULL);
  while (sem_wait(&go_final) != 0) {
  }
  pthread_join(f, NULL);
  sem_post(&final_done);
  pthread_join(o, NULL);
  struct emitted e = {0};
  int n = records_of(torn_corr, &e);
  EXPECT(torn_corr && n == 1 && e.polls == 2 && e.end_ns == 222222,
         "torn: spin %llu written %d times, last (%llu polls, end %llu), want once (2, 222222)",
         (unsigned long long)torn_corr, n, (unsigned long long)e.polls,
         (unsigned long long)e.end_ns);
}

#define THREADS 1200
static pthread_barrier_t many_opened, many_flushed;
static uint64_t many_corr[THREADS], many_tid[THREADS];

static void *many_owner(void *arg) {
  size_t k = (size_t)arg;
  many_tid[k] = ctp_tid();
  many_corr[k] = open_spin(0x10000 + k, 300);
  pthread_barrier_wait(&many_opened);
  pthread_barrier_wait(&many_flushed);
  return NULL; /* the exit key's destructor: the entry taken, the spin already written */
}

static void scenario_many(void) {
  static pthread_t t[THREADS];
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  pthread_barrier_init(&many_opened, NULL, THREADS + 1);
  pthread_barrier_init(&many_flushed, NULL, THREADS + 1);
  size_t made = 0;
  for (; made < THREADS; made++)
    if (pthread_create(&t[made], &attr, many_owner, (void *)made) != 0) break;
  if (made < THREADS) {
    printf("skip many: %zu threads made\n", made);
    exit(77);
  }
  pthread_barrier_wait(&many_opened);
  final_fn();
  pthread_barrier_wait(&many_flushed);
  for (size_t k = 0; k < THREADS; k++) pthread_join(t[k], NULL);
  int lost = 0, twice = 0, wrong_tid = 0, at_own_exit = 0;
  for (size_t k = 0; k < THREADS; k++) {
    struct emitted e = {0};
    int n = many_corr[k] ? records_of(many_corr[k], &e) : 0;
    lost += n == 0;
    twice += n > 1;
    wrong_tid += n == 1 && e.tid != many_tid[k];
    at_own_exit += n == 1 && e.writer != ctp_tid();
  }
  EXPECT(!lost && !twice && !wrong_tid && !at_own_exit,
         "many: of %d threads' spins %d not written, %d written twice, %d with another tid, "
         "%d written at their thread's exit, not by the final flush",
         THREADS, lost, twice, wrong_tid, at_own_exit);
}

#define ROUNDS 300
static sem_t exit_opened;
static uint64_t exit_corr[ROUNDS];

static void *exit_owner(void *arg) {
  size_t k = (size_t)arg;
  exit_corr[k] = open_spin(0x100000 + k, 400);
  sem_post(&exit_opened);
  return NULL; /* exits mid-spin, racing the final flush below */
}

static void scenario_exit(void) {
  for (size_t k = 0; k < ROUNDS; k++) {
    pthread_t o;
    pthread_create(&o, NULL, exit_owner, (void *)k);
    while (sem_wait(&exit_opened) != 0) {
    }
    final_fn(); /* races the owner's exit */
    pthread_join(o, NULL);
  }
  int lost = 0, twice = 0;
  for (size_t k = 0; k < ROUNDS; k++) {
    int n = exit_corr[k] ? records_of(exit_corr[k], NULL) : 0;
    lost += n == 0;
    twice += n > 1;
  }
  EXPECT(!lost && !twice, "exit: of %d spins open at their thread's exit %d not written, "
         "%d written twice", ROUNDS, lost, twice);
}

int main(void) {
  sem_init(&go_final, 0, 0);
  sem_init(&final_done, 0, 0);
  sem_init(&torn_updating, 0, 0);
  sem_init(&exit_opened, 0, 0);
  scenario_claim(); /* its owner's first spin sets the final flush up */
  scenario_torn();
  scenario_many();
  scenario_exit();
  printf("%zu records; %d failure(s)\n", emitted_n, failures);
  return failures ? 1 : 0;
}
