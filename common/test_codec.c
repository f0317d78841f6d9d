/*
 * Tests of the codec and reader: exact round trip, then every kind of damage a
 * trace can suffer (truncation anywhere, flipped bytes, empty, foreign, newer).
 */
#include <assert.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codec.h"
#include "reader.h"
#include "scratch.h"

static int failures;
#define CHECK(cond)                                                        \
  do {                                                                     \
    if (!(cond)) {                                                         \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                          \
    }                                                                      \
  } while (0)

#define NREC 200000

static void make_api(ct_record *r, uint64_t i) {
  memset(r, 0, sizeof *r);
  r->kind = CT_KIND_API;
  r->u.api.tid = 1000 + i % 3;
  r->u.api.name = 1 + i % 2;
  r->u.api.begin_ns = 1000000000ull + i * 3217 + (i * 7919) % 101;
  r->u.api.end_ns = r->u.api.begin_ns + 2000 + i % 17;
  r->u.api.corr = i + 1;
  r->u.api.stream = i % 4;
  r->u.api.result = (i % 1000 == 0) ? 700 : 0;
  r->u.api.flags = CT_API_TIMED;
}

static void make_gpu(ct_record *r, uint64_t i) {
  memset(r, 0, sizeof *r);
  r->kind = CT_KIND_GPU;
  r->u.gpu.corr = i + 1;
  r->u.gpu.stream = i % 4;
  r->u.gpu.start_ns = 1000005000ull + i * 3217;
  r->u.gpu.end_ns = r->u.gpu.start_ns + 10000 - (i % 5);
  r->u.gpu.type = CT_GPU_KERNEL;
  r->u.gpu.name = 3;
}

static const char *write_trace(const char *path, int with_end) {
  unlink(path);
  ct_file_writer *w = ct_file_writer_open(path, 64 * 1024);
  assert(w);
  assert(ct_file_writer_add_string(w, 1, "cudaLaunchKernel", 16) == 0);
  assert(ct_file_writer_add_string(w, 2, "cudaMemcpyAsync", 15) == 0);
  assert(ct_file_writer_add_string(w, 3, "_Z4vaddPKfS0_Pfi", 16) == 0);
  for (uint64_t i = 0; i < NREC; i++) {
    ct_record r;
    make_api(&r, i);
    assert(ct_file_writer_add(w, &r) == 0);
    make_gpu(&r, i);
    assert(ct_file_writer_add(w, &r) == 0);
  }
  if (with_end) {
    ct_record e = {.kind = CT_KIND_END};
    e.u.end.records = 2 * NREC;
    assert(ct_file_writer_add(w, &e) == 0);
  }
  assert(ct_file_writer_close(w) == 0);
  return path;
}

/* Reads path, checking that every record is the expected one. Returns the count of
 * API+GPU records, and fills *st. The records may have holes (damage skipped), but
 * each one read must be exactly what was written. */
static uint64_t read_check(const char *path, ct_read_status *st, uint64_t *first_missing) {
  char err[256];
  ct_reader *r = ct_reader_open(path, err, sizeof err);
  if (!r) {
    memset(st, 0, sizeof *st);
    snprintf(st->message, sizeof st->message, "%s", err);
    return (uint64_t)-1;
  }
  ct_record rec, want;
  uint64_t n = 0, expect_next = 0;
  *first_missing = (uint64_t)-1;
  while (ct_reader_next(r, &rec)) {
    if (rec.kind == CT_KIND_STRING || rec.kind == CT_KIND_END) continue;
    uint64_t i = rec.kind == CT_KIND_API ? rec.u.api.corr - 1 : rec.u.gpu.corr - 1;
    uint64_t seq = 2 * i + (rec.kind == CT_KIND_GPU);
    if (seq != expect_next && *first_missing == (uint64_t)-1) *first_missing = expect_next;
    CHECK(seq >= expect_next);
    expect_next = seq + 1;
    if (rec.kind == CT_KIND_API) make_api(&want, i);
    else make_gpu(&want, i);
    CHECK(memcmp(rec.u.v, want.u.v, sizeof want.u.v) == 0);
    n++;
  }
  if (*first_missing == (uint64_t)-1 && expect_next != 2 * NREC) *first_missing = expect_next;
  *st = *ct_reader_status(r);
  size_t len;
  const char *s = ct_reader_string(r, 3, &len);
  CHECK(s && len == 16 && strcmp(s, "_Z4vaddPKfS0_Pfi") == 0);
  ct_reader_close(r);
  return n;
}

