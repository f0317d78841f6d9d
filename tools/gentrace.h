/*
 * cutrace-gentrace's record writing, shared by its generators (gentrace.c: the launch
 * loop, --drops, --ranged, --mixed; gentrace_churn.c: --churn). Each function exits the
 * helper with a message when the file cannot be written (a test helper, not library code).
 */
#ifndef CUTRACE_GENTRACE_H
#define CUTRACE_GENTRACE_H

#include <stddef.h>
#include <stdint.h>

#include "codec.h"

/* Writes r, counts it for the END record, and clears r. */
void gt_add(ct_file_writer *w, ct_record *r);
/* Writes string id = s (len bytes). */
void gt_add_string(ct_file_writer *w, uint64_t id, const char *s, size_t len);
/* Writes the PROCESS record (pid, strings host, cmd) and device 0 named devname. */
void gt_add_process(ct_file_writer *w, uint64_t pid, uint64_t host, uint64_t cmd,
                    uint64_t devname);
/* Writes the END record: the records written, and end_ns. */
void gt_add_end(ct_file_writer *w, uint64_t end_ns);

/* The --churn shapes: n distinct keys of one kind, one launch each (gentrace_churn.c). */
typedef enum gt_churn {
  GT_CHURN_KERNELS, /* n kernel names "triton_poi_fused_<i>" (JIT naming) */
  GT_CHURN_RANGES,  /* n NVTX ranges "step <i>", one around each launch */
  GT_CHURN_STREAMS, /* n streams, a launch on each */
  GT_CHURN_THREADS, /* n threads, a launch from each */
  GT_CHURN_SITES,   /* n call sites (STACK nodes), a launch from each */
  GT_CHURN_GRAPHS,  /* one graph exec updated n times, launched after each update */
  GT_CHURN_COUNT
} gt_churn;

/* The shape named s ("kernels", "ranges", ...), or -1. */
int gt_churn_parse(const char *s);
/* Writes the churn trace of shape `shape` with n keys (see gentrace_churn.c). */
void gt_gen_churn(ct_file_writer *w, gt_churn shape, uint64_t n);

#endif
