/*
 * The CUDA graphs table of `cutrace report`: one row per graph exec and inventory
 * version (process, exec id, version), with its launches (GRAPH_LAUNCH detail of the
 * launch calls), the GPU time of its timed launches, and the inventory recorded at its
 * instantiation, update or in-place edit (GRAPH and GRAPH_KERNEL records, format 1.2):
 * node counts and its most frequent kernels. Since format 1.13 each launch carries the
 * version of the inventory it ran, so an exec edited in place or updated has one row
 * per version: the launches and GPU time of what it ran then. Older files have version
 * 0 everywhere: one row per exec, its latest inventory.
 * Memory: one row per exec version (about 1 KiB), at most CT_GRAPH_TOP kernels each,
 * whose names are kept once for the whole run (intern_name: 192 bytes x 8 a row before
 * 2026-12-07), and at most CT_GRAPH_ROWS rows: a loop updating its exec to another graph
 * at every step makes a version per step, and the versions past the limit go to one
 * folded row per process that counts them. The exporters' inventories (ct_graph_invs_*)
 * keep as many keys, then a cache of as many recent ones.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* The row of (pid, exec, version): its own while the table has fewer than CT_GRAPH_ROWS
 * rows or already holds it, else pid's folded row, which notes the key. NULL when out of
 * memory. */
static ct_graph_row *graph_row(ct_report *r, uint64_t pid, uint64_t exec, uint64_t version) {
  ct_map *m = r->maps[CT_TABLE_GRAPHS];
  ct_graph_key key = {pid, exec, version};
  ct_graph_row *row = ct_map_find(m, &key, sizeof key);
  if (row) return row;
  if (ct_map_count(m) < CT_GRAPH_ROWS) return ct_map_get(m, &key, sizeof key, NULL);
  ct_graph_key folded = {pid, CT_GRAPH_FOLDED, 0};
  int created;
  if (!(row = ct_map_get(m, &folded, sizeof folded, &created))) return NULL;
  if (created) {
    row->fold = 1;
    row->folded_exec = exec;
    row->folded_first = row->folded_last = version;
  }
  if (row->folded_exec != exec) row->folded_exec = 0;
  if (version < row->folded_first) row->folded_first = version;
  if (version > row->folded_last) row->folded_last = version;
  return row;
}


/* The inventory version a graph launch ran (format 1.13; 0 before, or unknown). */
#define LAUNCH_VERSION(x) ((x)->detail == CT_DETAIL_GRAPH ? (x)->d.graph.version : 0)

int ct_graphs_span(ct_report *r, const ct_span *s) {
  /* a successful graph launch; before format 1.2 (no GRAPH_LAUNCH) its exec is 0 */
  int launch = s->detail == CT_DETAIL_GRAPH ||
               (s->category == CT_CAT_GRAPH && s->name && strstr(s->name, "GraphLaunch"));
  if (!launch || s->result) return 0;
  ct_graph_row *row = graph_row(r, s->proc->rec.pid,
                                s->detail == CT_DETAIL_GRAPH ? s->d.graph.exec : 0,
                                LAUNCH_VERSION(s));
  if (!row) return -1;
  row->launches++;
  return 0;
}

int ct_graphs_activity(ct_report *r, const ct_activity *a, uint64_t dur) {
  ct_graph_row *row = graph_row(r, a->proc->rec.pid,
                                a->detail == CT_DETAIL_GRAPH ? a->d.graph.exec : 0,
                                LAUNCH_VERSION(a));
  if (!row) return -1;
  ct_dur_add(&row->d, dur);
  return 0;
}

/* The kernel names of inventories, one copy each, for the life of the process (reachable
 * from here): open addressing, at most half full. */
static struct {
  char **slots;
  size_t mask, used;
} names;

/* FNV-1a. */
static size_t name_hash(const char *s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return (size_t)h;
}

/* Doubles the table (or makes its first 256 slots). Returns 0, or -1 out of memory. */
static int names_grow(void) {
  size_t size = names.slots ? (names.mask + 1) * 2 : 256;
  char **slots = calloc(size, sizeof *slots);
  if (!slots) return -1;
  for (size_t i = 0; names.slots && i <= names.mask; i++) {
    if (!names.slots[i]) continue;
    size_t j = name_hash(names.slots[i]) & (size - 1);
    while (slots[j]) j = (j + 1) & (size - 1);
    slots[j] = names.slots[i];
  }
  free(names.slots);
  names.slots = slots;
  names.mask = size - 1;
  return 0;
}

