/*
 * The pool of CUDA events (per device, CU_EVENT_DEFAULT, created lazily and
 * recycled) and the per-thread queues of timed operations that the poller reads.
 *
 * Each app thread owns one single-producer / single-consumer ring: it pushes
 * (corr, device, stream, type, name, start and end events) without a lock; the
 * poller is the only consumer. A full ring never blocks: the operation is left
 * untimed (CT_API_UNTIMED on its API record).
 */
#include "hooks_internal.h"

#include <pthread.h>
#include <stdlib.h>

int ctph_gpu_timing_on = 1;

/* ------------------------------------------------------------ event pool */

#define EVENT_BATCH 32

struct event_pool {
  pthread_mutex_t lock;
  CUevent *events;
  size_t n, cap;
};

static struct event_pool pools[CTPH_MAX_DEVICES] = {
    [0 ... CTPH_MAX_DEVICES - 1] = {.lock = PTHREAD_MUTEX_INITIALIZER}};

/* Bumped by a device reset: cached events of an older generation are stale. */
static unsigned pool_generation[CTPH_MAX_DEVICES];

/* Each thread keeps a few free events of one device. */
static __thread struct {
  int device1; /* device + 1, 0 = empty */
  unsigned generation;
  int n;
  CUevent ev[EVENT_BATCH * 2];
} cache;

static void pool_put_many(int device, const CUevent *ev, int n) {
  struct event_pool *p = &pools[device];
  pthread_mutex_lock(&p->lock);
  if (p->n + (size_t)n > p->cap) {
    size_t cap = p->cap ? p->cap * 2 : 256;
    while (cap < p->n + (size_t)n)
      cap *= 2;
    CUevent *e = realloc(p->events, cap * sizeof *e);
    if (!e) {
      pthread_mutex_unlock(&p->lock);
      return; /* leaked: the driver frees them with the context */
    }
    p->events = e;
    p->cap = cap;
  }
  for (int i = 0; i < n; i++)
    p->events[p->n++] = ev[i];
  pthread_mutex_unlock(&p->lock);
}

static int pool_take(int device, CUevent *out, int want) {
  struct event_pool *p = &pools[device];
  pthread_mutex_lock(&p->lock);
  int n = 0;
  while (n < want && p->n)
    out[n++] = p->events[--p->n];
  pthread_mutex_unlock(&p->lock);
  return n;
}

/* Gives this thread's cached events back to their pool. */
static void cache_flush(void) {
  if (cache.device1 && cache.n &&
      cache.generation == __atomic_load_n(&pool_generation[cache.device1 - 1], __ATOMIC_ACQUIRE))
    pool_put_many(cache.device1 - 1, cache.ev, cache.n);
  cache.n = 0;
  cache.device1 = 0;
}

/* Points this thread's cache at `device`, current generation. */
static inline void cache_select(int device) {
  unsigned generation = __atomic_load_n(&pool_generation[device], __ATOMIC_ACQUIRE);
  if (CTP_UNLIKELY(cache.device1 != device + 1 || cache.generation != generation)) {
    cache_flush();
    cache.device1 = device + 1;
    cache.generation = generation;
  }
}

void ctph_event_pool_reset(int device) {
  if (device < 0 || device >= CTPH_MAX_DEVICES)
    return;
  struct event_pool *p = &pools[device];
  pthread_mutex_lock(&p->lock);
  __atomic_fetch_add(&pool_generation[device], 1, __ATOMIC_RELEASE);
  p->n = 0; /* the reset destroys them with the context */
  pthread_mutex_unlock(&p->lock);
}

CUevent ctph_event_get(int device) {
  if (device < 0 || device >= CTPH_MAX_DEVICES)
    return NULL;
  cache_select(device);
  if (CTP_UNLIKELY(!cache.n)) {
    cache.n = pool_take(device, cache.ev, EVENT_BATCH);
    /* None free: create a batch in the current context (the caller checked that
     * it belongs to `device`). */
    while (cache.n < EVENT_BATCH / 2 &&
           ctph_drv.EventCreate(&cache.ev[cache.n], CU_EVENT_DEFAULT) == CUDA_SUCCESS)
      cache.n++;
    if (!cache.n)
      return NULL;
  }
  return cache.ev[--cache.n];
}

