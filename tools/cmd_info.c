/* cutrace info: per trace file, its version, process, devices, time span, record
 * counts per kind, drops, and whether it ended cleanly or where it stopped. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "codec.h"
#include "commands.h"
#include "output.h"
#include "pauses.h"
#include "progress.h"
#include "reader.h"

static void print_string(const ct_reader *r, const char *label, uint64_t id, int nul_as_space) {
  size_t len = 0;
  const char *s = ct_reader_string(r, id, &len);
  printf("  %-14s ", label);
  if (!s) {
    printf("%s\n", id ? "(unknown string)" : "-");
    return;
  }
  for (size_t i = 0; i < len; i++) putchar(s[i] == 0 && nul_as_space ? ' ' : s[i]);
  putchar('\n');
}

static int info_file(const char *path, void *arg) {
  int *status = arg;
  char err[300];
  ct_reader *r = ct_reader_open(path, err, sizeof err);
  if (!r) {
    fprintf(stderr, "cutrace: %s\n", err);
    *status = 2;
    return 0;
  }
  uint64_t counts[CT_MAX_KINDS] = {0}, drops = 0, first = UINT64_MAX, last = 0;
  struct ct_process proc = {0};
  int have_proc = 0;
  ct_pause_list pauses = {0};
  char why[32] = "";
  ct_record rec;
  uint64_t n = 0;
  while (ct_reader_next(r, &rec)) {
    if ((++n & 0xfffff) == 0 && ct_model_progress_hook) ct_model_progress_hook(path, n);
    counts[rec.kind]++;
    uint64_t b = 0, e = 0;
    switch (rec.kind) {
    case CT_KIND_PROCESS: proc = rec.u.process; have_proc = 1; break;
    case CT_KIND_DEVICE: {
      size_t len = 0;
      const char *n = ct_reader_string(r, rec.u.device.name, &len);
      printf("%s: device %llu: %.*s (sm %llu.%llu, %llu SMs, %.1f GiB)\n", path,
             (unsigned long long)rec.u.device.device, (int)(n ? len : 1), n ? n : "?",
             (unsigned long long)rec.u.device.cc_major, (unsigned long long)rec.u.device.cc_minor,
             (unsigned long long)rec.u.device.sm_count, rec.u.device.mem_bytes / 1073741824.0);
      break;
    }
    case CT_KIND_DROP: drops += rec.u.drop.count; break;
    case CT_KIND_PAUSE: {
      size_t len = 0;
      const char *w = ct_reader_string(r, rec.u.pause.why, &len);
      if (!pauses.n && w) snprintf(why, sizeof why, "%.*s", (int)len, w);
      (void)ct_pauses_add(&pauses, &rec.u.pause, NULL); /* without memory: fewer shown */
      break;
    }
    case CT_KIND_API: b = rec.u.api.begin_ns; e = rec.u.api.end_ns; break;
    case CT_KIND_GPU: b = rec.u.gpu.start_ns; e = rec.u.gpu.end_ns; break;
    }
    if (e) {
      if (b < first) first = b;
      if (e > last) last = e;
    }
  }
  const ct_read_status *st = ct_reader_status(r);
  cli_progress_done();
  cli_progress_start("info");
  printf("%s:\n  %-14s %u.%u\n", path, "format", st->major, st->minor);
  if (have_proc) {
    printf("  %-14s %llu (parent %llu)\n", "pid", (unsigned long long)proc.pid,
           (unsigned long long)proc.ppid);
    print_string(r, "command", proc.cmdline, 1);
    print_string(r, "host", proc.host, 0);
    print_string(r, "executable", proc.exe, 0);
    printf("  %-14s driver %llu, runtime %llu\n", "cuda", (unsigned long long)proc.driver_version,
           (unsigned long long)proc.runtime_version);
  } else {
    printf("  %-14s no PROCESS record\n", "process");
  }
  if (last)
    printf("  %-14s %.6f s\n", "time span", (double)(last - first) / 1e9);
  printf("  %-14s %llu in %llu frames\n", "records", (unsigned long long)st->records,
         (unsigned long long)st->frames);
  for (unsigned k = 1; k < CT_MAX_KINDS; k++)
    if (counts[k]) printf("    %-12s %llu\n", ct_kind_name(k), (unsigned long long)counts[k]);
  printf("  %-14s %llu\n", "dropped", (unsigned long long)drops);
  if (pauses.n) {
    char b[24];
    printf("  %-14s %zu times (first: %s), %s within the time span; nothing of the program "
           "was recorded then\n", "paused", pauses.n, why,
           ct_fmt_duration(last ? ct_pauses_within(&pauses, first, last) : 0, b, sizeof b));
  }
  ct_pauses_free(&pauses);
  if (st->damaged) {
    printf("  %-14s partial: %s (%llu bytes skipped)\n", "end", st->message,
           (unsigned long long)st->skipped_bytes);
    fprintf(stderr, "cutrace: %s: %s; %llu records read\n", path, st->message,
            (unsigned long long)st->records);
    if (*status < 1) *status = 1;
  } else {
    printf("  %-14s %s\n", "end",
           st->clean_end ? "clean" : "no END record (the process crashed, was killed or still runs)");
  }
  ct_reader_close(r);
  return 0;
}

int cmd_info(int argc, char **argv) {
  cli_progress_start("info");
  int rc = cli_run_on_traces(argc, argv, "cutrace info [DIR|FILE...]", info_file);
  cli_progress_done();
  return rc;
}