/* Distinct names kept (at most 12 MiB of them): a name past them reads "?". */
#define GRAPH_NAMES_KEPT 65536

/* The one copy of name ("?" when empty), truncated to 191 bytes as the rows always were;
 * "?" when memory runs out or GRAPH_NAMES_KEPT other names are kept. */
static const char *intern_name(const char *name) {
  char b[192];
  snprintf(b, sizeof b, "%s", name[0] ? name : "?");
  if (((names.used + 1) * 2 > names.mask + 1 || !names.slots) && names_grow() < 0) return "?";
  size_t i = name_hash(b) & names.mask;
  for (; names.slots[i]; i = (i + 1) & names.mask)
    if (!strcmp(names.slots[i], b)) return names.slots[i];
  if (names.used >= GRAPH_NAMES_KEPT || !(names.slots[i] = strdup(b))) return "?";
  names.used++;
  return names.slots[i];
}

void ct_graph_inv_set(ct_graph_inv *inv, const struct ct_graph *g) {
  inv->known = 1;
  inv->g = *g;
  inv->ntop = 0;
}

void ct_graph_inv_kernel(ct_graph_inv *inv, const struct ct_graph_kernel *k, const char *name,
                         const ct_kattr_config *cfg) {
  unsigned i = inv->ntop;
  if (i == CT_GRAPH_TOP) { /* full: replaces the smallest, if larger */
    if (inv->top[i - 1].count >= k->count) return;
    i--;
  } else {
    inv->ntop++;
  }
  while (i > 0 && inv->top[i - 1].count < k->count) { /* count descending */
    inv->top[i] = inv->top[i - 1];
    i--;
  }
  inv->top[i].count = k->count;
  inv->top[i].name = intern_name(name);
  inv->top[i].has_attr = cfg != NULL;
  if (cfg) inv->top[i].attr = *cfg;
}

int ct_graphs_inventory(ct_report *r, uint64_t pid, const struct ct_graph *g) {
  ct_graph_row *row = graph_row(r, pid, g->exec, g->version);
  if (!row) return -1;
  if (row->fold) row->folded++; /* its inventory not kept */
  else ct_graph_inv_set(&row->inv, g);
  return 0;
}

int ct_graphs_kernel(ct_report *r, uint64_t pid, const struct ct_graph_kernel *k,
                     const char *name, const ct_kattr_config *cfg) {
  ct_graph_row *row = graph_row(r, pid, k->exec, k->version);
  if (!row) return -1;
  if (!row->fold) ct_graph_inv_kernel(&row->inv, k, name, cfg);
  return 0;
}

/* An exporter's map past CT_GRAPH_ROWS keys: each new (exec, version) goes to one of
 * CT_GRAPH_ROWS cache slots (key exec CT_GRAPH_FOLDED, version the slot), replacing what it
 * held, so that the recent inventories still label their launches. */
static struct ct_graph_inv_key cache_key(struct ct_graph_inv_key key) {
  uint64_t h = (key.exec * 0x9E3779B97F4A7C15ull) ^ key.version;
  return (struct ct_graph_inv_key){CT_GRAPH_FOLDED, h % CT_GRAPH_ROWS};
}

/* The slot that takes key's inventory: its own while the map holds fewer than
 * CT_GRAPH_ROWS keys or already has it, else its cache slot. NULL when out of memory. */
static ct_graph_inv *invs_slot(struct ct_map *m, struct ct_graph_inv_key key) {
  ct_graph_inv *inv = ct_map_find(m, &key, sizeof key);
  if (inv) return inv;
  if (ct_map_count(m) >= CT_GRAPH_ROWS) key = cache_key(key);
  return ct_map_get(m, &key, sizeof key, NULL);
}

/* The inventory of key in m, its cache slot's when that holds it (version 0: the exec's
 * latest there), else NULL. */
static const ct_graph_inv *invs_get(struct ct_map *m, struct ct_graph_inv_key key) {
  const ct_graph_inv *inv = ct_map_find(m, &key, sizeof key);
  if (inv || ct_map_count(m) < CT_GRAPH_ROWS) return inv;
  struct ct_graph_inv_key c = cache_key(key);
  inv = ct_map_find(m, &c, sizeof c);
  return inv && inv->g.exec == key.exec && (!key.version || inv->g.version == key.version)
             ? inv
             : NULL;
}

