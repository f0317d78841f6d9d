/*
 * The CUDA graphs table of `cutrace report`: one row per graph exec and inventory
 * version (process, exec id, version), with its launches (GRAPH_LAUNCH detail of the
 * launch calls), the GPU time of its timed launches, and the inventory recorded at its
 * instantiation, update or in-place edit (GRAPH and GRAPH_KERNEL records, format 1.2):
 * node counts and its most frequent kernels. Since format 1.13 each launch carries the
 * version of the inventory it ran, so an exec edited in place or updated has one row
 * per version: the launches and GPU time of what it ran then. Older files have version
 * 0 everywhere: one row per exec, its latest inventory.
 * Memory: one row per exec version, at most CT_GRAPH_TOP names each.
 */
#include <stdio.h>
#include <string.h>

#include "report.h"

static ct_graph_row *graph_row(ct_report *r, uint64_t pid, uint64_t exec, uint64_t version) {
  ct_graph_key key = {pid, exec, version};
  return ct_map_get(r->maps[CT_TABLE_GRAPHS], &key, sizeof key, NULL);
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
  snprintf(inv->top[i].name, sizeof inv->top[i].name, "%s", name[0] ? name : "?");
  inv->top[i].has_attr = cfg != NULL;
  if (cfg) inv->top[i].attr = *cfg;
}

int ct_graphs_inventory(ct_report *r, uint64_t pid, const struct ct_graph *g) {
  ct_graph_row *row = graph_row(r, pid, g->exec, g->version);
  if (!row) return -1;
  ct_graph_inv_set(&row->inv, g);
  return 0;
}

int ct_graphs_kernel(ct_report *r, uint64_t pid, const struct ct_graph_kernel *k,
                     const char *name, const ct_kattr_config *cfg) {
  ct_graph_row *row = graph_row(r, pid, k->exec, k->version);
  if (!row) return -1;
  ct_graph_inv_kernel(&row->inv, k, name, cfg);
  return 0;
}

int ct_graph_invs_graph(struct ct_map *m, const struct ct_graph *g) {
  struct ct_graph_inv_key key = {g->exec, g->version};
  for (int latest = 0; latest < 2; latest++) {
    if (latest) key.version = 0;
    ct_graph_inv *inv = ct_map_get(m, &key, sizeof key, NULL);
    if (!inv) return -1;
    ct_graph_inv_set(inv, g);
    if (!g->version) break;
  }
  return 0;
}

int ct_graph_invs_kernel(struct ct_map *m, const struct ct_graph_kernel *k, const char *name,
                         const ct_kattr_config *cfg) {
  struct ct_graph_inv_key key = {k->exec, k->version};
  for (int latest = 0; latest < 2; latest++) {
    if (latest) key.version = 0;
    ct_graph_inv *inv = ct_map_get(m, &key, sizeof key, NULL);
    if (!inv) return -1;
    ct_graph_inv_kernel(inv, k, name, cfg);
    if (!k->version) break;
  }
  return 0;
}

const ct_graph_inv *ct_graph_invs_find(struct ct_map *m, uint64_t exec, uint64_t version) {
  struct ct_graph_inv_key key = {exec, version};
  const ct_graph_inv *inv = m && exec ? ct_map_get(m, &key, sizeof key, NULL) : NULL;
  if (inv && !inv->known && version) { /* not read (yet): the exec's latest */
    key.version = 0;
    inv = ct_map_get(m, &key, sizeof key, NULL);
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
  const uint64_t f[12] = {k->exec, g->launches, g->d.total,
                          g->d.count ? g->d.total / g->d.count : 0, g->inv.known,
                          g->inv.g.nodes, g->inv.g.kernels, g->inv.g.memcpys, g->inv.g.memsets,
                          g->inv.g.others, g->inv.g.partial, k->version};
  for (int j = 0; j < 12; j++) ct_table_cell(tb, "%llu", (unsigned long long)f[j]);
  ct_graph_inv_top_csv(&g->inv, top, sizeof top);
  ct_table_cell(tb, "%s", top);
}

void ct_graphs_json_row(ct_json *j, const ct_report *r, const void *key, const void *v) {
  const ct_graph_row *g = v;
  char b[512];
  (void)r;
  ct_json_kv_uint(j, "exec", ((const ct_graph_key *)key)->exec);
  ct_json_kv_uint(j, "version", ((const ct_graph_key *)key)->version);
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
