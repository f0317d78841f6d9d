/* cutrace info: per trace file, its version, process, rank in a distributed job,
 * devices, time span, record counts per kind, drops, and whether it ended cleanly or
 * where it stopped; per directory, the processes that ran without CUDA (no file). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "cli.h"
#include "codec.h"
#include "commands.h"
#include "identity.h"
#include "nocuda_list.h"
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

/* One line per DEVICE record, in the file's block: name, compute capability, SMs,
 * memory, and since format 1.4 the PCI bus id and UUID that tell the devices of
 * processes on one node apart. */
static void print_device(const ct_reader *r, const struct ct_device *d) {
  size_t len = 0, plen = 0, ulen = 0;
  const char *n = ct_reader_string(r, d->name, &len);
  const char *pci = d->pci_bus_id ? ct_reader_string(r, d->pci_bus_id, &plen) : NULL;
  const char *uuid = d->uuid ? ct_reader_string(r, d->uuid, &ulen) : NULL;
  char label[32];
  snprintf(label, sizeof label, "device %llu", (unsigned long long)d->device);
  printf("  %-14s %.*s (sm %llu.%llu, %llu SMs, %.1f GiB", label, (int)(n ? len : 1), n ? n : "?",
         (unsigned long long)d->cc_major, (unsigned long long)d->cc_minor,
         (unsigned long long)d->sm_count, d->mem_bytes / 1073741824.0);
  if (pci) printf(", pci %.*s", (int)plen, pci);
  if (uuid) printf(", %.*s", (int)ulen, uuid);
  printf(")\n");
}

/* A CUDA version as the API gives it (13000) written as 13.0; "unknown" for 0. */
static const char *cuda_version(uint64_t v, char *buf, size_t len) {
  if (!v)
    snprintf(buf, len, "unknown");
  else
    snprintf(buf, len, "%llu.%llu", (unsigned long long)(v / 1000), (unsigned long long)(v % 1000 / 10));
  return buf;
}

/* The JOB record's lines: rank, job id, CUDA_VISIBLE_DEVICES, warnings. */
static void print_job(const ct_reader *r, const struct ct_job *job, char (*warnings)[200],
                      unsigned nwarnings) {
  if (job->known & CT_JOB_RANK) {
    size_t len = 0;
    const char *src = ct_reader_string(r, job->source, &len);
    printf("  %-14s %llu", "rank", (unsigned long long)job->rank);
    if (job->known & CT_JOB_WORLD_SIZE)
      printf(" of %llu", (unsigned long long)job->world_size);
    if (job->known & CT_JOB_LOCAL_RANK) {
      printf(", local rank %llu", (unsigned long long)job->local_rank);
      if (job->known & CT_JOB_LOCAL_WORLD_SIZE)
        printf(" of %llu", (unsigned long long)job->local_world_size);
    }
    if (job->known & CT_JOB_NODE_RANK) printf(", node %llu", (unsigned long long)job->node_rank);
    printf(" (from %.*s)\n", (int)(src ? len : 1), src ? src : "?");
  }
  if (job->job_id) print_string(r, "job", job->job_id, 0);
  if (job->known & CT_JOB_VISIBLE_DEVICES) {
    size_t len = 0;
    const char *v = ct_reader_string(r, job->visible_devices, &len);
    printf("  %-14s CUDA_VISIBLE_DEVICES=\"%.*s\"\n", "devices", (int)(v ? len : 0), v ? v : "");
  }
  for (unsigned i = 0; i < nwarnings; i++) printf("  %-14s %s\n", "warning", warnings[i]);
}

/* The .nocuda list of the directory of the file being shown (files come directory by
 * directory: one list is kept). */
static char listed_dir[4096];
static ct_nocuda_list listed;

static const ct_nocuda_list *nocuda_of_file(const char *path) {
  const char *slash = strrchr(path, '/');
  char dir[sizeof listed_dir];
  if (!slash) snprintf(dir, sizeof dir, ".");
  else snprintf(dir, sizeof dir, "%.*s", (int)(slash == path ? 1 : slash - path), path);
  if (strcmp(dir, listed_dir) != 0) {
    ct_nocuda_free(&listed);
    (void)ct_nocuda_read(dir, &listed); /* unreadable: no names, as without the list */
    snprintf(listed_dir, sizeof listed_dir, "%s", dir);
  }
  return &listed;
}

