/*
 * The memory allocations table of `cutrace report` (format 1.5 ALLOC records): per
 * process, device and kind of memory (device, pinned, managed, stream-ordered,
 * registered), the allocation and release calls, the bytes allocated and released,
 * the time in those calls, and the live bytes from the API's view (allocated and not
 * yet released) at their highest and at the trace's end — what nsys's
 * --cuda-memory-usage shows, counted from the calls, not from the driver's pools.
 *
 * A release is matched to its allocation by pointer within the file (a process), and
 * counts in the allocation's row (a cudaFree of managed memory in the managed row). A
 * release of a pointer allocated before the trace began (or while it was paused) is
 * counted as unmatched, in the row of its own entry point's kind. Live bytes go up at
 * each allocation's record and down at each release's, in the order the model
 * delivers them (calls end order): two threads allocating at the same instant can
 * shift the peak by one allocation. Memory: one entry per live allocation. The matching
 * (ct_alloc_match) is shared with dump --chrome's memory counters (chrome_memory.c).
 */
#include <string.h>

#include "report.h"

/* A live allocation of the file being read (keyed by its pointer). */
typedef struct live_alloc {
  uint64_t bytes, present; /* present: 1 once filled (a new entry is zeroed) */
  ct_alloc_key key;
} live_alloc;

static const char *const kind_names[] = {"?", "device", "pinned", "managed", "async",
                                         "registered", "vmm", "array"};

const char *ct_alloc_kind_name(uint64_t kind) {
  return kind < sizeof kind_names / sizeof kind_names[0] ? kind_names[kind] : "?";
}

static ct_alloc_row *alloc_row(ct_report *r, const ct_alloc_key *key) {
  return ct_map_get(r->maps[CT_TABLE_ALLOCS], key, sizeof *key, NULL);
}

int ct_alloc_match(struct ct_corr_table *live, const ct_span *s, ct_alloc_change *ch) {
  if (s->detail != CT_DETAIL_ALLOC || s->result || !s->d.alloc.ptr) return 0;
  if (!live->value_size) ct_corr_init(live, sizeof(live_alloc));
  const struct ct_alloc *a = &s->d.alloc;
  memset(ch, 0, sizeof *ch);
  ch->release = a->release != 0;
  ch->key = (ct_alloc_key){s->proc->rec.pid, s->device, a->kind};
  live_alloc *l = ct_corr_find(live, a->ptr, !a->release);
  if (!a->release) {
    if (!l) return -1;
    if (l->present) { /* the same pointer again without its release: forget the old one */
      ch->dropped = 1;
      ch->dropped_key = l->key;
      ch->dropped_bytes = l->bytes;
    }
    l->bytes = a->bytes;
    l->present = 1;
    l->key = ch->key;
    ch->bytes = a->bytes;
    return 1;
  }
  if (!l) return 1; /* allocated before the trace began (or while it was paused) */
  ch->matched = 1;
  ch->key = l->key;
  ch->bytes = l->bytes;
  ct_corr_remove(live, l);
  return 1;
}

void ct_alloc_match_done(struct ct_corr_table *live) {
  if (!live->value_size) return;
  ct_corr_free(live);
  memset(live, 0, sizeof *live);
}

int ct_allocs_span(ct_report *r, const ct_span *s) {
  ct_alloc_change ch;
  int rc = ct_alloc_match(&r->live_allocs, s, &ch);
  if (rc <= 0) return rc;
  uint64_t dur = s->end_ns > s->begin_ns ? s->end_ns - s->begin_ns : 0;
  if (ch.dropped) {
    ct_alloc_row *old = alloc_row(r, &ch.dropped_key);
    if (!old) return -1;
    old->live = ct_alloc_less(old->live, ch.dropped_bytes);
  }
  ct_alloc_row *row = alloc_row(r, &ch.key);
  if (!row) return -1;
  ct_dur_add(&row->d, dur);
  if (!ch.release) {
    row->allocs++;
    row->bytes += ch.bytes;
    row->alloc_ns += dur;
    row->live += ch.bytes;
    if (row->live > row->peak) row->peak = row->live;
    return 0;
  }
  row->frees++;
  row->free_ns += dur;
  if (!ch.matched) {
    row->unmatched_frees++;
    return 0;
  }
  row->freed_bytes += ch.bytes;
  row->live = ct_alloc_less(row->live, ch.bytes);
  return 0;
}

