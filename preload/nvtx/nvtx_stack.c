/*
 * Per-thread stacks of open NVTX push/pop ranges.
 *
 * Each thread that pushes gets one nvtx_thread_state, reached through an
 * initial-exec TLS pointer (one TLS load on the hot path). The states live on a
 * global list that is never freed: a state is released at thread exit and reused
 * by a later thread, so the exit-time walk (nvtx_stack_close_all, on the exiting
 * thread) can read every thread's stack without locks. Only the owning thread
 * writes its stack; the walk may see a stack mid-update, which can make it report
 * a stale entry but never read outside the array.
 *
 * NVTX scopes nesting levels per domain and thread: the stack holds the entries of
 * all domains, and a pop of domain D closes the topmost entry of D (the top one in
 * the usual single-domain case).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "nvtx_internal.h"

struct nvtx_open_range {
  uint64_t name;
  uint64_t domain;
  uint64_t begin_ns;
  uint64_t level; /* 0-based level within its domain on this thread */
};

/* A name seen at this address before, with its bytes to check it is unchanged. */
struct nvtx_cached_name {
  const char *ptr;
  uint64_t id;
  uint32_t len;
  char bytes[NVTX_NAME_CACHE_BYTES];
};

struct nvtx_thread_state {
  struct nvtx_thread_state *next; /* global list, never unlinked */
  atomic_int in_use;              /* owned by a live thread */
  uint64_t tid;
  atomic_uint top;                /* entries in open[] */
  uint32_t overflow;              /* pushes past NVTX_STACK_MAX, not recorded */
  struct nvtx_open_range open[NVTX_STACK_MAX];
  struct nvtx_cached_name names[NVTX_NAME_CACHE]; /* direct-mapped by address */
};

static __thread struct nvtx_thread_state *tls_state;
static _Atomic(struct nvtx_thread_state *) all_states;
static pthread_key_t exit_key;
static atomic_int exit_key_ready;

/* Emits the ranges still open in st as unclosed at now_ns. */
static void close_open_ranges(struct nvtx_thread_state *st, uint64_t now_ns) {
  unsigned top = atomic_load_explicit(&st->top, memory_order_acquire);
  if (top > NVTX_STACK_MAX) top = NVTX_STACK_MAX;
  for (unsigned i = top; i-- > 0;) {
    const struct nvtx_open_range *r = &st->open[i];
    nvtx_emit_range(st->tid, r->domain, r->name, r->begin_ns, now_ns, r->level, CT_RANGE_UNCLOSED);
    if (nvtx_is_capture_range(r->name)) ctp_window_range(0);
  }
}

/* pthread key destructor: the thread is exiting with st still registered. */
static void thread_exit(void *arg) {
  struct nvtx_thread_state *st = arg;
  int saved_errno = errno;
  if (ctp_is_enabled())
    close_open_ranges(st, ctp_now_ns());
  atomic_store_explicit(&st->top, 0, memory_order_release);
  st->overflow = 0;
  tls_state = NULL;
  atomic_store_explicit(&st->in_use, 0, memory_order_release);
  errno = saved_errno;
}

/* The calling thread's state, claimed or allocated on first use; NULL without memory. */
static __attribute__((noinline)) struct nvtx_thread_state *thread_state_slow(void) {
  int saved_errno = errno;
  struct nvtx_thread_state *st;
  for (st = atomic_load_explicit(&all_states, memory_order_acquire); st; st = st->next) {
    int free_state = 0;
    if (atomic_compare_exchange_strong(&st->in_use, &free_state, 1)) break;
  }
  if (!st) {
    st = calloc(1, sizeof *st);
    if (!st) {
      errno = saved_errno;
      return NULL;
    }
    atomic_store_explicit(&st->in_use, 1, memory_order_relaxed);
    struct nvtx_thread_state *head = atomic_load_explicit(&all_states, memory_order_relaxed);
    do {
      st->next = head;
    } while (!atomic_compare_exchange_weak(&all_states, &head, st));
  }
  st->tid = ctp_tid();
  st->overflow = 0;
  atomic_store_explicit(&st->top, 0, memory_order_relaxed);
  if (atomic_load_explicit(&exit_key_ready, memory_order_acquire))
    pthread_setspecific(exit_key, st);
  tls_state = st;
  errno = saved_errno;
  return st;
}

static inline struct nvtx_thread_state *thread_state(void) {
  struct nvtx_thread_state *st = tls_state;
  return CTP_LIKELY(st != NULL) ? st : thread_state_slow();
}

uint64_t nvtx_intern_name(const char *s) {
  if (!s) return 0;
  struct nvtx_thread_state *st = thread_state();
  if (CTP_UNLIKELY(!st)) return ctp_intern(s);
  uintptr_t a = (uintptr_t)s;
  struct nvtx_cached_name *c = &st->names[((a >> 4) ^ (a >> 12)) & (NVTX_NAME_CACHE - 1)];
  /* strncmp stops at the first difference, so it never reads past the end of s. */
  if (c->ptr == s && strncmp(s, c->bytes, c->len + 1) == 0) return c->id;
  size_t len = strlen(s);
  uint64_t id = ctp_intern_n(s, len);
  if (id && len < sizeof c->bytes) {
    memcpy(c->bytes, s, len + 1);
    c->len = (uint32_t)len;
    c->id = id;
    c->ptr = s;
  }
  return id;
}

