/*
 * Python frames in call stacks (docs/preload.md, "Python frames"): when the process
 * runs CPython 3.11, 3.12 or 3.13, each captured stack also holds the calling thread's
 * Python frames (function, file, line), read from the interpreter's own structures.
 *
 * What is read, and why it is safe:
 * - The interpreter is looked for once, lazily, at the first capture of a call that
 *   queues GPU work (never at start-up): dlsym(RTLD_DEFAULT) of Py_Version,
 *   PyGILState_GetThisThreadState, PyCode_Type, PyUnicode_Type, PyBytes_Type,
 *   _PyEval_EvalFrameDefault (its size from its ELF symbol) and, for 3.13,
 *   _PyRuntime, whose first member is _Py_DebugOffsets (python_layouts.h).
 * - The only interpreter function called is PyGILState_GetThisThreadState: it reads
 *   a thread-specific key and nothing else (no allocation, lock or Python code), and
 *   gives the calling thread's state with or without the GIL.
 * - The frames read are the calling thread's own: while the thread is inside an
 *   intercepted call none of them can change or be freed, whether it holds the GIL
 *   or not, and each frame keeps its code object alive.
 * - Until the frames of a first stack have been checked (ctpy_read, which cannot
 *   fault, and the type checks of python_code.c), every read is a checked one; after
 *   that the frame walk uses plain loads. Every code object is checked when first
 *   seen. Any mismatch turns Python frames off for the process, said once in the
 *   trace (a TRACER record "python frames off: <reason>") and on stderr.
 *
 * Merging (py-spy's way): walking the thread's frames from the innermost, the frames
 * run by one _PyEval_EvalFrameDefault call end at its entry frame (3.11: the frame
 * with is_entry; 3.12+: the FRAME_OWNED_BY_CSTACK shim before it, which is skipped).
 * In the native stack the k-th _PyEval_EvalFrameDefault frame (innermost first) is
 * replaced by the k-th group; groups the native stack did not reach (it was cut at
 * CUTRACE_STACK_DEPTH, or the evaluator could not be found) follow its outermost
 * frame. The merged stack goes into the same tree: a Python frame is a STACK node
 * whose pc carries CT_STACK_PY, its PYCODE id and its line (format.h).
 *
 * Cost per capture: the thread-state getter, then per Python frame (at most
 * CUTRACE_STACK_DEPTH) six loads and a hash step; a per-thread cache maps the hash
 * of the native stack's id and each frame's (code, instruction offset, name, file)
 * to the merged stack's id. Lines are decoded and the tree is entered only on a miss.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>

#include "core/core.h"
#include "python_internal.h"
#include "stacks_internal.h"

#define TLS __thread __attribute__((tls_model("initial-exec")))
#define CACHE_ENTRIES 1024 /* per thread, a power of two */

enum { PY_UNSEEN = -1, PY_OFF = 0, PY_ON = 1 };

struct py_frame {
  uint64_t code, offset, qualname, filename;
  int owner, last; /* last: the entry frame of its evaluation (its group ends) */
};

/* One thread's cache, and its scratch room for a walk (kept off the thread's stack). */
struct py_cache {
  struct {
    uint64_t hash, id;
  } e[CACHE_ENTRIES];
  struct py_frame frames[CTPS_MAX_DEPTH];
};

static int wanted = 1;           /* CUTRACE_PYTHON: 1 auto, 0 off */
static int state = PY_UNSEEN;    /* PY_* */
static int checked;              /* 1 once a stack's frames passed the checked reads */
static pthread_once_t find_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t py_lock = PTHREAD_MUTEX_INITIALIZER;
static void *(*get_tstate)(void);
static uint64_t eval_start, eval_end; /* _PyEval_EvalFrameDefault's code */
static int rewrite_pending;
static pthread_key_t cache_key;
static TLS struct py_cache *tls_cache;

void ctps_python_configure(void) {
  const char *v = getenv("CUTRACE_PYTHON");
  if (!v || !*v || !strcasecmp(v, "auto") || !strcasecmp(v, "on") || !strcmp(v, "1")) return;
  if (!strcasecmp(v, "off") || !strcmp(v, "0") || !strcasecmp(v, "no")) {
    wanted = 0;
    return;
  }
  ctp_warn("CUTRACE_PYTHON='%.64s' is not auto or off; using auto", v);
}

/* Turns Python frames off for the process, saying why once (trace and stderr). */
static void disable(const char *why) {
  if (__atomic_exchange_n(&state, PY_OFF, __ATOMIC_ACQ_REL) == PY_OFF) return;
  char what[160];
  snprintf(what, sizeof what, "python frames off: %s", why);
  uint64_t now = ctp_now_ns();
  ctp_emit_tracer(what, now, now, ctpy.version);
  ctp_warn("%s", what);
}

