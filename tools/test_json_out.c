/*
 * The printf-free writers behind dump --chrome (chrome_out.h, chrome_out.c, output.c)
 * against planted answers and against printf / ct_json_write_escaped themselves:
 * "%.3f" of doubles (ties round to even), durations, decimal integers, and JSON
 * string escaping (control characters, quotes, UTF-8 kept, stray bytes escaped,
 * strings longer than the output buffer). usage: test_json_out
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chrome_out.h"
#include "output.h"

#include "test_check.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t next_random(void) { /* xorshift64 */
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* ct_fmt_fixed3(v) equals want, and snprintf's "%.3f". */
static void check_fixed3(double v, const char *want) {
  char got[64], ref[512];
  ct_fmt_fixed3(v, got, sizeof got);
  snprintf(ref, sizeof ref, "%.3f", v);
  if (want) CHECK(!strcmp(got, want), "fixed3(%.17g) = %s, want %s", v, got, want);
  CHECK(!strcmp(got, ref), "fixed3(%.17g) = %s, printf %s", v, got, ref);
}

static void test_fixed3(void) {
  /* planted: exact ties (odd sixteenths) go to the even neighbour, as glibc's printf */
  check_fixed3(0.0625, "0.062");
  check_fixed3(0.1875, "0.188");
  check_fixed3(0.3125, "0.312");
  check_fixed3(0.4375, "0.438");
  check_fixed3(1000000.0625, "1000000.062");
  check_fixed3(0.0, "0.000");
  check_fixed3(-0.0, "-0.000");
  check_fixed3(0.0005, "0.001"); /* the double is a little above 0.0005 */
  check_fixed3(0.0015, "0.002");
  check_fixed3(1.0005, "1.000"); /* and this one a little below 1.0005 */
  check_fixed3(999.9995, "1000.000");
  check_fixed3(12.3456, "12.346");
  check_fixed3(1e12, "1000000000000.000"); /* printf's own path from here */
  check_fixed3(-1.5, "-1.500");
  check_fixed3(1e300 * 1e300, "inf");
  /* swept: bandwidths (bytes / ns), ns / 1e3, / 1e6, / 1e9, random magnitudes */
  for (int i = 0; i < 400000; i++) {
    uint64_t r = next_random(), bytes = r >> (r & 63), ns = (next_random() >> (r % 50)) + 1;
    check_fixed3((double)bytes / (double)ns, NULL);
    check_fixed3(ns / 1e3, NULL);
    check_fixed3(ns / 1e6, NULL);
    check_fixed3(ns / 1e9, NULL);
    check_fixed3((double)(r % 2000000000) / 16.0, NULL); /* many exact ties */
    check_fixed3((double)(r % 100000000) / 1000.0 + 0.0005, NULL);
  }
}

/* ct_fmt_duration(ns) equals want and the printf formulas it had before. */
static void check_duration(uint64_t ns, const char *want) {
  char got[32], small[16], ref[64];
  ct_fmt_duration(ns, got, sizeof got);
  if (ns < 1000) snprintf(ref, sizeof ref, "%llu ns", (unsigned long long)ns);
  else if (ns < 1000000) snprintf(ref, sizeof ref, "%.3f us", ns / 1e3);
  else if (ns < 1000000000) snprintf(ref, sizeof ref, "%.3f ms", ns / 1e6);
  else snprintf(ref, sizeof ref, "%.3f s", ns / 1e9);
  if (want) CHECK(!strcmp(got, want), "duration(%llu) = %s, want %s", (unsigned long long)ns, got, want);
  CHECK(!strcmp(got, ref), "duration(%llu) = %s, printf %s", (unsigned long long)ns, got, ref);
  ct_fmt_duration(ns, small, sizeof small); /* a small buffer: printf's cut */
  snprintf(got, sizeof small, "%.15s", ref);
  CHECK(!strcmp(small, got), "duration(%llu) in 16 bytes = %s, want %s", (unsigned long long)ns,
        small, got);
}

static void test_duration(void) {
  check_duration(0, "0 ns");
  check_duration(999, "999 ns");
  check_duration(1000, "1.000 us");
  check_duration(12345, "12.345 us");
  check_duration(999999, "999.999 us");
  check_duration(1000000, "1.000 ms");
  check_duration(1234500, "1.234 ms"); /* 1.2345 is a little below in binary */
  check_duration(2500500, "2.501 ms");
  check_duration(999999999, "1000.000 ms");
  check_duration(1000000000, "1.000 s");
  check_duration(18446744073709551615ull, "18446744073.710 s");
  for (int i = 0; i < 300000; i++) {
    uint64_t r = next_random();
    check_duration(r >> (r & 63), NULL);
    check_duration((r % 100000000) * 1000 + 500, NULL); /* halfway in the last digit */
  }
}

