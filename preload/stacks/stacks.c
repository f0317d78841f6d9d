/*
 * ctp_stack_here: the call stack of the intercepted call being recorded, as the id of
 * its innermost node in the process-wide stack tree (tree.c).
 *
 * Settings (docs/preload.md, "Call stacks"): CUTRACE_STACKS=off|launches|all,
 * CUTRACE_STACK_DEPTH=N (frames kept, innermost first).
 *
 * The unwinder is libunwind's unw_backtrace (its x86-64 fast path keeps a per-thread
 * cache of frame layouts by address). libunwind is loaded privately with
 * dlopen(RTLD_LOCAL) instead of being linked: libunwind.so.8 also defines
 * _Unwind_RaiseException, backtrace, ... which would otherwise enter the global
 * scope and could take over a C++ program's exception unwinding (the Debian static
 * archive is not position-independent, so it cannot be linked into libtrace.so).
 * A program that loads libunwind.so.8 itself shares the same copy, which is harmless:
 * nothing global of it is changed here.
 *
 * Frames inside libtrace.so are skipped: the innermost kept frame is the code that
 * called the intercepted entry point. Each node's pc is a return address (the
 * instruction after the call): symbolise pc - 1.
 *
 * Cost: a per-thread direct-mapped cache keyed by a 64-bit hash of the kept return
 * addresses maps a stack to its node id, so a repeated stack costs one unwind, one
 * hash and one probe, without a lock. A miss takes the tree lock. The time spent is
 * summed per thread and written about every CUTRACE_FLUSH_MS as one TRACER record
 * "stacks" (amount = stacks captured; duration = their summed time, ending at the
 * last one).
 */
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <errno.h>
#include <libunwind.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>

#include "core/core.h"
#include "stacks_internal.h"

#define TLS __thread __attribute__((tls_model("initial-exec")))
#define SKIP_MAX 16        /* libtrace.so frames above the caller, at most */
#define CACHE_ENTRIES 1024 /* per thread, a power of two */

struct cache_entry {
  uint64_t hash; /* 0 = empty */
  uint64_t id;
};

/* One thread's state, mmap'ed on its first stack (freed at thread exit). */
struct thread_stacks {
  uint64_t period_end_ns, sum_ns, count, last_ns; /* cost of the current period */
  struct cache_entry cache[CACHE_ENTRIES];
};

static int mode = -1; /* enum ctps_mode once initialised */
static int depth = CTPS_DEFAULT_DEPTH;
static uint64_t self_start, self_end; /* libtrace.so's own addresses */
static int (*backtrace_fn)(void **, int);
static pthread_key_t thread_key;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static TLS struct thread_stacks *tls_state;
static TLS int tls_busy;

/* Reads CUTRACE_STACKS; bad values get one line and the default. */
static int read_mode(void) {
  const char *v = getenv("CUTRACE_STACKS");
  if (!v || !*v) return CTPS_LAUNCHES;
  if (!strcasecmp(v, "off") || !strcmp(v, "0") || !strcasecmp(v, "no")) return CTPS_OFF;
  if (!strcasecmp(v, "launches") || !strcmp(v, "1") || !strcasecmp(v, "on")) return CTPS_LAUNCHES;
  if (!strcasecmp(v, "all")) return CTPS_ALL;
  ctp_warn("CUTRACE_STACKS='%.64s' is not off, launches or all; using launches", v);
  return CTPS_LAUNCHES;
}

/* Reads CUTRACE_STACK_DEPTH (1..256); bad values get one line and the default. */
static int read_depth(void) {
  const char *v = getenv("CUTRACE_STACK_DEPTH");
  if (!v || !*v) return CTPS_DEFAULT_DEPTH;
  char *end;
  errno = 0;
  long x = strtol(v, &end, 10);
  if (errno || end == v || *end || x < 1 || x > CTPS_MAX_DEPTH) {
    ctp_warn("CUTRACE_STACK_DEPTH='%.64s' is not a number in 1..%d; using %d", v,
             CTPS_MAX_DEPTH, CTPS_DEFAULT_DEPTH);
    return CTPS_DEFAULT_DEPTH;
  }
  return (int)x;
}

static void free_thread_state(void *p) {
  if (p) munmap(p, sizeof(struct thread_stacks));
}

static void fork_prepare(void) { ctps_tree_fork_prepare(); }
static void fork_parent(void) { ctps_tree_fork_parent(); }
static void fork_child(void) { ctps_tree_fork_child(); }

