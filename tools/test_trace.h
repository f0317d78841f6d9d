/*
 * Writing the planted trace files of the tools' C unit tests (test_model,
 * test_model_drops, test_range_extents): a failure to write is no test result, so
 * each helper reports it (perror) and exits 1.
 */
#ifndef CT_TEST_TRACE_H
#define CT_TEST_TRACE_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"

/* A writer of path with chunks of chunk_bytes. */
static inline ct_file_writer *test_trace_open(const char *path, size_t chunk_bytes) {
  ct_file_writer *w = ct_file_writer_open(path, chunk_bytes);
  if (!w) {
    perror(path);
    exit(1);
  }
  return w;
}

/* Adds r, then clears it for the next record. */
static inline void test_trace_add(ct_file_writer *w, ct_record *r) {
  if (ct_file_writer_add(w, r) < 0) {
    perror(program_invocation_short_name);
    exit(1);
  }
  memset(r, 0, sizeof *r);
}

/* Closes w, the file at path complete. */
static inline void test_trace_close(ct_file_writer *w, const char *path) {
  if (ct_file_writer_close(w) < 0) {
    perror(path);
    exit(1);
  }
}

#endif
