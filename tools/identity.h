/*
 * Who a trace file's process was: its PROCESS record and, since format 1.4, its JOB
 * record (the rank in a distributed job). Read from the head of the file without the
 * model (the writer puts PROCESS and JOB before everything but strings), and shown
 * the same way by every command: "rank 3 (pid 4242 on node7)".
 */
#ifndef CUTRACE_IDENTITY_H
#define CUTRACE_IDENTITY_H

#include <stddef.h>
#include <stdint.h>

#include "cutrace/format.h"
#include "output.h"

/* A trace file's identity. Strings are "" when unknown. */
typedef struct ct_identity {
  int has_process;
  struct ct_process proc;
  struct ct_job job;            /* known = 0 when the file has no JOB record */
  char host[256];
  char source[64];              /* the variable the rank came from */
  char job_id[128];
  char visible_devices[256];
} ct_identity;

/* Reads the identity from the head of the trace at path. Returns 0, or -1 when the
 * file cannot be opened as a trace (err says why). A file without a PROCESS record
 * gives has_process 0. */
int ct_identity_read(const char *path, ct_identity *id, char *err, size_t errlen);

/* "rank R (pid P on HOST)" when the rank is known (job may be NULL), else
 * "pid P on HOST" ("?" for an unknown host). Returns buf. */
const char *ct_proc_label(const struct ct_job *job, uint64_t pid, const char *host, char *buf,
                          size_t len);

/* The JOB numbers as JSON members "rank", "world_size", "local_rank",
 * "local_world_size", "node_rank": each null when unknown (job NULL: all null). */
void ct_json_job(ct_json *j, const struct ct_job *job);

#endif