static void free_cache(void *p) {
  if (p) munmap(p, sizeof(struct py_cache));
}

static void fork_prepare(void) { pthread_mutex_lock(&py_lock); }
static void fork_parent(void) { pthread_mutex_unlock(&py_lock); }
static void fork_child(void) {
  pthread_mutex_init(&py_lock, NULL);
  __atomic_store_n(&rewrite_pending, 1, __ATOMIC_RELEASE);
}

/* 3.13+: the offsets from _PyRuntime.debug_offsets. Returns NULL or why not. */
static const char *read_debug_offsets(struct ctpy_layout *L) {
  uint64_t rt = (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "_PyRuntime"), d[DO_COUNT];
  if (!rt || ctpy_read(rt, d, sizeof d)) return "no _PyRuntime";
  if (memcmp(d, "xdebugpy", 8)) return "_PyRuntime.debug_offsets has no cookie";
  if (d[DO_VERSION] != ctpy.version) return "_PyRuntime.debug_offsets is of another version";
  if (d[DO_FREE_THREADED]) return "free-threaded builds are not supported";
  const uint64_t want[] = {d[DO_TS_CURRENT_FRAME], d[DO_FR_PREVIOUS], d[DO_FR_EXECUTABLE],
                           d[DO_FR_INSTR_PTR], d[DO_FR_OWNER], d[DO_CO_FILENAME],
                           d[DO_CO_QUALNAME], d[DO_CO_LINETABLE], d[DO_CO_FIRSTLINENO],
                           d[DO_CO_CODE_ADAPTIVE], d[DO_OB_TYPE], d[DO_BYTES_OB_SIZE],
                           d[DO_BYTES_OB_SVAL], d[DO_STR_STATE], d[DO_STR_LENGTH],
                           d[DO_STR_ASCII_SIZE]};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    if (want[i] > 4096) return "_PyRuntime.debug_offsets holds unlikely offsets";
  L->ts_cframe = -1;
  L->current_frame = (int32_t)d[DO_TS_CURRENT_FRAME];
  L->fr_previous = (int32_t)d[DO_FR_PREVIOUS];
  L->fr_code = (int32_t)d[DO_FR_EXECUTABLE];
  L->fr_instr = (int32_t)d[DO_FR_INSTR_PTR];
  L->fr_owner = (int32_t)d[DO_FR_OWNER];
  L->co_filename = (int32_t)d[DO_CO_FILENAME];
  L->co_qualname = (int32_t)d[DO_CO_QUALNAME];
  L->co_linetable = (int32_t)d[DO_CO_LINETABLE];
  L->co_firstlineno = (int32_t)d[DO_CO_FIRSTLINENO];
  L->co_code_adaptive = (int32_t)d[DO_CO_CODE_ADAPTIVE];
  L->ob_type = (int32_t)d[DO_OB_TYPE];
  L->ob_size = (int32_t)d[DO_BYTES_OB_SIZE];
  L->bytes_sval = (int32_t)d[DO_BYTES_OB_SVAL];
  L->str_state = (int32_t)d[DO_STR_STATE];
  L->str_length = (int32_t)d[DO_STR_LENGTH];
  L->ascii_size = (int32_t)d[DO_STR_ASCII_SIZE];
  return NULL;
}

/* Looks for the interpreter (once, at the first capture of a launch). */
static void find(void) {
  int saved = errno;
  get_tstate = (void *(*)(void))dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
  void *ver = dlsym(RTLD_DEFAULT, "Py_Version");
  ctpy.code_type = (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "PyCode_Type");
  ctpy.str_type = (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "PyUnicode_Type");
  ctpy.bytes_type = (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "PyBytes_Type");
  void *eval = dlsym(RTLD_DEFAULT, "_PyEval_EvalFrameDefault");
  uint32_t version = 0;
  const char *why = NULL;
  if (!get_tstate || !ctpy.code_type) { /* no interpreter in this process: nothing to say */
    __atomic_store_n(&state, PY_OFF, __ATOMIC_RELEASE);
    errno = saved;
    return;
  }
  if (!ver || ctpy_read((uint64_t)(uintptr_t)ver, &version, sizeof version)) {
    why = "Python older than 3.11 (no Py_Version)";
  } else {
    ctpy.version = version;
    unsigned major = version >> 24, minor = (version >> 16) & 0xff;
    for (size_t i = 0; i < sizeof ctpy_layouts / sizeof ctpy_layouts[0]; i++)
      if (major == 3 && (unsigned)ctpy_layouts[i].minor == minor) ctpy.L = ctpy_layouts[i];
    if (!ctpy.L.minor) why = "this Python version is not supported (3.11 to 3.13 are)";
    else if (!ctpy.str_type || !ctpy.bytes_type) why = "no PyUnicode_Type or PyBytes_Type";
    else if (minor >= 13) why = read_debug_offsets(&ctpy.L);
  }
  if (!why && pthread_key_create(&cache_key, free_cache) != 0) why = "cannot set up";
  if (why) {
    disable(why);
    errno = saved;
    return;
  }
  Dl_info info;
  const ElfW(Sym) *sym = NULL;
  if (eval && dladdr1(eval, &info, (void **)&sym, RTLD_DL_SYMENT) && sym && sym->st_size) {
    eval_start = (uint64_t)(uintptr_t)eval;
    eval_end = eval_start + sym->st_size;
  }
  pthread_atfork(fork_prepare, fork_parent, fork_child);
  char what[64];
  snprintf(what, sizeof what, "python %u.%u frames", version >> 24, (version >> 16) & 0xff);
  uint64_t now = ctp_now_ns();
  ctp_emit_tracer(what, now, now, version);
  __atomic_store_n(&state, PY_ON, __ATOMIC_RELEASE);
  errno = saved;
}

