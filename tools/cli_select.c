/* --device, --stream, --pid, --rank and --kernel: parsing, the check of every value
 * against the traces, and the files kept (cli_select.h). */
#include "cli_select.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "identity.h"
#include "model.h"
#include "reader.h"

/* What was given. */
static struct {
  unsigned given;
  ct_select sel;
  unsigned npids, nranks;
  uint64_t pids[CT_SELECT_MAX], ranks[CT_SELECT_MAX];
  char text[600];
} chosen;

/* The last list of files checked, and what was kept of it (dump expands its inputs
 * twice; each side of diff once). */
static struct {
  char *key;
  unsigned char *keep;
  size_t n;
} last;

/* ---- parsing -------------------------------------------------------------------- */

/* Appends the comma-separated numbers of s to values (*n of them so far). Returns 0, or
 * -1 when s is not such a list or holds too many. */
static int parse_list(const char *s, uint64_t *values, unsigned *n) {
  if (!*s) return -1;
  for (;;) {
    const char *comma = strchr(s, ',');
    size_t len = comma ? (size_t)(comma - s) : strlen(s);
    char num[32];
    if (!len || len >= sizeof num || *n >= CT_SELECT_MAX) return -1;
    memcpy(num, s, len);
    num[len] = 0;
    uint64_t v;
    if (num[0] < '0' || num[0] > '9' || ct_parse_u64(num, &v) < 0) return -1;
    values[(*n)++] = v;
    if (!comma) return 0;
    s = comma + 1;
  }
}

/* Appends " NAME v1,v2" to the text. */
static void text_list(const char *name, const uint64_t *v, unsigned n) {
  if (!n) return;
  size_t at = strlen(chosen.text);
  at += snprintf(chosen.text + at, sizeof chosen.text - at, "%s%s ", at ? " " : "", name);
  for (unsigned i = 0; i < n && at < sizeof chosen.text; i++)
    at += snprintf(chosen.text + at, sizeof chosen.text - at, "%s%llu", i ? "," : "",
                   (unsigned long long)v[i]);
}

static int inputs_filter(char *const *paths, size_t n, unsigned char *keep, char *err,
                         size_t errlen);

int cli_take_selection(const char *cmd, int *argc, char **argv, unsigned *given) {
  static const struct {
    const char *name, *what;
    unsigned bit;
  } opts[] = {{"--device", "device numbers (0,1)", CLI_SEL_DEVICE},
              {"--stream", "stream ids as report prints them (13,14)", CLI_SEL_STREAM},
              {"--pid", "process ids (4242,4243)", CLI_SEL_PID},
              {"--rank", "ranks (0,3)", CLI_SEL_RANK},
              {"--kernel", "", CLI_SEL_KERNEL}};
  int out = 0;
  *given = 0;
  for (int i = 0; i < *argc; i++) {
    if (!strcmp(argv[i], "--")) { /* the rest are not options */
      while (i < *argc) argv[out++] = argv[i++];
      break;
    }
    size_t k = 0;
    const char *v = NULL;
    int at = i;
    for (; k < sizeof opts / sizeof opts[0]; k++)
      if ((v = cli_option_value(*argc, argv, &at, opts[k].name))) break;
    if (!v) {
      argv[out++] = argv[i];
      continue;
    }
    i = at;
    const char *name = opts[k].name;
    unsigned bit = opts[k].bit;
    if (!*v) return cli_missing_value(cmd, name);
    int bad;
    if (bit == CLI_SEL_KERNEL) {
      if (chosen.sel.kernel) {
        fprintf(stderr, "cutrace %s: --kernel is given twice (it takes one pattern; try: "
                        "cutrace %s --help)\n", cmd, cmd);
        return 2;
      }
      chosen.sel.kernel = v;
      bad = 0;
    } else {
      uint64_t *values = bit == CLI_SEL_DEVICE ? chosen.sel.devices
                         : bit == CLI_SEL_STREAM ? chosen.sel.streams
                         : bit == CLI_SEL_PID    ? chosen.pids
                                                 : chosen.ranks;
      unsigned *n = bit == CLI_SEL_DEVICE ? &chosen.sel.ndevices
                    : bit == CLI_SEL_STREAM ? &chosen.sel.nstreams
                    : bit == CLI_SEL_PID    ? &chosen.npids
                                            : &chosen.nranks;
      bad = parse_list(v, values, n);
    }
    if (bad) {
      fprintf(stderr,
              "cutrace %s: %s takes a list of %s, at most %d, not '%s' (try: cutrace %s --help)\n",
              cmd, name, opts[k].what, CT_SELECT_MAX, v, cmd);
      return 2;
    }
    chosen.given |= bit;
  }
  argv[out] = NULL;
  *argc = out;
  *given = chosen.given;
  if (!chosen.given) return 0;
  text_list("--pid", chosen.pids, chosen.npids);
  text_list("--rank", chosen.ranks, chosen.nranks);
  text_list("--device", chosen.sel.devices, chosen.sel.ndevices);
  text_list("--stream", chosen.sel.streams, chosen.sel.nstreams);
  if (chosen.sel.kernel) {
    size_t at = strlen(chosen.text);
    snprintf(chosen.text + at, sizeof chosen.text - at, "%s--kernel %s", at ? " " : "",
             chosen.sel.kernel);
  }
  ct_model_options o;
  ct_model_get_defaults(&o);
  if (ct_select_active(&chosen.sel)) o.select = &chosen.sel;
  ct_model_set_defaults(&o);
  ct_set_inputs_filter(inputs_filter);
  return 0;
}

