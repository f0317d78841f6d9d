/* Duration statistics and the byte-keyed map of the cutrace tables (see stats.h). */
#include "stats.h"

#include <stdlib.h>
#include <string.h>

/* ---- durations ---------------------------------------------------------------- */

static unsigned hist_index(uint64_t v) {
  if (v < (1u << CT_HIST_SUB_BITS)) return (unsigned)v;
  unsigned e = 63u - (unsigned)__builtin_clzll(v);
  unsigned sub = (unsigned)(v >> (e - CT_HIST_SUB_BITS)) & ((1u << CT_HIST_SUB_BITS) - 1);
  return ((e - CT_HIST_SUB_BITS + 1) << CT_HIST_SUB_BITS) + sub;
}

/* Lower bound and width of bucket i. */
static void hist_bounds(unsigned i, double *low, double *width) {
  if (i < (1u << CT_HIST_SUB_BITS)) {
    *low = i;
    *width = 1;
    return;
  }
  unsigned e = (i >> CT_HIST_SUB_BITS) + CT_HIST_SUB_BITS - 1;
  unsigned sub = i & ((1u << CT_HIST_SUB_BITS) - 1);
  double unit = (double)(1ull << (e - CT_HIST_SUB_BITS));
  *low = ((1u << CT_HIST_SUB_BITS) + sub) * unit;
  *width = unit;
}

#define HIST_OCTAVE (1u << CT_HIST_SUB_BITS)

/* Widens the window to hold buckets [lo, hi) (octave-aligned); -1 when out of memory
 * (the histogram is then unchanged). */
static int hist_cover(ct_dur_stats *s, uint32_t lo, uint32_t hi) {
  lo &= ~(HIST_OCTAVE - 1);
  hi = (hi + HIST_OCTAVE - 1) & ~(HIST_OCTAVE - 1);
  if (s->hist) {
    if (lo >= s->hist_lo && hi <= s->hist_lo + s->hist_n) return 0;
    if (s->hist_lo < lo) lo = s->hist_lo;
    if (s->hist_lo + s->hist_n > hi) hi = s->hist_lo + s->hist_n;
  }
  uint32_t *nh = calloc(hi - lo, sizeof *nh);
  if (!nh) return -1;
  if (s->hist) memcpy(nh + (s->hist_lo - lo), s->hist, s->hist_n * sizeof *nh);
  free(s->hist);
  s->hist = nh;
  s->hist_lo = lo;
  s->hist_n = hi - lo;
  return 0;
}

/* Counts n samples of value v; dropped only when the window cannot grow. */
static void hist_put(ct_dur_stats *s, uint64_t v, uint64_t n) {
  unsigned i = hist_index(v);
  if (hist_cover(s, i, i + 1) < 0) return;
  uint32_t *h = &s->hist[i - s->hist_lo];
  *h = *h + n > UINT32_MAX ? UINT32_MAX : (uint32_t)(*h + n);
}

/* Creates the histogram once a second sample arrives (next_v being that sample),
 * holding the first one. */
static void hist_start(ct_dur_stats *s, uint64_t next_v) {
  if (s->hist) return;
  unsigned a = hist_index(s->first), b = hist_index(next_v);
  if (hist_cover(s, a < b ? a : b, (a < b ? b : a) + 1) < 0) return;
  if (s->count == 1) hist_put(s, s->first, 1);
}

void ct_dur_add(ct_dur_stats *s, uint64_t ns) {
  if (!s->count) {
    s->min = s->max = s->first = ns;
  } else {
    if (ns < s->min) s->min = ns;
    if (ns > s->max) s->max = ns;
    hist_start(s, ns);
    if (s->hist) hist_put(s, ns, 1);
  }
  s->count++;
  s->total += ns;
}

