/*
 * The selection of GPU work (--device, --stream, --kernel): which activities the model
 * delivers. CPU spans are never selected away (they explain the selected work's idle
 * time); the processes (--pid, --rank) are chosen per file, before the model reads
 * (tools/cli_select.c).
 */
#ifndef CUTRACE_MODEL_SELECT_H
#define CUTRACE_MODEL_SELECT_H

#include <stddef.h>
#include <stdint.h>

#define CT_SELECT_MAX 64 /* values in one list */

/* What is selected: an activity must match every list that is set (ndevices or
 * nstreams > 0, kernel not NULL), and one value of each. */
typedef struct ct_select {
  unsigned ndevices, nstreams;
  uint64_t devices[CT_SELECT_MAX];
  uint64_t streams[CT_SELECT_MAX]; /* stream ids, as the STREAM records and report name them */
  const char *kernel; /* a substring of the name, or a shell glob matching all of it when
                         it holds * ? or [; NULL: any */
} ct_select;

/* Per reading: the kernel pattern's answer for names seen, by address (names keep
 * their address while a file is read). Zeroed memory is empty. */
typedef struct ct_select_cache {
  const char *name[256];
  signed char match[256];
} ct_select_cache;

/* 1 when the pattern (ct_select.kernel) matches name as the commands print it: the
 * demangled form of a kernel's mangled name, else the name itself ("memcpy HtoD",
 * "cublasSgemm_v2", "graph"). */
int ct_select_name_matches(const char *pattern, const char *name);

/* 1 when an activity on device and stream named name is selected by s (s NULL: all).
 * cache may be NULL. */
int ct_select_activity(const ct_select *s, ct_select_cache *cache, uint64_t device,
                       uint64_t stream, const char *name);

/* 1 when s selects anything less than everything. */
int ct_select_active(const ct_select *s);

#endif
