/*
 * The process's identity in a distributed job (job.c): the values of a JOB record
 * (format 1.4) parsed from the launcher's environment. Free of the rest of the core,
 * so that the parsing is unit-tested alone (tests/test_job.c).
 */
#ifndef CUTRACE_PRELOAD_JOB_H
#define CUTRACE_PRELOAD_JOB_H

#include <stddef.h>

#include "cutrace/format.h"

#define CTP_JOB_MAX_WARNINGS 4

/* What ctp_job_parse found. */
struct ctp_job {
  struct ct_job rec;         /* numbers and `known`; string fields left 0 */
  const char *source;        /* the variable the rank came from, NULL when none */
  char job_id[128];          /* SLURM_JOB_ID, else TORCHELASTIC_RUN_ID; "" when none */
  char visible_devices[256]; /* CUDA_VISIBLE_DEVICES (rec.known & CT_JOB_VISIBLE_DEVICES) */
  unsigned nwarnings;        /* malformed values, each ignored, one line each */
  char warnings[CTP_JOB_MAX_WARNINGS][160];
};

/* A variable's value, NULL when unset (getenv, or a table in tests). */
typedef const char *(*ctp_job_getenv)(const char *name, void *arg);

/* Fills *job from the variables get returns: the first launcher family whose rank is a
 * valid number (docs/preload.md gives the order), CUDA_VISIBLE_DEVICES, the job id. A
 * malformed value is ignored with a warning in job->warnings. Never fails. */
void ctp_job_parse(ctp_job_getenv get, void *arg, struct ctp_job *job);

/* 1 when the trace should carry a JOB record (anything known, or a warning to report). */
int ctp_job_present(const struct ctp_job *job);

/* Writes the trace file name's prefix into buf: "rank-N." when the rank is known, N
 * zero-padded to the digits of the largest rank of the world (rank-03 of 16), else "".
 * Returns its length. */
size_t ctp_job_file_prefix(const struct ctp_job *job, char *buf, size_t cap);

#endif
