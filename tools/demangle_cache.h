#ifndef CUTRACE_TOOLS_DEMANGLE_CACHE_H
#define CUTRACE_TOOLS_DEMANGLE_CACHE_H

#include <stddef.h>

#include "stats.h"

/*
 * Demangled kernel names, each demangled once and kept: a trace runs the same few
 * kernels again and again, and __cxa_demangle took a tenth of dump --chrome's
 * instructions. The cache's size is bounded (emptied and started again when full:
 * memory does not grow with the trace). Zeroed memory is an empty cache that finds a
 * name by its bytes; set by_pointer when every name stays at its address until
 * ct_demangle_cache_forget_pointers (then a name seen before is found by address).
 */
typedef struct ct_demangle_cache {
  ct_map *map;      /* mangled name -> its demangled form (char *), NULL until first use */
  size_t bytes;     /* what the map holds, about */
  int by_pointer;   /* names stable until forget_pointers: look them up by address */
  char buf[4096];   /* the form of a name the map could not keep */
} ct_demangle_cache;

/* The demangled form of name (ct_demangle), or name itself when it is not mangled.
 * Valid until the next call. */
const char *ct_demangle_cached(ct_demangle_cache *d, const char *name);

/* With by_pointer: the names seen so far are freed; look them up by their bytes. */
void ct_demangle_cache_forget_pointers(ct_demangle_cache *d);

/* Frees what the cache holds; it is then empty (and may be used again). */
void ct_demangle_cache_free(ct_demangle_cache *d);

#endif
