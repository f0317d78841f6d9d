/* Older ABI versions of renamed entry points, for programs and runtimes that ask
 * for them by version (cuGetProcAddress) or link against them. Each forwards to
 * the current version: their signatures are the same on 64-bit Linux. */
#include "legacy.h"

/** The CUDA 2.0 cuStreamDestroy. */
SIM_API CUresult cuStreamDestroy(CUstream hStream) { return cuStreamDestroy_v2(hStream); }
/** The CUDA 2.0 cuEventDestroy. */
SIM_API CUresult cuEventDestroy(CUevent hEvent) { return cuEventDestroy_v2(hEvent); }
/** The pre-12.8 cuEventElapsedTime. */
SIM_API CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
  return cuEventElapsedTime_v2(pMilliseconds, hStart, hEnd);
}
/** The CUDA 2.0 cuCtxPopCurrent. */
SIM_API CUresult cuCtxPopCurrent(CUcontext *pctx) { return cuCtxPopCurrent_v2(pctx); }
/** The CUDA 2.0 cuCtxPushCurrent. */
SIM_API CUresult cuCtxPushCurrent(CUcontext ctx) { return cuCtxPushCurrent_v2(ctx); }
/** The CUDA 2.0 cuCtxDestroy. */
SIM_API CUresult cuCtxDestroy(CUcontext ctx) { return cuCtxDestroy_v2(ctx); }
/** The CUDA 3.2 cuCtxCreate (no parameter block). */
SIM_API CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
  return cuCtxCreate_v4(pctx, NULL, flags, dev);
}
/** The CUDA 7.0 cuDevicePrimaryCtxRelease. */
SIM_API CUresult cuDevicePrimaryCtxRelease(CUdevice dev) { return cuDevicePrimaryCtxRelease_v2(dev); }
/** The CUDA 7.0 cuDevicePrimaryCtxReset. */
SIM_API CUresult cuDevicePrimaryCtxReset(CUdevice dev) { return cuDevicePrimaryCtxReset_v2(dev); }
/** The CUDA 7.0 cuDevicePrimaryCtxSetFlags. */
SIM_API CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags)
{
  return cuDevicePrimaryCtxSetFlags_v2(dev, flags);
}
/** The CUDA 9.2 cuDeviceGetUuid. */
SIM_API CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev) { return cuDeviceGetUuid_v2(uuid, dev); }
/** The CUDA 4.0 cuMemHostRegister. */
SIM_API CUresult cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags)
{
  return cuMemHostRegister_v2(p, bytesize, Flags);
}
/** The CUDA 10.0 cuGraphInstantiate (error node and log buffer). */
SIM_API CUresult cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
                                    char *logBuffer, size_t bufferSize)
{
  if (phErrorNode)
    *phErrorNode = NULL;
  if (logBuffer && bufferSize)
    logBuffer[0] = '\0';
  return cuGraphInstantiateWithFlags(phGraphExec, hGraph, 0);
}
/** The CUDA 11.0 cuGraphInstantiate_v2 (same arguments as 10.0). */
SIM_API CUresult cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
                                       char *logBuffer, size_t bufferSize)
{
  return cuGraphInstantiate(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize);
}
