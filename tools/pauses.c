/* The pauses of one traced process (pauses.h). */
#include "pauses.h"

#include <stdlib.h>

int ct_pauses_add(ct_pause_list *l, const struct ct_pause *rec, const char *why) {
  uint64_t end = rec->end_ns ? rec->end_ns : UINT64_MAX;
  if (end < rec->begin_ns) end = rec->begin_ns;
  for (size_t i = l->n; i-- > 0 && l->v[i].begin_ns >= rec->begin_ns;) {
    if (l->v[i].begin_ns == rec->begin_ns) { /* the end of a pause seen open */
      if (end != UINT64_MAX) l->v[i].end_ns = end;
      return 0;
    }
  }
  if (l->n == l->cap) {
    size_t ncap = l->cap ? l->cap * 2 : 8;
    ct_pause_span *nv = realloc(l->v, ncap * sizeof *nv);
    if (!nv) return -1;
    l->v = nv;
    l->cap = ncap;
  }
  size_t i = l->n++; /* keep begin order (records come in order; be safe anyway) */
  while (i > 0 && l->v[i - 1].begin_ns > rec->begin_ns) {
    l->v[i] = l->v[i - 1];
    i--;
  }
  l->v[i] = (ct_pause_span){rec->begin_ns, end, why};
  return 0;
}

/* Index of the first pause that ends after a (pauses do not overlap: ends are ordered). */
static size_t first_ending_after(const ct_pause_list *l, uint64_t a) {
  size_t lo = 0, hi = l->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (l->v[mid].end_ns <= a) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

int ct_pauses_touch(const ct_pause_list *l, uint64_t a, uint64_t b) {
  if (!l->n) return 0;
  size_t i = first_ending_after(l, a);
  return i < l->n && l->v[i].begin_ns <= b;
}

uint64_t ct_pauses_within(const ct_pause_list *l, uint64_t a, uint64_t b) {
  uint64_t sum = 0;
  for (size_t i = first_ending_after(l, a); i < l->n && l->v[i].begin_ns < b; i++) {
    uint64_t s = l->v[i].begin_ns > a ? l->v[i].begin_ns : a;
    uint64_t e = l->v[i].end_ns < b ? l->v[i].end_ns : b;
    if (e > s) sum += e - s;
  }
  return sum;
}

void ct_pauses_free(ct_pause_list *l) {
  free(l->v);
  l->v = NULL;
  l->n = l->cap = 0;
}
