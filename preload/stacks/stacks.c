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
 * hash and one probe, without a lock. A miss takes the tree lock.
 *
 * Call sites (ctp_stack_at) skip even the unwind: a second per-thread cache, keyed by
 * the site's return address and the wrapper's CFA (so by call site and stack depth),
 * remembers where on the stack each kept return address was stored (on x86-64 a
 * frame's return address lies 8 bytes below the CFA of the function it called; the
 * unwinder's SP after a step is that CFA). A stack seen again at the same site and
 * depth is recognised by re-reading those slots and comparing the hash of what they
 * hold with the stack's: a few loads per frame instead of an unwind. Any difference
 * (another caller at the same depth) falls back to the unwind, which refreshes the
 * entry. Entries are only made when every slot read back the unwinder's pc (no
 * signal frame in the way) and the slots lie between the CFA and the top of the
 * thread's own stack (pthread_getattr_np), so the slots of a later hit are live
 * frames of the same stack; a call on another stack (a coroutine's, sigaltstack)
 * is simply unwound.
 *
 * Its own cost (docs/preload.md, "Its own cost"): one capture in SAMPLE_EVERY is
 * timed, and every miss (its tree work in the thread's CPU time, which a preemption
 * does not stretch, and its unwind, when timed, clamped as a hit). A thread's captures fall into periods; each period is written
 * as one TRACER record "stacks" (amount = captures; duration = their estimated summed
 * time). The estimate is robust: a timed hit is clamped to CLAMP_FACTOR times the
 * fastest one the thread has timed (a hit does bounded work; a sample slower than
 * that was preempted or faulted, and would otherwise count SAMPLE_EVERY times), and
 * the period's mean is clamped again against the final minimum (a preempted first
 * sample). The record never claims time the thread spent outside the tracer: a period
 * ends at the last capture before the thread stayed away from the tracer longer than
 * AWAY_NS (known at no cost from the time the intercepted call returned, which the
 * caller passes) or at a timed capture once CUTRACE_FLUSH_MS went by; its block ends
 * at that capture's end and starts no earlier than the period's first capture (always
 * timed). So a sleep or the program's own work longer than AWAY_NS between two
 * captures is never covered; within a period (captures less than AWAY_NS apart) the
 * block stands for time spread among them.
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
#include <time.h>

#include "core/core.h"
#include "stacks_internal.h"

#define TLS __thread __attribute__((tls_model("initial-exec")))
#define SKIP_MAX 16        /* libtrace.so frames above the caller, at most */
#define CACHE_ENTRIES 1024 /* per thread, a power of two */
#define SAMPLE_EVERY 16    /* captures per timed one (two clock reads saved on the rest) */
#define SITE_ENTRIES 256   /* per thread, a power of two */
#define SITE_FRAMES 32     /* stacks of at most this many kept frames use the site cache */
#define SITE_STREAK 3      /* same stack this many times in a row at a site: find its slots */
#define CLAMP_FACTOR 32    /* a timed hit counts at most this many times the fastest one */
#define AWAY_NS 100000ull  /* captures further apart than this are in different periods */

struct cache_entry {
  uint64_t hash; /* 0 = empty */
  uint64_t id;
};

/* A call site's last stack: where its kept return addresses are stored. */
struct site_entry {
  uint64_t ra, cfa;                /* the key; cfa 0 = empty */
  uint64_t id, hash;               /* the stack's node id and stack_hash of its pcs */
  uint32_t n;                      /* kept frames whose slots are known; 0 = not yet */
  int32_t streak;                  /* captures in a row of this stack at this site */
  uint32_t slot_off[SITE_FRAMES];  /* slot address - (cfa - 8) of each kept pc */
};

/* One thread's state, mmap'ed on its first stack (freed at thread exit). */
struct thread_stacks {
  /* cost of the current period: every SAMPLE_EVERY-th capture is timed (the first
   * always); sampled_ns sums the timed hits, each clamped (min_sample_ns) */
  uint64_t period_end_ns, count, misses, sampled, sampled_ns, extra_ns;
  uint64_t min_sample_ns;            /* the fastest timed hit of the thread; 0 = none yet */
  uint64_t first_ns;                 /* the period's first capture began */
  uint64_t last_begin_ns, last_end_ns; /* the last capture; last_end_ns 0 = not timed */
  uint64_t test_timed;               /* timed captures (CUTRACE_TEST_STACKS_DELAY_NS only) */
  uint64_t stack_lo, stack_hi; /* the thread's stack; 0 = unknown (no site cache) */
  struct cache_entry cache[CACHE_ENTRIES];
  struct site_entry sites[SITE_ENTRIES];
};

