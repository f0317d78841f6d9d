/*
 * Per-thread record buffers: ctp_emit's lock-free path, the registry the writer
 * walks, thread-exit retirement, the per-thread caches (tid), and the pool of
 * ready rings that a thread's first record takes instead of mapping its own.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core.h"

#define TLS __thread __attribute__((tls_model("initial-exec")))

static TLS struct ctp_tbuf *tls_buf;
static TLS uint64_t tls_tid;
static TLS int tls_exiting; /* the key destructor ran: ignore late records */
static TLS int tls_in_emit; /* a signal handler interrupted ctp_emit on this thread */
static TLS int tls_no_pool; /* the writer thread: maps its own ring, leaves the pool to others */

static struct ctp_tbuf *registry; /* newest first */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
static uint64_t corr_counter;

/* Fields per kind as the ring stores them (0: not emittable, e.g. STRING); indexed by
 * the record's 8-bit kind, so no bounds test is needed. */
static const uint8_t kind_words[256] = {
#define KIND_WORDS(NAME, id, lname) \
  [id] = id == CT_KIND_STRING ? 0 : sizeof(struct ct_##lname) / sizeof(uint64_t),
    CT_RECORD_KINDS(KIND_WORDS)
#undef KIND_WORDS
};

#define DROP_WORDS (1 + sizeof(struct ct_drop) / sizeof(uint64_t))

uint64_t ctp_tid(void) {
  if (CTP_UNLIKELY(!tls_tid)) tls_tid = (uint64_t)syscall(SYS_gettid);
  return tls_tid;
}

uint64_t ctp_next_corr(void) { return __atomic_add_fetch(&corr_counter, 1, __ATOMIC_RELAXED); }

/* Makes room for need words; refreshes the cached tail only when it looks full. */
static inline int ring_reserve(struct ctp_tbuf *b, uint64_t need) {
  uint64_t cap = b->mask + 1;
  if (cap - (b->head - b->cached_tail) >= need) return 1;
  b->cached_tail = __atomic_load_n(&b->tail, __ATOMIC_ACQUIRE);
  return cap - (b->head - b->cached_tail) >= need;
}

static void count_drop(struct ctp_tbuf *b) {
  uint64_t now = ctp_now_ns();
  if (b->drops_total == b->drops_pushed) b->drop_first_ns = now;
  b->drop_last_ns = now;
  /* a read-modify-write: a signal handler on this thread may count a drop meanwhile */
  __atomic_add_fetch(&b->drops_total, 1, __ATOMIC_RELEASE);
  if (!__atomic_load_n(&b->kicked, __ATOMIC_RELAXED)) {
    __atomic_store_n(&b->kicked, 1, __ATOMIC_RELAXED);
    ctp_writer_kick();
  }
}

/* Writes the DROP record for the pending drops at word h; returns the new head. */
static uint64_t put_drop(struct ctp_tbuf *b, uint64_t h) {
  uint64_t m = b->mask, total = __atomic_load_n(&b->drops_total, __ATOMIC_RELAXED);
  b->ring[h++ & m] = CT_KIND_DROP | (uint64_t)(DROP_WORDS - 1) << 8;
  b->ring[h++ & m] = b->tid;
  b->ring[h++ & m] = total; /* cumulative: see struct ctp_tbuf */
  b->ring[h++ & m] = b->drop_first_ns;
  b->ring[h++ & m] = b->drop_last_ns;
  b->drops_pushed = total;
  return h;
}

/* Copies nf (1..CT_MAX_FIELDS) words: one constant-size copy per case, which the
 * compiler turns into a few vector moves instead of a loop. */
static inline __attribute__((always_inline)) void copy_words(uint64_t *dst, const uint64_t *src, unsigned nf) {
  switch (nf) {
#define COPY_WORDS_CASE(n)                      \
  case n:                                       \
    memcpy(dst, src, n * sizeof(uint64_t));     \
    return;
    COPY_WORDS_CASE(1) COPY_WORDS_CASE(2) COPY_WORDS_CASE(3) COPY_WORDS_CASE(4)
    COPY_WORDS_CASE(5) COPY_WORDS_CASE(6) COPY_WORDS_CASE(7) COPY_WORDS_CASE(8)
    COPY_WORDS_CASE(9) COPY_WORDS_CASE(10) COPY_WORDS_CASE(11) COPY_WORDS_CASE(12)
    COPY_WORDS_CASE(13) COPY_WORDS_CASE(14) COPY_WORDS_CASE(15) COPY_WORDS_CASE(16)
#undef COPY_WORDS_CASE
  default:
    for (unsigned i = 0; i < nf; i++) dst[i] = src[i];
  }
}

/* After head moved to h: when the ring looks half full by the cached tail, looks at
 * the real one (once per half ring written) and wakes the writer only if it really
 * is; a stale tail must not wake it per record. */
static __attribute__((noinline, cold)) void ring_half_full(struct ctp_tbuf *b, uint64_t h) {
  b->cached_tail = __atomic_load_n(&b->tail, __ATOMIC_ACQUIRE);
  if (h - b->cached_tail > (b->mask + 1) / 2 && !__atomic_load_n(&b->kicked, __ATOMIC_RELAXED)) {
    __atomic_store_n(&b->kicked, 1, __ATOMIC_RELAXED);
    ctp_writer_kick();
  }
}

/* Appends one record (kind, nf fields) to b, or counts it as dropped: every case
 * (pending DROP report, full ring, wrap-around). ctp_emit inlines the common one. */
static __attribute__((noinline)) void ring_push(struct ctp_tbuf *b, unsigned kind, unsigned nf,
                                                const uint64_t *v) {
  int report = b->drops_total != b->drops_pushed;
  uint64_t need = 1 + nf + (report ? DROP_WORDS : 0);
  if (CTP_UNLIKELY(!ring_reserve(b, need))) {
    count_drop(b);
    return;
  }
  uint64_t h = b->head, m = b->mask;
  uint64_t *ring = b->ring;
  if (CTP_UNLIKELY(report)) h = put_drop(b, h);
  uint64_t pos = h & m;
  if (CTP_LIKELY(pos + 1 + nf <= m + 1)) { /* no wrap: a straight copy */
    ring[pos] = kind | (uint64_t)nf << 8;
    copy_words(ring + pos + 1, v, nf);
    h += 1 + nf;
  } else {
    ring[h++ & m] = kind | (uint64_t)nf << 8;
    for (unsigned i = 0; i < nf; i++) ring[h++ & m] = v[i];
  }
  __atomic_store_n(&b->head, h, __ATOMIC_RELEASE);
  if (CTP_UNLIKELY(h - b->cached_tail > (m + 1) / 2)) ring_half_full(b, h);
}

/* pthread key destructor: the thread is exiting; its buffer is retired once drained. */
static void on_thread_exit(void *p) {
  struct ctp_tbuf *b = p;
  tls_exiting = 1;
  tls_buf = NULL;
  if (!b) return;
  if (b->drops_total != b->drops_pushed && ring_reserve(b, DROP_WORDS))
    __atomic_store_n(&b->head, put_drop(b, b->head), __ATOMIC_RELEASE);
  /* Drops that did not fit are reported by the writer once it sees done. */
  __atomic_store_n(&b->done, 1, __ATOMIC_RELEASE);
  ctp_writer_kick();
}

static int exit_key_made;

static void make_exit_key(void) {
  if (pthread_key_create(&exit_key, on_thread_exit) == 0) exit_key_made = 1;
}

/* Words in a ring: the largest power of two that fits CUTRACE_BUFFER_KB (at least 64). */
static size_t ring_words(void) {
  size_t words = 64;
  while (words * 2 * sizeof(uint64_t) <= ctp_cfg.buffer_bytes) words *= 2;
  return words;
}

/* Bytes of a ring's mapping up to its struct ctp_tbuf (a whole number of pages). */
static size_t ring_span(size_t words) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE), bytes = words * sizeof(uint64_t);
  return (bytes + page - 1) / page * page;
}