/* "v1,v2" into buf. */
static const char *list_text(const uint64_t *v, unsigned n, char *buf, size_t len) {
  size_t at = 0;
  buf[0] = 0;
  for (unsigned i = 0; i < n && at < len; i++)
    at += snprintf(buf + at, len - at, "%s%llu", i ? "," : "", (unsigned long long)v[i]);
  return buf;
}

void cli_selection_each(void (*fn)(void *user, const char *name, const char *value), void *user) {
  char b[CT_SELECT_MAX * 21 + 1];
  if (chosen.npids) fn(user, "--pid", list_text(chosen.pids, chosen.npids, b, sizeof b));
  if (chosen.nranks) fn(user, "--rank", list_text(chosen.ranks, chosen.nranks, b, sizeof b));
  if (chosen.sel.ndevices)
    fn(user, "--device", list_text(chosen.sel.devices, chosen.sel.ndevices, b, sizeof b));
  if (chosen.sel.nstreams)
    fn(user, "--stream", list_text(chosen.sel.streams, chosen.sel.nstreams, b, sizeof b));
  if (chosen.sel.kernel) fn(user, "--kernel", chosen.sel.kernel);
}

const char *cli_selection_text(void) { return chosen.given ? chosen.text : NULL; }

void cli_selection_print(FILE *f) {
  if (!chosen.given) return;
  fprintf(f, "selection: %s", chosen.text);
  if (ct_select_active(&chosen.sel))
    fprintf(f, " (only the selected GPU work; the CPU calls of the processes all kept)");
  fputc('\n', f);
}

/* Writes key: [values...]. */
static void json_list(ct_json *j, const char *key, const uint64_t *v, unsigned n) {
  ct_json_key(j, key);
  ct_json_begin_array(j);
  for (unsigned i = 0; i < n; i++) ct_json_uint(j, v[i]);
  ct_json_end_array(j);
}

void cli_selection_json(ct_json *j) {
  ct_json_key(j, "selection");
  if (!chosen.given) {
    ct_json_null(j);
    return;
  }
  ct_json_begin_object(j);
  json_list(j, "devices", chosen.sel.devices, chosen.sel.ndevices);
  json_list(j, "streams", chosen.sel.streams, chosen.sel.nstreams);
  json_list(j, "pids", chosen.pids, chosen.npids);
  json_list(j, "ranks", chosen.ranks, chosen.nranks);
  ct_json_kv_string(j, "kernel", chosen.sel.kernel);
  ct_json_end_object(j);
}


/* ---- checking the values against the traces ----------------------------------------- */

/* The distinct numbers seen (the first 256), for the messages. */
typedef struct seen_set {
  uint64_t v[256];
  unsigned n;
} seen_set;

