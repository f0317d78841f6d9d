/*
 * The ELF objects mapped in the process, as MODULE records (docs/format.md), so that
 * the tools symbolise the STACK records' pcs offline.
 *
 * dl_iterate_phdr (glibc, <link.h>) gives each loaded object's name, load bias and
 * program headers: [start, end) spans its PT_LOAD segments, the GNU build-id is the
 * NT_GNU_BUILD_ID note of a PT_NOTE segment (ELF gABI / "Notes" in elf(5)). The main
 * program's name is "", so its path is read from /proc/self/exe. The vdso is
 * recorded under the name the loader gives it (linux-vdso.so.1).
 *
 * The live table is only touched with the tree lock held (tree.c). It is normally
 * filled ahead of need by the writer thread (ctps_modules_collect_ahead lists the
 * objects into a table of its own without the tree lock, soon after the program's
 * first record; ctps_modules_install_ahead makes it the live one), so that a
 * program's first stack only writes MODULE records from it; the program's thread scans itself only when its first stack
 * comes first, when a pc lies outside every known object and objects were loaded
 * since the last scan (dlopen), or when objects were unloaded (a range may now hold
 * another object). Scanning writes no record: the MODULE records are written by the
 * thread that writes the first STACK record needing one (ctps_module_cover), so they
 * precede it in that thread's buffer and in the file.
 */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stacks_internal.h"

struct module {
  uint64_t start, end, bias;
  uint64_t path_id, build_id_id; /* interned strings of the MODULE record */
  char *path;                    /* as loaded (for matching across scans) */
  char build_id[132];            /* hex, "" when absent */
  int seen;                      /* present in the current scan */
  int emitted;                   /* MODULE record written into the current file */
};

/* A list of objects, sorted by start, with the loader's counters when it was made. */
struct module_table {
  struct module *m;
  size_t n, cap;
  unsigned long long adds, subs;
};

static struct module_table live;       /* the table stacks use (tree lock) */
static unsigned long long probed_adds; /* at the current insert (check_changes) */
static int scanned_once;
static char exe_path[4096];
static pthread_once_t exe_path_once = PTHREAD_ONCE_INIT;

static void read_exe_path(void) {
  ssize_t n = readlink("/proc/self/exe", exe_path, sizeof exe_path - 1);
  exe_path[n > 0 ? n : 0] = 0;
}

/* The GNU build-id of the object, as lowercase hex into out (cap bytes), or "". */
static void read_build_id(const struct dl_phdr_info *info, char *out, size_t cap) {
  out[0] = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_NOTE) continue;
    const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
    const uint8_t *end = p + ph->p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
      size_t name_sz = (nh->n_namesz + 3u) & ~3u, desc_sz = (nh->n_descsz + 3u) & ~3u;
      const uint8_t *name = p + sizeof *nh, *desc = name + name_sz;
      if (desc + desc_sz > end) break;
      if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(name, "GNU", 4) &&
          nh->n_descsz * 2 + 1 <= cap) {
        static const char hex[] = "0123456789abcdef";
        for (size_t k = 0; k < nh->n_descsz; k++) {
          out[2 * k] = hex[desc[k] >> 4];
          out[2 * k + 1] = hex[desc[k] & 15];
        }
        out[2 * nh->n_descsz] = 0;
        return;
      }
      p = desc + desc_sz;
    }
  }
}

/* [start, end) of the object's PT_LOAD segments; 0 when it has none. */
static int load_range(const struct dl_phdr_info *info, uint64_t *start, uint64_t *end) {
  uint64_t lo = UINT64_MAX, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !ph->p_memsz) continue;
    uint64_t s = info->dlpi_addr + ph->p_vaddr, e = s + ph->p_memsz;
    if (s < lo) lo = s;
    if (e > hi) hi = e;
  }
  if (hi <= lo) return 0;
  *start = lo;
  *end = hi;
  return 1;
}

static struct module *find_module(const struct module_table *t, uint64_t pc) {
  size_t lo = 0, hi = t->n;
  while (lo < hi) { /* the first module starting above pc */
    size_t mid = (lo + hi) / 2;
    if (t->m[mid].start <= pc)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0) return NULL;
  struct module *m = &t->m[lo - 1];
  return pc < m->end ? m : NULL;
}

/* Adds (or marks as still present) one object; keeps the table sorted. */
static void note_object(struct module_table *t, const char *path, uint64_t bias, uint64_t start,
                        uint64_t end, const struct dl_phdr_info *info) {
  struct module *m = find_module(t, start);
  if (m && m->start == start && m->end == end && m->bias == bias && !strcmp(m->path, path)) {
    m->seen = 1;
    return;
  }
  if (t->n == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 64;
    struct module *grown = realloc(t->m, cap * sizeof *grown);
    if (!grown) return;
    t->m = grown;
    t->cap = cap;
  }
  char *copy = strdup(path);
  if (!copy) return;
  size_t at = 0;
  while (at < t->n && t->m[at].start < start) at++;
  memmove(&t->m[at + 1], &t->m[at], (t->n - at) * sizeof *t->m);
  struct module *n = &t->m[at];
  memset(n, 0, sizeof *n);
  n->start = start;
  n->end = end;
  n->bias = bias;
  n->path = copy;
  n->seen = 1;
  read_build_id(info, n->build_id, sizeof n->build_id);
  t->n++;
}