/*
 * A new buffer, zeroed, with a ring of ring_words() words populated up front (no page
 * faults on the hot path during its first lap); NULL when memory is short. One
 * mapping holds the ring and, on the page after it, the struct (page-aligned, so its
 * consumer half starts a cache line of its own): no malloc, so that a buffer being
 * made or taken while another thread forks is not a heap leak in the child.
 * The ring's pages are MADV_WIPEONFORK: a fork child gets zero pages there instead of
 * sharing the parent's copy-on-write (it frees the parent's buffers without reading
 * their rings), and the parent's next writes to its rings do not fault. Keeps errno.
 * Small pages: this runs on the program's thread (no ready ring), where a huge
 * page's direct compaction could stall it; the writer's pool uses ring_pool_alloc.
 */
static struct ctp_tbuf *tbuf_alloc(void) {
  int saved = errno;
  size_t words = ring_words(), span = ring_span(words);
  size_t len = span + ring_span((sizeof(struct ctp_tbuf) + sizeof(uint64_t) - 1) / sizeof(uint64_t));
  char *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
                   -1, 0);
  if (map == MAP_FAILED) {
    errno = saved;
    return NULL;
  }
#ifdef MADV_WIPEONFORK
  (void)madvise(map, span, MADV_WIPEONFORK); /* Linux < 4.14: copy-on-write, as before */
