/*
 * Stream-ordered sparse array mapping: cuMemMapArrayAsync (+_ptsz; CUDA 11.1), which
 * maps or unmaps tiles and mip tails of sparse CUDA arrays and mipmapped arrays to
 * physical memory in stream order. A CPU span on its stream (CT_API_DRIVER), not timed
 * on the GPU (the format has no GPU record of a mapping): the stream is busy with it,
 * so a successful call is a barrier for event chaining. There is no runtime form.
 */
#include "wrap_common.h"

typedef CUresult (*map_array_fn)(CUarrayMapInfo *, unsigned, CUstream);

CTPD_INLINE CUresult map_array_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                    CUarrayMapInfo *list, unsigned count, CUstream s) {
  CTPD_SPAN_BODY(id, ptsz, realp, ra, map_array_fn, s, 0, real(list, count, s), {
    if (r == CUDA_SUCCESS && ctph_chain_on)
      ctph_stream_barrier(s, ptsz);
  }, (void)0);
}

CTPD_DEFINE(cuMemMapArrayAsync, 0, map_array_body,
            (CUarrayMapInfo *list, unsigned count, CUstream s), (list, count, s))
CTPD_DEFINE(cuMemMapArrayAsync_ptsz, 1, map_array_body,
            (CUarrayMapInfo *list, unsigned count, CUstream s), (list, count, s))
