/*
 * What the tools know about intercepted entry points, from include/cutrace/hooks.def.
 */
#ifndef CUTRACE_APIS_H
#define CUTRACE_APIS_H

enum ct_api_layer { CT_LAYER_UNKNOWN, CT_LAYER_RUNTIME, CT_LAYER_DRIVER, CT_LAYER_CUBLAS,
                    CT_LAYER_CUBLASLT };

enum ct_api_category { CT_CAT_UNKNOWN, CT_CAT_LAUNCH, CT_CAT_MEMCPY, CT_CAT_MEMSET,
                       CT_CAT_GEMM, CT_CAT_SYNC, CT_CAT_ALLOC, CT_CAT_FREE, CT_CAT_CAPTURE,
                       CT_CAT_GRAPH, CT_CAT_EVENT, CT_CAT_STREAM, CT_CAT_REGISTER,
                       CT_CAT_OTHER };

/* Category of an entry point by name; CT_CAT_UNKNOWN when it is not in hooks.def. */
enum ct_api_category ct_api_category(const char *name);

/* Layer of an entry point by name; CT_LAYER_UNKNOWN when it is not in hooks.def. */
enum ct_api_layer ct_api_layer(const char *name);

/* Lowercase name of a category ("launch", "memcpy", ...). */
const char *ct_api_category_name(enum ct_api_category c);

#endif