int ct_graph_invs_graph(struct ct_map *m, const struct ct_graph *g) {
  struct ct_graph_inv_key key = {g->exec, g->version};
  ct_graph_inv *done = NULL;
  for (int latest = 0; latest < 2; latest++) {
    if (latest) key.version = 0;
    ct_graph_inv *inv = invs_slot(m, key);
    if (!inv) return -1;
    if (inv != done) ct_graph_inv_set(inv, g); /* both keys in one cache slot: once */
    done = inv;
    if (!g->version) break;
  }
  return 0;
}

int ct_graph_invs_kernel(struct ct_map *m, const struct ct_graph_kernel *k, const char *name,
                         const ct_kattr_config *cfg) {
  struct ct_graph_inv_key key = {k->exec, k->version};
  ct_graph_inv *done = NULL;
  for (int latest = 0; latest < 2; latest++) {
    if (latest) key.version = 0;
    ct_graph_inv *inv = invs_slot(m, key);
    if (!inv) return -1;
    if (inv != done) ct_graph_inv_kernel(inv, k, name, cfg);
    done = inv;
    if (!k->version) break;
  }
  return 0;
}

const ct_graph_inv *ct_graph_invs_find(struct ct_map *m, uint64_t exec, uint64_t version) {
  if (!m || !exec) return NULL;
  const ct_graph_inv *inv = invs_get(m, (struct ct_graph_inv_key){exec, version});
  if ((!inv || !inv->known) && version) { /* not read (yet): the exec's latest */
    const ct_graph_inv *latest = invs_get(m, (struct ct_graph_inv_key){exec, 0});
    /* past the limit, only when it is that version: the cache's may be a later one */
    if (latest && (ct_map_count(m) < CT_GRAPH_ROWS || latest->g.version == version))
      inv = latest;
  }
  return inv;
}

int ct_graphs_launched(const ct_report *r) {
  const ct_map *m = r->maps[CT_TABLE_GRAPHS];
  for (size_t i = 0; i < ct_map_count(m); i++) {
    const ct_graph_row *row = ct_map_entry(m, i, NULL, NULL);
    if (row->launches) return 1;
  }
  return 0;
}

/* "capture_step x4, fill x1" (demangled), or why there is no inventory. */
static void top_text(const ct_graph_inv *g, char *out, size_t len) {
  char b[512];
  size_t n = 0;
  out[0] = 0;
  if (!g->known) {
    snprintf(out, len, "(not seen instantiated)");
    return;
  }
  for (unsigned i = 0; i < g->ntop && n < len; i++)
    n += (size_t)snprintf(out + n, len - n, "%s%s x%llu", i ? ", " : "",
                          ct_demangle(g->top[i].name, b, sizeof b),
                          (unsigned long long)g->top[i].count);
  if (g->g.partial && n < len) snprintf(out + n, len - n, "%s(partial)", n ? " " : "");
}

void ct_graphs_text_row(ct_table *tb, const ct_report *r, const void *key, const void *v) {
  const ct_graph_row *g = v;
  char b[32], top[1024];
  ct_table_cell(tb, "%.2f", r->gpu_total_ns ? 100.0 * g->d.total / r->gpu_total_ns : 0);
  ct_table_cell(tb, "%s", ct_fmt_duration(g->d.total, b, sizeof b));
  ct_table_cell(tb, "%llu", (unsigned long long)g->launches);
  ct_table_cell(tb, "%s", ct_fmt_duration(g->d.count ? g->d.total / g->d.count : 0, b, sizeof b));
  const uint64_t f[5] = {g->inv.g.nodes, g->inv.g.kernels, g->inv.g.memcpys, g->inv.g.memsets,
                         g->inv.g.others};
  for (int j = 0; j < 5; j++) {
    if (g->inv.known) ct_table_cell(tb, "%llu", (unsigned long long)f[j]);
    else ct_table_cell(tb, "-");
  }
  const ct_graph_key *k = key;
  if (g->fold) { /* the keys past CT_GRAPH_ROWS rows, counted */
    if (g->folded_exec)
      ct_table_cell(tb, "%llu v%llu-%llu", (unsigned long long)g->folded_exec,
                    (unsigned long long)g->folded_first, (unsigned long long)g->folded_last);
    else
      ct_table_cell(tb, "(several)");
    ct_table_cell(tb, "(%llu more inventor%s not kept: the table keeps %d rows)",
                  (unsigned long long)g->folded, g->folded == 1 ? "y" : "ies", CT_GRAPH_ROWS);
    return;
  }
  if (k->version > 1) /* an exec updated or edited: the version its launches ran */
    ct_table_cell(tb, "%llu v%llu", (unsigned long long)k->exec, (unsigned long long)k->version);
  else
    ct_table_cell(tb, "%llu", (unsigned long long)k->exec);
  top_text(&g->inv, top, sizeof top);
  ct_table_cell(tb, "%s", top);
}