/* Reads path with the API records skipped (ct_reader_skip_kinds): returns the GPU
 * records read, each checked exact and in order, and fills *st. */
static uint64_t read_skipping(const char *path, ct_read_status *st) {
  char err[256];
  ct_reader *r = ct_reader_open(path, err, sizeof err);
  if (!r) return (uint64_t)-1;
  ct_reader_skip_kinds(r, 1ull << CT_KIND_API);
  ct_record rec, want;
  uint64_t n = 0, last_corr = 0;
  while (ct_reader_next(r, &rec)) {
    CHECK(rec.kind != CT_KIND_API);
    if (rec.kind != CT_KIND_GPU) continue;
    CHECK(rec.u.gpu.corr > last_corr);
    last_corr = rec.u.gpu.corr;
    make_gpu(&want, rec.u.gpu.corr - 1);
    CHECK(memcmp(rec.u.v, want.u.v, sizeof want.u.v) == 0);
    n++;
  }
  *st = *ct_reader_status(r);
  ct_reader_close(r);
  return n;
}

/* ct_skip_record takes exactly the bytes ct_decode_record does, and fails where it
 * fails: varints of 1 to 10 bytes, every cut of a record, an 11-byte varint. */
static void check_skip_record(void) {
  const ct_schema *sc = ct_schema_native();
  static const uint64_t values[] = {0, 1, 63, 64, 127, 128, 8191, 1ull << 20, 1ull << 35,
                                    1ull << 49, 1ull << 56, 1ull << 62, UINT64_MAX - 5};
  size_t nv = sizeof values / sizeof values[0];
  for (size_t k = 0; k < 4 * nv; k++) {
    ct_record r;
    memset(&r, 0, sizeof r);
    r.kind = k % 2 ? CT_KIND_API : CT_KIND_GPU;
    for (unsigned f = 0; f < ct_kind_nfields(r.kind); f++) r.u.v[f] = values[(k + 3 * f) % nv];
    ct_delta_state enc, dec;
    ct_delta_reset(&enc);
    uint8_t buf[CT_MAX_RECORD_BYTES + 64];
    memset(buf, 0x80, sizeof buf); /* continuation bytes past the end: must not be read */
    size_t len = ct_encode_record(&enc, &r, buf);
    for (size_t n = 0; n <= len; n++) {
      ct_record out;
      ct_delta_reset(&dec);
      size_t want = ct_decode_record(sc, &dec, buf, n, &out);
      CHECK(ct_skip_record(sc, buf, n) == want);
      CHECK(want == (n == len ? len : 0));
    }
    CHECK(ct_skip_record(sc, buf, sizeof buf) == len); /* the word-at-a-time path */
  }
  uint8_t bad[64];
  memset(bad, 0x80, sizeof bad);
  bad[0] = CT_KIND_GPU;
  bad[11] = 1; /* the first varint is 11 bytes long (10 continuation bytes) */
  ct_delta_state dec;
  ct_record out;
  ct_delta_reset(&dec);
  CHECK(ct_decode_record(sc, &dec, bad, sizeof bad, &out) == 0);
  CHECK(ct_skip_record(sc, bad, sizeof bad) == 0);
  size_t exact = 1 + 11 + (ct_kind_nfields(CT_KIND_GPU) - 1); /* the others one byte each */
  for (size_t i = 12; i < sizeof bad; i++) bad[i] = 0;
  CHECK(ct_skip_record(sc, bad, exact) == 0); /* the byte-at-a-time path */
  bad[10] = 1; /* now 10 bytes: fine */
  bad[11] = 0;
  ct_delta_reset(&dec);
  size_t want = ct_decode_record(sc, &dec, bad, sizeof bad, &out);
  CHECK(want == exact - 1 && ct_skip_record(sc, bad, sizeof bad) == want);
  CHECK(ct_skip_record(sc, bad, exact - 1) == want);
  uint8_t str[8] = {CT_KIND_STRING, 2, 2, 'h', 'i'};
  CHECK(ct_skip_record(sc, str, sizeof str) == 0); /* strings are always decoded */
}