static int mode = -1; /* enum ctps_mode once initialised */
static int depth = CTPS_DEFAULT_DEPTH;
static int skip_hint = 4; /* most libtrace.so frames above a call site seen so far */
static uint64_t self_start, self_end; /* libtrace.so's own addresses */
static int (*backtrace_fn)(void **, int);
/* libunwind's cursor API (unw_getcontext, unw_init_local, unw_step, unw_get_reg) */
static int (*getcontext_fn)(unw_context_t *);
static int (*init_local_fn)(unw_cursor_t *, unw_context_t *);
static int (*step_fn)(unw_cursor_t *);
static int (*get_reg_fn)(unw_cursor_t *, unw_regnum_t, unw_word_t *);
static pthread_key_t thread_key;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_begun; /* 1 once init() began (on some thread): a capture may wait for it */
static TLS struct thread_stacks *tls_state;
static TLS int tls_busy;
/* CUTRACE_TEST_STACKS_DELAY_NS=D[@K|@miss] (tests only): timed captures (only the
 * thread's K-th, with @K; with @miss instead every cache miss, inside its tree work)
 * sleep D ns inside the capture, as a preempted one would. */
static uint64_t test_delay_ns, test_delay_at;
static int test_delay_miss;

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

/* Reads CUTRACE_TEST_STACKS_DELAY_NS (a test's planted preemption; unset: none). */
static void read_test_delay(void) {
  const char *v = getenv("CUTRACE_TEST_STACKS_DELAY_NS");
  if (!v || !*v) return;
  char *end;
  unsigned long long d = strtoull(v, &end, 10), at = 0;
  int miss = 0;
  if (!strcmp(end, "@miss")) miss = 1, end += 5;
  else if (*end == '@') at = strtoull(end + 1, &end, 10);
  if (*end || d > 10000000000ull) {
    ctp_warn("CUTRACE_TEST_STACKS_DELAY_NS='%.64s' is not NS, NS@K or NS@miss; ignored", v);
    return;
  }
  test_delay_ns = d;
  test_delay_at = at;
  test_delay_miss = miss;
}

/* A timed capture (or, with @miss, a miss) under CUTRACE_TEST_STACKS_DELAY_NS: sleeps
 * the planted time. */
