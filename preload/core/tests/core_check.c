/*
 * Reads one trace written by core_emitter with the shared reader and checks what
 * the core promises, printing "key value" lines for the test driver:
 *   - the first record after strings is PROCESS; each thread's THREAD record
 *     comes before its other records;
 *   - every string id is defined before a record uses it, and each API name is
 *     the string the emitter planted for that corr;
 *   - per thread, API sequence numbers strictly increase (no duplicates, order kept);
 *   - END (when present): records = records before it, drops = sum of DROP counts.
 * usage: core_check FILE     exit 0 when every check holds, 1 otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader.h"

#define SEQ_BASE 1000000000ull
#define MAX_T 64
#define MAX_TIDS 256

static int failures;
#define FAIL(...)                          \
  do {                                     \
    if (failures++ < 10) {                 \
      fprintf(stderr, "core_check: " __VA_ARGS__); \
      fputc('\n', stderr);                 \
    }                                      \
  } while (0)

static int string_is(const ct_reader *r, uint64_t id, const char *want) {
  size_t len;
  const char *s = ct_reader_string(r, id, &len);
  return s && len == strlen(want) && memcmp(s, want, len) == 0;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: core_check FILE\n");
    return 2;
  }
  char err[256];
  ct_reader *r = ct_reader_open(argv[1], err, sizeof err);
  if (!r) {
    fprintf(stderr, "core_check: %s\n", err);
    return 1;
  }
  unsigned long long api[MAX_T] = {0}, drops_by_thread_tid = 0, drops = 0, records = 0;
  unsigned long long last_seq[MAX_T], strings = 0, threads = 0, tracer = 0, flush_bytes = 0;
  unsigned long long seen_tid[MAX_TIDS] = {0}, n_seen_tid = 0, ring_spans = 0;
  unsigned long long max_string = 0;
  int have_process = 0, have_end = 0;
  struct ct_process proc = {0};
  struct ct_end end = {0};
  for (int i = 0; i < MAX_T; i++) last_seq[i] = ~0ull;
  ct_record rec;
  while (ct_reader_next(r, &rec)) {
    if (have_end) FAIL("record of kind %u after END", rec.kind);
    records++;
    switch (rec.kind) {
    case CT_KIND_STRING:
      strings++;
      if (rec.str_len > max_string) max_string = rec.str_len;
      break;
    case CT_KIND_PROCESS:
      if (have_process) FAIL("second PROCESS record");
      have_process = 1;
      proc = rec.u.process;
      if (!ct_reader_string(r, proc.host, NULL)) FAIL("PROCESS host string undefined");
      if (!ct_reader_string(r, proc.cmdline, NULL)) FAIL("PROCESS cmdline string undefined");
      break;
    case CT_KIND_THREAD:
      if (!have_process) FAIL("THREAD before PROCESS");
      threads++;
      if (!ct_reader_string(r, rec.u.thread.name, NULL)) FAIL("THREAD name undefined");
      if (n_seen_tid < MAX_TIDS) seen_tid[n_seen_tid++] = rec.u.thread.tid;
      break;
    case CT_KIND_API: {
      if (!have_process) FAIL("API before PROCESS");
      int known = 0;
      for (unsigned long long i = 0; i < n_seen_tid; i++) known |= seen_tid[i] == rec.u.api.tid;
      if (!known) FAIL("API of tid %llu before its THREAD", (unsigned long long)rec.u.api.tid);
      unsigned long long ti = rec.u.api.corr / SEQ_BASE - 1, k = rec.u.api.corr % SEQ_BASE;
      if (ti >= MAX_T || ti != rec.u.api.result) {
        FAIL("API with corr %llu not planted", (unsigned long long)rec.u.api.corr);
        break;
      }
      if (last_seq[ti] != ~0ull && k <= last_seq[ti])
        FAIL("thread %llu: sequence %llu after %llu", ti, k, last_seq[ti]);
      last_seq[ti] = k;
      api[ti]++;
      size_t len;
      const char *s = ct_reader_string(r, rec.u.api.name, &len);
      if (!s) {
        FAIL("API name id %llu used before its STRING", (unsigned long long)rec.u.api.name);
      } else {
        char want[64];
        snprintf(want, sizeof want, "t%llu-s", ti);
        if (len < strlen(want) || memcmp(s, want, strlen(want)) != 0)
          FAIL("API name '%.*s' does not match thread %llu", (int)len, s, ti);
      }
      break;
    }
    case CT_KIND_DROP: drops += rec.u.drop.count; drops_by_thread_tid++; break;
    case CT_KIND_TRACER:
      tracer++;
      if (string_is(r, rec.u.tracer.what, "flush")) flush_bytes += rec.u.tracer.amount;
      else if (string_is(r, rec.u.tracer.what, "ring")) {
        ring_spans++;
        printf("ring_tid_%llu 1\n", (unsigned long long)rec.u.tracer.tid);
      }
      else if (!ct_reader_string(r, rec.u.tracer.what, NULL)) FAIL("TRACER label undefined");
      break;
    case CT_KIND_END:
      have_end = 1;
      end = rec.u.end;
      if (end.records != records - 1)
        FAIL("END says %llu records, file has %llu", (unsigned long long)end.records, records - 1);
      if (end.drops != drops)
        FAIL("END says %llu drops, DROP records sum to %llu", (unsigned long long)end.drops, drops);
      break;
    default: break;
    }
  }
  const ct_read_status *st = ct_reader_status(r);
  unsigned long long total_api = 0;
  for (int i = 0; i < MAX_T; i++) {
    total_api += api[i];
    if (api[i]) printf("api_t%d %llu\n", i, api[i]);
  }
  printf("api %llu\ndrops %llu\ndrop_records %llu\nstrings %llu\nthreads %llu\n", total_api,
         drops, drops_by_thread_tid, strings, threads);
  printf("max_string %llu\nring_spans %llu\n", max_string, ring_spans);
  printf("tracer %llu\nflush_bytes %llu\nrecords %llu\nend %d\n", tracer, flush_bytes, records,
         have_end);
  printf("pid %llu\nppid %llu\nprocess %d\n", (unsigned long long)proc.pid,
         (unsigned long long)proc.ppid, have_process);
  printf("damaged %d\nclean_end %d\nframes %llu\n", st->damaged, st->clean_end,
         (unsigned long long)st->frames);
  printf("message %s\n", st->message[0] ? st->message : "-");
  ct_reader_close(r);
  if (failures) fprintf(stderr, "core_check: %d check(s) failed\n", failures);
  return failures ? 1 : 0;
}