/* Format 1.6: KERNEL_ATTR, OCCUPANCY, LAUNCH (with attr) and DEVICE (with the SM limits)
 * records, interleaved in one delta chunk with values that step up and down and reach
 * the 64-bit extremes, decode to exactly what was encoded, every field. */
static void check_kattr_round_trip(void) {
  const ct_schema *sc = ct_schema_native();
  static const uint64_t values[] = {0, 1, 255, 65536, 232448, 1ull << 40, UINT64_MAX, 7};
  static const uint8_t kinds[] = {CT_KIND_KERNEL_ATTR, CT_KIND_OCCUPANCY, CT_KIND_LAUNCH,
                                  CT_KIND_DEVICE};
  CHECK(ct_kind_nfields(CT_KIND_KERNEL_ATTR) == 10 && ct_kind_nfields(CT_KIND_OCCUPANCY) == 5);
  CHECK(ct_kind_nfields(CT_KIND_LAUNCH) == 10 && ct_kind_nfields(CT_KIND_DEVICE) == 15);
  enum { N = 64 };
  static uint8_t buf[N * (CT_MAX_RECORD_BYTES + 1)];
  ct_record want[N];
  ct_delta_state enc, dec;
  ct_delta_reset(&enc);
  size_t len = 0;
  for (unsigned i = 0; i < N; i++) {
    memset(&want[i], 0, sizeof want[i]);
    want[i].kind = kinds[i % 4];
    for (unsigned f = 0; f < ct_kind_nfields(want[i].kind); f++)
      want[i].u.v[f] = values[(i * 3 + f * 5) % 8];
    len += ct_encode_record(&enc, &want[i], buf + len);
  }
  ct_delta_reset(&dec);
  size_t at = 0;
  for (unsigned i = 0; i < N; i++) {
    ct_record got;
    size_t n = ct_decode_record(sc, &dec, buf + at, len - at, &got);
    CHECK(n > 0 && got.kind == want[i].kind && got.nfields == ct_kind_nfields(want[i].kind));
    CHECK(memcmp(got.u.v, want[i].u.v, ct_kind_nfields(want[i].kind) * sizeof(uint64_t)) == 0);
    at += n ? n : len;
  }
  CHECK(at == len);
}

static void copy_prefix(const char *src, const char *dst, off_t n) {
  FILE *in = fopen(src, "rb");
  unlink(dst);
  FILE *out = fopen(dst, "wb");
  assert(in && out);
  char buf[65536];
  while (n > 0) {
    size_t want = n < (off_t)sizeof buf ? (size_t)n : sizeof buf;
    size_t got = fread(buf, 1, want, in);
    if (!got) break;
    fwrite(buf, 1, got, out);
    n -= (off_t)got;
  }
  fclose(in);
  fclose(out);
}

