/*
 * The JSON document's output buffer (chrome_json.c, chrome_job.c): bytes are put in
 * c->out and written to c->f in blocks of up to CHR_OUT_CAP, with no stdio call per
 * piece and no printf for numbers (they dominated dump --chrome's time). Everything
 * the JSON encoder writes goes through here, so the order of the output is that of
 * the calls. The Perfetto encoder writes its packets to c->f itself.
 */
#ifndef CUTRACE_CHROME_OUT_H
#define CUTRACE_CHROME_OUT_H

#include <stdint.h>
#include <string.h>

#include "chrome_internal.h"
#include "output.h"

#define CHR_OUT_CAP (1u << 16) /* bytes buffered before a write */

/* Writes the buffered bytes to c->f and empties the buffer (write errors show in
 * ferror(c->f), checked at the document's end). */
void chr_out_flush(ct_chrome *c);

/* Where to put up to n more bytes (n <= CHR_OUT_CAP), flushing first when they would
 * not fit; the caller adds what it wrote to c->out_len. */
static inline char *chr_out_room(ct_chrome *c, size_t n) {
  if (__builtin_expect(c->out_len + n > CHR_OUT_CAP, 0)) chr_out_flush(c);
  return c->out + c->out_len;
}

/* Writes n bytes. */
static inline void chr_put_bytes(ct_chrome *c, const char *s, size_t n) {
  if (__builtin_expect(n > CHR_OUT_CAP, 0)) {
    chr_out_flush(c);
    fwrite_unlocked(s, 1, n, c->f);
    return;
  }
  memcpy(chr_out_room(c, n), s, n);
  c->out_len += n;
}

/* Writes text as it is (a literal's length is known when this is inlined). */
static inline void chr_put_text(ct_chrome *c, const char *s) { chr_put_bytes(c, s, strlen(s)); }

/* Writes one byte. */
static inline void chr_put_char(ct_chrome *c, char ch) {
  *chr_out_room(c, 1) = ch;
  c->out_len++;
}

/* ---- writing at p, inside room reserved with chr_out_room: each returns the end ---- */

/* Copies n bytes. */
static inline char *chr_at_bytes(char *p, const char *s, size_t n) {
  memcpy(p, s, n);
  return p + n;
}

/* Copies a string literal. */
#define CHR_AT_LIT(p, lit) chr_at_bytes(p, lit, sizeof(lit) - 1)

/* v in decimal (20 bytes at most). */
static inline char *chr_at_u64(char *p, uint64_t v) {
  unsigned n = ct_decimal_len(v);
  ct_fmt_digits(p + n, v);
  return p + n;
}

/* A time in ns as microseconds with 3 decimals (24 bytes at most; exact: what "%.3f"
 * of ns / 1000.0 writes for any ns below 2^53). */
static inline char *chr_at_us(char *p, uint64_t ns) {
  unsigned frac = (unsigned)(ns % 1000);
  p = chr_at_u64(p, ns / 1000);
  p[0] = '.';
  p[1] = (char)('0' + frac / 100);
  p[2] = (char)('0' + frac / 10 % 10);
  p[3] = (char)('0' + frac % 10);
  return p + 4;
}

/* Takes the bytes written up to end into the buffer. */
static inline void chr_out_commit(ct_chrome *c, const char *end) {
  c->out_len = (size_t)(end - c->out);
}

/* Writes v in decimal. */
static inline void chr_put_u64(ct_chrome *c, uint64_t v) {
  chr_out_commit(c, chr_at_u64(chr_out_room(c, 20), v));
}

/* Writes s as a JSON string ("" for NULL), escaped as ct_json_write_escaped does. */
void chr_put_string(ct_chrome *c, const char *s);

/* Writes the n bytes of s escaped for the inside of a JSON string, byte for byte as
 * ct_json_write_escaped (output.c) writes them. */
void chr_put_escaped(ct_chrome *c, const char *s, size_t n);

#endif
