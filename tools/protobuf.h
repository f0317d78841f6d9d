/*
 * A small Protocol Buffers writer (the wire format: base-128 varints, tags of field
 * number << 3 | wire type, length-delimited bytes and nested messages, little-endian
 * fixed64; https://protobuf.dev/programming-guides/encoding/) into growable byte
 * buffers. Nested messages are built in a buffer of their own and appended with
 * their length. Used by the Perfetto export (chrome_perfetto.c).
 */
#ifndef CUTRACE_PROTOBUF_H
#define CUTRACE_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>

/* Wire types. */
enum { PB_VARINT = 0, PB_FIXED64 = 1, PB_LEN = 2 };

/* A growable byte buffer; failed = 1 once an allocation failed (writes are then dropped). */
typedef struct pb_buf {
  uint8_t *p;
  size_t n, cap;
  int failed;
} pb_buf;

/* Appends n raw bytes. */
void pb_raw(pb_buf *b, const void *data, size_t n);

/* Encodes v as a varint into out (at least 10 bytes); returns its length. */
static inline unsigned pb_varint_encode(uint8_t *out, uint64_t v) {
  unsigned i = 0;
  while (v >= 0x80) {
    out[i++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  out[i++] = (uint8_t)v;
  return i;
}

/* pb_varint when b has less than 10 bytes free (grows it). */
void pb_varint_grow(pb_buf *b, uint64_t v);

/* Appends v as a base-128 varint. */
static inline void pb_varint(pb_buf *b, uint64_t v) {
  if (b->n + 10 <= b->cap) b->n += pb_varint_encode(b->p + b->n, v);
  else pb_varint_grow(b, v);
}

/* Appends a varint field (uint64, int64 as two's complement, bool, enum). */
static inline void pb_uint(pb_buf *b, unsigned field, uint64_t v) {
  pb_varint(b, (uint64_t)field << 3 | PB_VARINT);
  pb_varint(b, v);
}

/* Appends a fixed64 field (fixed64; a double's bits). */
void pb_fixed64(pb_buf *b, unsigned field, uint64_t v);

/* Appends a double field. */
void pb_double(pb_buf *b, unsigned field, double v);

/* Appends a length-delimited field: bytes, a string, or a nested message's bytes. */
void pb_bytes(pb_buf *b, unsigned field, const void *data, size_t n);

/* Appends a string field (strlen(s) bytes). */
void pb_string(pb_buf *b, unsigned field, const char *s);

/* Appends the message in sub as field field of b. */
static inline void pb_message(pb_buf *b, unsigned field, const pb_buf *sub) {
  pb_bytes(b, field, sub->p, sub->n);
}

/* The number of bytes pb_varint writes for v. */
unsigned pb_varint_size(uint64_t v);

/* Empties b (keeps its memory). */
static inline void pb_clear(pb_buf *b) { b->n = 0; }

/* Frees b's memory. */
void pb_free(pb_buf *b);

#endif
