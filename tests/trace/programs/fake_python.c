/*
 * A program that looks like CPython 3.11 to libtrace.so's Python frames
 * (preload/stacks/python.c) without being it: it exports Py_Version,
 * PyGILState_GetThisThreadState, PyCode_Type, PyUnicode_Type, PyBytes_Type and a
 * _PyEval_EvalFrameDefault, and builds by hand the thread state, frames, code
 * objects, strings and line table at 3.11's offsets (python_layouts.h). Then it
 * launches (cudaMemset, found with dlopen/dlsym as ctypes does) from inside its
 * _PyEval_EvalFrameDefault.
 *
 * usage: fake_python good|badcode|unmapped
 *   good      3 frames + 1 not started; the line table (first line 100) holds every
 *             entry form: short (100), one-line +1 (101), no-column +10 (111), long
 *             -5 (106), no location, one-line +2 (108), long +100 with a two-byte
 *             varint (208). Frames innermost first: fn_a at byte 8 (line 106), fn_b
 *             at 18 (208), "fn_é" (a latin-1 str) at 14 (no location: line 0), and
 *             a frame not yet started (left out). One evaluation: the frames replace
 *             the _PyEval_EvalFrameDefault frame.
 *   badcode   the innermost frame's code object has another type: Python frames off
 *   unmapped  the current frame lies in an unreadable page: Python frames off
 * Prints "memset 0" (the call's result), the same traced or not.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define EXPORT __attribute__((visibility("default"), used))

EXPORT const unsigned long Py_Version = 0x030B07F0; /* 3.11.7 final */
EXPORT char PyCode_Type[416], PyUnicode_Type[416], PyBytes_Type[416];

static _Alignas(16) unsigned char tstate[256], cframe[64], frames[4][128];
static _Alignas(16) unsigned char codes[4][256], other_type[416];
static _Alignas(16) unsigned char strs[5][128], table[128];

EXPORT void *PyGILState_GetThisThreadState(void) { return tstate; }

static void put64(unsigned char *obj, int off, uint64_t v) { memcpy(obj + off, &v, 8); }
static void put32(unsigned char *obj, int off, uint32_t v) { memcpy(obj + off, &v, 4); }

/* A compact str: ASCII (data after 48 bytes) or latin-1 (after 72). */
static unsigned char *make_str(int i, const char *latin1, int ascii) {
  unsigned char *s = strs[i];
  size_t n = strlen(latin1);
  put64(s, 8, (uint64_t)(uintptr_t)PyUnicode_Type);
  put64(s, 16, n);
  put32(s, 32, (1u << 2) | (1u << 5) | ((unsigned)ascii << 6)); /* kind 1, compact */
  memcpy(s + (ascii ? 48 : 72), latin1, n);
  return s;
}

static void make_code(int i, unsigned char *name, unsigned char *file) {
  unsigned char *c = codes[i];
  put64(c, 8, (uint64_t)(uintptr_t)PyCode_Type);
  put64(c, 16, 16);          /* ob_size: 16 code units = 32 bytes */
  put32(c, 72, 100);         /* co_firstlineno */
  put64(c, 112, (uint64_t)(uintptr_t)file);
  put64(c, 120, (uint64_t)(uintptr_t)name);
  put64(c, 128, (uint64_t)(uintptr_t)name);
  put64(c, 136, (uint64_t)(uintptr_t)table);
  put32(c, 168, 0);          /* _co_firsttraceable */
}

/* Frame i running code c at byte offset off (3.11: f_code 32, previous 48,
 * prev_instr 56, is_entry 68, owner 69). */
static void make_frame(int i, unsigned char *c, int64_t off, int entry, unsigned char *prev) {
  unsigned char *f = frames[i];
  put64(f, 32, (uint64_t)(uintptr_t)c);
  put64(f, 48, (uint64_t)(uintptr_t)prev);
  put64(f, 56, (uint64_t)(uintptr_t)(c + 184 + off)); /* _co_code_adaptive at 184 */
  f[68] = (unsigned char)entry;
  f[69] = 0;
}

static void build(const char *mode) {
  static const unsigned char lt[] = {
      0x80, 0x00,                   /* short form, 1 unit: line 100 */
      0x80 | 11 << 3 | 1, 0, 4,     /* one-line +1, 2 units: 101 */
      0x80 | 13 << 3 | 0, 20,       /* no columns, +10: 111 */
      0x80 | 14 << 3 | 2, 11, 0, 1, 2, /* long, -5, 3 units: 106 */
      0x80 | 15 << 3 | 0,           /* no location */
      0x80 | 12 << 3 | 0, 0, 3,     /* one-line +2: 108 */
      0x80 | 14 << 3 | 0, 0x48, 0x03, 0, 1, 2, /* long, +100 (two-byte varint): 208 */
  };
  memcpy(table + 32, lt, sizeof lt);
  put64(table, 8, (uint64_t)(uintptr_t)PyBytes_Type);
  put64(table, 16, sizeof lt);
  unsigned char *file = make_str(0, "/work/fake.py", 1);
  make_code(0, make_str(1, "fn_a", 1), file);
  make_code(1, make_str(2, "fn_b", 1), file);
  make_code(2, make_str(3, "fn_\xe9", 0), file);
  make_code(3, make_str(4, "not_started", 1), file);
  make_frame(3, codes[3], -2, 0, NULL);        /* outermost: not started yet */
  make_frame(2, codes[2], 14, 1, frames[3]);   /* the evaluation's entry frame */
  make_frame(1, codes[1], 18, 0, frames[2]);
  make_frame(0, codes[0], 8, 0, frames[1]);
  put64(cframe, 8, (uint64_t)(uintptr_t)frames[0]);
  put64(tstate, 56, (uint64_t)(uintptr_t)cframe);
  if (!strcmp(mode, "badcode")) {
    put64(codes[0], 8, (uint64_t)(uintptr_t)other_type);
  } else if (!strcmp(mode, "unmapped")) {
    void *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    put64(cframe, 8, (uint64_t)(uintptr_t)page + 64);
  }
}

static int (*memset_fn)(void *, int, size_t);

__attribute__((noinline)) static int launch(void *p) {
  int rc = memset_fn(p, 1, 4096);
  __asm__ volatile("" ::: "memory");
  return rc;
}

/* The interpreter's evaluator, as far as the native stack shows. */
EXPORT __attribute__((noinline)) int _PyEval_EvalFrameDefault(void *p) {
  int rc = launch(p);
  __asm__ volatile("" ::: "memory");
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  build(argv[1]);
  void *rt = dlopen("libcudart.so.13", RTLD_NOW | RTLD_LOCAL);
  int (*malloc_fn)(void **, size_t) = rt ? (int (*)(void **, size_t))dlsym(rt, "cudaMalloc") : NULL;
  memset_fn = rt ? (int (*)(void *, int, size_t))dlsym(rt, "cudaMemset") : NULL;
  void *p = NULL;
  if (!malloc_fn || !memset_fn || malloc_fn(&p, 4096)) return 3;
  int rc = 0;
  for (int i = 0; i < 3; i++) rc |= _PyEval_EvalFrameDefault(p);
  printf("memset %d\n", rc);
  return 0;
}