static int info_file(const char *path, void *arg) {
  int *status = arg;
  char err[300];
  ct_reader *r = ct_reader_open(path, err, sizeof err);
  if (!r) {
    fprintf(stderr, "cutrace info: %s\n", err);
    *status = 2;
    return 0;
  }
  uint64_t counts[CT_MAX_KINDS] = {0}, drops = 0, first = UINT64_MAX, last = 0;
  struct ct_process proc = {0};
  struct ct_job job = {0};
  char job_warnings[4][200];
  unsigned njob_warnings = 0;
  int have_proc = 0;
  ct_pause_list pauses = {0};
  struct ct_device *devices = NULL; /* one record per device the process used: few */
  size_t ndevices = 0;
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
      struct ct_device *grown = realloc(devices, (ndevices + 1) * sizeof *devices);
      if (grown) (devices = grown)[ndevices++] = rec.u.device;
      break;
    }
    case CT_KIND_JOB: job = rec.u.job; break;
    case CT_KIND_TRACER: /* the tracer's warnings about the job's variables (format 1.4) */
      if (njob_warnings < 4 && rec.u.tracer.begin_ns == rec.u.tracer.end_ns) {
        size_t len = 0;
        const char *w = ct_reader_string(r, rec.u.tracer.what, &len);
        if (w && len > 13 && !memcmp(w, "job identity:", 13))
          snprintf(job_warnings[njob_warnings++], sizeof job_warnings[0], "%.*s", (int)len, w);
      }
      break;
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
  if (have_proc && (job.known & CT_JOB_RANK)) { /* "PATH: rank 2 (pid 4242 on node7)" */
    char host[256] = "", label[400];
    size_t len = 0;
    const char *h = proc.host ? ct_reader_string(r, proc.host, &len) : NULL;
    if (h) snprintf(host, sizeof host, "%.*s", (int)(len < sizeof host ? len : sizeof host - 1), h);
    printf("%s: %s\n", path, ct_proc_label(&job, proc.pid, host, label, sizeof label));
  } else {
    printf("%s:\n", path);
  }
  printf("  %-14s %u.%u\n", "format", st->major, st->minor);
  if (have_proc) {
    /* a parent that ran without CUDA has no file: its name from the directory's list */
    const ct_nocuda_proc *parent = ct_nocuda_find(nocuda_of_file(path), (unsigned long)proc.ppid);
    if (parent)
      printf("  %-14s %llu (parent %llu: %s, ran without CUDA)\n", "pid",
             (unsigned long long)proc.pid, (unsigned long long)proc.ppid, parent->name);
    else
      printf("  %-14s %llu (parent %llu)\n", "pid", (unsigned long long)proc.pid,
             (unsigned long long)proc.ppid);
    print_string(r, "command", proc.cmdline, 1);
    print_string(r, "host", proc.host, 0);
    print_string(r, "executable", proc.exe, 0);
    /* the versions: the PROCESS record's fields (never filled by the preload so far),
     * else those the DEVICE records carry since format 1.6 */
    uint64_t driver = proc.driver_version, runtime = proc.runtime_version;
    for (size_t i = 0; i < ndevices; i++) {
      if (!driver) driver = devices[i].driver_version;
      if (!runtime) runtime = devices[i].runtime_version;
    }
    char dv[24], rv[24];
    printf("  %-14s driver %s, runtime %s\n", "cuda", cuda_version(driver, dv, sizeof dv),
           cuda_version(runtime, rv, sizeof rv));
    print_job(r, &job, job_warnings, njob_warnings);
  } else {
    printf("  %-14s no PROCESS record\n", "process");
  }
  for (size_t i = 0; i < ndevices; i++) print_device(r, &devices[i]);
  free(devices);
  if (last)
    printf("  %-14s %.6f s\n", "time span", (double)(last - first) / 1e9);
  printf("  %-14s %llu in %llu frame%s\n", "records", (unsigned long long)st->records,
         (unsigned long long)st->frames, st->frames == 1 ? "" : "s");
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
    fprintf(stderr, "cutrace info: %s: %s; %llu record%s read before it (partial result)\n",
            path, st->message, (unsigned long long)st->records, st->records == 1 ? "" : "s");
    if (*status < 1) *status = 1;
  } else {
    printf("  %-14s %s\n", "end",
           st->clean_end ? "clean" : "no END record (the process crashed, was killed or still runs)");
  }
  ct_reader_close(r);
  return 0;
}

static const char usage[] =
    "cutrace info [DIR|FILE...]\n"
    "  Per trace file: format version, process (pid, command, host), rank in a distributed\n"
    "  job, CUDA driver and runtime versions, devices, time span, records per kind, records\n"
    "  the tracer dropped, and whether the file ended cleanly or where it stopped (exit\n"
    "  status 1 then: every record before the damage was read). Per DIR, how many\n"
    "  processes ran without CUDA and left no file (DIR/.nocuda). No options.";

/* "DIR: N processes ran without CUDA (no trace file): NAME xK, ..." for each DIR argument
 * with a .nocuda list, after its files (also when it holds no trace file). */
static void info_nocuda_dir(const char *dir) {
  struct stat st;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) return;
  ct_nocuda_list list;
  (void)ct_nocuda_read(dir, &list);
  if (list.n) {
    char line[512];
    ct_nocuda_summary(&list, line, sizeof line);
    printf("%s: %s\n", dir, line);
  }
  ct_nocuda_free(&list);
}

static void info_nocuda(int argc, char **argv) {
  int options = 1, paths = 0;
  for (int i = 1; i < argc; i++) {
    if (options && !strcmp(argv[i], "--")) {
      options = 0;
      continue;
    }
    if (options && argv[i][0] == '-' && argv[i][1]) continue;
    paths++;
    info_nocuda_dir(argv[i]);
  }
  if (!paths) info_nocuda_dir("cutrace.data"); /* the inputs' default (reader.c) */
}

int cmd_info(int argc, char **argv) {
  cli_progress_start("info");
  int rc = cli_run_on_traces(argc, argv, usage, info_file);
  cli_progress_done();
  if (!(argc > 1 && cli_is_help(argv[1]))) info_nocuda(argc, argv);
  ct_nocuda_free(&listed);
  listed_dir[0] = 0;
  return rc;
}