/* One word (checked or plain load). Returns 0, -1 when a checked read fails. */
static inline int rd(uint64_t addr, uint64_t *v, int safe) {
  if (safe) return ctpy_read_u64(addr, v);
  *v = *(const uint64_t *)(uintptr_t)addr;
  return 0;
}

static inline int rd8(uint64_t addr, uint8_t *v, int safe) {
  if (safe) return ctpy_read(addr, v, 1);
  *v = *(const uint8_t *)(uintptr_t)addr;
  return 0;
}

/*
 * The thread's Python frames, innermost first, at most max (shims left out), into
 * fr; *h gets their hash mixed into seed. Returns the count, -1 when a checked read
 * failed.
 */
static inline __attribute__((always_inline)) int walk(uint64_t ts, struct py_frame *fr, int max,
                                                      int safe, uint64_t *h) {
  const struct ctpy_layout *L = &ctpy.L;
  uint64_t f = 0, x = *h;
  if (L->ts_cframe >= 0) {
    uint64_t cf = 0;
    if (rd(ts + (uint64_t)L->ts_cframe, &cf, safe)) return -1;
    if (!cf) return 0; /* a thread state not set up yet: no frames */
    if (rd(cf + (uint64_t)L->current_frame, &f, safe)) return -1;
  } else if (rd(ts + (uint64_t)L->current_frame, &f, safe)) {
    return -1;
  }
  int n = 0;
  for (int steps = 0; f && n < max && steps < 2 * max + 16; steps++) {
    uint8_t owner = 0, entry = 0;
    uint64_t prev = 0;
    if (rd8(f + (uint64_t)L->fr_owner, &owner, safe) || rd(f + (uint64_t)L->fr_previous, &prev, safe))
      return -1;
    if (L->owner_cstack >= 0 && owner == L->owner_cstack) { /* an evaluation's entry shim */
      if (n) fr[n - 1].last = 1;
      f = prev;
      continue;
    }
    struct py_frame *p = &fr[n];
    uint64_t instr = 0;
    if (rd(f + (uint64_t)L->fr_code, &p->code, safe) || rd(f + (uint64_t)L->fr_instr, &instr, safe) ||
        (L->fr_is_entry >= 0 && rd8(f + (uint64_t)L->fr_is_entry, &entry, safe)) ||
        rd(p->code + (uint64_t)L->co_qualname, &p->qualname, safe) ||
        rd(p->code + (uint64_t)L->co_filename, &p->filename, safe))
      return -1;
    p->offset = instr - (p->code + (uint64_t)L->co_code_adaptive);
    p->owner = owner;
    p->last = entry != 0;
    x ^= p->code + (p->offset << 40) + (uint64_t)p->last;
    x *= 0x100000001b3ull;
    x ^= (p->qualname ^ (p->filename << 7)) + (x >> 29);
    x *= 0xff51afd7ed558ccdull;
    n++;
    f = prev;
  }
  *h = x ^ (uint64_t)n;
  return n;
}

/* The walk with checked reads (until a first stack passed) and with plain loads. */
static __attribute__((noinline)) int walk_checked(uint64_t ts, struct py_frame *fr, int max,
                                                  uint64_t *h) {
  return walk(ts, fr, max, 1, h);
}

static int walk_plain(uint64_t ts, struct py_frame *fr, int max, uint64_t *h) {
  return walk(ts, fr, max, 0, h);
}

/* Whether native pc lies in _PyEval_EvalFrameDefault (a return address into it). */
static inline int is_eval(uint64_t pc) { return pc > eval_start && pc <= eval_end; }

/* The slow path (Python lock held): checks and names the frames, merges them into
 * the native stack and enters the result into the tree. 0 when turned off. */
