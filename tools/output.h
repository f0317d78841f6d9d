/*
 * Output helpers shared by the cutrace commands: the --format option, human
 * units for durations and sizes, a small table printer (aligned text or CSV) and
 * a minimal streaming JSON writer with correct string escaping.
 * Nothing here exits; errors of the FILE are left in ferror(f) for the caller.
 */
#ifndef CUTRACE_OUTPUT_H
#define CUTRACE_OUTPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The --format values every command accepts (a command may refuse some). */
enum ct_out_format { CT_OUT_TEXT, CT_OUT_CSV, CT_OUT_JSON };

/* Parses "text", "csv" or "json" into *out. Returns 0, or -1 when s is none of them. */
int ct_parse_out_format(const char *s, enum ct_out_format *out);

/*
 * Formats a duration in ns with 3 decimals in the largest fitting unit:
 * "812 ns", "12.345 us", "1.234 ms", "2.345 s". Returns buf (len >= 24 suggested).
 */
const char *ct_fmt_duration(uint64_t ns, char *buf, size_t len);

/*
 * Writes v as snprintf(buf, len, "%.3f", v) does, byte for byte, without printf for
 * 0 <= v < 1e12 when len >= 32 (exact integer arithmetic); returns what snprintf
 * returns (the length).
 */
int ct_fmt_fixed3(double v, char *buf, size_t len);

/* The number of decimal digits of v (1 for 0). */
static inline unsigned ct_decimal_len(uint64_t v) {
  static const uint64_t pow10[20] = {1ull,
                                     10ull,
                                     100ull,
                                     1000ull,
                                     10000ull,
                                     100000ull,
                                     1000000ull,
                                     10000000ull,
                                     100000000ull,
                                     1000000000ull,
                                     10000000000ull,
                                     100000000000ull,
                                     1000000000000ull,
                                     10000000000000ull,
                                     100000000000000ull,
                                     1000000000000000ull,
                                     10000000000000000ull,
                                     100000000000000000ull,
                                     1000000000000000000ull,
                                     10000000000000000000ull};
  /* floor(log10(2) * bit length): the digit count or one less */
  unsigned t = (unsigned)(64 - __builtin_clzll(v | 1)) * 1233 >> 12;
  unsigned n = t + (v >= pow10[t]);
  return n ? n : 1;
}

/* The two digits of each number below 100 ("00" to "99"). */
extern const char ct_digit_pairs[201];

/* Writes the n (= ct_decimal_len(v)) digits of v ending just before end: two at a
 * time, in 32-bit arithmetic below 10^8 (every time in us, id and size of a trace);
 * inline for dump --chrome's writers. */
static inline void ct_fmt_digits(char *end, uint64_t v) {
  while (v >= 100000000) { /* eight digits, zeros kept */
    uint32_t low = (uint32_t)(v % 100000000);
    v /= 100000000;
    for (int i = 0; i < 4; i++) {
      end -= 2;
      memcpy(end, ct_digit_pairs + 2 * (low % 100), 2);
      low /= 100;
    }
  }
  uint32_t w = (uint32_t)v;
  while (w >= 100) {
    uint32_t q = w / 100;
    end -= 2;
    memcpy(end, ct_digit_pairs + 2 * (w - q * 100), 2);
    w = q;
  }
  if (w >= 10) memcpy(end - 2, ct_digit_pairs + 2 * w, 2);
  else end[-1] = (char)('0' + w);
}

/* The most decimal digits of a uint64_t. */
#define CT_U64_DIGITS 20

/* Writes v in decimal into buf (room for CT_U64_DIGITS, no NUL added), two digits a step
 * without printf; returns the number of digits. */
size_t ct_fmt_u64(char *buf, uint64_t v);

/* Formats a byte count: "512 B", "1.50 KiB", "32.00 MiB", "1.25 GiB". Returns buf. */
const char *ct_fmt_bytes(uint64_t bytes, char *buf, size_t len);

/*
 * Parses a non-negative decimal integer (the whole of s). Returns 0 and sets *v,
 * or -1 when s is empty, not a number or overflows.
 */
int ct_parse_u64(const char *s, uint64_t *v);

/* ---- Tables ----------------------------------------------------------------- */

typedef struct ct_table ct_table;

/*
 * Creates a table with ncols columns. headers[i] names column i; align is a
 * string of ncols letters, 'l' (left) or 'r' (right), for text output.
 * title (may be NULL) is printed above the text table. Returns NULL when out of memory.
 */
ct_table *ct_table_new(const char *title, int ncols, const char *const *headers,
                       const char *align);

/* Starts a new row; the following ct_table_cell calls fill it left to right. */
void ct_table_row(ct_table *t);

