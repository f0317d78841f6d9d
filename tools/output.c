/* Output helpers shared by the cutrace commands (see output.h). */
#include "output.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int ct_parse_out_format(const char *s, enum ct_out_format *out) {
  if (!s) return -1;
  if (!strcmp(s, "text")) *out = CT_OUT_TEXT;
  else if (!strcmp(s, "csv")) *out = CT_OUT_CSV;
  else if (!strcmp(s, "json")) *out = CT_OUT_JSON;
  else return -1;
  return 0;
}

const char ct_digit_pairs[201] = "00010203040506070809101112131415161718192021222324"
                                     "25262728293031323334353637383940414243444546474849"
                                     "50515253545556575859606162636465666768697071727374"
                                     "75767778798081828384858687888990919293949596979899";

size_t ct_fmt_u64(char *buf, uint64_t v) {
  unsigned n = ct_decimal_len(v);
  ct_fmt_digits(buf + n, v); /* straight into buf: no copy */
  return n;
}

int ct_fmt_fixed3(double v, char *buf, size_t len) {
  if (len >= 32 && v >= 0 && v < 1e12 && !signbit(v)) {
    /* the integer nearest to v * 1000 (exactly, ties to the even one, as glibc's
     * printf rounds): a guess, checked with fma, whose one rounding keeps the sign of
     * v * 1000 - (k +- 0.5) (k +- 0.5 is exact below 2^52) */
    double k = floor(v * 1000.0 + 0.5);
    double below = fma(v, 1000.0, -(k - 0.5)), above = fma(v, 1000.0, -(k + 0.5));
    int settled = 1;
    if (above == 0) k += fmod(k, 2.0) != 0; /* halfway between k and k + 1 */
    else if (below == 0) k -= fmod(k, 2.0) != 0; /* halfway between k - 1 and k */
    else settled = below > 0 && above < 0;
    if (settled) {
      uint64_t m = (uint64_t)k;
      unsigned frac = (unsigned)(m % 1000);
      size_t n = ct_fmt_u64(buf, m / 1000); /* the integer part, straight into buf */
      buf[n] = '.';
      buf[n + 1] = (char)('0' + frac / 100);
      memcpy(buf + n + 2, ct_digit_pairs + 2 * (frac % 100), 2);
      buf[n + 4] = 0;
      return (int)(n + 4);
    }
  }
  return snprintf(buf, len, "%.3f", v);
}

/* Appends text to the n bytes of buf (room for 32 or more: a duration's unit). */
static const char *with_unit(char *buf, int n, const char *unit) {
  if (n > 0) memcpy(buf + n, unit, strlen(unit) + 1);
  return buf;
}

const char *ct_fmt_duration(uint64_t ns, char *buf, size_t len) {
  if (len >= 32) { /* no printf: dump --chrome labels every gap with one */
    if (ns < 1000) {
      return with_unit(buf, (int)ct_fmt_u64(buf, ns), " ns");
    }
    if (ns < 1000000) return with_unit(buf, ct_fmt_fixed3(ns / 1e3, buf, len), " us");
    if (ns < 1000000000) return with_unit(buf, ct_fmt_fixed3(ns / 1e6, buf, len), " ms");
    return with_unit(buf, ct_fmt_fixed3(ns / 1e9, buf, len), " s");
  }
  if (ns < 1000) snprintf(buf, len, "%llu ns", (unsigned long long)ns);
  else if (ns < 1000000) snprintf(buf, len, "%.3f us", ns / 1e3);
  else if (ns < 1000000000) snprintf(buf, len, "%.3f ms", ns / 1e6);
  else snprintf(buf, len, "%.3f s", ns / 1e9);
  return buf;
}

const char *ct_fmt_bytes(uint64_t bytes, char *buf, size_t len) {
  if (bytes < 1024) snprintf(buf, len, "%llu B", (unsigned long long)bytes);
  else if (bytes < (1ull << 20)) snprintf(buf, len, "%.2f KiB", bytes / 1024.0);
  else if (bytes < (1ull << 30)) snprintf(buf, len, "%.2f MiB", bytes / 1048576.0);
  else snprintf(buf, len, "%.2f GiB", bytes / 1073741824.0);
  return buf;
}

