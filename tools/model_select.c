/* The selection of GPU work by device, stream and kernel name (model_select.h). */
#include "model_select.h"

#include <fnmatch.h>
#include <string.h>

#include "model.h"

int ct_select_name_matches(const char *pattern, const char *name) {
  if (!name) name = "";
  char buf[4096];
  const char *shown = ct_demangle(name, buf, sizeof buf);
  if (strpbrk(pattern, "*?[")) return fnmatch(pattern, shown, 0) == 0;
  return strstr(shown, pattern) != NULL;
}

/* 1 when v is one of the n values. */
static int listed(const uint64_t *values, unsigned n, uint64_t v) {
  for (unsigned i = 0; i < n; i++)
    if (values[i] == v) return 1;
  return 0;
}

/* The pattern's answer for name, from the cache when seen before. */
static int kernel_matches(const char *pattern, ct_select_cache *cache, const char *name) {
  if (!cache) return ct_select_name_matches(pattern, name);
  size_t slot = ((uintptr_t)name >> 3) * 0x9e3779b97f4a7c15ull >> 56;
  if (cache->name[slot] == name && name) return cache->match[slot];
  int m = ct_select_name_matches(pattern, name);
  cache->name[slot] = name;
  cache->match[slot] = (signed char)m;
  return m;
}

int ct_select_activity(const ct_select *s, ct_select_cache *cache, uint64_t device,
                       uint64_t stream, const char *name) {
  if (!s) return 1;
  if (s->ndevices && !listed(s->devices, s->ndevices, device)) return 0;
  if (s->nstreams && !listed(s->streams, s->nstreams, stream)) return 0;
  if (s->kernel && !kernel_matches(s->kernel, cache, name)) return 0;
  return 1;
}

int ct_select_active(const ct_select *s) {
  return s && (s->ndevices || s->nstreams || s->kernel);
}