static int seen_has(const seen_set *s, uint64_t v) {
  for (unsigned i = 0; i < s->n; i++)
    if (s->v[i] == v) return 1;
  return 0;
}

static void seen_add(seen_set *s, uint64_t v) {
  if (s->n < sizeof s->v / sizeof s->v[0] && !seen_has(s, v)) s->v[s->n++] = v;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* "NAME: 0, 1, 2" (at most 12 listed), or none when empty. */
static const char *seen_format(seen_set *s, const char *name, const char *none, char *buf,
                               size_t len) {
  if (!s->n) return none;
  qsort(s->v, s->n, sizeof s->v[0], cmp_u64);
  size_t at = snprintf(buf, len, "%ss: ", name);
  for (unsigned i = 0; i < s->n && i < 12 && at < len; i++)
    at += snprintf(buf + at, len - at, "%s%llu", i ? ", " : "", (unsigned long long)s->v[i]);
  if (s->n > 12 && at < len) snprintf(buf + at, len - at, ", ... (%u)", s->n);
  return buf;
}

/* What reading the files found. */
typedef struct scan {
  seen_set devices, streams, pids, ranks;
  uint64_t named, selected; /* activities whose name matches --kernel; selected ones */
  ct_select kernel_only;    /* the --kernel pattern alone (for named) */
  ct_select_cache cache, name_cache;
} scan;

static void scan_process(void *user, const ct_proc *p) {
  scan *sc = user;
  for (unsigned i = 0; i < p->ndevices && i < 16; i++) seen_add(&sc->devices, p->devices[i].device);
}

static void scan_stream(void *user, const ct_proc *p, const struct ct_stream *stream) {
  (void)p;
  scan *sc = user;
  seen_add(&sc->devices, stream->device);
  seen_add(&sc->streams, stream->stream);
}

static void scan_activity(void *user, const ct_activity *a) {
  scan *sc = user;
  seen_add(&sc->devices, a->device);
  seen_add(&sc->streams, a->stream);
  if (chosen.sel.kernel)
    sc->named += ct_select_activity(&sc->kernel_only, &sc->name_cache, 0, 0, a->name);
  sc->selected += ct_select_activity(&chosen.sel, &sc->cache, a->device, a->stream, a->name);
}

/* 1 when the process of the file with identity id is selected by --pid and --rank. */
static int process_selected(const ct_identity *id) {
  if (chosen.npids) {
    int hit = 0;
    for (unsigned i = 0; i < chosen.npids; i++) hit |= id->proc.pid == chosen.pids[i];
    if (!hit) return 0;
  }
  if (chosen.nranks) {
    if (!(id->job.known & CT_JOB_RANK)) return 0;
    int hit = 0;
    for (unsigned i = 0; i < chosen.nranks; i++) hit |= id->job.rank == chosen.ranks[i];
    if (!hit) return 0;
  }
  return 1;
}

/* Sets err to "OPT V: no such WHAT in WHERE (WHATs: ...)" for the first value of the
 * list not in seen; returns -1 then, else 0. */
static int check_known(const char *opt, const char *what, const uint64_t *values, unsigned n,
                       seen_set *seen, const char *none, const char *where, char *err,
                       size_t errlen) {
  for (unsigned i = 0; i < n; i++) {
    if (seen_has(seen, values[i])) continue;
    char list[200];
    snprintf(err, errlen, "%s %llu: no such %s in %s (%s)", opt, (unsigned long long)values[i],
             what, where, seen_format(seen, what, none, list, sizeof list));
    return -1;
  }
  return 0;
}

/* The filter itself: see ct_inputs_filter. */
static int check_inputs(char *const *paths, size_t n, unsigned char *keep, char *err,
                        size_t errlen) {
  const char *where = n == 1 ? paths[0] : "these traces";
  for (size_t i = 0; i < n; i++)
    if (!strcmp(paths[i], "-")) {
      snprintf(err, errlen, "%s needs trace files, not standard input (it reads them twice)",
               chosen.text);
      return -1;
    }
  scan all;
  memset(&all, 0, sizeof all);
  int readable = 0;
  if (chosen.npids || chosen.nranks) {
    for (size_t i = 0; i < n; i++) {
      ct_identity id;
      char ierr[300];
      if (ct_identity_read(paths[i], &id, ierr, sizeof ierr) < 0 || !id.has_process) continue;
      readable = 1;
      seen_add(&all.pids, id.proc.pid);
      if (id.job.known & CT_JOB_RANK) seen_add(&all.ranks, id.job.rank);
      keep[i] = (unsigned char)process_selected(&id);
    }
    if (readable) {
      if (check_known("--pid", "pid", chosen.pids, chosen.npids, &all.pids, "no process", where,
                      err, errlen) < 0 ||
          check_known("--rank", "rank", chosen.ranks, chosen.nranks, &all.ranks,
                      "no trace here knows its rank", where, err, errlen) < 0)
        return -1;
      int any = 0;
      for (size_t i = 0; i < n; i++) any |= keep[i];
      if (!any) {
        snprintf(err, errlen, "the selection (%s) matches no process in %s", chosen.text, where);
        return -1;
      }
    }
  }
  if (!ct_select_active(&chosen.sel)) return 0;
  if (chosen.npids || chosen.nranks) where = "the selected processes' traces";
  ct_model_options o;
  ct_model_get_defaults(&o);
  o.select = NULL; /* every activity, to know what exists */
  all.kernel_only.kernel = chosen.sel.kernel;
  ct_model_ops ops = {.on_process = scan_process, .on_stream = scan_stream,
                      .on_activity = scan_activity};
  int any = 0;
  readable = 0;
  for (size_t i = 0; i < n; i++) {
    if (!keep[i]) continue;
    uint64_t before = all.selected;
    memset(&all.cache, 0, sizeof all.cache); /* names move from file to file */
    memset(&all.name_cache, 0, sizeof all.name_cache);
    ct_model_stats st;
    if (ct_model_read(paths[i], &o, &ops, &all, &st) < 0) continue; /* the command says why */
    readable = 1;
    keep[i] = all.selected > before;
    any |= keep[i];
  }
  if (!readable) return 0;
  if (check_known("--device", "device", chosen.sel.devices, chosen.sel.ndevices, &all.devices,
                  "no device", where, err, errlen) < 0 ||
      check_known("--stream", "stream", chosen.sel.streams, chosen.sel.nstreams, &all.streams,
                  "no stream", where, err, errlen) < 0)
    return -1;
  int window = o.from.set || o.to.set;
  if (chosen.sel.kernel && !all.named) {
    snprintf(err, errlen, "--kernel %s: no GPU work's name matches it in %s%s", chosen.sel.kernel,
             where, window ? " (within --from/--to)" : "");
    return -1;
  }
  if (!any) {
    snprintf(err, errlen, "the selection (%s) matches no GPU work in %s%s", chosen.text, where,
             window ? " (within --from/--to)" : "");
    return -1;
  }
  return 0;
}

static int inputs_filter(char *const *paths, size_t n, unsigned char *keep, char *err,
                         size_t errlen) {
  size_t len = 1;
  for (size_t i = 0; i < n; i++) len += strlen(paths[i]) + 1;
  char *key = malloc(len);
  if (!key) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  key[0] = 0;
  for (size_t i = 0; i < n; i++) strcat(strcat(key, paths[i]), "\n");
  if (last.key && last.n == n && !strcmp(last.key, key)) {
    free(key);
    memcpy(keep, last.keep, n);
    return 0;
  }
  if (check_inputs(paths, n, keep, err, errlen) < 0) {
    free(key);
    return -1;
  }
  unsigned char *copy = malloc(n + 1);
  if (copy) {
    memcpy(copy, keep, n);
    free(last.key);
    free(last.keep);
    last.key = key;
    last.keep = copy;
    last.n = n;
  } else {
    free(key);
  }
  return 0;
}

/* A ct_expand_inputs callback that does nothing. */
static int no_file(const char *path, void *arg) {
  (void)path;
  (void)arg;
  return 0;
}

int cli_selection_precheck(const char *cmd, int argc, char **argv) {
  if (!chosen.given) return 0;
  char err[300];
  if (ct_expand_inputs(argc, argv, no_file, NULL, err, sizeof err) >= 0) return 0;
  fprintf(stderr, "cutrace %s: %s\n", cmd, err);
  return 2;
}