int ct_parse_u64(const char *s, uint64_t *v) {
  if (!s || !*s || *s < '0' || *s > '9') return -1;
  char *end;
  errno = 0;
  unsigned long long x = strtoull(s, &end, 10);
  if (errno || *end) return -1;
  *v = x;
  return 0;
}

/* ---- Tables ----------------------------------------------------------------- */

struct ct_table {
  char *title;
  int ncols;
  char **headers;
  char *align;
  char **cells; /* rows * ncols, row-major; NULL = empty */
  size_t rows, cap, next_col;
  unsigned skip; /* ct_table_cell calls still to ignore (ct_table_skip_cells) */
};

ct_table *ct_table_new(const char *title, int ncols, const char *const *headers,
                       const char *align) {
  ct_table *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->ncols = ncols;
  t->title = title ? strdup(title) : NULL;
  t->headers = calloc((size_t)ncols, sizeof *t->headers);
  t->align = calloc((size_t)ncols + 1, 1);
  if (!t->headers || !t->align) {
    ct_table_free(t);
    return NULL;
  }
  for (int i = 0; i < ncols; i++) {
    t->headers[i] = strdup(headers[i]);
    t->align[i] = align && (int)strlen(align) > i ? align[i] : 'l';
  }
  return t;
}

void ct_table_row(ct_table *t) {
  if (!t) return;
  if (t->rows == t->cap) {
    size_t ncap = t->cap ? t->cap * 2 : 16;
    char **n = realloc(t->cells, ncap * (size_t)t->ncols * sizeof *n);
    if (!n) return;
    t->cells = n;
    t->cap = ncap;
  }
  memset(t->cells + t->rows * (size_t)t->ncols, 0, (size_t)t->ncols * sizeof *t->cells);
  t->rows++;
  t->next_col = 0;
}

void ct_table_skip_cells(ct_table *t, unsigned n) {
  if (t) t->skip = n;
}

void ct_table_cell(ct_table *t, const char *fmt, ...) {
  if (t && t->skip) {
    t->skip--;
    return;
  }
  if (!t || !t->rows || t->next_col >= (size_t)t->ncols) return;
  va_list ap;
  va_start(ap, fmt);
  char *s = NULL;
  if (vasprintf(&s, fmt, ap) < 0) s = NULL;
  va_end(ap);
  t->cells[(t->rows - 1) * (size_t)t->ncols + t->next_col++] = s;
}

size_t ct_table_rows(const ct_table *t) { return t ? t->rows : 0; }

size_t ct_csv_quote(char *buf, size_t cap, const char *text, size_t len) {
  if (!len) return 0;
  size_t quotes = 0, plain = strcspn(text, CT_CSV_SPECIAL); /* (a NUL inside: len says) */
  int quote = plain < len;
  for (size_t i = plain; i < len; i++) quotes += text[i] == '"';
  size_t need = len + quotes + (quote ? 2 : 0);
  if (need > cap) return need;
  if (!quote) {
    memcpy(buf, text, len);
    return need;
  }
  size_t at = 0;
  buf[at++] = '"';
  for (size_t i = 0; i < len; i++) {
    if (text[i] == '"') buf[at++] = '"';
    buf[at++] = text[i];
  }
  buf[at++] = '"';
  return need;
}

void ct_csv_field(FILE *f, const char *s) {
  if (!s || !*s) return;
  size_t len = strlen(s);
  char small[256];
  size_t need = ct_csv_quote(small, sizeof small, s, len);
  if (need <= sizeof small) {
    fwrite(small, 1, need, f);
    return;
  }
  char *big = malloc(need);
  if (!big) { /* out of memory: an empty field keeps the row's width */
    fputs("\"\"", f);
    return;
  }
  ct_csv_quote(big, need, s, len);
  fwrite(big, 1, need, f);
  free(big);
}

void ct_out_newline(FILE *f, enum ct_out_format fmt) {
  fputs(fmt == CT_OUT_CSV ? CT_CSV_EOL : "\n", f);
}

