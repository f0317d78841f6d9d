/*
 * Chrome Trace Event JSON export (cutrace dump --chrome), following Kineto's
 * conventions so that Perfetto UI, chrome://tracing and HTA read it: CPU events on
 * pid = process id / tid = thread id, GPU events on pid = device index / tid = stream
 * id, ac2g flow pairs from each call to its GPU work, metadata naming every track.
 * With options.perfetto the same events as Perfetto's protobuf trace (dump --perfetto).
 * Events are written as the model delivers them: memory does not grow with the trace.
 */
#ifndef CUTRACE_CHROME_H
#define CUTRACE_CHROME_H

#include <stdint.h>
#include <stdio.h>

#include "model.h"

typedef struct ct_chrome ct_chrome;

/* Options of the export. */
typedef struct ct_chrome_options {
  int gaps;            /* 1: add GPU idle gaps (when gaps analysis is built in) */
  uint64_t gap_min_ns; /* shortest gap shown */
  int queues;          /* 1: a queue-depth counter track per stream */
  int no_memory;       /* 1: no live-bytes counter tracks of allocations (docs/dump.md) */
  int perfetto;        /* 1: Perfetto's protobuf trace instead of JSON (docs/dump.md) */
  unsigned files;      /* how many trace files the document will hold: above 1, each
                          file's GPUs get process rows of their own (docs/dump.md) */
  const char *selection; /* the selection options (--device 1 ...), written as the
                            document's "selection"; NULL: none */
} ct_chrome_options;

/* Starts a document on out (writes the opening of "traceEvents"). NULL when out of memory. */
ct_chrome *ct_chrome_begin(FILE *out, const ct_chrome_options *opts);

/*
 * Adds one trace file's events. Returns like ct_model_read (0 clean, 1 partial, -1
 * unreadable) and fills *st.
 */
int ct_chrome_add_file(ct_chrome *c, const char *path, ct_model_stats *st);

/* Ends the document (device properties, distributedInfo, ...) and frees c.
 * Returns 0, or -1 when writing failed. */
int ct_chrome_end(ct_chrome *c);

#endif
