/*
 * Record codec: turns ct_record values into the chunk encoding of
 * include/cutrace/format.h and back, and builds whole trace files.
 * Used by the preload's writer thread, the trace generator and the reader.
 */
#ifndef CUTRACE_CODEC_H
#define CUTRACE_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "cutrace/format.h"

/* Bytes one encoded non-STRING record can take at most. */
#define CT_MAX_RECORD_BYTES (2 + CT_MAX_FIELDS * 10)

/* How the fields of each kind are encoded; built from the file's schema block. */
typedef struct ct_schema {
  uint8_t nfields[CT_MAX_KINDS];                 /* 0 = kind unknown */
  uint8_t enc[CT_MAX_KINDS][CT_MAX_FIELDS];      /* CT_ENC_* */
} ct_schema;

/* Per-chunk delta state; reset at the start of every chunk. */
typedef struct ct_delta_state {
  uint64_t prev[CT_MAX_KINDS][CT_MAX_FIELDS];
} ct_delta_state;

/* The schema this build writes (format.h's lists). */
const ct_schema *ct_schema_native(void);

/* Number of fields kind has in this build's format, 0 if none. */
unsigned ct_kind_nfields(unsigned kind);

/* Lowercase name of a kind ("api", "gpu", ...), or NULL when unknown. */
const char *ct_kind_name(unsigned kind);

/* Name of field i of kind ("begin_ns", ...), or NULL when unknown. */
const char *ct_field_name(unsigned kind, unsigned i);

/* Clears delta state (call at the start of each chunk). */
void ct_delta_reset(ct_delta_state *st);

/*
 * Encodes rec (a non-STRING kind known to this build) into out, which must have
 * CT_MAX_RECORD_BYTES free. Returns the number of bytes written.
 */
size_t ct_encode_record(ct_delta_state *st, const ct_record *rec, uint8_t *out);

/*
 * Encodes a STRING record defining id as the len bytes at s into out, which must
 * have len + CT_MAX_RECORD_BYTES free. Returns the number of bytes written.
 */
size_t ct_encode_string(ct_delta_state *st, uint64_t id, const char *s, size_t len,
                        uint8_t *out);

/*
 * Decodes one record from in[0..n) with schema sc into rec (STRING: rec->str
 * points into in). Unknown kinds of the schema are decoded and returned with
 * their kind; the caller skips them. Returns bytes consumed, or 0 when the
 * bytes are not a valid record (corrupt or cut short).
 */
size_t ct_decode_record(const ct_schema *sc, ct_delta_state *st, const uint8_t *in,
                        size_t n, ct_record *rec);

/*
 * Steps over one record in in[0..n) without decoding its values (the delta state of
 * its kind is not updated: a reader that skips a kind cannot decode it later).
 * Returns the bytes it takes, or 0 where ct_decode_record would fail. STRING records
 * are never skipped this way (returns 0).
 */
size_t ct_skip_record(const ct_schema *sc, const uint8_t *in, size_t n);

/* Writes the file header and native schema into out (at least 512 bytes). Returns its size. */
size_t ct_write_file_header(uint8_t *out, size_t cap);

/*
 * Parses a file header + schema from in[0..n). Returns the bytes used, 0 when
 * more bytes are needed, or -1 with a message in err (bad magic, newer major
 * version, malformed schema).
 */
long ct_parse_file_header(const uint8_t *in, size_t n, ct_schema *sc,
                          uint16_t *major, uint16_t *minor, char *err, size_t errlen);

/*
 * A chunk under construction: records are encoded into buf until it is full,
 * then the whole chunk is compressed into one zstd frame.
 */
typedef struct ct_chunk {
  ct_delta_state delta;
  uint8_t *buf;
  size_t len, cap;
  uint64_t records;
} ct_chunk;

/* Allocates a chunk of cap bytes. Returns 0, or -1 when out of memory. */
int ct_chunk_init(ct_chunk *c, size_t cap);

/* Frees a chunk's buffer. */
void ct_chunk_free(ct_chunk *c);

/* Empties a chunk and resets its delta state. */
void ct_chunk_reset(ct_chunk *c);

/* Appends a record. Returns 0, or -1 when the chunk is full (nothing appended). */
int ct_chunk_add(ct_chunk *c, const ct_record *rec);

/* Appends a STRING record. Returns 0, or -1 when the chunk is full. */
int ct_chunk_add_string(ct_chunk *c, uint64_t id, const char *s, size_t len);

/* Upper bound of the compressed size of a chunk of len bytes. */
size_t ct_chunk_bound(size_t len);

/*
 * Compresses the chunk into one checksummed zstd frame at dst using level
 * (1 recommended). cctx is a ZSTD_CCtx* (void* here to keep zstd.h private).
 * Returns the frame size, or 0 on failure.
 */
size_t ct_chunk_compress(const ct_chunk *c, void *cctx, int level, void *dst, size_t cap);

/*
 * A simple synchronous trace-file writer (for generators and tests; the preload
 * has its own asynchronous writer built on ct_chunk).
 */
typedef struct ct_file_writer ct_file_writer;

/* write() of all n bytes, retried on EINTR and short writes. Returns 0, or -1 (errno). */
int ct_write_all(int fd, const void *buf, size_t n);

/* Creates path (must not exist, mode 0600). Returns NULL and sets errno on failure. */
ct_file_writer *ct_file_writer_open(const char *path, size_t chunk_bytes);

/* Adds a record (flushing a frame when the chunk fills). Returns 0 or -1 (errno). */
int ct_file_writer_add(ct_file_writer *w, const ct_record *rec);

/* Adds a STRING record. Returns 0 or -1 (errno). */
int ct_file_writer_add_string(ct_file_writer *w, uint64_t id, const char *s, size_t len);

/* Writes the current chunk as a frame now. Returns 0 or -1 (errno). */
int ct_file_writer_flush(ct_file_writer *w);

/* Flushes and closes. Returns 0 or -1 (errno); w is freed either way. */
int ct_file_writer_close(ct_file_writer *w);

#endif