__attribute__((noinline, cold)) static void test_delay(struct thread_stacks *s) {
  if (test_delay_at && ++s->test_timed != test_delay_at) return;
  struct timespec ts = {(time_t)(test_delay_ns / 1000000000ull), (long)(test_delay_ns % 1000000000ull)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

static void free_thread_state(void *p) {
  if (p) munmap(p, sizeof(struct thread_stacks));
}

#if CTP_TSAN
/*
 * A ThreadSanitizer build (scripts/tsan) only: unw_backtrace's per-thread cache is
 * freed by a pthread key destructor that, like TSan's own, waits for the last round
 * of destructors, and then runs after TSan has torn the thread down: every exiting
 * thread that recorded a stack would crash. The cursor walk keeps no per-thread
 * cache; it returns the same frames (the first ones, in libtrace.so, are skipped).
 */
__attribute__((noinline)) static int cursor_backtrace(void **frames, int max) {
  unw_context_t uc;
  unw_cursor_t cur;
  if (getcontext_fn(&uc) != 0 || init_local_fn(&cur, &uc) != 0) return 0;
  int n = 0;
  while (n < max) {
    unw_word_t ip = 0;
    if (get_reg_fn(&cur, UNW_REG_IP, &ip) != 0 || !ip) break;
    frames[n++] = (void *)(uintptr_t)ip;
    if (step_fn(&cur) <= 0) break;
  }
  return n;
}
#endif

/* One throw-away unwind (ahead.c: libunwind's set-up before the first stack). */
void ctps_unwind_once(void) {
  void *frames[8];
  tls_busy = 1; /* nothing it might call is captured */
  (void)backtrace_fn(frames, 8);
  tls_busy = 0;
}

static void fork_prepare(void) { ctps_tree_fork_prepare(); }
static void fork_parent(void) { ctps_tree_fork_parent(); }
static void fork_child(void) {
  ctps_tree_fork_child();
  ctps_ahead_fork_child();
}

static void flush_own_period(void);

static void init(void) {
  __atomic_store_n(&init_begun, 1, __ATOMIC_RELEASE);
  int saved = errno;
  int m = read_mode();
  depth = read_depth();
  read_test_delay();
  if (m != CTPS_OFF) ctps_python_configure();
  if (m != CTPS_OFF) {
    void *lib = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    backtrace_fn = lib ? (int (*)(void **, int))dlsym(lib, "unw_backtrace") : NULL;
    if (backtrace_fn) { /* the cursor API is optional: without it, no site cache */
      getcontext_fn = (__typeof__(getcontext_fn))dlsym(lib, "_Ux86_64_getcontext");
      init_local_fn = (__typeof__(init_local_fn))dlsym(lib, "_ULx86_64_init_local");
      step_fn = (__typeof__(step_fn))dlsym(lib, "_ULx86_64_step");
      get_reg_fn = (__typeof__(get_reg_fn))dlsym(lib, "_ULx86_64_get_reg");
      if (!getcontext_fn || !init_local_fn || !step_fn || !get_reg_fn)
        getcontext_fn = NULL;
#if CTP_TSAN
      backtrace_fn = getcontext_fn ? cursor_backtrace : NULL;
#endif
    }
    if (!backtrace_fn) {
      ctp_warn("call stacks off: cannot load libunwind.so.8 (%s)", lib ? "no unw_backtrace" : dlerror());
      m = CTPS_OFF;
    } else if (ctps_object_range((const void *)&ctp_stack_here, &self_start, &self_end) < 0 ||
               pthread_key_create(&thread_key, free_thread_state) != 0) {
      ctp_warn("call stacks off: cannot set up");
      m = CTPS_OFF;
    } else {
      pthread_atfork(fork_prepare, fork_parent, fork_child);
      ctp_at_final_flush(flush_own_period);
      ctps_ahead_start(getcontext_fn != NULL); /* work ahead, on the writer thread */
    }
  }
  __atomic_store_n(&mode, m, __ATOMIC_RELEASE);
  errno = saved;
}

/* 1 when CUTRACE_STACKS turns stacks off (read quietly: init warns about bad values). */
static int stacks_off(void) {
  const char *v = getenv("CUTRACE_STACKS");
  return v && (!strcasecmp(v, "off") || !strcmp(v, "0") || !strcasecmp(v, "no"));
}

/*
 * Sets up at start-up (single-threaded) only in a process that has CUDA loaded already
 * (its file was opened at start: start.c; or CUTRACE_ALL_PROCESSES), or when stacks are
 * off (nothing to load). Any other process sets up when it first reaches CUDA
 * (ctp_stacks_prepare), so that one that never does (a launcher's shell, a Python
 * helper) never loads libunwind and liblzma.
 */
__attribute__((constructor)) static void stacks_constructor(void) {
  if (ctp_start()) {
    ctps_ahead_note_main_thread(); /* constructors run on the initial thread */
    if (!__atomic_load_n(&ctp_file_pending, __ATOMIC_ACQUIRE) || stacks_off())
      pthread_once(&init_once, init);
  }
}

void ctp_stacks_prepare(void) {
  if (CTP_LIKELY(__atomic_load_n(&mode, __ATOMIC_ACQUIRE) >= 0)) return;
  int saved = errno;
  pthread_once(&init_once, init);
  errno = saved;
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

/* The number of leading frames inside libtrace.so. */
static inline int self_frames(void *const *frames, int n) {
  int skip = 0;
  while (skip < n && (uint64_t)(uintptr_t)frames[skip] >= self_start &&
         (uint64_t)(uintptr_t)frames[skip] < self_end)
    skip++;
  return skip;
}

static struct thread_stacks *thread_state(void) {
  struct thread_stacks *s = tls_state;
  if (CTP_LIKELY(s)) return s;
  void *p = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  s = p;
  if (getcontext_fn && !ctps_ahead_main_stack(&s->stack_lo, &s->stack_hi) &&
      !ctps_stack_bounds(pthread_self(), &s->stack_lo, &s->stack_hi))
    s->stack_lo = s->stack_hi = 0;
  pthread_setspecific(thread_key, s);
  tls_state = s;
  return s;
}

static inline struct site_entry *site_of(struct thread_stacks *s, uint64_t ra, uint64_t cfa) {
  uint64_t h = (ra ^ (cfa * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
  return &s->sites[(h ^ (h >> 31)) & (SITE_ENTRIES - 1)];
}

/* The id of the entry's stack when its slots still hold the same return addresses,
 * else 0. */
static inline uint64_t site_check(const struct site_entry *e) {
  uint64_t pcs[SITE_FRAMES];
  for (uint32_t i = 0; i < e->n; i++)
    pcs[i] = *(const volatile uint64_t *)(uintptr_t)(e->cfa - 8 + e->slot_off[i]);
  return stack_hash(pcs, (int)e->n) == e->hash ? e->id : 0;
}

/*
 * Unwinds with libunwind's cursor, leaving out the leading libtrace.so frames:
 * the kept pcs (at most max) and, in slots, the address each was read from (the
 * unwinder's SP after the step, minus 8), 0 where that address does not hold the
 * pc (a signal frame) or lies outside [lo, hi). Returns the number kept, -1 when
 * the cursor fails.
 */
__attribute__((noinline)) static int unwind_with_slots(uint64_t *pcs, uint64_t *slots, int max,
                                                       uint64_t lo, uint64_t hi) {
  unw_context_t uc;
  unw_cursor_t cur;
  if (getcontext_fn(&uc) != 0 || init_local_fn(&cur, &uc) != 0) return -1;
  int n = 0, leading = 1;
  for (int steps = 0; n < max && steps < max + SKIP_MAX + 1; steps++) {
    if (step_fn(&cur) <= 0) break;
    unw_word_t ip = 0, sp = 0;
    if (get_reg_fn(&cur, UNW_REG_IP, &ip) != 0 || get_reg_fn(&cur, UNW_REG_SP, &sp) != 0 || !ip)
      break;
    if (leading && ip >= self_start && ip < self_end) continue;
    leading = 0;
    pcs[n] = ip;
    /* read only inside the thread's stack: a bad unwind must not fault */
    slots[n] = sp - 8 >= lo && sp <= hi && *(const uint64_t *)(uintptr_t)(sp - 8) == ip ? sp - 8 : 0;
    n++;
  }
  return n;
}

/* The mean time of the period's timed hits, clamped to CLAMP_FACTOR times the
 * thread's fastest (a preempted first sample was clamped against a larger minimum). */
static uint64_t robust_mean(const struct thread_stacks *s) {
  if (!s->sampled) return 0;
  uint64_t mean = s->sampled_ns / s->sampled, cap = s->min_sample_ns * CLAMP_FACTOR;
  return mean < cap ? mean : cap;
}

/* d ns of a hit's work (an unwind and a hash) clamped to CLAMP_FACTOR times the
 * thread's fastest timed hit, when it has one. */
static uint64_t clamped_sample(const struct thread_stacks *s, uint64_t d) {
  uint64_t cap = s->min_sample_ns * CLAMP_FACTOR;
  return cap && d > cap ? cap : d;
}

/* The thread's CPU time in ns (0 when it cannot be read). */
static uint64_t thread_cpu_ns(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The cost of a miss's tree work: wall_ns long, cpu_ns of the thread's CPU time. A
 * miss does unbounded work (a tree walk, allocation) that no fastest sample bounds, so
 * the time the thread was descheduled is taken out instead: the CPU time, never more
 * than the wall time (an unreadable CPU clock: the wall time). A thread preempted
 * inside a miss on a loaded machine (93 ms once) no longer makes the tracer the cause
 * of a gap; time blocked on the tree lock while another thread inserts is not counted.
 */
static uint64_t miss_cost(uint64_t wall_ns, uint64_t cpu_ns) {
  return cpu_ns && cpu_ns < wall_ns ? cpu_ns : wall_ns;
}

/* Adds a timed hit of d ns: clamped to CLAMP_FACTOR times the fastest so far. */
static inline void add_sample(struct thread_stacks *s, uint64_t d) {
  if (!d) d = 1;
  if (!s->min_sample_ns || d < s->min_sample_ns) s->min_sample_ns = d;
  uint64_t cap = s->min_sample_ns * CLAMP_FACTOR;
  s->sampled++;
  s->sampled_ns += d < cap ? d : cap;
}

/* When the period's last capture ended: measured when it was timed, else when it
 * began (an estimate of its end could reach past it, into the program's time). */
static uint64_t last_capture_end(const struct thread_stacks *s) {
  return s->last_end_ns ? s->last_end_ns : s->last_begin_ns;
}

/*
 * The thread's period is over; its last capture ended at end_ns. Writes one TRACER
 * record "stacks" whose duration is the estimated time of the period's captures (the
 * robust mean of the timed hits times the number of hits, plus the measured time of
 * the misses), ending at end_ns and starting no earlier than the period's first
 * capture. Starts the next period.
 */
static void end_period(struct thread_stacks *s, uint64_t end_ns) {
  uint64_t est = robust_mean(s) * (s->count - s->misses) + s->extra_ns;
  uint64_t span = end_ns > s->first_ns ? end_ns - s->first_ns : 0;
  if (est > span) est = span;
  ctp_emit_tracer("stacks", end_ns - est, end_ns, s->count);
  s->count = s->misses = s->sampled = s->sampled_ns = s->extra_ns = 0;
  s->period_end_ns = end_ns + ctp_cfg.flush_ns;
}

/* At the final flush: the exiting thread's last, unfinished period, ending at its
 * last capture (not now: the program may have done other things since). */
static void flush_own_period(void) {
  struct thread_stacks *s = tls_state;
  if (s && s->count) end_period(s, last_capture_end(s));
}

/*
 * After an unwind at a site: the stack (hash h, node id, kept frames) becomes the
 * site's; once the same stack came SITE_STREAK times in a row, its slots are found
 * with the cursor unwind (slower than unw_backtrace, so only for stacks that repeat)
 * and later captures only re-read them.
 */
static void remember_site(struct thread_stacks *s, struct site_entry *site, uint64_t ra,
                          uint64_t cfa, uint64_t h, uint64_t id, int kept) {
  if (site->cfa != cfa || site->ra != ra || site->hash != h || site->id != id || site->n) {
    *site = (struct site_entry){.ra = ra, .cfa = cfa, .id = id, .hash = h, .streak = 1};
    return;
  }
  if (++site->streak < SITE_STREAK) return; /* kept <= depth <= SITE_FRAMES here */
  /* a stack whose slots cannot be found (a signal frame, unwinders disagreeing) is
   * tried again only after many more captures */
  uint64_t pcs[SITE_FRAMES], slots[SITE_FRAMES];
  uint64_t base = cfa - 8; /* the site's own return address is the lowest slot */
  int n = unwind_with_slots(pcs, slots, depth, base, s->stack_hi);
  if (n != kept || stack_hash(pcs, n) != h) {
    site->streak = -1000;
    return;
  }
  for (int i = 0; i < n; i++)
    if (!slots[i] || slots[i] - base >= (1ull << 32)) {
      site->streak = -1000;
      return;
    }
  for (int i = 0; i < n; i++) site->slot_off[i] = (uint32_t)(slots[i] - base);
  site->n = (uint32_t)n;
}

uint64_t ctp_stack_here(int gpu_work) { return ctp_stack_at(gpu_work, NULL, NULL, 0); }

uint64_t ctp_stack_at(int gpu_work, const void *site_ra, const void *site_cfa, uint64_t after_ns) {
  int m = __atomic_load_n(&mode, __ATOMIC_ACQUIRE);
  if (CTP_UNLIKELY(m < 0)) {
    /* Not set up yet. A capture never sets up itself (it may run in a signal handler:
     * no dlopen there); it waits for a set-up begun elsewhere (ctp_stacks_prepare on
     * another thread: pthread_once's wait takes no lock and allocates nothing), or
     * records no stack when none began (CUDA reached unseen). */
    if (!__atomic_load_n(&init_begun, __ATOMIC_ACQUIRE) || tls_busy) return 0;
    pthread_once(&init_once, init);
    m = __atomic_load_n(&mode, __ATOMIC_ACQUIRE);
  }
  if (m == CTPS_OFF || (m == CTPS_LAUNCHES && !gpu_work) || tls_busy ||
      !__atomic_load_n(&ctp_enabled, __ATOMIC_RELAXED))
    return 0;
  tls_busy = 1;
  int saved = errno;
  uint64_t begin_ns = 0, id = 0;
  struct thread_stacks *s = thread_state();
  int timed = 0;
  if (s) {
    /* away from the tracer since the last capture: that period ends there */
    if (s->count && after_ns > (s->last_end_ns ? s->last_end_ns : s->last_begin_ns) + AWAY_NS)
      end_period(s, last_capture_end(s));
    timed = (++s->count % SAMPLE_EVERY) == 1; /* the period's first capture is timed */
    s->last_end_ns = 0;
    if (after_ns) s->last_begin_ns = after_ns;
  }
  if (timed) {
    begin_ns = ctp_now_ns();
    if (s->count == 1) s->first_ns = begin_ns;
    s->last_begin_ns = begin_ns;
    if (CTP_UNLIKELY(test_delay_ns) && !test_delay_miss) test_delay(s);
  }
  if (CTP_UNLIKELY(__atomic_load_n(&ctps_rewrite_pending, __ATOMIC_ACQUIRE))) {
    ctps_python_rewrite(); /* the PYCODE records the nodes name, first */
    ctps_tree_rewrite();
  }
  uint64_t ra = (uint64_t)(uintptr_t)site_ra, cfa = (uint64_t)(uintptr_t)site_cfa;
  struct site_entry *site = NULL;
  if (s && cfa && cfa - 8 >= s->stack_lo && cfa < s->stack_hi && depth <= SITE_FRAMES) {
    site = site_of(s, ra, cfa);
    if (site->cfa == cfa && site->ra == ra && site->n && (id = site_check(site)) != 0)
      goto done;
  }
  uint64_t pcs[CTPS_MAX_DEPTH];
  int kept = 0;
  if (s) {
    /* Unwinding costs per frame: ask for the frames kept plus the libtrace.so frames
     * seen so far, and again with room for more when there were more this time. */
    void *frames[CTPS_MAX_DEPTH + SKIP_MAX];
    int hint = __atomic_load_n(&skip_hint, __ATOMIC_RELAXED), want = depth + hint;
    int n = backtrace_fn(frames, want);
    int skip = self_frames(frames, n);
    if (CTP_UNLIKELY(skip > hint) && n == want) {
      __atomic_store_n(&skip_hint, skip < SKIP_MAX ? skip : SKIP_MAX, __ATOMIC_RELAXED);
      n = backtrace_fn(frames, depth + SKIP_MAX);
      skip = self_frames(frames, n);
    }
    kept = n - skip < depth ? n - skip : depth;
    for (int i = 0; i < kept; i++) pcs[i] = (uint64_t)(uintptr_t)frames[skip + i];
  }
  if (kept > 0) {
    uint64_t h = stack_hash(pcs, kept);
    struct cache_entry *e = &s->cache[h & (CACHE_ENTRIES - 1)];
    if (e->hash == h) {
      id = e->id;
    } else { /* a miss is always timed (see miss_cost) */
      uint64_t miss_ns = ctp_now_ns(), miss_cpu_ns = thread_cpu_ns();
      if (timed) s->extra_ns += clamped_sample(s, miss_ns - begin_ns); /* its unwind */
      if (CTP_UNLIKELY(test_delay_miss)) test_delay(s);
      if ((id = ctps_tree_insert(pcs, kept)) != 0) {
        e->hash = h;
        e->id = id;
      }
      s->misses++;
      s->last_end_ns = ctp_now_ns();
      s->extra_ns += miss_cost(s->last_end_ns - miss_ns, thread_cpu_ns() - miss_cpu_ns);
      timed = 0;
    }
    if (site && id)
      remember_site(s, site, ra, cfa, h, id, kept);
  }
done:
  if (id) id = ctps_python_merge(id, gpu_work, depth);
  if (timed) {
    uint64_t end_ns = ctp_now_ns();
    add_sample(s, end_ns - begin_ns);
    s->last_end_ns = end_ns;
    if (end_ns >= s->period_end_ns) {
      if (s->period_end_ns) end_period(s, end_ns);
      else s->period_end_ns = end_ns + ctp_cfg.flush_ns;
    }
  }
  errno = saved;
  tls_busy = 0;
  return id;
}
