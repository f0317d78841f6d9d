/*
 * Demangled kernel names for the Chrome / Perfetto export (chrome_internal.h): a trace
 * runs the same few kernels again and again, and __cxa_demangle took a tenth of
 * dump --chrome's instructions, so each mangled name is demangled once and kept, in a
 * cache of bounded size (emptied and started again when full: memory does not grow
 * with the trace).
 */
#include <stdlib.h>
#include <string.h>

#include "chrome_internal.h"
#include "model.h"

#define DEMANGLE_CACHE_BYTES (8u << 20) /* names and their demangled forms, about */
#define DEMANGLE_ENTRY_BYTES 64u         /* what an entry costs beside its strings */

static const char not_mangled[] = ""; /* the value of a name ct_demangle leaves as is */

const char *chr_demangle(ct_chrome *c, const char *name) {
  if (!name || name[0] != '_' || name[1] != 'Z') return name; /* ct_demangle's own test */
  if (c->demangle_bytes > DEMANGLE_CACHE_BYTES) chr_demangle_free(c);
  if (!c->demangle_cache) c->demangle_cache = ct_map_new(sizeof(char *));
  size_t len = strlen(name);
  int created = 0;
  char **slot = c->demangle_cache ? ct_map_get(c->demangle_cache, name, len, &created) : NULL;
  if (slot && !created) return *slot == not_mangled ? name : *slot;
  const char *shown = ct_demangle(name, c->demangled, sizeof c->demangled);
  if (!slot) return shown;
  if (shown == name) {
    *slot = (char *)not_mangled;
  } else {
    size_t n = strlen(shown);
    *slot = malloc(n + 1);
    if (!*slot) { /* kept as "not mangled" would be wrong: shown it is, uncached */
      *slot = (char *)not_mangled;
      c->demangle_bytes = DEMANGLE_CACHE_BYTES + 1; /* start again next time */
      return shown;
    }
    memcpy(*slot, shown, n + 1);
    c->demangle_bytes += n;
  }
  c->demangle_bytes += len + DEMANGLE_ENTRY_BYTES;
  return *slot == not_mangled ? name : *slot;
}

void chr_demangle_free(ct_chrome *c) {
  for (size_t i = 0; c->demangle_cache && i < ct_map_count(c->demangle_cache); i++) {
    char *s = *(char **)ct_map_entry(c->demangle_cache, i, NULL, NULL);
    if (s != not_mangled) free(s);
  }
  ct_map_free(c->demangle_cache);
  c->demangle_cache = NULL;
  c->demangle_bytes = 0;
}