void ctph_event_put(int device, CUevent ev) {
  if (!ev || device < 0 || device >= CTPH_MAX_DEVICES)
    return;
  cache_select(device);
  if (cache.n == EVENT_BATCH * 2) {
    pool_put_many(device, cache.ev + EVENT_BATCH, EVENT_BATCH);
    cache.n = EVENT_BATCH;
  }
  cache.ev[cache.n++] = ev;
}

/* ------------------------------------------------------- pending queues */

#define RING_SLOTS 16384u /* calloc: pages are only committed when used */

struct pending_ring {
  uint32_t head;  /* consumed (poller, release-stored) */
  uint32_t tail;  /* produced (owner, release-stored) */
  int orphan;     /* the owning thread exited */
  struct pending_ring *next;
  struct ctph_pending slots[RING_SLOTS];
};

static struct pending_ring *rings;  /* every ring, newest first */
static pthread_mutex_t rings_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t ring_key;
static pthread_once_t ring_key_once = PTHREAD_ONCE_INIT;
static __thread struct pending_ring *my_ring;

void ctph_gputime_reinit_locks(void) {
  for (int d = 0; d < CTPH_MAX_DEVICES; d++)
    pthread_mutex_init(&pools[d].lock, NULL);
  pthread_mutex_init(&rings_lock, NULL);
}


/* Thread exit: the ring stays listed until the poller has emptied it, then a new
 * thread may adopt it; the thread's free events go back to the pool. */
static void ring_release(void *arg) {
  struct pending_ring *r = arg;
  __atomic_store_n(&r->orphan, 1, __ATOMIC_RELEASE);
  cache_flush();
}

static void ring_key_create(void) { pthread_key_create(&ring_key, ring_release); }

static struct pending_ring *ring_acquire(void) {
  pthread_once(&ring_key_once, ring_key_create);
  pthread_mutex_lock(&rings_lock);
  struct pending_ring *r = rings;
  for (; r; r = r->next)
    if (__atomic_load_n(&r->orphan, __ATOMIC_ACQUIRE) &&
        __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) == r->tail)
      break;
  if (r) {
    __atomic_store_n(&r->orphan, 0, __ATOMIC_RELEASE);
  } else if ((r = calloc(1, sizeof *r))) {
    r->next = rings;
    __atomic_store_n(&rings, r, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&rings_lock);
  if (r)
    pthread_setspecific(ring_key, r);
  return r;
}

int ctph_pending_push(const struct ctph_pending *p) {
  struct pending_ring *r = my_ring;
  if (CTP_UNLIKELY(!r) && !(r = my_ring = ring_acquire()))
    return -1;
  uint32_t tail = r->tail;
  if (tail - __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) >= RING_SLOTS)
    return -1;
  r->slots[tail % RING_SLOTS] = *p;
  __atomic_store_n(&r->tail, tail + 1, __ATOMIC_RELEASE);
  return 0;
}

int ctph_pending_empty(void) {
  for (struct pending_ring *r = __atomic_load_n(&rings, __ATOMIC_ACQUIRE); r; r = r->next)
    if (__atomic_load_n(&r->head, __ATOMIC_ACQUIRE) != __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE))
      return 0;
  return 1;
}

void ctph_pending_forget(void) {
  for (struct pending_ring *r = rings; r; r = r->next)
    r->head = r->tail;
}

unsigned ctph_pending_consume(int (*fn)(struct ctph_pending *p, void *arg), void *arg) {
  unsigned done = 0;
  for (struct pending_ring *r = __atomic_load_n(&rings, __ATOMIC_ACQUIRE); r; r = r->next) {
    uint32_t head = r->head;
    uint32_t tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
    while (head != tail && fn(&r->slots[head % RING_SLOTS], arg)) {
      head++;
      done++;
    }
    __atomic_store_n(&r->head, head, __ATOMIC_RELEASE);
  }
  return done;
}
