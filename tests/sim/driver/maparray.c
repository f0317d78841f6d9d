/* Stream-ordered mapping of sparse CUDA arrays: cuMemMapArrayAsync (+_ptsz), minimally.
 *
 * Checked: a non-empty list; each entry names a live CUDA array or mipmapped array
 * (CU_RESOURCE_TYPE_ARRAY / MIPMAPPED_ARRAY), a sparse level or mip tail, a map with a
 * live cuMemCreate handle (CU_MEM_HANDLE_TYPE_GENERIC) or an unmap, zero flags and
 * reserved fields. Each entry is then one operation on the stream taking the copy
 * latency (SIMCUDA_COPY_LATENCY_US; named "map" in the truth log). Not simulated:
 * whether the array was created sparse, tile alignment and bounds, what is mapped where
 * (sparse arrays' memory is allocated whole at creation, so reads and writes work
 * whatever is mapped), and the mapping inside a capture (refused and invalidated, as
 * the simulator's graphs have no node for it). */
#include "sim.h"

#include <string.h>

/* Whether one entry of the list is well formed (lock held). */
static int entry_ok(const CUarrayMapInfo *m)
{
  enum sim_kind want = m->resourceType == CU_RESOURCE_TYPE_ARRAY ? SIM_KIND_ARRAY
                       : m->resourceType == CU_RESOURCE_TYPE_MIPMAPPED_ARRAY ? SIM_KIND_MIPMAP
                                                                             : SIM_KIND_NONE;
  const void *res = m->resourceType == CU_RESOURCE_TYPE_ARRAY ? (const void *)m->resource.array
                                                              : (const void *)m->resource.mipmap;
  if (want == SIM_KIND_NONE || sim_handle_kind(res) != want)
    return 0;
  if (m->subresourceType != CU_ARRAY_SPARSE_SUBRESOURCE_TYPE_SPARSE_LEVEL &&
      m->subresourceType != CU_ARRAY_SPARSE_SUBRESOURCE_TYPE_MIPTAIL)
    return 0;
  if (m->flags || m->reserved[0] || m->reserved[1])
    return 0;
  if (m->memOperationType == CU_MEM_OPERATION_TYPE_MAP)
    return m->memHandleType == CU_MEM_HANDLE_TYPE_GENERIC &&
           sim_handle_kind((const void *)(uintptr_t)m->memHandle.memHandle) == SIM_KIND_MEM_HANDLE;
  return m->memOperationType == CU_MEM_OPERATION_TYPE_UNMAP;
}

static CUresult map_array(CUarrayMapInfo *list, unsigned count, CUstream hStream, int per_thread)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!list || !count)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  struct sim_stream *s;
  CUresult r = sim_stream_resolve_uncaptured(hStream, per_thread, &s);
  for (unsigned i = 0; r == CUDA_SUCCESS && i < count; i++)
    if (!entry_ok(&list[i]))
      r = CUDA_ERROR_INVALID_VALUE;
  for (unsigned i = 0; r == CUDA_SUCCESS && i < count; i++) {
    struct sim_op op = {.kind = SIM_OP_PREFETCH};
    strcpy(op.name, "map");
    op.duration_ns = sim_transfer_ns(0, sim_knobs.d2d_gbps);
    r = sim_submit(s, &op, NULL);
  }
  sim_unlock();
  return r;
}

/** Maps or unmaps tiles of sparse arrays in stream order (see the top of the file). */
SIM_API CUresult cuMemMapArrayAsync(CUarrayMapInfo *mapInfoList, unsigned int count, CUstream hStream)
{
  return map_array(mapInfoList, count, hStream, 0);
}

/** cuMemMapArrayAsync, per-thread default stream entry point. */
SIM_API CUresult cuMemMapArrayAsync_ptsz(CUarrayMapInfo *mapInfoList, unsigned int count, CUstream hStream)
{
  return map_array(mapInfoList, count, hStream, 1);
}