/* Display width of a UTF-8 string: counts code points, not continuation bytes. */
static size_t text_width(const char *s) {
  size_t w = 0;
  for (; s && *s; s++)
    if (((unsigned char)*s & 0xc0) != 0x80) w++;
  return w;
}

void ct_table_print_csv(const ct_table *t, FILE *f, int header) {
  if (!t) return;
  int nc = t->ncols;
  for (size_t r = header ? 0 : 1; r <= t->rows; r++) {
    char *const *cells = r == 0 ? t->headers : t->cells + (r - 1) * nc;
    for (int c = 0; c < nc; c++) {
      if (c) putc(',', f);
      ct_csv_field(f, cells[c]);
    }
    fputs(CT_CSV_EOL, f);
  }
}

void ct_table_print(const ct_table *t, FILE *f, enum ct_out_format fmt) {
  if (!t) return;
  int nc = t->ncols;
  if (fmt == CT_OUT_CSV) {
    ct_table_print_csv(t, f, 1);
    return;
  }
  if (t->title) fprintf(f, "%s\n", t->title);
  if (!t->rows) {
    fprintf(f, "  (none)\n");
    return;
  }
  size_t *w = calloc((size_t)nc, sizeof *w);
  if (!w) return;
  ct_text_widths_add(w, nc, (const char *const *)t->headers);
  for (size_t r = 0; r < t->rows; r++)
    ct_text_widths_add(w, nc, (const char *const *)t->cells + r * nc);
  for (size_t r = 0; r <= t->rows; r++)
    ct_text_row_print(f, nc, t->align, w,
                      (const char *const *)(r == 0 ? t->headers : t->cells + (r - 1) * nc));
  free(w);
}

void ct_text_widths_add(size_t *widths, int ncols, const char *const *cells) {
  for (int c = 0; c < ncols; c++) {
    size_t x = text_width(cells[c]);
    if (x > widths[c]) widths[c] = x;
  }
}

void ct_text_row_print(FILE *f, int ncols, const char *align, const size_t *widths,
                       const char *const *cells) {
  fputs("  ", f);
  for (int c = 0; c < ncols; c++) {
    const char *s = cells[c];
    if (!s) s = "";
    size_t pad = widths[c] - text_width(s);
    int last = c == ncols - 1;
    if (align[c] == 'r') fprintf(f, "%*s%s", (int)pad, "", s);
    else if (last) fputs(s, f);
    else fprintf(f, "%s%*s", s, (int)pad, "");
    if (!last) fputs("  ", f);
  }
  putc('\n', f);
}

void ct_table_free(ct_table *t) {
  if (!t) return;
  for (size_t i = 0; i < t->rows * (size_t)t->ncols; i++) free(t->cells[i]);
  free(t->cells);
  if (t->headers)
    for (int i = 0; i < t->ncols; i++) free(t->headers[i]);
  free(t->headers);
  free(t->align);
  free(t->title);
  free(t);
}

/* ---- JSON --------------------------------------------------------------------- */

size_t ct_utf8_len(const unsigned char *s, size_t n) {
  size_t len;
  if (s[0] < 0x80) return 1;
  else if ((s[0] & 0xe0) == 0xc0 && s[0] >= 0xc2) len = 2;
  else if ((s[0] & 0xf0) == 0xe0) len = 3;
  else if ((s[0] & 0xf8) == 0xf0 && s[0] <= 0xf4) len = 4;
  else return 0;
  if (len > n) return 0;
  for (size_t i = 1; i < len; i++)
    if ((s[i] & 0xc0) != 0x80) return 0;
  return len;
}

void ct_json_write_escaped(FILE *f, const char *str, size_t n) {
  const unsigned char *s = (const unsigned char *)str;
  size_t i = 0;
  while (i < n) {
    unsigned char c = s[i];
    if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
      size_t run = i;
      while (run < n && s[run] >= 0x20 && s[run] != '"' && s[run] != '\\' && s[run] < 0x80)
        run++;
      fwrite(s + i, 1, run - i, f);
      i = run;
      continue;
    }
    switch (c) {
    case '"': fputs("\\\"", f); i++; continue;
    case '\\': fputs("\\\\", f); i++; continue;
    case '\n': fputs("\\n", f); i++; continue;
    case '\t': fputs("\\t", f); i++; continue;
    case '\r': fputs("\\r", f); i++; continue;
    }
    if (c < 0x20) {
      fprintf(f, "\\u%04x", c);
      i++;
      continue;
    }
    size_t l = ct_utf8_len(s + i, n - i);
    if (l) {
      fwrite(s + i, 1, l, f);
      i += l;
    } else {
      fprintf(f, "\\u%04x", c); /* a stray byte: keep it visible, stay valid */
      i++;
    }
  }
}