int nvtx_range_push(uint64_t domain, uint64_t name) {
  ctph_poll_break(); /* a spin of queries open on this thread ends before the range */
  uint64_t now_ns = ctp_now_ns();
  struct nvtx_thread_state *st = thread_state();
  if (CTP_UNLIKELY(!st)) return -1;
  unsigned top = atomic_load_explicit(&st->top, memory_order_relaxed);
  if (CTP_UNLIKELY(st->overflow || top >= NVTX_STACK_MAX)) {
    /* Too deep to record: count it so the matching pops stay balanced. The level
     * is then the thread's total depth, whatever the domain. */
    return (int)(top + st->overflow++);
  }
  uint64_t level = 0;
  for (unsigned i = top; i-- > 0;) {
    if (st->open[i].domain == domain) {
      level = st->open[i].level + 1;
      break;
    }
  }
  struct nvtx_open_range *r = &st->open[top];
  r->name = name;
  r->domain = domain;
  r->begin_ns = now_ns;
  r->level = level;
  atomic_store_explicit(&st->top, top + 1, memory_order_release);
  if (nvtx_is_capture_range(name)) ctp_window_range(1); /* only a range its pop will find */
  return (int)level;
}

int nvtx_range_pop(uint64_t domain) {
  ctph_poll_break(); /* a spin of queries open on this thread ends inside the range */
  uint64_t now_ns = ctp_now_ns();
  struct nvtx_thread_state *st = tls_state;
  if (CTP_UNLIKELY(!st)) return -1; /* nothing was ever pushed on this thread */
  unsigned top = atomic_load_explicit(&st->top, memory_order_relaxed);
  if (CTP_UNLIKELY(st->overflow)) return (int)(top + --st->overflow);
  unsigned i = top;
  while (i-- > 0 && st->open[i].domain != domain) {
  }
  if (CTP_UNLIKELY(i >= top)) return -1; /* unbalanced pop: none open in domain */
  struct nvtx_open_range closed = st->open[i];
  if (CTP_UNLIKELY(i + 1 != top))
    memmove(&st->open[i], &st->open[i + 1], (top - 1 - i) * sizeof st->open[0]);
  atomic_store_explicit(&st->top, top - 1, memory_order_release);
  if (CTP_LIKELY(ctp_is_enabled()))
    nvtx_emit_range(st->tid, domain, closed.name, closed.begin_ns, now_ns, closed.level, 0);
  if (nvtx_is_capture_range(closed.name)) ctp_window_range(0); /* after its record */
  return (int)closed.level;
}

void nvtx_stack_close_all(uint64_t now_ns) {
  for (struct nvtx_thread_state *st = atomic_load_explicit(&all_states, memory_order_acquire); st;
       st = st->next) {
    if (atomic_load_explicit(&st->in_use, memory_order_acquire)) close_open_ranges(st, now_ns);
  }
}

/*
 * The core's final flush (normal exit, or an exec): every range still open is
 * recorded as unclosed. A pop racing with this on another thread may record its
 * range a second time, closed, before the core stops recording.
 */
static void close_all_at_exit(void) {
  uint64_t now_ns = ctp_now_ns();
  nvtx_stack_close_all(now_ns);
  nvtx_startend_close_all(now_ns);
}

static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void exit_key_create(void) {
  if (pthread_key_create(&exit_key, thread_exit) == 0)
    atomic_store_explicit(&exit_key_ready, 1, memory_order_release);
}

/*
 * glibc runs pthread key destructors in the order the keys were created, and the
 * core drops a thread's records once its own key destructor has run. Creating this
 * key from a constructor that runs before the core's (a prioritised constructor runs
 * before plain ones) lets the ranges left open at thread exit still be recorded.
 */
__attribute__((constructor(150))) static void nvtx_exit_key_early(void) {
  int saved_errno = errno;
  pthread_once(&key_once, exit_key_create);
  errno = saved_errno;
}

/*
 * Fork child: only the forking thread exists. The other threads' states are
 * released (their ranges belong to the parent's trace); the forking thread keeps
 * its open ranges, so its pops stay balanced, now under the child's tid. This runs
 * after the core's own child handler (registered earlier), which resets ctp_tid.
 */
static void after_fork_child(void) {
  for (struct nvtx_thread_state *st = atomic_load_explicit(&all_states, memory_order_acquire); st;
       st = st->next) {
    if (st == tls_state) continue;
    atomic_store_explicit(&st->top, 0, memory_order_relaxed);
    st->overflow = 0;
    atomic_store_explicit(&st->in_use, 0, memory_order_release);
  }
  if (tls_state) tls_state->tid = ctp_tid();
  nvtx_startend_after_fork();
}

static void ranges_init_once(void) {
  pthread_once(&key_once, exit_key_create);
  ctp_at_final_flush(close_all_at_exit);
  pthread_atfork(NULL, NULL, after_fork_child);
}

void nvtx_ranges_init(void) {
  int saved_errno = errno;
  pthread_once(&init_once, ranges_init_once);
  errno = saved_errno;
}