static uint64_t merge_new(uint64_t native_id, const struct py_frame *fr, int n) {
  static uint64_t py[CTPS_MAX_DEPTH], pcs[CTPS_MAX_DEPTH], out[CTPS_MAX_DEPTH]; /* lock held */
  static int last[CTPS_MAX_DEPTH];
  int npy = 0;
  for (int i = 0; i < n; i++) {
    const char *why = NULL;
    int32_t first = 0;
    int64_t off = (int64_t)fr[i].offset; /* before the first instruction: not started */
    if (off >= 0 && ctpy_read(fr[i].code + (uint64_t)ctpy.L.co_firsttraceable, &first, sizeof first)) {
      disable("a code object cannot be read");
      return 0;
    }
    if (off < 0 || (fr[i].owner != ctpy.L.owner_generator && off < 2 * (int64_t)(first > 0 ? first : 0))) {
      if (npy && fr[i].last) last[npy - 1] = 1; /* incomplete: not started yet */
      continue;
    }
    uint64_t units = 0, id = ctpy_code_id(fr[i].code, &units, &why);
    if (!id || off > 2 * (int64_t)units) {
      disable(why ? why : "a frame's instruction lies outside its code");
      return 0;
    }
    py[npy] = CT_STACK_PY_PC(id, ctpy_code_line(fr[i].code, fr[i].offset));
    last[npy++] = fr[i].last;
  }
  int np = ctps_tree_path(native_id, pcs, CTPS_MAX_DEPTH), nout = 0, next = 0;
  for (int i = 0; i < np && nout < CTPS_MAX_DEPTH; i++) {
    if (!is_eval(pcs[i]) || next >= npy) {
      out[nout++] = pcs[i];
      continue;
    }
    do out[nout++] = py[next]; /* the frames this evaluation runs */
    while (!last[next++] && next < npy && nout < CTPS_MAX_DEPTH);
  }
  while (next < npy && nout < CTPS_MAX_DEPTH) out[nout++] = py[next++];
  __atomic_store_n(&checked, 1, __ATOMIC_RELEASE);
  return nout ? ctps_tree_insert(out, nout) : native_id;
}

/* The capture's Python part (Python frames on). */
static __attribute__((noinline)) uint64_t merge_python(uint64_t native_id, int depth) {
  int saved = errno;
  uint64_t ts = (uint64_t)(uintptr_t)get_tstate(), id = native_id;
  struct py_cache *c = tls_cache;
  if (!ts) goto out;
  if (CTP_UNLIKELY(!c)) {
    void *p = mmap(NULL, sizeof *c, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) goto out;
    tls_cache = c = p;
    pthread_setspecific(cache_key, c);
  }
  struct py_frame *fr = c->frames;
  int safe = !__atomic_load_n(&checked, __ATOMIC_ACQUIRE);
  uint64_t h = native_id * 0x9e3779b97f4a7c15ull;
  int max = depth < CTPS_MAX_DEPTH ? depth : CTPS_MAX_DEPTH;
  int n = safe ? walk_checked(ts, fr, max, &h) : walk_plain(ts, fr, max, &h);
  if (n < 0) {
    disable("a thread's frames cannot be read");
    goto out;
  }
  if (n == 0) goto out;
  h = h ? h : 1;
  if (c->e[h & (CACHE_ENTRIES - 1)].hash == h) {
    id = c->e[h & (CACHE_ENTRIES - 1)].id;
    goto out;
  }
  pthread_mutex_lock(&py_lock);
  uint64_t merged = __atomic_load_n(&state, __ATOMIC_ACQUIRE) == PY_ON ? merge_new(native_id, fr, n) : 0;
  pthread_mutex_unlock(&py_lock);
  if (merged) {
    c->e[h & (CACHE_ENTRIES - 1)].hash = h;
    c->e[h & (CACHE_ENTRIES - 1)].id = merged;
    id = merged;
  }
out:
  errno = saved;
  return id;
}

uint64_t ctps_python_merge(uint64_t native_id, int gpu_work, int depth) {
  int st = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
  if (CTP_LIKELY(st == PY_OFF) || !native_id) return native_id; /* not Python: a load */
  if (CTP_UNLIKELY(st == PY_UNSEEN)) {
    if (!wanted || !gpu_work) return native_id;
    pthread_once(&find_once, find);
    if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != PY_ON) return native_id;
  }
  return merge_python(native_id, depth);
}

void ctps_python_new_file(void) { __atomic_store_n(&rewrite_pending, 1, __ATOMIC_RELEASE); }

void ctps_python_rewrite(void) {
  if (!__atomic_load_n(&rewrite_pending, __ATOMIC_ACQUIRE)) return;
  pthread_mutex_lock(&py_lock);
  ctpy_codes_rewrite();
  __atomic_store_n(&rewrite_pending, 0, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&py_lock);
}