void ct_graph_inv_top_csv(const ct_graph_inv *inv, char *out, size_t len) {
  size_t n = 0;
  out[0] = 0;
  for (unsigned i = 0; i < inv->ntop && n < len; i++)
    n += (size_t)snprintf(out + n, len - n, "%s%s:%llu", i ? ";" : "", inv->top[i].name,
                          (unsigned long long)inv->top[i].count);
}

void ct_graphs_csv_row(ct_table *tb, const ct_report *r, const void *key, const void *v) {
  const ct_graph_row *g = v;
  char top[1024];
  (void)r;
  const ct_graph_key *k = key;
  const uint64_t f[12] = {g->fold ? g->folded_exec : k->exec, g->launches, g->d.total,
                          g->d.count ? g->d.total / g->d.count : 0, g->inv.known,
                          g->inv.g.nodes, g->inv.g.kernels, g->inv.g.memcpys, g->inv.g.memsets,
                          g->inv.g.others, g->inv.g.partial,
                          g->fold ? g->folded_first : k->version};
  for (int j = 0; j < 12; j++) ct_table_cell(tb, "%llu", (unsigned long long)f[j]);
  ct_graph_inv_top_csv(&g->inv, top, sizeof top);
  ct_table_cell(tb, "%s", top);
  ct_table_cell(tb, "%llu", (unsigned long long)g->folded);
  ct_table_cell(tb, "%llu", (unsigned long long)(g->fold ? g->folded_last : k->version));
}

void ct_graphs_json_row(ct_json *j, const ct_report *r, const void *key, const void *v) {
  const ct_graph_row *g = v;
  char b[512];
  (void)r;
  const ct_graph_key *k = key;
  ct_json_kv_uint(j, "exec", g->fold ? g->folded_exec : k->exec);
  ct_json_kv_uint(j, "version", g->fold ? g->folded_first : k->version);
  ct_json_kv_uint(j, "last_version", g->fold ? g->folded_last : k->version);
  ct_json_kv_uint(j, "folded", g->folded);
  ct_json_kv_bool(j, "folded_row", g->fold);
  ct_json_kv_uint(j, "launches", g->launches);
  ct_json_kv_uint(j, "timed", g->d.count);
  ct_json_kv_uint(j, "gpu_ns", g->d.total);
  ct_json_kv_bool(j, "inventory", g->inv.known);
  ct_json_kv_uint(j, "nodes", g->inv.g.nodes);
  ct_json_kv_uint(j, "kernels", g->inv.g.kernels);
  ct_json_kv_uint(j, "memcpys", g->inv.g.memcpys);
  ct_json_kv_uint(j, "memsets", g->inv.g.memsets);
  ct_json_kv_uint(j, "others", g->inv.g.others);
  ct_json_kv_uint(j, "partial", g->inv.g.partial);
  ct_json_key(j, "top_kernels");
  ct_json_begin_array(j);
  for (unsigned i = 0; i < g->inv.ntop; i++) {
    ct_json_begin_object(j);
    ct_json_kv_string(j, "name", ct_demangle(g->inv.top[i].name, b, sizeof b));
    ct_json_kv_string(j, "mangled", g->inv.top[i].name);
    ct_json_kv_uint(j, "count", g->inv.top[i].count);
    ct_json_key(j, "attributes"); /* format 1.6: its first node's */
    if (g->inv.top[i].has_attr) {
      ct_json_begin_object(j);
      ct_kattr_config_members(j, &g->inv.top[i].attr);
      ct_json_end_object(j);
    } else {
      ct_json_null(j);
    }
    ct_json_end_object(j);
  }
  ct_json_end_array(j);
}