int main(void) {
  char dir[256];
  if (!ct_scratch_dir("ct-codec-", dir, sizeof dir)) {
    perror("test_codec: scratch directory");
    return 1;
  }
  char full[300], part[300];
  snprintf(full, sizeof full, "%s/full.ctr", dir);
  snprintf(part, sizeof part, "%s/part.ctr", dir);

  /* Round trip. */
  write_trace(full, 1);
  ct_read_status st;
  uint64_t missing;
  CHECK(read_check(full, &st, &missing) == 2 * NREC);
  CHECK(st.clean_end && !st.damaged && missing == (uint64_t)-1);
  struct stat sb;
  stat(full, &sb);
  printf("round trip: %d records in %lld bytes (%.2f bytes/record)\n", 2 * NREC,
         (long long)sb.st_size, (double)sb.st_size / (2 * NREC));
  check_skip_record();
  check_kattr_round_trip();
  ct_read_status skst;
  CHECK(read_skipping(full, &skst) == NREC);
  CHECK(skst.records == st.records && skst.clean_end);

  /* Truncation at many points: always a clean prefix, always reported. */
  uint64_t last = 0;
  for (int cut = 1; cut < 64; cut++) {
    off_t n = sb.st_size * cut / 64 + cut;
    copy_prefix(full, part, n);
    uint64_t got = read_check(part, &st, &missing);
    if (got == (uint64_t)-1) {
      CHECK(n < 200); /* only a cut inside the header may fail to open */
      continue;
    }
    CHECK(st.damaged && !st.clean_end && st.message[0]);
    CHECK(missing == got); /* a prefix: nothing missing before the cut */
    CHECK(got >= last);
    last = got;
    ct_read_status skst;
    CHECK(read_skipping(part, &skst) == got / 2); /* the same prefix (API, GPU, API, ...) */
    CHECK(skst.records == st.records && skst.damaged && !strcmp(skst.message, st.message));
  }
  CHECK(last > NREC); /* late cuts keep most of the records */

  /* A flipped byte in the middle: records before it all present, later frames back. */
  copy_prefix(full, part, sb.st_size);
  int fd = open(part, O_RDWR);
  off_t mid = sb.st_size / 2;
  unsigned char b;
  pread(fd, &b, 1, mid);
  b ^= 0x5a;
  pwrite(fd, &b, 1, mid);
  close(fd);
  uint64_t got = read_check(part, &st, &missing);
  CHECK(st.damaged && st.bad_frames >= 1 && st.message[0]);
  CHECK(missing > NREC / 2 && missing < 2 * NREC);
  CHECK(got > missing); /* recovered frames after the damage */
  CHECK(read_skipping(part, &skst) > NREC / 4);
  CHECK(skst.records == st.records && skst.bad_frames == st.bad_frames &&
        !strcmp(skst.message, st.message));
  printf("corrupt middle: %llu of %d records, first missing %llu: %s\n",
         (unsigned long long)got, 2 * NREC, (unsigned long long)missing, st.message);

  /* No END record: readable, not damaged, not clean. */
  write_trace(part, 0);
  CHECK(read_check(part, &st, &missing) == 2 * NREC);
  CHECK(!st.damaged && !st.clean_end);

  /* Empty, foreign and newer files fail to open with a reason. */
  char err[256];
  unlink(part);
  close(open(part, O_CREAT | O_WRONLY, 0600));
  CHECK(!ct_reader_open(part, err, sizeof err) && strstr(err, "empty"));
  FILE *f = fopen(part, "wb");
  fputs("#!/bin/sh\necho this is not a trace\n", f);
  fclose(f);
  CHECK(!ct_reader_open(part, err, sizeof err) && strstr(err, "not a cutrace trace"));
  uint8_t hdr[1024];
  size_t hn = ct_write_file_header(hdr, sizeof hdr);
  ((struct ct_file_header *)hdr)->major = CT_FORMAT_MAJOR + 1;
  f = fopen(part, "wb");
  fwrite(hdr, 1, hn, f);
  fclose(f);
  CHECK(!ct_reader_open(part, err, sizeof err) && strstr(err, "newer"));

  /* Directory expansion. */
  ct_scratch_done(dir, !failures);
  printf("%s\n", failures ? "FAIL" : "ok");
  return failures ? 1 : 0;
}
