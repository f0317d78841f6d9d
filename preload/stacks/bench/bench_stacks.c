/*
 * Cost of ctp_stack_here (preload/stacks/) per call, without the rest of the tracer
 * (stkb_shim.c counts records instead of writing them). Not a test: the numbers
 * go to docs/performance.md ("Call stacks").
 *
 * usage: CUTRACE_STACK_DEPTH=D bench_stacks [hit|miss|both] [calls]
 *   hit    the same stack again and again from D levels of recursion, so that D
 *          frames are kept: answered by the site cache (its return-address slots
 *          re-read), then without the call site (unwound, the stack cache answers)
 *   miss   512 stacks never seen before (64 call sites x 8 callers, each under the
 *          same D-level recursion): unwind, cache miss, tree lock, new nodes
 * With CUTRACE_STACKS=off it measures the disabled path. Under callgrind, use
 * --toggle-collect=stkb_capture and divide by the calls printed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t stkb_capture(int gpu_work);
uint64_t stkb_capture_unwind(int gpu_work);
uint64_t stkb_records(int kind);

#define NOINLINE __attribute__((noinline, noclone))
#define KIND_STACK 17
#define KIND_MODULE 18

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static volatile uint64_t sink;
static long calls = 200000;

/* 64 distinct call sites: case i returns to its own address. */
/* (the asm text differs per case, so the compiler cannot merge the calls) */
#define SITE(i) case i: sink += stkb_capture(1); __asm__ volatile("# site " #i ::: "memory"); break;
#define SITES8(b) SITE(b) SITE(b + 1) SITE(b + 2) SITE(b + 3) SITE(b + 4) SITE(b + 5) \
  SITE(b + 6) SITE(b + 7)
NOINLINE void site(int i) {
  switch (i) {
    SITES8(0) SITES8(8) SITES8(16) SITES8(24) SITES8(32) SITES8(40) SITES8(48) SITES8(56)
  }
  __asm__ volatile("" ::: "memory");
}

/* 8 distinct callers of site(). */
#define CALLER(n) NOINLINE void caller##n(void) { for (int i = 0; i < 64; i++) { site(i); \
  __asm__ volatile("# caller " #n ::: "memory"); } }
CALLER(0) CALLER(1) CALLER(2) CALLER(3) CALLER(4) CALLER(5) CALLER(6) CALLER(7)
static void (*const callers[8])(void) = {caller0, caller1, caller2, caller3,
                                         caller4, caller5, caller6, caller7};

NOINLINE void hit_loop(void) {
  uint64_t t0 = now_ns();
  for (long i = 0; i < calls; i++) sink += stkb_capture(1);
  uint64_t t1 = now_ns();
  printf("hit: %ld calls, %.1f ns/call\n", calls, (double)(t1 - t0) / (double)calls);
  t0 = now_ns();
  for (long i = 0; i < calls; i++) sink += stkb_capture_unwind(1);
  t1 = now_ns();
  printf("hit, unwinding: %ld calls, %.1f ns/call\n", calls, (double)(t1 - t0) / (double)calls);
}

NOINLINE void miss_loop(void) {
  uint64_t nodes0 = stkb_records(KIND_STACK);
  uint64_t t0 = now_ns();
  for (int c = 0; c < 8; c++) callers[c]();
  uint64_t t1 = now_ns();
  printf("miss: 512 new stacks, %.1f ns/call, %llu new nodes\n", (double)(t1 - t0) / 512.0,
         (unsigned long long)(stkb_records(KIND_STACK) - nodes0));
}

/* Recurses `level` times, then runs the scenario. */
NOINLINE int recurse(int level, const char *what) {
  if (level > 0) {
    int r = recurse(level - 1, what);
    __asm__ volatile("" ::: "memory");
    return r + 1;
  }
  sink += stkb_capture(1); /* warm-up: libunwind's caches, the MODULE scan */
  if (strcmp(what, "miss")) hit_loop();
  if (strcmp(what, "hit")) miss_loop();
  return 0;
}

int main(int argc, char **argv) {
  const char *what = argc > 1 ? argv[1] : "both";
  if (argc > 2) calls = atol(argv[2]);
  const char *d = getenv("CUTRACE_STACK_DEPTH");
  int depth = d ? atoi(d) : 32;
  recurse(depth > 0 ? depth : 32, what);
  printf("records: %llu STACK, %llu MODULE\n", (unsigned long long)stkb_records(KIND_STACK),
         (unsigned long long)stkb_records(KIND_MODULE));
  return 0;
}
