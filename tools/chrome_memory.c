/*
 * Allocations in the Chrome / Perfetto export (format 1.5 ALLOC records, docs/dump.md):
 * the allocation's pointer, bytes and kind as args of the allocating (and releasing)
 * call's slice, and per process, device and kind of memory a counter track of the
 * live bytes, "device memory" on the device's GPU row, changing at the end of each
 * allocation and release call. Releases are matched to allocations by pointer with
 * report's code (ct_alloc_match, tools/report_alloc.c), in the same order, so that the
 * counters' highest values are the "Peak live" column of report's memory allocations
 * table. And per allocation or release, Kineto's "[memory]" instant event on the
 * calling thread (the shape PyTorch's profile_memory=True writes; docs/dump.md cites
 * the sources), its totals the live bytes of its Kineto device (CUDA device D for GPU
 * memory, the CPU for page-locked host memory). Memory: one entry per live
 * allocation of the file being read.
 */
#include <stdio.h>
#include <string.h>

#include "chrome_internal.h"

const chr_counter_kind chr_memory_counter = {"memory", "bytes", 1};

int chr_memory_match(ct_chrome *c, const ct_span *s, ct_alloc_change *ch) {
  int rc = ct_alloc_match(&c->live_allocs, s, ch);
  return rc > 0; /* out of memory: the call's slice without the match's args */
}

/* The live bytes of key, created at 0 (NULL when out of memory). */
static uint64_t *live_of(ct_chrome *c, const ct_alloc_key *key) {
  if (!c->memory && !(c->memory = ct_map_new(sizeof(uint64_t)))) return NULL;
  return ct_map_get(c->memory, key, sizeof *key, NULL);
}

/* Writes key's counter value at ts: "device memory" on the device's GPU row ("device
 * memory (pid N)" when several files share the rows). */
static void put_counter(ct_chrome *c, const ct_alloc_key *key, uint64_t ts, uint64_t live) {
  if (c->opt.no_memory) return;
  chr_ensure_gpu_row(c, key->device);
  char name[96];
  const char *kind = ct_alloc_kind_name(key->kind); /* a short literal */
  size_t n = strlen(kind);
  memcpy(name, kind, n);
  memcpy(name + n, " memory", sizeof " memory");
  if (c->file_index && !chr_multi(c))
    snprintf(name + n + 7, sizeof name - n - 7, " (pid %llu)", (unsigned long long)c->pid);
  c->enc->counter(c, &chr_memory_counter, chr_gpu_pid(c, key->device), name, ts, live);
}

/* Kineto's device of a kind of memory (c10::DeviceType: CUDA 1, CPU 0; a CPU device's
 * index is -1): GPU memory (device, async, vmm, managed) is the CUDA device's,
 * page-locked host memory (pinned, registered) the CPU's. */
typedef struct kineto_device {
  int64_t type, id;
} kineto_device;

static kineto_device kineto_device_of(const ct_alloc_key *key) {
  int host = key->kind == CT_ALLOC_PINNED || key->kind == CT_ALLOC_REGISTERED;
  return host ? (kineto_device){0, -1} : (kineto_device){1, (int64_t)key->device};
}

/* The live bytes of a Kineto device: every kind of memory that counts on it (NULL when
 * out of memory). */
static uint64_t *total_of(ct_chrome *c, kineto_device d) {
  if (!c->memory_totals && !(c->memory_totals = ct_map_new(sizeof(uint64_t)))) return NULL;
  return ct_map_get(c->memory_totals, &d, sizeof d, NULL);
}

/* Sets the live bytes of *live (key's) to v, and its Kineto device's total with them. */
static void set_live(ct_chrome *c, const ct_alloc_key *key, uint64_t *live, uint64_t v) {
  uint64_t *total = total_of(c, kineto_device_of(key));
  if (total) *total = ct_alloc_less(*total, *live) + v;
  *live = v;
}

void chr_memory_counters(ct_chrome *c, const ct_alloc_change *ch, uint64_t ts, chr_alloc_view *v) {
  memset(v, 0, sizeof *v);
  v->ch = *ch;
  if (ch->dropped) {
    uint64_t *old = live_of(c, &ch->dropped_key);
    if (old) {
      set_live(c, &ch->dropped_key, old, ct_alloc_less(*old, ch->dropped_bytes));
      if (memcmp(&ch->dropped_key, &ch->key, sizeof ch->key))
        put_counter(c, &ch->dropped_key, ts, *old);
    }
  }
  if (ch->release && !ch->matched) return; /* nothing known changed */
  uint64_t *live = live_of(c, &ch->key);
  if (!live) return;
  set_live(c, &ch->key, live, ch->release ? ct_alloc_less(*live, ch->bytes) : *live + ch->bytes);
  put_counter(c, &ch->key, ts, *live);
  v->live = *live;
  v->have_live = 1;
  const uint64_t *total = total_of(c, kineto_device_of(&ch->key));
  if (total) {
    v->total = *total;
    v->have_total = 1;
  }
}

void chr_memory_instant(ct_chrome *c, const ct_span *s, const chr_alloc_view *v) {
  const ct_alloc_change *ch = &v->ch;
  if (c->opt.no_memory || (ch->release && !ch->matched) || !v->have_total) return;
  kineto_device d = kineto_device_of(&ch->key);
  const chr_encoder *e = c->enc;
  chr_ensure_cpu_thread(c, s->tid);
  e->instant_open(c, "cpu_instant_event", "[memory]", c->pid, s->tid, s->end_ns);
  e->arg_i64(c, "Device Type", d.type);
  e->arg_i64(c, "Device Id", d.id);
  e->arg_i64(c, "Addr", (int64_t)s->d.alloc.ptr); /* Kineto writes the pointer as intptr_t */
  e->arg_i64(c, "Bytes", ch->release ? -(int64_t)ch->bytes : (int64_t)ch->bytes);
  e->arg_u64(c, "Total Allocated", v->total);
  e->arg_u64(c, "Total Reserved", v->total);
  e->slice_close(c);
}

/* v as "0x..." in buf (19 bytes at least); returns buf. */
static const char *hex(uint64_t v, char *buf) {
  char digits[16];
  unsigned n = 0;
  do {
    digits[n++] = "0123456789abcdef"[v & 15];
    v >>= 4;
  } while (v);
  buf[0] = '0', buf[1] = 'x';
  for (unsigned i = 0; i < n; i++) buf[2 + i] = digits[n - 1 - i];
  buf[2 + n] = 0;
  return buf;
}

void chr_put_alloc_args(ct_chrome *c, const ct_span *s, const chr_alloc_view *v) {
  const chr_encoder *e = c->enc;
  char address[20];
  e->arg_str(c, "address", hex(s->d.alloc.ptr, address));
  if (!v) { /* the record alone: what the call asked for */
    e->arg_str(c, "memory kind", ct_alloc_kind_name(s->d.alloc.kind));
    if (!s->d.alloc.release) e->arg_u64(c, "bytes", s->d.alloc.bytes);
    return;
  }
  const ct_alloc_change *ch = &v->ch;
  e->arg_str(c, "memory kind", ct_alloc_kind_name(ch->key.kind));
  if (ch->release && !ch->matched) {
    e->arg_str(c, "allocation", "not in the trace");
    return;
  }
  e->arg_u64(c, "bytes", ch->bytes);
  if (v->have_live) e->arg_u64(c, "live bytes", v->live);
}

void chr_memory_finish(ct_chrome *c) {
  ct_alloc_match_done(&c->live_allocs);
  ct_map_free(c->memory);
  ct_map_free(c->memory_totals);
  c->memory = NULL;
  c->memory_totals = NULL;
}