void ct_dur_merge(ct_dur_stats *dst, const ct_dur_stats *src) {
  if (!src->count) return;
  if (!dst->count) {
    dst->min = src->min;
    dst->max = src->max;
    dst->first = src->first;
  } else {
    if (src->min < dst->min) dst->min = src->min;
    if (src->max > dst->max) dst->max = src->max;
  }
  if (dst->count + src->count > 1) {
    hist_start(dst, src->first);
    if (dst->hist) {
      if (src->hist) {
        if (hist_cover(dst, src->hist_lo, src->hist_lo + src->hist_n) == 0)
          for (uint32_t i = 0; i < src->hist_n; i++) {
            uint32_t *d = &dst->hist[src->hist_lo + i - dst->hist_lo];
            uint64_t sum = (uint64_t)*d + src->hist[i];
            *d = sum > UINT32_MAX ? UINT32_MAX : (uint32_t)sum;
          }
      } else
        hist_put(dst, src->first, 1);
    }
  }
  dst->count += src->count;
  dst->total += src->total;
}

uint64_t ct_dur_median(const ct_dur_stats *s) { return ct_dur_quantile(s, 0.5); }

uint64_t ct_dur_quantile(const ct_dur_stats *s, double q) {
  if (!s->count) return 0;
  if (s->count == 1 || s->min == s->max || !s->hist) return s->count == 1 ? s->first : s->min;
  uint64_t n = 0;
  for (uint32_t i = 0; i < s->hist_n; i++) n += s->hist[i];
  double target = (double)(n - 1) * q; /* 0-based rank; a median between two samples is
                                          their average */
  uint64_t below = 0;
  double v = (double)s->max;
  for (uint32_t i = 0; i < s->hist_n; i++) {
    if (!s->hist[i]) continue;
    if (below + s->hist[i] > target) {
      double low, width;
      hist_bounds(s->hist_lo + i, &low, &width);
      /* below 32 a bucket holds one value exactly; above, interpolate inside it */
      v = width == 1 ? low : low + width * ((target - (double)below + 0.5) / s->hist[i]);
      break;
    }
    below += s->hist[i];
  }
  if (v < (double)s->min) v = (double)s->min;
  if (v > (double)s->max) v = (double)s->max;
  return (uint64_t)(v + 0.5);
}

void ct_dur_free(ct_dur_stats *s) {
  free(s->hist);
  s->hist = NULL;
  s->hist_lo = s->hist_n = 0;
}

/* ---- the map ---------------------------------------------------------------------- */

typedef struct entry {
  uint64_t hash;
  size_t len;
  char *key;          /* len bytes + NUL */
  unsigned char value[]; /* value_size bytes, aligned for any scalar */
} entry;

typedef struct ptr_slot {
  const char *ptr;
  entry *e;
} ptr_slot;

struct ct_map {
  size_t value_size;
  entry **entries;        /* insertion order */
  size_t n, cap;
  uint32_t *index;        /* 1 + entry number, 0 = empty; icap slots */
  size_t icap;
  ptr_slot *ptrs;         /* pointer cache, pcap slots */
  size_t pn, pcap;
};

/* Hashes 8 bytes at a time (multiply-xorshift), then the tail bytes FNV-style. */
static inline __attribute__((always_inline)) uint64_t hash_bytes(const void *key, size_t len) {
  const unsigned char *p = key;
  uint64_t h = 1469598103934665603ull ^ len;
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    h = (h ^ w) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 32;
  }
  for (; i < len; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h ^ (h >> 29);
}

ct_map *ct_map_new(size_t value_size) {
  ct_map *m = calloc(1, sizeof *m);
  if (m) m->value_size = (value_size + 15) & ~(size_t)15;
  return m;
}

static int index_grow(ct_map *m) {
  size_t ncap = m->icap ? m->icap * 2 : 64;
  uint32_t *ni = calloc(ncap, sizeof *ni);
  if (!ni) return -1;
  for (size_t i = 0; i < m->n; i++) {
    size_t j = m->entries[i]->hash & (ncap - 1);
    while (ni[j]) j = (j + 1) & (ncap - 1);
    ni[j] = (uint32_t)(i + 1);
  }
  free(m->index);
  m->index = ni;
  m->icap = ncap;
  return 0;
}

