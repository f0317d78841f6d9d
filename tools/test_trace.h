/*
 * Writing the planted trace files of the tools' C unit tests (test_model,
 * test_model_drops, test_model_stranded, test_range_extents, test_range_long): a
 * failure to write is no test result, so each helper reports it (perror) and exits 1.
 */
#ifndef CT_TEST_TRACE_H
#define CT_TEST_TRACE_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"

/* The planted trace's path, DIR/name for the test's one argument DIR, into path (size
 * bytes), any file left there by an earlier run removed; a wrong command line is
 * answered with the usage line and exit status 2. */
static inline void test_trace_path(int argc, char **argv, const char *name, char *path, size_t size) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", program_invocation_short_name);
    exit(2);
  }
  snprintf(path, size, "%s/%s", argv[1], name);
  remove(path);
}

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