static void init(void) {
  int saved = errno;
  int m = read_mode();
  depth = read_depth();
  if (m != CTPS_OFF) {
    void *lib = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    backtrace_fn = lib ? (int (*)(void **, int))dlsym(lib, "unw_backtrace") : NULL;
    if (!backtrace_fn) {
      ctp_warn("call stacks off: cannot load libunwind.so.8 (%s)", lib ? "no unw_backtrace" : dlerror());
      m = CTPS_OFF;
    } else if (ctps_object_range((const void *)&ctp_stack_here, &self_start, &self_end) < 0 ||
               pthread_key_create(&thread_key, free_thread_state) != 0) {
      ctp_warn("call stacks off: cannot set up");
      m = CTPS_OFF;
    } else {
      pthread_atfork(fork_prepare, fork_parent, fork_child);
    }
  }
  __atomic_store_n(&mode, m, __ATOMIC_RELEASE);
  errno = saved;
}

/* Loads libunwind at start-up (single-threaded) rather than inside a first CUDA call. */
__attribute__((constructor)) static void stacks_constructor(void) {
  if (ctp_start()) pthread_once(&init_once, init);
}

/* FNV-style mixing of the kept pcs and their count into a nonzero 64-bit key. */
static inline uint64_t stack_hash(const uint64_t *pcs, int n) {
  uint64_t h = 0x84222325cbf29ce4ull ^ (uint64_t)n;
  for (int i = 0; i < n; i++) {
    h ^= pcs[i];
    h *= 0x100000001b3ull;
    h ^= h >> 32;
  }
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h ? h : 1;
}

static struct thread_stacks *thread_state(void) {
  struct thread_stacks *s = tls_state;
  if (CTP_LIKELY(s)) return s;
  void *p = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  s = p;
  pthread_setspecific(thread_key, s);
  tls_state = s;
  return s;
}

/* Adds one capture's cost to the thread's period; writes the period's TRACER record. */
static void account(struct thread_stacks *s, uint64_t begin_ns, uint64_t end_ns) {
  s->sum_ns += end_ns - begin_ns;
  s->count++;
  s->last_ns = end_ns;
  if (!s->period_end_ns) s->period_end_ns = end_ns + ctp_cfg.flush_ns;
  if (end_ns < s->period_end_ns) return;
  uint64_t sum = s->sum_ns < end_ns ? s->sum_ns : end_ns;
  ctp_emit_tracer("stacks", end_ns - sum, end_ns, s->count);
  s->sum_ns = s->count = 0;
  s->period_end_ns = end_ns + ctp_cfg.flush_ns;
}

uint64_t ctp_stack_here(int gpu_work) {
  int m = __atomic_load_n(&mode, __ATOMIC_ACQUIRE);
  if (CTP_UNLIKELY(m < 0)) {
    pthread_once(&init_once, init);
    m = __atomic_load_n(&mode, __ATOMIC_ACQUIRE);
  }
  if (m == CTPS_OFF || (m == CTPS_LAUNCHES && !gpu_work) || tls_busy ||
      !__atomic_load_n(&ctp_enabled, __ATOMIC_RELAXED))
    return 0;
  tls_busy = 1;
  int saved = errno;
  uint64_t begin_ns = ctp_now_ns(), id = 0;
  struct thread_stacks *s = thread_state();
  if (CTP_UNLIKELY(__atomic_load_n(&ctps_rewrite_pending, __ATOMIC_ACQUIRE)))
    ctps_tree_rewrite();
  void *frames[CTPS_MAX_DEPTH + SKIP_MAX];
  int n = s ? backtrace_fn(frames, depth + SKIP_MAX) : 0, skip = 0;
  while (skip < n && (uint64_t)(uintptr_t)frames[skip] >= self_start &&
         (uint64_t)(uintptr_t)frames[skip] < self_end)
    skip++;
  int kept = n - skip < depth ? n - skip : depth;
  if (kept > 0) {
    uint64_t pcs[CTPS_MAX_DEPTH];
    for (int i = 0; i < kept; i++) pcs[i] = (uint64_t)(uintptr_t)frames[skip + i];
    uint64_t h = stack_hash(pcs, kept);
    struct cache_entry *e = &s->cache[h & (CACHE_ENTRIES - 1)];
    if (e->hash == h) {
      id = e->id;
    } else if ((id = ctps_tree_insert(pcs, kept)) != 0) {
      e->hash = h;
      e->id = id;
    }
  }
  if (s) account(s, begin_ns, ctp_now_ns());
  errno = saved;
  tls_busy = 0;
  return id;
}
