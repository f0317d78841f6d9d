#include "apis.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

struct api_info {
  const char *name;
  enum ct_api_layer layer;
  enum ct_api_category category;
};

static const struct api_info api_table[] = {
#define CT_HOOK(sym, layer, cat) {#sym, CT_LAYER_##layer, CT_CAT_##cat},
#include "cutrace/hooks.def"
#undef CT_HOOK
};

#define API_COUNT (sizeof api_table / sizeof api_table[0])
#define API_INDEX_SLOTS 1024 /* a power of two, at least twice the table */
_Static_assert(API_COUNT * 2 <= API_INDEX_SLOTS, "hooks.def outgrew the name index");

/* api_table by name, open addressing: 1 + an entry's position, 0 for an empty slot.
 * Built once (a trace's distinct names are looked up per file, and a directory of
 * thousands of rank files made the linear search of 324 names a fixed cost per file). */
static uint16_t api_index[API_INDEX_SLOTS];
static pthread_once_t api_index_once = PTHREAD_ONCE_INIT;

/* FNV-1a of a name. */
static uint32_t api_name_hash(const char *name) {
  uint32_t h = 2166136261u;
  for (const unsigned char *p = (const unsigned char *)name; *p; p++) h = (h ^ *p) * 16777619u;
  return h;
}

/* Fills api_index; a name listed twice keeps its first entry, as the linear search did. */
static void build_api_index(void) {
  for (size_t i = 0; i < API_COUNT; i++) {
    uint32_t slot = api_name_hash(api_table[i].name) & (API_INDEX_SLOTS - 1);
    while (api_index[slot] && strcmp(api_table[api_index[slot] - 1].name, api_table[i].name))
      slot = (slot + 1) & (API_INDEX_SLOTS - 1);
    if (!api_index[slot]) api_index[slot] = (uint16_t)(i + 1);
  }
}

static const struct api_info *find_api(const char *name) {
  if (!name) return NULL;
  pthread_once(&api_index_once, build_api_index);
  uint32_t slot = api_name_hash(name) & (API_INDEX_SLOTS - 1);
  for (; api_index[slot]; slot = (slot + 1) & (API_INDEX_SLOTS - 1))
    if (strcmp(api_table[api_index[slot] - 1].name, name) == 0) return &api_table[api_index[slot] - 1];
  return NULL;
}

enum ct_api_category ct_api_category(const char *name) {
  const struct api_info *a = find_api(name);
  return a ? a->category : CT_CAT_UNKNOWN;
}

enum ct_api_layer ct_api_layer(const char *name) {
  const struct api_info *a = find_api(name);
  return a ? a->layer : CT_LAYER_UNKNOWN;
}

const char *ct_api_category_name(enum ct_api_category c) {
  static const char *const names[] = {"unknown", "launch", "memcpy", "memset", "gemm",
                                      "sync", "alloc", "free", "capture", "graph",
                                      "event", "stream", "register", "other"};
  return (unsigned)c < sizeof names / sizeof names[0] ? names[c] : "unknown";
}
