/*
 * The rows of `cutrace report --by callsite` / `--by stack`, shared by the reading
 * (report_callsite.c) and the output (report_callsite_out.c). Not a public interface:
 * report_callsite.h is.
 */
#ifndef CUTRACE_REPORT_CALLSITE_INTERNAL_H
#define CUTRACE_REPORT_CALLSITE_INTERNAL_H

#include <stdint.h>

#include "report_callsite.h"
#include "stats.h"

/* Sums of one stack or one row. */
typedef struct sums {
  uint64_t calls, cpu_ns, gpu_ns, kernels, activities;
} sums;

/* One symbolised frame, copied so that it outlives the file's stack table. */
typedef struct frame_copy {
  char *function, *file, *module;
  unsigned line;
  const char *note; /* static: see ct_frame */
} frame_copy;

typedef struct site_row {
  uint64_t index;          /* insertion order: the key of its kernels */
  sums s;
  uint64_t shown_gpu_ns;   /* GPU time of the stack shown for the row */
  int has_frames;
  frame_copy *frames;      /* the stack shown: the one with the most GPU time */
  unsigned nframes, site;
} site_row;

typedef struct kernel_sum {
  uint64_t gpu_ns, count;
} kernel_sum;

struct ct_callsites {
  int by_stack;
  ct_map *rows;    /* row key -> site_row */
  ct_map *kernels; /* row index (8 bytes) + kernel name -> kernel_sum */
  uint64_t calls, calls_with_stack;
  sums without;    /* work of calls without a stack */
};

#endif