void ct_allocs_file_done(ct_report *r) { ct_alloc_match_done(&r->live_allocs); }

/* ---- output ------------------------------------------------------------------------- */

void ct_allocs_text_row(ct_table *tb, const ct_report *r, const void *key, const void *v) {
  (void)r;
  const ct_alloc_key *k = key;
  const ct_alloc_row *a = v;
  char b[6][32];
  ct_table_cell(tb, "%s", ct_fmt_duration(a->d.total, b[0], sizeof b[0]));
  ct_table_cell(tb, "%llu", (unsigned long long)a->allocs);
  ct_table_cell(tb, "%s", ct_fmt_bytes(a->bytes, b[1], sizeof b[1]));
  ct_table_cell(tb, "%s", ct_fmt_duration(a->alloc_ns, b[2], sizeof b[2]));
  ct_table_cell(tb, "%llu", (unsigned long long)a->frees);
  ct_table_cell(tb, "%s", ct_fmt_duration(a->free_ns, b[3], sizeof b[3]));
  ct_table_cell(tb, "%s", ct_fmt_bytes(a->peak, b[4], sizeof b[4]));
  ct_table_cell(tb, "%s", ct_fmt_bytes(a->live, b[5], sizeof b[5]));
  ct_table_cell(tb, "%llu/%llu", (unsigned long long)k->pid, (unsigned long long)k->device);
  ct_table_cell(tb, "%s", ct_alloc_kind_name(k->kind));
}

void ct_allocs_csv_row(ct_table *tb, const ct_report *r, const void *key, const void *v) {
  (void)r;
  const ct_alloc_key *k = key;
  const ct_alloc_row *a = v;
  const uint64_t f[] = {k->pid, k->device};
  for (unsigned i = 0; i < 2; i++) ct_table_cell(tb, "%llu", (unsigned long long)f[i]);
  ct_table_cell(tb, "%s", ct_alloc_kind_name(k->kind));
  const uint64_t g[] = {a->allocs, a->bytes, a->alloc_ns, a->frees, a->freed_bytes, a->free_ns,
                        a->unmatched_frees, a->peak, a->live, a->d.total};
  for (unsigned i = 0; i < sizeof g / sizeof g[0]; i++)
    ct_table_cell(tb, "%llu", (unsigned long long)g[i]);
}

void ct_allocs_json_row(ct_json *j, const ct_report *r, const void *key, const void *v) {
  (void)r;
  const ct_alloc_key *k = key;
  const ct_alloc_row *a = v;
  ct_json_kv_uint(j, "pid", k->pid);
  ct_json_kv_uint(j, "device", k->device);
  ct_json_kv_string(j, "kind", ct_alloc_kind_name(k->kind));
  ct_json_kv_uint(j, "allocs", a->allocs);
  ct_json_kv_uint(j, "bytes", a->bytes);
  ct_json_kv_uint(j, "alloc_ns", a->alloc_ns);
  ct_json_kv_uint(j, "frees", a->frees);
  ct_json_kv_uint(j, "freed_bytes", a->freed_bytes);
  ct_json_kv_uint(j, "free_ns", a->free_ns);
  ct_json_kv_uint(j, "unmatched_frees", a->unmatched_frees);
  ct_json_kv_uint(j, "peak_live_bytes", a->peak);
  ct_json_kv_uint(j, "live_bytes_at_end", a->live);
  ct_json_kv_uint(j, "total_ns", a->d.total);
}
