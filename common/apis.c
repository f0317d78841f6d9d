#include "apis.h"

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

static const struct api_info *find_api(const char *name) {
  if (!name) return NULL;
  for (size_t i = 0; i < sizeof api_table / sizeof api_table[0]; i++)
    if (strcmp(api_table[i].name, name) == 0) return &api_table[i];
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
