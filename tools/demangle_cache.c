/*
 * Demangled kernel names, cached with a bounded size (demangle_cache.h): shared by
 * dump --chrome / --perfetto and dump --csv.
 */
#include "demangle_cache.h"

#include <stdlib.h>
#include <string.h>

#include "model.h"

#define DEMANGLE_CACHE_BYTES (8u << 20) /* names and their demangled forms, about */
#define DEMANGLE_ENTRY_BYTES 64u         /* what an entry costs beside its strings */

static const char not_mangled[] = ""; /* the value of a name ct_demangle leaves as is */

const char *ct_demangle_cached(ct_demangle_cache *d, const char *name) {
  if (!name || name[0] != '_' || name[1] != 'Z') return name; /* ct_demangle's own test */
  if (d->bytes > DEMANGLE_CACHE_BYTES) ct_demangle_cache_free(d);
  if (!d->map) d->map = ct_map_new(sizeof(char *));
  size_t len = strlen(name);
  int created = 0;
  char **slot = !d->map        ? NULL
                : d->by_pointer ? ct_map_get_name(d->map, name, &created)
                                : ct_map_get(d->map, name, len, &created);
  if (slot && !created) return *slot == not_mangled ? name : *slot;
  const char *shown = ct_demangle(name, d->buf, sizeof d->buf);
  if (!slot) return shown;
  if (shown == name) {
    *slot = (char *)not_mangled;
  } else {
    size_t n = strlen(shown);
    *slot = malloc(n + 1);
    if (!*slot) { /* kept as "not mangled" would be wrong: shown it is, uncached */
      *slot = (char *)not_mangled;
      d->bytes = DEMANGLE_CACHE_BYTES + 1; /* start again next time */
      return shown;
    }
    memcpy(*slot, shown, n + 1);
    d->bytes += n;
  }
  d->bytes += len + DEMANGLE_ENTRY_BYTES;
  return *slot == not_mangled ? name : *slot;
}

void ct_demangle_cache_forget_pointers(ct_demangle_cache *d) {
  if (d->map) ct_map_forget_pointers(d->map);
}

void ct_demangle_cache_free(ct_demangle_cache *d) {
  for (size_t i = 0; d->map && i < ct_map_count(d->map); i++) {
    char *s = *(char **)ct_map_entry(d->map, i, NULL, NULL);
    if (s != not_mangled) free(s);
  }
  ct_map_free(d->map);
  d->map = NULL;
  d->bytes = 0;
}
