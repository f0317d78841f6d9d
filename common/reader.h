/*
 * Trace reader: the one library every tool and test uses to read .ctr files.
 * It streams (memory bounded by one frame plus the string table), returns every
 * record before a damaged spot, skips the damage when it can find a later whole
 * frame, and says where and why it stopped.
 */
#ifndef CUTRACE_READER_H
#define CUTRACE_READER_H

#include <stddef.h>
#include <stdint.h>

#include "cutrace/format.h"

typedef struct ct_reader ct_reader;

/* What a reader found wrong with its file, once reading has ended. */
typedef struct ct_read_status {
  int damaged;            /* 1 if any bytes could not be read (truncation, corruption) */
  int clean_end;          /* 1 if an END record was seen and nothing was damaged */
  uint64_t records;       /* records read so far (returned or skipped) */
  uint64_t frames;        /* whole frames decoded */
  uint64_t bad_frames;    /* frames or byte runs skipped */
  uint64_t skipped_bytes; /* bytes skipped */
  uint64_t stop_offset;   /* file offset of the first damage (valid if damaged) */
  uint16_t major, minor;  /* format version of the file */
  char message[256];      /* first problem, "" when none */
} ct_read_status;

/*
 * Opens path for reading ("-" is stdin). Returns NULL on failure with a
 * one-line reason in err (missing, empty, not a cutrace trace, newer format).
 */
ct_reader *ct_reader_open(const char *path, char *err, size_t errlen);

/*
 * Reads the next record into rec. Returns 1 when a record was read, 0 at the end
 * of the file (clean or not: see ct_reader_status). Records of kinds this build
 * does not know are skipped; STRING records are returned too (and also kept in
 * the string table).
 */
int ct_reader_next(ct_reader *r, ct_record *rec);

/*
 * From now on, steps over the records of the kinds whose bit (1 << kind) is set in
 * kinds without decoding or returning them (they still count in the status's
 * records): for a read that needs few kinds (a pass over the NVTX ranges). A kind
 * skipped once cannot be read again with this reader; STRING records are always read.
 * Damage is found as when decoding.
 */
void ct_reader_skip_kinds(ct_reader *r, uint64_t kinds);

/*
 * The string with id, or NULL when it is not (yet) defined. *len gets its length
 * if len is not NULL. The pointer stays valid until ct_reader_close.
 */
const char *ct_reader_string(const ct_reader *r, uint64_t id, size_t *len);

/* Current status (records read, damage found, version). */
const ct_read_status *ct_reader_status(const ct_reader *r);

/* The path the reader was opened with. */
const char *ct_reader_path(const ct_reader *r);

/* Closes the file and frees everything. */
void ct_reader_close(ct_reader *r);

/*
 * Expands the arguments of a tool into trace files: a directory stands for every
 * *.ctr file in it (sorted by name), a file for itself; no arguments means
 * "cutrace.data". Calls fn(path, arg) for each. Returns the number of files, or
 * -1 with a message in err when an argument does not exist (for a missing default,
 * with a hint to name a trace or record one) or a directory holds no trace.
 */
int ct_expand_inputs(int argc, char *const argv[], int (*fn)(const char *path, void *arg),
                     void *arg, char *err, size_t errlen);

/*
 * What ct_expand_inputs calls, when set, with every file it found (in order) before
 * calling fn for any: the filter clears keep[i] for the files to leave out, and returns
 * 0, or -1 with a message in err (then ct_expand_inputs returns -1 and calls fn for
 * none). NULL (the default): every file is kept. The CLI's --pid, --rank, --device,
 * --stream and --kernel (tools/cli_select.c).
 */
typedef int (*ct_inputs_filter)(char *const *paths, size_t n, unsigned char *keep, char *err,
                                size_t errlen);
void ct_set_inputs_filter(ct_inputs_filter filter);

#endif