/* Sets the next cell of the current row from a printf format. Extra cells are ignored. */
void ct_table_cell(ct_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Makes the next n ct_table_cell calls of the current row write nothing (a column that a
 * row writer fills and this table leaves out). */
void ct_table_skip_cells(ct_table *t, unsigned n);

/* Number of rows added so far. */
size_t ct_table_rows(const ct_table *t);

/*
 * Prints the table: CT_OUT_TEXT as aligned columns under the title (long cells in
 * the last column are not cut), CT_OUT_CSV as RFC 4180 lines (CRLF) with a header row
 * (fields quoted by ct_csv_quote). CT_OUT_JSON is not
 * handled here (write JSON with ct_json). An empty table prints its title and
 * "(none)" in text.
 */
void ct_table_print(const ct_table *t, FILE *f, enum ct_out_format fmt);

/* Prints the table as CSV (ct_table_print's CT_OUT_CSV), without its header row when
 * header is 0: more rows of a block whose header was printed. */
void ct_table_print_csv(const ct_table *t, FILE *f, int header);

/* Frees the table. */
void ct_table_free(ct_table *t);

/*
 * A text table printed row by row, without keeping its rows (a table of millions of
 * rows): the caller makes two passes over its data, first widening widths (ncols
 * entries, zeroed, then given the headers) with every row's cells, then printing the
 * header row and each row with ct_text_row_print. The output is ct_table_print's in
 * CT_OUT_TEXT (align as for ct_table_new; a NULL cell is empty).
 */
void ct_text_widths_add(size_t *widths, int ncols, const char *const *cells);

/* Prints one row of such a table (or its header row: cells = the headers). */
void ct_text_row_print(FILE *f, int ncols, const char *align, const size_t *widths,
                       const char *const *cells);

/* ---- CSV (docs/report.md "CSV": the convention of every command) --------------- */

/* The end of every CSV line the commands write: CRLF, as RFC 4180 says (Python's csv
 * module, pandas, DuckDB and Excel all read it). */
#define CT_CSV_EOL "\r\n"

/* The bytes that make a CSV field quoted (RFC 4180). */
#define CT_CSV_SPECIAL ",\"\r\n"

/*
 * The one RFC 4180 quoting of the project: writes the len bytes of text as one CSV field
 * into buf (cap bytes, no NUL added) -- as they are, or in double quotes with each quote
 * doubled when they hold a comma, quote, CR or LF. Returns the field's length; when it is
 * more than cap nothing is written (ct_csv_quote(NULL, 0, ...) measures).
 */
size_t ct_csv_quote(char *buf, size_t cap, const char *text, size_t len);

/* Writes one CSV field (ct_csv_quote) to f; NULL is an empty field. */
void ct_csv_field(FILE *f, const char *s);

/* Ends a line of output in fmt: CT_CSV_EOL in CSV, "\n" otherwise (also the empty line
 * between two CSV blocks). */
void ct_out_newline(FILE *f, enum ct_out_format fmt);

/* ---- JSON --------------------------------------------------------------------- */

/*
 * A streaming JSON writer: values are written as they are given, with commas and
 * (when pretty) newlines and indentation inserted. Keys are given with
 * ct_json_key before each member value of an object. Nesting depth <= 32.
 */
typedef struct ct_json {
  FILE *f;
  int pretty;
  int depth;
  int after_key;              /* a key was just written; the value follows it */
  unsigned char count[33];    /* items written at each depth (0, 1 = "more") */
} ct_json;

/* Starts a writer on f; pretty = 1 indents by two spaces per level. */
void ct_json_init(ct_json *j, FILE *f, int pretty);

void ct_json_begin_object(ct_json *j);
void ct_json_end_object(ct_json *j);
void ct_json_begin_array(ct_json *j);
void ct_json_end_array(ct_json *j);

/* Writes a member key (escaped); the next value call writes its value. */
void ct_json_key(ct_json *j, const char *key);

/* String values: NULL writes null. Bytes < 0x20, '"' and '\\' are escaped; invalid
 * UTF-8 bytes are written as \u00XX of the byte so the output stays valid JSON. */
void ct_json_string(ct_json *j, const char *s);
void ct_json_string_n(ct_json *j, const char *s, size_t n);
void ct_json_uint(ct_json *j, uint64_t v);
void ct_json_int(ct_json *j, int64_t v);
/* A number with the given decimals; NaN and infinities are written as null. */
void ct_json_double(ct_json *j, double v, int decimals);
void ct_json_bool(ct_json *j, int v);
void ct_json_null(ct_json *j);

/* Key + value shorthands. */
void ct_json_kv_string(ct_json *j, const char *key, const char *s);
void ct_json_kv_uint(ct_json *j, const char *key, uint64_t v);
void ct_json_kv_int(ct_json *j, const char *key, int64_t v);
void ct_json_kv_double(ct_json *j, const char *key, double v, int decimals);
void ct_json_kv_bool(ct_json *j, const char *key, int v);

/* Ends the document with a newline (call after the outermost value). */
void ct_json_finish(ct_json *j);

/* Writes the n bytes at s as the inside of a JSON string (no quotes) to f. */
void ct_json_write_escaped(FILE *f, const char *s, size_t n);

/* The length of the valid UTF-8 sequence starting at s (at most n bytes, n >= 1): 1 for
 * ASCII, 2-4, or 0 when s does not start one (how ct_json_write_escaped tells a
 * character to keep from a stray byte to escape). */
size_t ct_utf8_len(const unsigned char *s, size_t n);

#endif
