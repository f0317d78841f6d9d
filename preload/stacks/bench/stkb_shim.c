/*
 * The call-stack code of libtrace.so (stacks.c, tree.c, modules.c) built alone into
 * a small shared library for bench_stacks: the recording core is replaced by
 * counters (records are counted by kind, not written), so the numbers are the
 * unwinding, hashing, cache and tree costs only. stkb_capture stands for an
 * intercepted entry point: its frame, like every frame of this library, is skipped.
 * The TRACER "stacks" records (the capture cost) are kept for test_stack_cost.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"

int ctp_enabled = 1;
int ctp_file_pending; /* 0: set up at start-up, as a process with CUDA loaded */
struct ctp_config ctp_cfg = {.flush_ns = 200000000ull};
static uint64_t kind_counts[64], next_string = 1;
static void (*final_flush)(void);
#define KEPT_TRACER 4096
static struct { uint64_t begin_ns, end_ns, amount; } kept_tracer[KEPT_TRACER];
static unsigned kept_tracer_n;

int ctp_start(void) { return 1; }

void ctp_at_final_flush(void (*fn)(void)) { final_flush = fn; }

void ctp_at_writer_round(void (*fn)(void)) { (void)fn; } /* no writer: stacks scan */

void ctp_at_new_file(void (*fn)(void)) { (void)fn; }

void ctp_emit(const ct_record *rec) { kind_counts[rec->kind & 63]++; }

uint64_t ctp_intern_n(const char *s, size_t len) {
  (void)s;
  (void)len;
  return 1;
}

uint64_t ctp_intern(const char *s) {
  (void)s;
  return __atomic_add_fetch(&next_string, 1, __ATOMIC_RELAXED);
}

void ctp_emit_tracer(const char *what, uint64_t begin_ns, uint64_t end_ns, uint64_t amount) {
  kind_counts[CT_KIND_TRACER]++;
  if (!strcmp(what, "stacks") && kept_tracer_n < KEPT_TRACER) {
    kept_tracer[kept_tracer_n].begin_ns = begin_ns;
    kept_tracer[kept_tracer_n].end_ns = end_ns;
    kept_tracer[kept_tracer_n++].amount = amount;
  }
}

void ctp_warn(const char *fmt, ...) {
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  fprintf(stderr, "cutrace: %s\n", line);
}

/* What an intercepted call does: the stack id of its caller, its call site known
 * (the site cache answers a repeated stack without unwinding). */
__attribute__((visibility("default"), noinline)) uint64_t stkb_capture(int gpu_work) {
  uint64_t id = ctp_stack_at(gpu_work, __builtin_return_address(0), __builtin_dwarf_cfa(), 0);
  __asm__ volatile("" ::: "memory");
  return id;
}

/* The same without the call site: every capture unwinds. */
__attribute__((visibility("default"), noinline)) uint64_t stkb_capture_unwind(int gpu_work) {
  uint64_t id = ctp_stack_here(gpu_work);
  __asm__ volatile("" ::: "memory");
  return id;
}

/* Records counted so far of one kind (CT_KIND_STACK, CT_KIND_MODULE, ...). */
__attribute__((visibility("default"))) uint64_t stkb_records(int kind) {
  return kind_counts[kind & 63];
}

/* stkb_capture for an intercepted call that returned at after_ns (what the hooks pass:
 * the capture cost is then placed knowing when the thread was away). */
__attribute__((visibility("default"), noinline)) uint64_t stkb_capture_after(int gpu_work,
                                                                            uint64_t after_ns) {
  uint64_t id = ctp_stack_at(gpu_work, __builtin_return_address(0), __builtin_dwarf_cfa(), after_ns);
  __asm__ volatile("" ::: "memory");
  return id;
}

/* The tracer's clock (CLOCK_MONOTONIC ns). */
__attribute__((visibility("default"))) uint64_t stkb_now_ns(void) { return ctp_now_ns(); }

/* CUTRACE_FLUSH_MS as the stacks code reads it (ctp_cfg.flush_ns). */
__attribute__((visibility("default"))) void stkb_set_flush_ns(uint64_t ns) { ctp_cfg.flush_ns = ns; }

/* What the final flush does for the calling thread: its last period is written. */
__attribute__((visibility("default"))) void stkb_final_flush(void) {
  if (final_flush) final_flush();
}

/* The TRACER "stacks" records kept so far: their number, and record i. */
__attribute__((visibility("default"))) unsigned stkb_stacks_records(void) { return kept_tracer_n; }

__attribute__((visibility("default"))) void stkb_stacks_record(unsigned i, uint64_t *begin_ns,
                                                               uint64_t *end_ns, uint64_t *amount) {
  *begin_ns = kept_tracer[i].begin_ns;
  *end_ns = kept_tracer[i].end_ns;
  *amount = kept_tracer[i].amount;
}
