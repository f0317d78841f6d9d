/* 3-D copies between devices of the simulated libcudart: cudaMemcpy3DPeer and
 * cudaMemcpy3DPeerAsync (+_ptds/_ptsz), one cuMemcpy3DPeer(Async) each, with the two
 * devices' primary contexts, as the real runtime does; pitched linear memory and CUDA
 * arrays (the extent in the array's elements, as for cudaMemcpy3D). */
#include "cudart_internal.h"

#include <string.h>

static cudaError_t memcpy_3d_peer(const struct cudaMemcpy3DPeerParms *p, cudaStream_t stream, int async,
                                  int pt)
{
  if (!p)
    return rt_fail(cudaErrorInvalidValue);
  RT_ENTER();
  CUDA_MEMCPY3D_PEER c;
  memset(&c, 0, sizeof c);
  cudaError_t e = rt_peer_context(p->srcDevice, &c.srcContext);
  if (e == cudaSuccess)
    e = rt_peer_context(p->dstDevice, &c.dstContext);
  if (e != cudaSuccess)
    return e;
  RT_MEMCPY3D_LINEAR(c, p);
  size_t element;
  e = rt_array_element(p->srcArray, p->dstArray, &element);
  if (e != cudaSuccess)
    return e;
  RT_MEMCPY3D_ARRAYS(c, p, element);
  if (async) {
    RT_NEED(RT_PICK(pt, Memcpy3DPeerAsync));
    return rt_check(RT_PICK(pt, Memcpy3DPeerAsync)(&c, stream));
  }
  RT_NEED(RT_PICK(pt, Memcpy3DPeer));
  return rt_check(RT_PICK(pt, Memcpy3DPeer)(&c));
}

/** Synchronous 3-D copy between devices. */
SIM_EXPORT cudaError_t cudaMemcpy3DPeer(const struct cudaMemcpy3DPeerParms *p)
{
  return memcpy_3d_peer(p, 0, 0, 0);
}

/** Synchronous 3-D copy between devices (per-thread default stream). */
SIM_EXPORT cudaError_t cudaMemcpy3DPeer_ptds(const struct cudaMemcpy3DPeerParms *p)
{
  return memcpy_3d_peer(p, 0, 0, 1);
}

/** Stream-ordered 3-D copy between devices. */
SIM_EXPORT cudaError_t cudaMemcpy3DPeerAsync(const struct cudaMemcpy3DPeerParms *p, cudaStream_t stream)
{
  return memcpy_3d_peer(p, stream, 1, 0);
}

/** Stream-ordered 3-D copy between devices (per-thread default stream). */
SIM_EXPORT cudaError_t cudaMemcpy3DPeerAsync_ptsz(const struct cudaMemcpy3DPeerParms *p, cudaStream_t stream)
{
  return memcpy_3d_peer(p, stream, 1, 1);
}