void ct_json_init(ct_json *j, FILE *f, int pretty) {
  memset(j, 0, sizeof *j);
  j->f = f;
  j->pretty = pretty;
}

static void newline(ct_json *j) {
  if (!j->pretty) return;
  putc('\n', j->f);
  for (int i = 0; i < j->depth; i++) fputs("  ", j->f);
}

/* Writes what goes before a value: a comma and newline inside containers. */
static void before_value(ct_json *j) {
  if (j->after_key) {
    j->after_key = 0;
    return;
  }
  if (j->depth > 0) {
    if (j->count[j->depth]) putc(',', j->f);
    newline(j);
  }
  j->count[j->depth] = 1;
}

static void open_container(ct_json *j, char c) {
  before_value(j);
  putc(c, j->f);
  if (j->depth < 32) j->depth++;
  j->count[j->depth] = 0;
}

static void close_container(ct_json *j, char c) {
  int had = j->count[j->depth];
  if (j->depth > 0) j->depth--;
  if (had) newline(j);
  putc(c, j->f);
}

void ct_json_begin_object(ct_json *j) { open_container(j, '{'); }
void ct_json_end_object(ct_json *j) { close_container(j, '}'); }
void ct_json_begin_array(ct_json *j) { open_container(j, '['); }
void ct_json_end_array(ct_json *j) { close_container(j, ']'); }

void ct_json_key(ct_json *j, const char *key) {
  before_value(j);
  putc('"', j->f);
  ct_json_write_escaped(j->f, key, strlen(key));
  fputs(j->pretty ? "\": " : "\":", j->f);
  j->after_key = 1;
}

void ct_json_string_n(ct_json *j, const char *s, size_t n) {
  before_value(j);
  if (!s) {
    fputs("null", j->f);
    return;
  }
  putc('"', j->f);
  ct_json_write_escaped(j->f, s, n);
  putc('"', j->f);
}

void ct_json_string(ct_json *j, const char *s) { ct_json_string_n(j, s, s ? strlen(s) : 0); }

void ct_json_uint(ct_json *j, uint64_t v) {
  before_value(j);
  char digits[CT_U64_DIGITS];
  fwrite(digits, 1, ct_fmt_u64(digits, v), j->f);
}

void ct_json_int(ct_json *j, int64_t v) {
  before_value(j);
  fprintf(j->f, "%lld", (long long)v);
}

void ct_json_double(ct_json *j, double v, int decimals) {
  before_value(j);
  if (isnan(v) || isinf(v)) fputs("null", j->f);
  else fprintf(j->f, "%.*f", decimals, v);
}

void ct_json_bool(ct_json *j, int v) {
  before_value(j);
  fputs(v ? "true" : "false", j->f);
}

void ct_json_null(ct_json *j) {
  before_value(j);
  fputs("null", j->f);
}

void ct_json_kv_string(ct_json *j, const char *key, const char *s) {
  ct_json_key(j, key);
  ct_json_string(j, s);
}
void ct_json_kv_uint(ct_json *j, const char *key, uint64_t v) {
  ct_json_key(j, key);
  ct_json_uint(j, v);
}
void ct_json_kv_int(ct_json *j, const char *key, int64_t v) {
  ct_json_key(j, key);
  ct_json_int(j, v);
}
void ct_json_kv_double(ct_json *j, const char *key, double v, int decimals) {
  ct_json_key(j, key);
  ct_json_double(j, v, decimals);
}
void ct_json_kv_bool(ct_json *j, const char *key, int v) {
  ct_json_key(j, key);
  ct_json_bool(j, v);
}

void ct_json_finish(ct_json *j) { putc('\n', j->f); }