static int scan_one(struct dl_phdr_info *info, size_t size, void *arg) {
  struct module_table *t = arg;
  if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
    t->adds = info->dlpi_adds;
    t->subs = info->dlpi_subs;
  }
  uint64_t start, end;
  if (!load_range(info, &start, &end)) return 0;
  const char *path = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : exe_path;
  note_object(t, path, info->dlpi_addr, start, end, info);
  return 0;
}

/* Re-reads the loaded objects into t: forgets unloaded ones, adds new ones. */
static void scan_into(struct module_table *t) {
  pthread_once(&exe_path_once, read_exe_path);
  for (size_t i = 0; i < t->n; i++) t->m[i].seen = 0;
  dl_iterate_phdr(scan_one, t);
  size_t kept = 0;
  for (size_t i = 0; i < t->n; i++) {
    if (t->m[i].seen)
      t->m[kept++] = t->m[i];
    else
      free(t->m[i].path);
  }
  t->n = kept;
}

/* The live table is t's list now: the strings interned (their MODULE records are
 * written when a STACK record needs them). Tree lock held. Returns the count. */
static size_t took_scan(void) {
  __atomic_store_n(&scanned_once, 1, __ATOMIC_RELAXED); /* read unlocked by collect_ahead */
  probed_adds = live.adds;
  for (size_t i = 0; i < live.n; i++) {
    struct module *m = &live.m[i];
    if (!m->path_id) m->path_id = ctp_intern(m->path);
    if (!m->build_id_id && m->build_id[0]) m->build_id_id = ctp_intern(m->build_id);
  }
  return live.n;
}

/* Re-reads the loaded objects into the live table (tree lock held). */
static size_t scan_modules(void) {
  scan_into(&live);
  return took_scan();
}

/* Writes the MODULE records of every object not yet described in this file. */
static void emit_pending(void) {
  uint64_t now = ctp_now_ns();
  for (size_t i = 0; i < live.n; i++) {
    struct module *m = &live.m[i];
    if (m->emitted) continue;
    if (!m->path_id) m->path_id = ctp_intern(m->path); /* scanned while tracing was off */
    if (!m->build_id_id && m->build_id[0]) m->build_id_id = ctp_intern(m->build_id);
    ct_record r;
    r.kind = CT_KIND_MODULE;
    r.u.module = (struct ct_module){.path = m->path_id, .bias = m->bias, .start = m->start,
                                    .end = m->end, .build_id = m->build_id_id, .seen_ns = now};
    ctp_emit(&r);
    m->emitted = 1;
  }
}

static int probe_counts(struct dl_phdr_info *info, size_t size, void *arg) {
  unsigned long long *counts = arg;
  if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
    counts[0] = info->dlpi_adds;
    counts[1] = info->dlpi_subs;
  }
  return 1; /* the counters are the same in every entry: stop at the first */
}

void ctps_modules_check_changes(void) {
  if (!scanned_once) return; /* the first cover scans */
  unsigned long long counts[2] = {live.adds, live.subs};
  dl_iterate_phdr(probe_counts, counts);
  probed_adds = counts[0];
  if (counts[1] != live.subs) scan_modules(); /* unloaded: a known range may hold another */
}

int ctps_module_cover(uint64_t pc) {
  struct module *m = find_module(&live, pc);
  if (!m && (!scanned_once || probed_adds != live.adds)) { /* loaded since: dlopen */
    scan_modules();
    m = find_module(&live, pc);
  }
  if (m && !m->emitted) emit_pending();
  return m != NULL;
}

void *ctps_modules_collect_ahead(void) {
  if (__atomic_load_n(&scanned_once, __ATOMIC_RELAXED)) return NULL; /* checked again */
  struct module_table *t = calloc(1, sizeof *t);
  if (t) scan_into(t);
  return t;
}

long ctps_modules_install_ahead(void *collected) {
  struct module_table *t = collected;
  long n = -1;
  if (t && !scanned_once) { /* no stack scanned meanwhile: the live table is empty */
    free(live.m);
    live = *t;
    n = (long)took_scan();
  } else if (t) {
    for (size_t i = 0; i < t->n; i++) free(t->m[i].path);
    free(t->m);
  }
  free(t);
  return n;
}

void ctps_modules_rewrite(void) {
  for (size_t i = 0; i < live.n; i++) live.m[i].emitted = 0;
  uint64_t now = ctp_now_ns();
  for (size_t i = 0; i < live.n; i++) {
    struct module *m = &live.m[i];
    ct_record r;
    r.kind = CT_KIND_MODULE;
    r.u.module = (struct ct_module){.path = ctp_intern(m->path), .bias = m->bias,
                                    .start = m->start, .end = m->end,
                                    .build_id = m->build_id[0] ? ctp_intern(m->build_id) : 0,
                                    .seen_ns = now};
    ctp_emit(&r);
    m->emitted = 1;
  }
}

struct range_query {
  uint64_t addr, start, end;
  int found;
};

static int find_range(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  struct range_query *q = arg;
  uint64_t start, end;
  if (!load_range(info, &start, &end) || q->addr < start || q->addr >= end) return 0;
  q->start = start;
  q->end = end;
  q->found = 1;
  return 1;
}

int ctps_object_range(const void *addr, uint64_t *start, uint64_t *end) {
  struct range_query q = {.addr = (uint64_t)(uintptr_t)addr};
  dl_iterate_phdr(find_range, &q);
  if (!q.found) return -1;
  *start = q.start;
  *end = q.end;
  return 0;
}
