/* A small Protocol Buffers writer (protobuf.h). */
#include "protobuf.h"

#include <stdlib.h>
#include <string.h>

/* Makes room for n more bytes; 0, or -1 (b->failed set) when out of memory. */
static int reserve(pb_buf *b, size_t n) {
  if (b->failed) return -1;
  if (b->n + n <= b->cap) return 0;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->n + n) cap *= 2;
  uint8_t *p = realloc(b->p, cap);
  if (!p) {
    b->failed = 1;
    return -1;
  }
  b->p = p;
  b->cap = cap;
  return 0;
}

void pb_raw(pb_buf *b, const void *data, size_t n) {
  if (!n || (b->n + n > b->cap && reserve(b, n) < 0)) return;
  memcpy(b->p + b->n, data, n);
  b->n += n;
}

unsigned pb_varint_size(uint64_t v) {
  unsigned n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}

void pb_varint_grow(pb_buf *b, uint64_t v) {
  if (reserve(b, 10) < 0) return;
  b->n += pb_varint_encode(b->p + b->n, v);
}

void pb_fixed64(pb_buf *b, unsigned field, uint64_t v) {
  pb_varint(b, (uint64_t)field << 3 | PB_FIXED64);
  uint8_t le[8];
  for (int i = 0; i < 8; i++) le[i] = (uint8_t)(v >> (8 * i));
  pb_raw(b, le, 8);
}

void pb_double(pb_buf *b, unsigned field, double v) {
  uint64_t bits;
  memcpy(&bits, &v, 8);
  pb_fixed64(b, field, bits);
}

void pb_bytes(pb_buf *b, unsigned field, const void *data, size_t n) {
  pb_varint(b, (uint64_t)field << 3 | PB_LEN);
  pb_varint(b, n);
  pb_raw(b, data, n);
}

void pb_string(pb_buf *b, unsigned field, const char *s) { pb_bytes(b, field, s, strlen(s)); }

void pb_free(pb_buf *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}
