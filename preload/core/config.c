/* Environment knobs of the tracer (documented in docs/preload.md). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"

struct ctp_config ctp_cfg;

/* CUTRACE_QUIET's rule: set to anything but 0 or no (any case). */
static int env_quiet(void) {
  const char *q = getenv("CUTRACE_QUIET");
  return q && *q && strcmp(q, "0") != 0 && strcasecmp(q, "no") != 0;
}

void ctp_warn(const char *fmt, ...) {
  if (ctp_cfg.loaded ? ctp_cfg.quiet : env_quiet()) return;
  int saved = errno;
  char line[512];
  int n = snprintf(line, sizeof line, "cutrace: ");
  va_list ap;
  va_start(ap, fmt);
  int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
  va_end(ap);
  if (m < 0) m = 0;
  size_t len = (size_t)n + (size_t)m;
  if (len > sizeof line - 2) len = sizeof line - 2;
  line[len++] = '\n';
  ssize_t w = write(2, line, len);
  (void)w;
  errno = saved;
}

/* Parses an integer knob within [lo, hi]; warns and returns def when bad or absent-valued. */
static long long env_int(const char *name, long long def, long long lo, long long hi) {
  const char *v = getenv(name);
  if (!v || !*v) return def;
  char *end;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  while (*end == ' ' || *end == '\t') end++;
  if (errno || end == v || *end) {
    ctp_warn("%s='%.64s' is not a number; using %lld", name, v, def);
    return def;
  }
  if (x < lo || x > hi) {
    ctp_warn("%s='%.64s' is out of range (%lld..%lld); using %lld", name, v, lo, hi, def);
    return def;
  }
  return x;
}

/* Parses a boolean knob (1/0, yes/no, true/false, on/off); warns and returns def when bad. */
static int env_bool(const char *name, int def) {
  const char *v = getenv(name);
  if (!v || !*v) return def;
  static const char *const yes[] = {"1", "yes", "true", "on", "y"};
  static const char *const no[] = {"0", "no", "false", "off", "n"};
  for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
    if (!strcasecmp(v, yes[i])) return 1;
  for (size_t i = 0; i < sizeof no / sizeof *no; i++)
    if (!strcasecmp(v, no[i])) return 0;
  ctp_warn("%s='%.64s' is not a boolean (1/0, yes/no); using %d", name, v, def);
  return def;
}

/* Parses a duration in seconds (a decimal number, at most a year); warns and returns 0
 * (none) when bad. */
static uint64_t env_seconds(const char *name) {
  const char *v = getenv(name);
  if (!v || !*v) return 0;
  char *end;
  errno = 0;
  double x = strtod(v, &end);
  while (*end == ' ' || *end == '\t') end++;
  if (errno || end == v || *end || !(x >= 0) || x > 366.0 * 86400) {
    ctp_warn("%s='%.64s' is not a number of seconds (0 to 31622400); ignored", name, v);
    return 0;
  }
  return (uint64_t)(x * 1e9 + 0.5);
}

/* CUTRACE_CAPTURE: "all" (default), "profiler", or "nvtx:NAME" (NAME into c); warns and
 * records everything when bad. */
static void env_capture(struct ctp_config *c) {
  const char *v = getenv("CUTRACE_CAPTURE");
  if (!v || !*v || !strcasecmp(v, "all")) return;
  if (!strcasecmp(v, "profiler") || !strcasecmp(v, "cudaProfilerApi")) {
    c->capture_profiler = 1;
    return;
  }
  if (!strncasecmp(v, "nvtx:", 5) && v[5] && strlen(v + 5) < sizeof c->capture_range) {
    snprintf(c->capture_range, sizeof c->capture_range, "%s", v + 5);
    return;
  }
  ctp_warn("CUTRACE_CAPTURE='%.64s' is not all, profiler or nvtx:NAME; recording everything", v);
}

void ctp_config_load(struct ctp_config *c) {
  memset(c, 0, sizeof *c);
  /* Quiet first, so it also silences the warnings about the other knobs. */
  c->quiet = env_quiet();
  c->loaded = 1;
  c->disabled = env_bool("CUTRACE_DISABLE", 0);
  c->signals = env_bool("CUTRACE_SIGNALS", 1);
  const char *out = getenv("CUTRACE_OUTPUT");
  if (!out || !*out) out = CTP_DEFAULT_OUTPUT;
  if (strlen(out) >= sizeof c->output - 64) {
    ctp_warn("CUTRACE_OUTPUT is too long (%zu bytes); using %s", strlen(out),
             CTP_DEFAULT_OUTPUT);
    out = CTP_DEFAULT_OUTPUT;
  }
  snprintf(c->output, sizeof c->output, "%s", out);
  c->buffer_bytes =
      (size_t)env_int("CUTRACE_BUFFER_KB", CTP_DEFAULT_BUFFER_KB, 1, 1 << 20) * 1024;
  c->ring_pool = (unsigned)env_int("CUTRACE_RING_POOL", CTP_DEFAULT_RING_POOL, 0, 4);
  c->frame_bytes = (size_t)env_int("CUTRACE_FRAME_KB", CTP_DEFAULT_FRAME_KB, 4,
                                   CT_MAX_CHUNK_BYTES / 1024) * 1024;
  c->flush_ns = (uint64_t)env_int("CUTRACE_FLUSH_MS", CTP_DEFAULT_FLUSH_MS, 1, 3600000) *
                1000000ull;
  c->zstd_level = (int)env_int("CUTRACE_ZSTD_LEVEL", CTP_DEFAULT_ZSTD_LEVEL, -7, 19);
  env_capture(c);
  c->delay_ns = env_seconds("CUTRACE_DELAY");
  c->duration_ns = env_seconds("CUTRACE_DURATION");
  c->all_processes = env_bool("CUTRACE_ALL_PROCESSES", 0);
}
