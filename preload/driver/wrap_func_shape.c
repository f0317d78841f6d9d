/*
 * The launch configuration the CUDA 1.x-3.x API sets on a function before cuLaunch,
 * cuLaunchGrid or cuLaunchGridAsync: cuFuncSetBlockShape and cuFuncSetSharedSize
 * (deprecated since 4.0). Neither queues work nor writes a record: each forwards, and
 * when the call succeeded remembers the shape or size per CUfunction, so that the
 * legacy launches' LAUNCH records carry their real block and dynamic shared memory
 * (wrap_launch.c). Remembered whatever the caller and whether tracing is on: a shape
 * set before tracing began still describes later launches.
 */
#include "wrap_common.h"

#include "../hooks/map.h"

/* CUfunction -> v1: block x | y << 21 | z << 42 | SET, v2: shared bytes | SET. */
static struct ctph_map shapes = CTPH_MAP_INIT(6);
#define SHAPE_SET (1ull << 63)
#define DIM_MASK ((1ull << 21) - 1)

typedef CUresult (*set_shape_fn)(CUfunction, int, int, int);
typedef CUresult (*set_size_fn)(CUfunction, unsigned);

/* Stores f's block shape (v1) or shared size (v2), each unless NULL, making f's slot
 * when absent. Under the map's mutex (ctph_map_store): a store through a slot found
 * before another thread's insert grew the table could be lost. */
static void shape_store(CUfunction f, const uint64_t *v1, const uint64_t *v2) {
  int inserted;
  if (ctph_map_insert(&shapes, (uintptr_t)f, 0, 0, 0, &inserted))
    (void)ctph_map_store(&shapes, (uintptr_t)f, 0, v1, v2);
}

void ctpd_function_shape(CUfunction f, unsigned *bx, unsigned *by, unsigned *bz,
                         unsigned *shmem) {
  *bx = *by = *bz = *shmem = 0;
  struct ctph_map_slot *s = f ? ctph_map_find(&shapes, (uintptr_t)f, 0) : NULL;
  if (!s)
    return;
  uint64_t v1 = __atomic_load_n(&s->v1, __ATOMIC_ACQUIRE);
  uint64_t v2 = __atomic_load_n(&s->v2, __ATOMIC_ACQUIRE);
  if (v1 & SHAPE_SET) {
    *bx = (unsigned)(v1 & DIM_MASK);
    *by = (unsigned)(v1 >> 21 & DIM_MASK);
    *bz = (unsigned)(v1 >> 42 & DIM_MASK);
  }
  if (v2 & SHAPE_SET)
    *shmem = (unsigned)v2;
}

CTPD_INLINE CUresult set_shape_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                    CUfunction f, int x, int y, int z) {
  (void)id, (void)ptsz, (void)ra;
  if (!realp)
    return CTPD_NO_REAL;
  CUresult r = ((set_shape_fn)realp)(f, x, y, z);
  if (r == CUDA_SUCCESS && x > 0 && y > 0 && z > 0) {
    int saved = errno;
    uint64_t shape = ((uint64_t)x & DIM_MASK) | ((uint64_t)y & DIM_MASK) << 21 |
                     ((uint64_t)z & DIM_MASK) << 42 | SHAPE_SET;
    shape_store(f, &shape, NULL);
    errno = saved;
  }
  return r;
}

CTPD_INLINE CUresult set_size_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                   CUfunction f, unsigned bytes) {
  (void)id, (void)ptsz, (void)ra;
  if (!realp)
    return CTPD_NO_REAL;
  CUresult r = ((set_size_fn)realp)(f, bytes);
  if (r == CUDA_SUCCESS) {
    int saved = errno;
    uint64_t size = (uint64_t)bytes | SHAPE_SET;
    shape_store(f, NULL, &size);
    errno = saved;
  }
  return r;
}

CTPD_DEFINE(cuFuncSetBlockShape, 0, set_shape_body, (CUfunction f, int x, int y, int z),
            (f, x, y, z))
CTPD_DEFINE(cuFuncSetSharedSize, 0, set_size_body, (CUfunction f, unsigned bytes), (f, bytes))
