/*
 * The work of a process's first call stack that depends on no stack, done ahead of
 * it on the writer thread (ctp_at_writer_round) once the process has recorded
 * something, so that the program's first launch does not pay for it: the list of
 * loaded modules (tree.c, modules.c), libunwind's one-time set-up (one throw-away
 * unwind, stacks.c) and the main thread's stack bounds (for the site cache; glibc
 * reads /proc/self/maps to find them). Also: a new file after an exec that failed
 * describes the stack tree again (ctp_at_new_file).
 *
 * The listing, the unwind and the bounds run with the ahead lock held (tree.c), which
 * fork() waits for and no program thread takes: libunwind calls dl_iterate_phdr (the
 * loader's lock) and pthread_getattr_np takes the target thread's own lock, and glibc
 * re-initialises neither in a fork child, which would then hang on its first stack (a
 * child forked from the main thread while the writer held that lock did:
 * test_forkstorm). A program thread's first stack needs only the tree lock, held by
 * this work just to install the listing, so it does not wait for the work.
 */
#include <pthread.h>

#include "stacks_internal.h"

static pthread_t main_thread; /* the thread that ran the constructor */
static int main_thread_known;
static int site_cache;        /* 1: the stack bounds are wanted (the cursor API loaded) */
static uint64_t main_stack_lo, main_stack_hi;
static int main_stack_known;  /* release-stored once they are set */

int ctps_stack_bounds(pthread_t t, uint64_t *lo, uint64_t *hi) {
  pthread_attr_t attr;
  int found = 0;
  if (pthread_getattr_np(t, &attr) == 0) {
    void *addr = NULL;
    size_t size = 0;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0 && addr && size) {
      *lo = (uint64_t)(uintptr_t)addr;
      *hi = *lo + size;
      found = 1;
    }
    pthread_attr_destroy(&attr);
  }
  return found;
}

/* With the ahead lock held (tree.c): libunwind's set-up, the main thread's bounds. */
static void with_ahead_lock(void) {
  ctps_unwind_once();
  if (main_thread_known && site_cache && !__atomic_load_n(&main_stack_known, __ATOMIC_ACQUIRE) &&
      ctps_stack_bounds(main_thread, &main_stack_lo, &main_stack_hi))
    __atomic_store_n(&main_stack_known, 1, __ATOMIC_RELEASE);
}

/* On the writer thread after its rounds, once the process recorded something. Once. */
static void ahead_of_need(void) {
  static int done;
  if (__atomic_load_n(&done, __ATOMIC_ACQUIRE)) return;
  ctps_tree_scan_modules_ahead(with_ahead_lock);
  __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
}

/* An exec failed and tracing goes on into a new file: describe the tree again there. */
static void new_file(void) {
  ctps_python_new_file();
  ctps_tree_new_file();
}

void ctps_ahead_note_main_thread(void) {
  main_thread = pthread_self();
  main_thread_known = 1;
}

void ctps_ahead_start(int want_bounds) {
  site_cache = want_bounds;
  ctp_at_writer_round(ahead_of_need);
  ctp_at_new_file(new_file);
}

int ctps_ahead_main_stack(uint64_t *lo, uint64_t *hi) {
  if (!main_thread_known || !__atomic_load_n(&main_stack_known, __ATOMIC_ACQUIRE) ||
      !pthread_equal(pthread_self(), main_thread))
    return 0;
  *lo = main_stack_lo;
  *hi = main_stack_hi;
  return 1;
}

void ctps_ahead_fork_child(void) {
  if (main_thread_known && !pthread_equal(pthread_self(), main_thread)) {
    main_thread = pthread_self();
    __atomic_store_n(&main_stack_known, 0, __ATOMIC_RELEASE);
  }
}