#endif
  struct ctp_tbuf *b = (struct ctp_tbuf *)(map + span); /* zero, as mapped */
  b->ring = (uint64_t *)map;
  b->mask = words - 1;
  errno = saved;
  return b;
}

/* Unmaps b's ring and its struct's page (one mapping or two: tbuf_alloc, ring_pool_alloc). */
static void tbuf_free(struct ctp_tbuf *b) {
  size_t span = ring_span(b->mask + 1);
  size_t struct_span = ring_span((sizeof *b + sizeof(uint64_t) - 1) / sizeof(uint64_t));
  char *ring = (char *)b->ring;
  if ((char *)b == ring + span) {
    munmap(ring, span + struct_span);
  } else {
    munmap(ring, span);
    munmap(b, struct_span);
  }
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; older kernels answer EINVAL */
#endif
/* The PMD huge page of x86-64 (and of arm64 with 4 KiB pages). Where it is another
 * size the rings are simply not aligned to it and get small pages. */
#define RING_HUGE_PAGE_BYTES ((size_t)2 << 20)

/* Rings counted by ring_pool_alloc since start-up (or the fork): tests, benchmarks. */
static unsigned long ring_pool_made;

/*
 * Up to n (1..RING_POOL_MAX_SLOTS) new buffers for the pool, as one mapping: their
 * rings side by side from a 2 MiB boundary, then one page per struct. The rings are
 * MADV_HUGEPAGE (two 1 MiB rings fill one huge page: populated in about 55 us instead
 * of 0.6 ms as 512 small pages, docs/performance.md "Ready rings") and
 * MADV_WIPEONFORK, then populated (MADV_POPULATE_WRITE; on a kernel without it, or
 * where a seccomp filter denies it, one write per small page). Where THP is off or the kernel has no huge page free, the
 * same calls give small pages. Writer thread only (the madvise may compact memory).
 * Stores them in out; returns how many (0 when memory is short). Keeps errno.
 */
static unsigned ring_pool_alloc(struct ctp_tbuf **out, unsigned n) {
  int saved = errno;
  size_t words = ring_words(), span = ring_span(words);
  size_t struct_span = ring_span((sizeof(struct ctp_tbuf) + sizeof(uint64_t) - 1) / sizeof(uint64_t));
  size_t rings = n * span, len = rings + n * struct_span;
  /* Over-map by one huge page, then trim to a 2 MiB-aligned start. */
  char *map = mmap(NULL, len + RING_HUGE_PAGE_BYTES, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) {
    errno = saved;
    return 0;
  }
  uintptr_t at = ((uintptr_t)map + RING_HUGE_PAGE_BYTES - 1) & ~(uintptr_t)(RING_HUGE_PAGE_BYTES - 1);
  char *base = (char *)at, *end = map + len + RING_HUGE_PAGE_BYTES;
  if (base > map) munmap(map, (size_t)(base - map));
  if (end > base + len) munmap(base + len, (size_t)(end - (base + len)));
#ifdef MADV_HUGEPAGE
  (void)madvise(base, rings, MADV_HUGEPAGE); /* EINVAL without THP: small pages */
#endif
#ifdef MADV_WIPEONFORK
  (void)madvise(base, rings, MADV_WIPEONFORK);
#endif
  if (madvise(base, len, MADV_POPULATE_WRITE) != 0) {
    /* EINVAL: a kernel without it; EPERM, ENOSYS: a sandbox's seccomp policy that
     * allows only some advice values (it would deny it every round). Otherwise memory
     * is short (ENOMEM), or a signal came (EINTR): none now, the next round tries. */
    if (errno != EINVAL && errno != EPERM && errno != ENOSYS) {
      munmap(base, len);
      errno = saved;
      return 0;
    }
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    for (size_t off = 0; off < len; off += page) ((volatile char *)base)[off] = 0;
  }
  for (unsigned i = 0; i < n; i++) {
    struct ctp_tbuf *b = (struct ctp_tbuf *)(base + rings + i * struct_span); /* zero */
    b->ring = (uint64_t *)(base + i * span);
    b->mask = words - 1;
    out[i] = b;
  }
  __atomic_add_fetch(&ring_pool_made, n, __ATOMIC_RELAXED);
  errno = saved;
  return n;
}

/*
 * The pool of ready rings. The writer thread keeps up to ring_pool_slots() buffers,
 * allocated and populated, in ring_pool (ctp_ring_pool_fill, and drained buffers of
 * exited threads that ctp_buffers_reap recycles); a thread's first record takes one
 * with an atomic exchange (never waits for the writer) and maps its own only when
 * the pool is empty. Only the writer thread stores into an empty slot, so a slot
 * it sees empty stays empty until it fills it. The pool stays empty (no CPU, no
 * memory) until the process shows it will record: ctp_ring_pool_want, from the
 * hooks (the runtime looks up the driver's entry points), from start-up (libcuda or
 * libcudart among the loaded objects) or from its first record.
 */
#define RING_POOL_MAX_SLOTS 4                /* CUTRACE_RING_POOL's most */
#define RING_POOL_BYTES_SOFT (8u << 20)       /* spare rings beyond one stay under this */

static struct ctp_tbuf *ring_pool[RING_POOL_MAX_SLOTS];

/* CUTRACE_RING_POOL (default 2), fewer when the spare rings would pass 8 MiB (one at least). */
static unsigned ring_pool_slots(void) {
  unsigned n = ctp_cfg.ring_pool < RING_POOL_MAX_SLOTS ? ctp_cfg.ring_pool : RING_POOL_MAX_SLOTS;
  size_t bytes = ring_words() * sizeof(uint64_t);
  while (n > 1 && n * bytes > RING_POOL_BYTES_SOFT) n--;
  return n;
}

/*
 * A ready buffer from the pool, or NULL. The writer replaces it at its next round
 * (every 0.5-5 ms): waking it now would let it preempt this thread on a busy CPU
 * and make the new ring right inside the call the pool is there to spare
 * (measured: 300-470 us first records again, docs/performance.md).
 */
static struct ctp_tbuf *ring_pool_take(void) {
  for (unsigned i = 0; i < RING_POOL_MAX_SLOTS; i++) {
    if (!__atomic_load_n(&ring_pool[i], __ATOMIC_RELAXED)) continue;
    struct ctp_tbuf *b = __atomic_exchange_n(&ring_pool[i], NULL, __ATOMIC_ACQUIRE);
    if (b) return b;
  }
  return NULL;
}

/* Puts b (zeroed but for its ring) into an empty slot. Writer thread only. Returns 0 when full. */
static int ring_pool_put(struct ctp_tbuf *b) {
  unsigned n = ring_pool_slots();
  for (unsigned i = 0; i < n; i++) {
    if (!__atomic_load_n(&ring_pool[i], __ATOMIC_ACQUIRE)) {
      __atomic_store_n(&ring_pool[i], b, __ATOMIC_RELEASE);
      return 1;
    }
  }
  return 0;
}

void ctp_ring_pool_skip(void) { tls_no_pool = 1; }

/* 1 once the process showed it will record (ctp_ring_pool_want): until then the
 * writer keeps no ready rings. */
static int ring_pool_wanted;

void ctp_ring_pool_want(void) {
  if (CTP_LIKELY(__atomic_load_n(&ring_pool_wanted, __ATOMIC_RELAXED))) return;
  if (__atomic_exchange_n(&ring_pool_wanted, 1, __ATOMIC_ACQ_REL)) return;
  /* CUDA is coming: a process whose file waited for this opens it now (start.c) */
  if (__atomic_load_n(&ctp_file_pending, __ATOMIC_ACQUIRE) &&
      __atomic_load_n(&ctp_enabled, __ATOMIC_ACQUIRE))
    ctp_file_open();
  ctp_writer_kick();
}

void ctp_ring_pool_fill(void) {
  if (!__atomic_load_n(&ring_pool_wanted, __ATOMIC_ACQUIRE)) return;
  unsigned n = ring_pool_slots(), empty[RING_POOL_MAX_SLOTS], k = 0;
  for (unsigned i = 0; i < n; i++)
    if (!__atomic_load_n(&ring_pool[i], __ATOMIC_ACQUIRE)) empty[k++] = i;
  if (!k) return;
  struct ctp_tbuf *made[RING_POOL_MAX_SLOTS];
  unsigned got = ring_pool_alloc(made, k); /* 0 when memory is short: next round */
  for (unsigned j = 0; j < got; j++) __atomic_store_n(&ring_pool[empty[j]], made[j], __ATOMIC_RELEASE);
}

void ctp_ring_pool_drain(void) {
  for (unsigned i = 0; i < RING_POOL_MAX_SLOTS; i++) {
    struct ctp_tbuf *b = __atomic_exchange_n(&ring_pool[i], NULL, __ATOMIC_ACQUIRE);
    if (b) tbuf_free(b);
  }
}

unsigned long ctp_ring_pool_made(void) { return __atomic_load_n(&ring_pool_made, __ATOMIC_RELAXED); }

unsigned ctp_ring_pool_ready(void) {
  unsigned n = 0;
  for (unsigned i = 0; i < RING_POOL_MAX_SLOTS; i++) n += __atomic_load_n(&ring_pool[i], __ATOMIC_ACQUIRE) != NULL;
  return n;
}

/* Creates, registers and starts the calling thread's buffer with its THREAD record:
 * a ready one from the pool, else its own mapping, reported as a TRACER "ring" span
 * (its cost, 0.3-2 ms, is the tracer's and not the program's). */
static __attribute__((noinline)) struct ctp_tbuf *tbuf_create(void) {
  if (tls_exiting) return NULL;
  if (CTP_UNLIKELY(__atomic_load_n(&ctp_file_pending, __ATOMIC_ACQUIRE))) ctp_file_open();
  if (!__atomic_load_n(&ctp_enabled, __ATOMIC_ACQUIRE)) return NULL;
  int saved = errno;
  uint64_t map_begin = 0, map_end = 0;
  struct ctp_tbuf *b = tls_no_pool ? NULL : ring_pool_take();
  if (!b) {
    map_begin = ctp_now_ns();
    b = tbuf_alloc();
    map_end = ctp_now_ns();
  }
  if (!b) {
    errno = saved;
    return NULL;
  }
  b->tid = ctp_tid();
  char name[17] = {0};
  prctl(PR_GET_NAME, name, 0, 0, 0);
  b->name_id = ctp_intern_always(name, strnlen(name, 16));
  b->start_ns = map_begin ? map_begin : ctp_now_ns();
  struct ct_thread t = {.tid = b->tid, .name = b->name_id, .start_ns = b->start_ns};
  pthread_once(&exit_key_once, make_exit_key);
  if (exit_key_made) pthread_setspecific(exit_key, b);
  pthread_mutex_lock(&registry_lock);
  b->next = registry;
  __atomic_store_n(&registry, b, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&registry_lock);
  tls_buf = b;

  ring_push(b, CT_KIND_THREAD, kind_words[CT_KIND_THREAD], (const uint64_t *)&t);
  if (map_begin) {
    ct_record r;
    r.kind = CT_KIND_TRACER;
    r.u.tracer = (struct ct_tracer){.tid = b->tid, .what = ctp_intern_always("ring", 4),
                                    .begin_ns = map_begin, .end_ns = map_end,
                                    .amount = (b->mask + 1) * sizeof(uint64_t)};
    ring_push(b, CT_KIND_TRACER, kind_words[CT_KIND_TRACER], r.u.v);
  }
  /* The process records: its next threads' first records deserve ready rings (after
   * this thread's own mapping, so the writer making them does not compete with it). */
  if (!tls_no_pool) ctp_ring_pool_want();
  errno = saved;
  return b;
}

/* ctp_emit's uncommon cases, called with tls_in_emit set: the thread's first record
 * and whatever ring_push handles (drops to report, a full ring, wrap-around). */
static __attribute__((noinline)) void emit_slow(unsigned kind, unsigned nf, const uint64_t *v) {
  struct ctp_tbuf *b = tls_buf;
  if (b || (b = tbuf_create()) != NULL) ring_push(b, kind, nf, v);
}

/* ctp_emit re-entered from a signal handler: the ring is mid-write, count a drop. */
static __attribute__((noinline, cold)) void emit_reentered(void) {
  if (tls_buf) count_drop(tls_buf);
}

/*
 * The common case inline: a thread with a buffer, no drops to report, room in the
 * ring before its end: about 30 instructions plus the copy (bench/callgrind_launch.py).
 * tls_in_emit is set before head is read, so that a signal handler's record can
 * never be overwritten by the one it interrupted.
 */
void ctp_emit(const ct_record *rec) {
  if (CTP_UNLIKELY(!__atomic_load_n(&ctp_enabled, __ATOMIC_RELAXED))) return;
  unsigned kind = rec->kind, nf = kind_words[rec->kind];
  if (CTP_UNLIKELY(!nf)) return;
  if (CTP_UNLIKELY(tls_in_emit)) {
    emit_reentered();
    return;
  }
  tls_in_emit = 1;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  struct ctp_tbuf *b = tls_buf;
  uint64_t h, m, pos;
  if (CTP_LIKELY(b != NULL && b->drops_total == b->drops_pushed) &&
      (h = b->head, m = b->mask, pos = h & m,
       CTP_LIKELY((m + 1) - (h - b->cached_tail) >= 1 + nf && pos + 1 + nf <= m + 1))) {
    uint64_t *dst = b->ring + pos;
    dst[0] = kind | (uint64_t)nf << 8;
    copy_words(dst + 1, rec->u.v, nf);
    h += 1 + nf;
    __atomic_store_n(&b->head, h, __ATOMIC_RELEASE);
    if (CTP_UNLIKELY(h - b->cached_tail > (m + 1) / 2)) ring_half_full(b, h);
  } else {
    emit_slow(kind, nf, rec->u.v);
  }
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  tls_in_emit = 0;
}

void ctp_thread_ready(void) {
  if (tls_buf || tls_in_emit || !__atomic_load_n(&ctp_enabled, __ATOMIC_RELAXED)) return;
  tls_in_emit = 1; /* as in ctp_emit: a signal handler's record meanwhile is a drop */
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  tbuf_create();
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  tls_in_emit = 0;
}

void ctp_emit_tracer(const char *what, uint64_t begin_ns, uint64_t end_ns, uint64_t amount) {
  ct_record r;
  r.kind = CT_KIND_TRACER;
  r.u.tracer = (struct ct_tracer){.tid = ctp_tid(), .what = ctp_intern(what),
                                  .begin_ns = begin_ns, .end_ns = end_ns, .amount = amount};
  ctp_emit(&r);
}

struct ctp_tbuf *ctp_buffers_head(void) { return __atomic_load_n(&registry, __ATOMIC_ACQUIRE); }

void ctp_buffers_reap(void) {
  struct ctp_tbuf *dead = NULL;
  pthread_mutex_lock(&registry_lock);
  for (struct ctp_tbuf **pp = &registry; *pp;) {
    struct ctp_tbuf *b = *pp;
    if (__atomic_load_n(&b->done, __ATOMIC_ACQUIRE) &&
        b->tail == __atomic_load_n(&b->head, __ATOMIC_ACQUIRE) &&
        b->drops_written == __atomic_load_n(&b->drops_total, __ATOMIC_ACQUIRE)) {
      /* atomic: pp may be &registry, which ctp_buffers_head reads without the lock
       * (exit's check whether anything was recorded, on the program's thread) */
      __atomic_store_n(pp, b->next, __ATOMIC_RELEASE);
      b->next = dead;
      dead = b;
    } else {
      pp = &b->next;
    }
  }
  pthread_mutex_unlock(&registry_lock);
  while (dead) {
    struct ctp_tbuf *n = dead->next;
    /* Drained: its ring, populated, is as good as a new one for the next thread. */
    uint64_t *ring = dead->ring, mask = dead->mask;
    memset(dead, 0, sizeof *dead);
    dead->ring = ring;
    dead->mask = mask;
    if (mask + 1 != ring_words() || !ring_pool_put(dead)) tbuf_free(dead);
    dead = n;
  }
}

void ctp_buffers_after_fork(void) {
  struct ctp_tbuf *b = registry;
  registry = NULL;
  while (b) {
    struct ctp_tbuf *n = b->next;
    tbuf_free(b);
    b = n;
  }
  /* The parent's spare rings: wiped here (MADV_WIPEONFORK), unpopulated; this
   * process's writer fills the pool anew. A spare the parent's writer was making, or
   * one a parent thread was taking, at the fork is lost here: address space only. */
  for (unsigned i = 0; i < RING_POOL_MAX_SLOTS; i++) {
    if (ring_pool[i]) tbuf_free(ring_pool[i]);
    ring_pool[i] = NULL;
  }
  /* A fork child (a DataLoader worker, a launcher's shell) must show on its own that it
   * records before its writer makes rings for it. */
  ring_pool_wanted = 0;
  ring_pool_made = 0;
  tls_buf = NULL;
  tls_tid = 0;
  if (exit_key_made) pthread_setspecific(exit_key, NULL);
}

void ctp_buffers_lock(void) { pthread_mutex_lock(&registry_lock); }
void ctp_buffers_unlock(void) { pthread_mutex_unlock(&registry_lock); }
