/*
 * The JSON document's output buffer (chrome_out.h): flushing, and strings escaped byte
 * for byte as ct_json_write_escaped (output.c) escapes them, into the buffer.
 */
#include <string.h>

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

void chr_put_escaped(ct_chrome *c, const char *str, size_t n) {
  const unsigned char *s = (const unsigned char *)str;
  size_t i = 0;
  while (i < n) {
    size_t run = i;
    while (run < n && plain_byte[s[run]]) run++;
    chr_put_bytes(c, str + i, run - i);
    if (run == n) return;
    unsigned char b = s[run];
    i = run + 1;
    switch (b) {
    case '"': chr_put_bytes(c, "\\\"", 2); continue;
    case '\\': chr_put_bytes(c, "\\\\", 2); continue;
    case '\n': chr_put_bytes(c, "\\n", 2); continue;
    case '\t': chr_put_bytes(c, "\\t", 2); continue;
    case '\r': chr_put_bytes(c, "\\r", 2); continue;
    }
    size_t l = b < 0x20 ? 0 : ct_utf8_len(s + run, n - run);
    if (l) { /* a whole UTF-8 sequence, as it is */
      chr_put_bytes(c, str + run, l);
      i = run + l;
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
