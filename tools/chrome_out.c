/*
 * The JSON document's output buffer (chrome_out.h): flushing, and strings escaped byte
 * for byte as ct_json_write_escaped (output.c) escapes them, into the buffer.
 */
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "chrome_out.h"
#include "output.h"

void chr_out_flush(ct_chrome *c) {
  if (c->out_len) fwrite_unlocked(c->out, 1, c->out_len, c->f);
  c->out_len = 0;
}

/* 1 for the bytes a JSON string holds as they are: printable ASCII but '"' and '\'. */
static const unsigned char plain_byte[256] = {
#define PLAIN16(x) x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x
    PLAIN16(0), PLAIN16(0), /* control characters */
    1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* '"' */
    PLAIN16(1), PLAIN16(1),
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, /* '\\' */
    PLAIN16(1), PLAIN16(1),
    PLAIN16(0), PLAIN16(0), PLAIN16(0), PLAIN16(0), /* not ASCII */
    PLAIN16(0), PLAIN16(0), PLAIN16(0), PLAIN16(0),
#undef PLAIN16
};

/* Writes "\u00XX" for byte b. */
static void put_unicode_escape(ct_chrome *c, unsigned char b) {
  static const char hex[] = "0123456789abcdef";
  char *p = chr_out_room(c, 6);
  memcpy(p, "\\u00", 4);
  p[4] = hex[b >> 4];
  p[5] = hex[b & 15];
  c->out_len += 6;
}

/* 1 when one of the 8 bytes of x is not plain (plain_byte): below 0x20, 0x80 and
 * above, '"' or '\' (exact bit tricks: a zero byte of v shows in (v - 0x01..) & ~v). */
static inline int word_needs_escape(uint64_t x) {
  const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
  uint64_t control = (x - 0x20 * ones) & ~x;
  uint64_t quote = ((x ^ ('"' * ones)) - ones) & ~(x ^ ('"' * ones));
  uint64_t backslash = ((x ^ ('\\' * ones)) - ones) & ~(x ^ ('\\' * ones));
  return ((control | quote | backslash) & high) != 0 || (x & high) != 0;
}

/* Copies the plain bytes at the start of s (at most n), 8 at a time while it can;
 * returns how many. */
static size_t put_plain_run(ct_chrome *c, const char *s, size_t n) {
  if (n > 4096) n = 4096;
  char *p = chr_out_room(c, n + 8);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t x;
    memcpy(&x, s + i, 8);
    if (word_needs_escape(x)) break;
    memcpy(p + i, &x, 8);
  }
  if (i < n && n >= 8 && i + 8 > n) { /* the last word, overlapping what was checked */
    uint64_t x;
    memcpy(&x, s + n - 8, 8);
    if (!word_needs_escape(x)) {
      memcpy(p + n - 8, &x, 8);
      c->out_len += n;
      return n;
    }
  }
  while (i < n && plain_byte[(unsigned char)s[i]]) {
    p[i] = s[i];
    i++;
  }
  c->out_len += i;
  return i;
}

#ifdef __SSE2__
/* 1 when one of the 16 bytes at s is not plain: below 0x20 or 0x80 and above (both
 * below 0x20 as signed bytes), '"' or '\'. */
static inline int block_needs_escape(const char *s) {
  __m128i v = _mm_loadu_si128((const __m128i *)s);
  __m128i bad = _mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
                             _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                          _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
  return _mm_movemask_epi8(bad) != 0;
}
#define BLOCK 16
#else
static inline int block_needs_escape(const char *s) {
  uint64_t x;
  memcpy(&x, s, 8);
  return word_needs_escape(x);
}
#define BLOCK 8
#endif

void chr_put_escaped(ct_chrome *c, const char *str, size_t n) {
  if (n >= BLOCK && n <= 64) { /* most names: plain, checked and copied a block at a time */
    char *p = chr_out_room(c, 64);
    for (size_t i = 0; i + BLOCK < n; i += BLOCK) {
      if (block_needs_escape(str + i)) goto escape;
      memcpy(p + i, str + i, BLOCK);
    }
    if (!block_needs_escape(str + n - BLOCK)) { /* the last block, overlapping */
      memcpy(p + n - BLOCK, str + n - BLOCK, BLOCK);
      c->out_len += n;
      return;
    }
  }
escape:;
  const unsigned char *s = (const unsigned char *)str;
  size_t i = 0;
  while (i < n) {
    i += put_plain_run(c, str + i, n - i);
    if (i == n) return;
    unsigned char b = s[i];
    if (plain_byte[b]) continue; /* the run stopped at its 4096 bytes */
    size_t at = i++;
    switch (b) {
    case '"': chr_put_bytes(c, "\\\"", 2); continue;
    case '\\': chr_put_bytes(c, "\\\\", 2); continue;
    case '\n': chr_put_bytes(c, "\\n", 2); continue;
    case '\t': chr_put_bytes(c, "\\t", 2); continue;
    case '\r': chr_put_bytes(c, "\\r", 2); continue;
    }
    size_t l = b < 0x20 ? 0 : ct_utf8_len(s + at, n - at);
    if (l) { /* a whole UTF-8 sequence, as it is */
      chr_put_bytes(c, str + at, l);
      i = at + l;
    } else { /* a control character, or a stray byte: visible, and valid JSON */
      put_unicode_escape(c, b);
    }
  }
}

void chr_put_string(ct_chrome *c, const char *s) {
  chr_put_char(c, '"');
  if (s) chr_put_escaped(c, s, strlen(s));
  chr_put_char(c, '"');
}