/* The entry of key (hash h), or NULL. */
static inline __attribute__((always_inline)) entry *map_lookup(const ct_map *m, const void *key,
                                                             size_t len, uint64_t h) {
  if (m->icap) {
    for (size_t j = h & (m->icap - 1); m->index[j]; j = (j + 1) & (m->icap - 1)) {
      entry *e = m->entries[m->index[j] - 1];
      if (e->hash == h && e->len == len && !memcmp(e->key, key, len)) return e;
    }
  }
  return NULL;
}

static entry *map_find_or_add(ct_map *m, const void *key, size_t len, int *created) {
  uint64_t h = hash_bytes(key, len);
  entry *found = map_lookup(m, key, len, h);
  if (found) {
    if (created) *created = 0;
    return found;
  }
  if ((m->n + 1) * 2 > m->icap && index_grow(m) < 0) return NULL;
  if (m->n == m->cap) {
    size_t ncap = m->cap ? m->cap * 2 : 32;
    entry **ne = realloc(m->entries, ncap * sizeof *ne);
    if (!ne) return NULL;
    m->entries = ne;
    m->cap = ncap;
  }
  entry *e = calloc(1, sizeof *e + m->value_size);
  char *k = malloc(len + 1);
  if (!e || !k) {
    free(e);
    free(k);
    return NULL;
  }
  memcpy(k, key, len);
  k[len] = 0;
  e->hash = h;
  e->len = len;
  e->key = k;
  m->entries[m->n++] = e;
  size_t j = h & (m->icap - 1);
  while (m->index[j]) j = (j + 1) & (m->icap - 1);
  m->index[j] = (uint32_t)m->n;
  if (created) *created = 1;
  return e;
}

void *ct_map_get(ct_map *m, const void *key, size_t len, int *created) {
  entry *e = map_find_or_add(m, key, len, created);
  return e ? e->value : NULL;
}

void *ct_map_find(const ct_map *m, const void *key, size_t len) {
  entry *e = map_lookup(m, key, len, hash_bytes(key, len));
  return e ? e->value : NULL;
}

static inline size_t ptr_hash(const char *p, size_t cap) {
  return (size_t)(((uintptr_t)p * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
}

void *ct_map_get_name(ct_map *m, const char *name, int *created) {
  if (m->pcap) {
    for (size_t j = ptr_hash(name, m->pcap); m->ptrs[j].ptr; j = (j + 1) & (m->pcap - 1))
      if (m->ptrs[j].ptr == name) {
        if (created) *created = 0;
        return m->ptrs[j].e->value;
      }
  }
  entry *e = map_find_or_add(m, name, strlen(name), created);
  if (!e) return NULL;
  if ((m->pn + 1) * 2 > m->pcap) {
    size_t ncap = m->pcap ? m->pcap * 2 : 64;
    ptr_slot *np = calloc(ncap, sizeof *np);
    if (!np) return e->value; /* the cache is only an optimisation */
    for (size_t i = 0; i < m->pcap; i++) {
      if (!m->ptrs[i].ptr) continue;
      size_t j = ptr_hash(m->ptrs[i].ptr, ncap);
      while (np[j].ptr) j = (j + 1) & (ncap - 1);
      np[j] = m->ptrs[i];
    }
    free(m->ptrs);
    m->ptrs = np;
    m->pcap = ncap;
  }
  size_t j = ptr_hash(name, m->pcap);
  while (m->ptrs[j].ptr) j = (j + 1) & (m->pcap - 1);
  m->ptrs[j] = (ptr_slot){name, e};
  m->pn++;
  return e->value;
}

void ct_map_forget_pointers(ct_map *m) {
  free(m->ptrs);
  m->ptrs = NULL;
  m->pn = m->pcap = 0;
}

size_t ct_map_count(const ct_map *m) { return m ? m->n : 0; }

void *ct_map_entry(const ct_map *m, size_t i, const void **key, size_t *len) {
  entry *e = m->entries[i];
  if (key) *key = e->key;
  if (len) *len = e->len;
  return e->value;
}

void ct_map_free(ct_map *m) {
  if (!m) return;
  for (size_t i = 0; i < m->n; i++) {
    free(m->entries[i]->key);
    free(m->entries[i]);
  }
  free(m->entries);
  free(m->index);
  free(m->ptrs);
  free(m);
}
