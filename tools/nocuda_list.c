/* DIR/.nocuda read back for record and info (nocuda_list.h). */
#include "nocuda_list.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parses "PID PPID NAME" (blank-separated, any widths). Returns 1 when it is one. */
static int parse_line(const char *line, ct_nocuda_proc *p) {
  char name[CT_NOCUDA_NAME_MAX + 1];
  if (sscanf(line, "%lu %lu %41s", &p->pid, &p->ppid, name) != 3) return 0;
  snprintf(p->name, sizeof p->name, "%s", name);
  return 1;
}

int ct_nocuda_read(const char *dir, ct_nocuda_list *list) {
  memset(list, 0, sizeof *list);
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", dir, CT_NOCUDA_FILE);
  FILE *f = fopen(path, "r");
  if (!f) return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
  char line[512];
  size_t cap = 0;
  int rc = 0;
  while (fgets(line, sizeof line, f)) {
    ct_nocuda_proc p;
    if (!parse_line(line, &p)) continue;
    if (list->n == cap) {
      size_t ncap = cap ? cap * 2 : 64;
      ct_nocuda_proc *grown = realloc(list->procs, ncap * sizeof *grown);
      if (!grown) {
        rc = -1;
        break;
      }
      list->procs = grown;
      cap = ncap;
    }
    list->procs[list->n++] = p;
  }
  if (ferror(f)) rc = -1;
  fclose(f);
  return rc;
}

const ct_nocuda_proc *ct_nocuda_find(const ct_nocuda_list *list, unsigned long pid) {
  for (size_t i = list->n; i-- > 0;) /* the latest line of a reused pid */
    if (list->procs[i].pid == pid) return &list->procs[i];
  return NULL;
}

struct name_count {
  const char *name;
  size_t count;
};

static int by_count(const void *a, const void *b) {
  const struct name_count *x = a, *y = b;
  if (x->count != y->count) return x->count < y->count ? 1 : -1;
  return strcmp(x->name, y->name);
}

void ct_nocuda_summary(const ct_nocuda_list *list, char *buf, size_t len) {
  if (!len) return;
  buf[0] = 0;
  if (!list->n) return;
  struct name_count *names = calloc(list->n, sizeof *names);
  size_t nnames = 0;
  if (names) {
    for (size_t i = 0; i < list->n; i++) {
      size_t j = 0;
      while (j < nnames && strcmp(names[j].name, list->procs[i].name)) j++;
      if (j == nnames) names[nnames++].name = list->procs[i].name;
      names[j].count++;
    }
    qsort(names, nnames, sizeof *names, by_count);
  }
  size_t used = (size_t)snprintf(buf, len, "%zu process%s ran without CUDA (no trace file)",
                                 list->n, list->n == 1 ? "" : "es");
  for (size_t j = 0; j < nnames && used < len; j++) {
    int w = j == 6 ? snprintf(buf + used, len - used, ", ...")
            : names[j].count > 1
                ? snprintf(buf + used, len - used, "%s%s x%zu", j ? ", " : ": ", names[j].name,
                           names[j].count)
                : snprintf(buf + used, len - used, "%s%s", j ? ", " : ": ", names[j].name);
    if (w < 0) break;
    used += (size_t)w;
    if (j == 6) break;
  }
  free(names);
}

void ct_nocuda_free(ct_nocuda_list *list) {
  free(list->procs);
  memset(list, 0, sizeof *list);
}