/* ct_decimal_len, ct_fmt_digits and ct_fmt_u64 against "%llu". */
static void check_u64(uint64_t v) {
  char ref[32], got[32];
  int n = snprintf(ref, sizeof ref, "%llu", (unsigned long long)v);
  unsigned len = ct_decimal_len(v);
  CHECK((int)len == n, "decimal_len(%s) = %u", ref, len);
  memset(got, 0, sizeof got);
  ct_fmt_digits(got + len, v);
  CHECK(!strcmp(got, ref), "digits(%s) = %s", ref, got);
  memset(got, 0, sizeof got);
  size_t n2 = ct_fmt_u64(got, v); /* output.c's, for CSV and JSON */
  CHECK((int)n2 == n && !strcmp(got, ref), "ct_fmt_u64(%s) = %s", ref, got);
}

static void test_u64(void) {
  uint64_t p = 1;
  for (int i = 0; i < 20; i++, p *= 10) {
    check_u64(p);
    check_u64(p - 1);
    check_u64(p + 1);
  }
  for (int b = 0; b < 64; b++) {
    check_u64(1ull << b);
    check_u64((1ull << b) - 1);
  }
  check_u64(UINT64_MAX);
  for (int i = 0; i < 200000; i++) {
    uint64_t r = next_random();
    check_u64(r >> (r & 63));
  }
}

/* The bytes chr_put_escaped writes for s[0..n) (through a document's buffer). */
static char *escaped_by_chrome(const char *s, size_t n, size_t *len) {
  char *mem = NULL;
  ct_chrome *c = calloc(1, sizeof *c);
  c->out = malloc(CHR_OUT_CAP);
  c->f = open_memstream(&mem, len);
  chr_put_char(c, '<');
  chr_put_escaped(c, s, n);
  chr_put_char(c, '>');
  chr_out_flush(c);
  fclose(c->f);
  free(c->out);
  free(c);
  return mem;
}

/* The same from ct_json_write_escaped. */
static char *escaped_by_output(const char *s, size_t n, size_t *len) {
  char *mem = NULL;
  FILE *f = open_memstream(&mem, len);
  fputc('<', f);
  ct_json_write_escaped(f, s, n);
  fputc('>', f);
  fclose(f);
  return mem;
}

static void check_escaped(const char *s, size_t n, const char *want) {
  size_t a, b;
  char *got = escaped_by_chrome(s, n, &a), *ref = escaped_by_output(s, n, &b);
  if (want) CHECK(a == strlen(want) && !memcmp(got, want, a), "escaped %.*s, want %s", (int)a, got, want);
  CHECK(a == b && !memcmp(got, ref, a), "escaped (%zu bytes) differs from ct_json_write_escaped: %.60s",
        n, got);
  free(got);
  free(ref);
}

static void test_escaped(void) {
  check_escaped("plain kernel<float>(int)", 24, "<plain kernel<float>(int)>");
  check_escaped("q\"b\\s", 5, "<q\\\"b\\\\s>");
  check_escaped("\n\t\r\x01\x1f\x7f", 6, "<\\n\\t\\r\\u0001\\u001f\x7f>");
  check_escaped("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14, "<caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80>");
  check_escaped("bad \xff \xc0\xaf end\xc3", 13, "<bad \\u00ff \\u00c0\\u00af end\\u00c3>");
  check_escaped("nul\0in", 6, "<nul\\u0000in>");
  static char big[3 * CHR_OUT_CAP];
  for (size_t i = 0; i < sizeof big; i++) big[i] = (char)('a' + i % 26);
  big[CHR_OUT_CAP + 7] = '"';
  check_escaped(big, sizeof big, NULL); /* longer than the buffer */
  char s[300];
  for (int i = 0; i < 20000; i++) {
    size_t n = next_random() % sizeof s;
    for (size_t j = 0; j < n; j++) {
      uint64_t r = next_random();
      unsigned odds = i % 2 ? 4 : 64; /* mostly ASCII; or long plain runs (8 at a time) */
      s[j] = (char)(r % odds ? 0x20 + r / 64 % 95 : r / 64 % 256);
    }
    check_escaped(s, n, NULL);
  }
}

int main(void) {
  test_fixed3();
  test_duration();
  test_u64();
  test_escaped();
  if (failures) {
    printf("%d failures\n", failures);
    return 1;
  }
  printf("json writers: all checks passed\n");
  return 0;
}
