/* cuGetProcAddress: one table answers by name, ABI version and per-thread flag,
 * as the real driver does (a runtime asks for every entry point this way). */
/* cuDeviceComputeCapability is deprecated but still answered. */
#define CUDA_ENABLE_DEPRECATED
#include "legacy.h"

#include <cudaProfiler.h>

#include <string.h>

/* The per-thread entry points have no prototype in cuda.h unless it is compiled
 * for per-thread default streams; the table only needs their addresses. */
CUresult cuEventRecordWithFlags_ptsz();
CUresult cuEventRecord_ptsz();
CUresult cuGraphInstantiateWithParams_ptsz();
CUresult cuGraphLaunch_ptsz();
CUresult cuGraphUpload_ptsz();
CUresult cuLaunchCooperativeKernel_ptsz();
CUresult cuLaunchHostFunc_ptsz();
CUresult cuStreamAddCallback_ptsz();
CUresult cuLaunchKernelEx_ptsz();
CUresult cuLaunchKernel_ptsz();
CUresult cuMemAllocAsync_ptsz();
CUresult cuMemAllocFromPoolAsync_ptsz();
CUresult cuMemFreeAsync_ptsz();
CUresult cuSignalExternalSemaphoresAsync_ptsz();
CUresult cuWaitExternalSemaphoresAsync_ptsz();
CUresult cuMemcpyHtoA_v2_ptds();
CUresult cuMemcpyAtoH_v2_ptds();
CUresult cuMemcpyDtoA_v2_ptds();
CUresult cuMemcpyAtoD_v2_ptds();
CUresult cuMemcpyAtoA_v2_ptds();
CUresult cuMemcpyHtoAAsync_v2_ptsz();
CUresult cuMemcpyAtoHAsync_v2_ptsz();
CUresult cuMemcpy2DAsync_v2_ptsz();
CUresult cuMemcpy2DUnaligned_v2_ptds();
CUresult cuMemcpy2D_v2_ptds();
CUresult cuMemcpy3DAsync_v2_ptsz();
CUresult cuMemcpy3D_v2_ptds();
CUresult cuMemcpy3DPeer_ptds();
CUresult cuMemcpy3DPeerAsync_ptsz();
CUresult cuMemcpyAsync_ptsz();
CUresult cuMemcpyDtoDAsync_v2_ptsz();
CUresult cuMemcpyDtoD_v2_ptds();
CUresult cuMemcpyDtoHAsync_v2_ptsz();
CUresult cuMemcpyDtoH_v2_ptds();
CUresult cuMemcpyHtoDAsync_v2_ptsz();
CUresult cuMemcpyHtoD_v2_ptds();
CUresult cuMemcpyPeerAsync_ptsz();
CUresult cuMemcpyPeer_ptds();
CUresult cuMemcpy_ptds();
CUresult cuMemsetD16Async_ptsz();
CUresult cuMemsetD16_v2_ptds();
CUresult cuMemsetD2D16Async_ptsz();
CUresult cuMemsetD2D16_v2_ptds();
CUresult cuMemsetD2D32Async_ptsz();
CUresult cuMemsetD2D32_v2_ptds();
CUresult cuMemsetD2D8Async_ptsz();
CUresult cuMemsetD2D8_v2_ptds();
CUresult cuMemsetD32Async_ptsz();
CUresult cuMemsetD32_v2_ptds();
CUresult cuMemsetD8Async_ptsz();
CUresult cuMemsetD8_v2_ptds();
CUresult cuStreamBeginCapture_ptsz();
CUresult cuStreamBeginCaptureToGraph_ptsz();
CUresult cuMemBatchDecompressAsync_ptsz();
CUresult cuMemMapArrayAsync_ptsz();
CUresult cuStreamBeginCapture_v2_ptsz();
CUresult cuStreamEndCapture_ptsz();
CUresult cuStreamGetCaptureInfo_ptsz();
CUresult cuStreamGetCaptureInfo_v2_ptsz();
CUresult cuStreamGetCaptureInfo_v3_ptsz();
CUresult cuStreamGetCtx_ptsz();
CUresult cuStreamGetCtx_v2_ptsz();
CUresult cuStreamGetDevice_ptsz();
CUresult cuStreamGetFlags_ptsz();
CUresult cuStreamGetId_ptsz();
CUresult cuStreamGetPriority_ptsz();
CUresult cuStreamIsCapturing_ptsz();
CUresult cuStreamQuery_ptsz();
CUresult cuStreamSynchronize_ptsz();
CUresult cuStreamWaitEvent_ptsz();

/* X(name, first CUDA version with this ABI, flags (2 = per-thread default
 * stream variant), function). Rows of one name are sorted by flags, version. */
#define SIM_PROC_TABLE(X) \
  X("cuArrayCreate", 3020, 0, cuArrayCreate_v2) \
  X("cuArray3DCreate", 3020, 0, cuArray3DCreate_v2) \
  X("cuArrayGetDescriptor", 3020, 0, cuArrayGetDescriptor_v2) \
  X("cuArray3DGetDescriptor", 3020, 0, cuArray3DGetDescriptor_v2) \
  X("cuArrayDestroy", 2000, 0, cuArrayDestroy) \
  X("cuMipmappedArrayCreate", 5000, 0, cuMipmappedArrayCreate) \
  X("cuMipmappedArrayDestroy", 5000, 0, cuMipmappedArrayDestroy) \
  X("cuImportExternalSemaphore", 10000, 0, cuImportExternalSemaphore) \
  X("cuDestroyExternalSemaphore", 10000, 0, cuDestroyExternalSemaphore) \
  X("cuSignalExternalSemaphoresAsync", 10000, 0, cuSignalExternalSemaphoresAsync) \
  X("cuSignalExternalSemaphoresAsync", 10000, 2, cuSignalExternalSemaphoresAsync_ptsz) \
  X("cuWaitExternalSemaphoresAsync", 10000, 0, cuWaitExternalSemaphoresAsync) \
  X("cuWaitExternalSemaphoresAsync", 10000, 2, cuWaitExternalSemaphoresAsync_ptsz) \
  X("cuMemcpyHtoA", 3020, 0, cuMemcpyHtoA_v2) \
  X("cuMemcpyHtoA", 7000, 2, cuMemcpyHtoA_v2_ptds) \
  X("cuMemcpyAtoH", 3020, 0, cuMemcpyAtoH_v2) \
  X("cuMemcpyAtoH", 7000, 2, cuMemcpyAtoH_v2_ptds) \
  X("cuMemcpyDtoA", 3020, 0, cuMemcpyDtoA_v2) \
  X("cuMemcpyDtoA", 7000, 2, cuMemcpyDtoA_v2_ptds) \
  X("cuMemcpyAtoD", 3020, 0, cuMemcpyAtoD_v2) \
  X("cuMemcpyAtoD", 7000, 2, cuMemcpyAtoD_v2_ptds) \
  X("cuMemcpyAtoA", 3020, 0, cuMemcpyAtoA_v2) \
  X("cuMemcpyAtoA", 7000, 2, cuMemcpyAtoA_v2_ptds) \
  X("cuMemcpyHtoAAsync", 3020, 0, cuMemcpyHtoAAsync_v2) \
  X("cuMemcpyHtoAAsync", 7000, 2, cuMemcpyHtoAAsync_v2_ptsz) \
  X("cuMemcpyAtoHAsync", 3020, 0, cuMemcpyAtoHAsync_v2) \
  X("cuMemcpyAtoHAsync", 7000, 2, cuMemcpyAtoHAsync_v2_ptsz) \
  X("cuCtxCreate", 3020, 0, cuCtxCreate_v2) \
  X("cuCtxCreate", 12050, 0, cuCtxCreate_v4) \
  X("cuCtxDestroy", 2000, 0, cuCtxDestroy) \
  X("cuCtxDestroy", 4000, 0, cuCtxDestroy_v2) \
  X("cuCtxGetApiVersion", 3020, 0, cuCtxGetApiVersion) \
  X("cuCtxGetCurrent", 4000, 0, cuCtxGetCurrent) \
  X("cuCtxGetDevice", 2000, 0, cuCtxGetDevice) \
  X("cuCtxGetDevice", 13000, 0, cuCtxGetDevice_v2) \
  X("cuCtxGetFlags", 7000, 0, cuCtxGetFlags) \
  X("cuCtxGetId", 12000, 0, cuCtxGetId) \
  X("cuCtxGetLimit", 3010, 0, cuCtxGetLimit) \
  X("cuCtxGetStreamPriorityRange", 5050, 0, cuCtxGetStreamPriorityRange) \
  X("cuCtxPopCurrent", 2000, 0, cuCtxPopCurrent) \
  X("cuCtxPopCurrent", 4000, 0, cuCtxPopCurrent_v2) \
  X("cuCtxPushCurrent", 2000, 0, cuCtxPushCurrent) \
  X("cuCtxPushCurrent", 4000, 0, cuCtxPushCurrent_v2) \
  X("cuCtxSetCurrent", 4000, 0, cuCtxSetCurrent) \
  X("cuCtxSetLimit", 3010, 0, cuCtxSetLimit) \
  X("cuCtxSynchronize", 2000, 0, cuCtxSynchronize) \
  X("cuProfilerStart", 4000, 0, cuProfilerStart) \
  X("cuProfilerStop", 4000, 0, cuProfilerStop) \
  X("cuCtxSynchronize", 13000, 0, cuCtxSynchronize_v2) \
  X("cuDeviceCanAccessPeer", 4000, 0, cuDeviceCanAccessPeer) \
  X("cuDeviceComputeCapability", 2000, 0, cuDeviceComputeCapability) \
  X("cuDeviceGet", 2000, 0, cuDeviceGet) \
  X("cuDeviceGetAttribute", 2000, 0, cuDeviceGetAttribute) \
  X("cuDeviceGetCount", 2000, 0, cuDeviceGetCount) \
  X("cuDeviceGetDefaultMemPool", 11020, 0, cuDeviceGetDefaultMemPool) \
  X("cuDeviceGetName", 2000, 0, cuDeviceGetName) \
  X("cuDeviceGetPCIBusId", 4010, 0, cuDeviceGetPCIBusId) \
  X("cuDeviceGetUuid", 9020, 0, cuDeviceGetUuid) \
  X("cuDeviceGetUuid", 11040, 0, cuDeviceGetUuid_v2) \
  X("cuDevicePrimaryCtxGetState", 7000, 0, cuDevicePrimaryCtxGetState) \
  X("cuDevicePrimaryCtxRelease", 7000, 0, cuDevicePrimaryCtxRelease) \
  X("cuDevicePrimaryCtxRelease", 11000, 0, cuDevicePrimaryCtxRelease_v2) \
  X("cuDevicePrimaryCtxReset", 7000, 0, cuDevicePrimaryCtxReset) \
  X("cuDevicePrimaryCtxReset", 11000, 0, cuDevicePrimaryCtxReset_v2) \
  X("cuDevicePrimaryCtxRetain", 7000, 0, cuDevicePrimaryCtxRetain) \
  X("cuDevicePrimaryCtxSetFlags", 7000, 0, cuDevicePrimaryCtxSetFlags) \
  X("cuDevicePrimaryCtxSetFlags", 11000, 0, cuDevicePrimaryCtxSetFlags_v2) \
  X("cuDeviceTotalMem", 3020, 0, cuDeviceTotalMem_v2) \
  X("cuDriverGetVersion", 2020, 0, cuDriverGetVersion) \
  X("cuEventCreate", 2000, 0, cuEventCreate) \
  X("cuEventDestroy", 2000, 0, cuEventDestroy) \
  X("cuEventDestroy", 4000, 0, cuEventDestroy_v2) \
  X("cuEventElapsedTime", 2000, 0, cuEventElapsedTime) \
  X("cuEventElapsedTime", 12080, 0, cuEventElapsedTime_v2) \
  X("cuEventQuery", 2000, 0, cuEventQuery) \
  X("cuEventRecord", 2000, 0, cuEventRecord) \
  X("cuEventRecord", 7000, 2, cuEventRecord_ptsz) \
  X("cuEventRecordWithFlags", 11010, 0, cuEventRecordWithFlags) \
  X("cuEventRecordWithFlags", 11010, 2, cuEventRecordWithFlags_ptsz) \
  X("cuEventSynchronize", 2000, 0, cuEventSynchronize) \
  X("cuFuncGetAttribute", 2020, 0, cuFuncGetAttribute) \
  X("cuFuncGetModule", 11000, 0, cuFuncGetModule) \
  X("cuFuncGetName", 12030, 0, cuFuncGetName) \
  X("cuFuncIsLoaded", 12040, 0, cuFuncIsLoaded) \
  X("cuFuncLoad", 12040, 0, cuFuncLoad) \
  X("cuFuncSetAttribute", 9000, 0, cuFuncSetAttribute) \
  X("cuFuncSetCacheConfig", 3000, 0, cuFuncSetCacheConfig) \
  X("cuGetErrorName", 6000, 0, cuGetErrorName) \
  X("cuGetErrorString", 6000, 0, cuGetErrorString) \
  X("cuGetExportTable", 3000, 0, cuGetExportTable) \
  X("cuGetProcAddress", 11030, 0, cuGetProcAddress) \
  X("cuGetProcAddress", 12000, 0, cuGetProcAddress_v2) \
  X("cuGraphCreate", 10000, 0, cuGraphCreate) \
  X("cuGraphDestroy", 10000, 0, cuGraphDestroy) \
  X("cuGraphAddChildGraphNode", 10000, 0, cuGraphAddChildGraphNode) \
  X("cuGraphChildGraphNodeGetGraph", 10000, 0, cuGraphChildGraphNodeGetGraph) \
  X("cuGraphExecDestroy", 10000, 0, cuGraphExecDestroy) \
  X("cuGraphExecUpdate", 12000, 0, cuGraphExecUpdate_v2) \
  X("cuGraphExecKernelNodeSetParams", 12000, 0, cuGraphExecKernelNodeSetParams_v2) \
  X("cuGraphExecNodeSetParams", 12020, 0, cuGraphExecNodeSetParams) \
  X("cuGraphExecMemsetNodeSetParams", 10020, 0, cuGraphExecMemsetNodeSetParams) \
  X("cuGraphExecMemcpyNodeSetParams", 10020, 0, cuGraphExecMemcpyNodeSetParams) \
  X("cuGraphExecChildGraphNodeSetParams", 11010, 0, cuGraphExecChildGraphNodeSetParams) \
  X("cuGraphGetNodes", 10000, 0, cuGraphGetNodes) \
  X("cuGraphInstantiate", 10000, 0, cuGraphInstantiate) \
  X("cuGraphInstantiate", 11000, 0, cuGraphInstantiate_v2) \
  X("cuGraphInstantiate", 12000, 0, cuGraphInstantiateWithFlags) \
  X("cuGraphInstantiateWithFlags", 11040, 0, cuGraphInstantiateWithFlags) \
  X("cuGraphInstantiateWithParams", 12000, 0, cuGraphInstantiateWithParams) \
  X("cuGraphInstantiateWithParams", 12000, 2, cuGraphInstantiateWithParams_ptsz) \
  X("cuGraphKernelNodeGetParams", 12000, 0, cuGraphKernelNodeGetParams_v2) \
  X("cuGraphLaunch", 10000, 0, cuGraphLaunch) \
  X("cuGraphLaunch", 10000, 2, cuGraphLaunch_ptsz) \
  X("cuGraphNodeGetType", 10000, 0, cuGraphNodeGetType) \
  X("cuGraphUpload", 11010, 0, cuGraphUpload) \
  X("cuGraphUpload", 11010, 2, cuGraphUpload_ptsz) \
  X("cuInit", 2000, 0, cuInit) \
  X("cuKernelGetAttribute", 12000, 0, cuKernelGetAttribute) \
  X("cuKernelGetFunction", 12000, 0, cuKernelGetFunction) \
  X("cuKernelGetLibrary", 12050, 0, cuKernelGetLibrary) \
  X("cuKernelGetName", 12030, 0, cuKernelGetName) \
  X("cuKernelSetAttribute", 12000, 0, cuKernelSetAttribute) \
  X("cuKernelSetCacheConfig", 12000, 0, cuKernelSetCacheConfig) \
  X("cuLaunchCooperativeKernel", 9000, 0, cuLaunchCooperativeKernel) \
  X("cuLaunchCooperativeKernel", 9000, 2, cuLaunchCooperativeKernel_ptsz) \
  X("cuLaunchKernel", 4000, 0, cuLaunchKernel) \
  X("cuLaunch", 2000, 0, cuLaunch) \
  X("cuLaunchGrid", 2000, 0, cuLaunchGrid) \
  X("cuLaunchGridAsync", 2000, 0, cuLaunchGridAsync) \
  X("cuCtxFromGreenCtx", 12040, 0, cuCtxFromGreenCtx) \
  X("cuCtxRecordEvent", 12050, 0, cuCtxRecordEvent) \
  X("cuCtxWaitEvent", 12050, 0, cuCtxWaitEvent) \
  X("cuDevResourceGenerateDesc", 12040, 0, cuDevResourceGenerateDesc) \
  X("cuDevSmResourceSplitByCount", 12040, 0, cuDevSmResourceSplitByCount) \
  X("cuDeviceGetDevResource", 12040, 0, cuDeviceGetDevResource) \
  X("cuGreenCtxCreate", 12040, 0, cuGreenCtxCreate) \
  X("cuGreenCtxDestroy", 12040, 0, cuGreenCtxDestroy) \
  X("cuGreenCtxGetDevResource", 12040, 0, cuGreenCtxGetDevResource) \
  X("cuGreenCtxGetId", 12090, 0, cuGreenCtxGetId) \
  X("cuGreenCtxRecordEvent", 12040, 0, cuGreenCtxRecordEvent) \
  X("cuGreenCtxStreamCreate", 12050, 0, cuGreenCtxStreamCreate) \
  X("cuGreenCtxWaitEvent", 12040, 0, cuGreenCtxWaitEvent) \
  X("cuStreamGetGreenCtx", 12040, 0, cuStreamGetGreenCtx) \
  X("cuMemMapArrayAsync", 11010, 0, cuMemMapArrayAsync) \
  X("cuMemMapArrayAsync", 11010, 2, cuMemMapArrayAsync_ptsz) \
  X("cuLaunchCooperativeKernelMultiDevice", 9000, 0, cuLaunchCooperativeKernelMultiDevice) \
  X("cuFuncSetBlockShape", 2000, 0, cuFuncSetBlockShape) \
  X("cuFuncSetSharedSize", 2000, 0, cuFuncSetSharedSize) \
  X("cuParamSetSize", 2000, 0, cuParamSetSize) \
  X("cuParamSeti", 2000, 0, cuParamSeti) \
  X("cuParamSetf", 2000, 0, cuParamSetf) \
  X("cuParamSetv", 2000, 0, cuParamSetv) \
  X("cuLaunchKernel", 7000, 2, cuLaunchKernel_ptsz) \
  X("cuLaunchKernelEx", 11060, 0, cuLaunchKernelEx) \
  X("cuLaunchKernelEx", 11060, 2, cuLaunchKernelEx_ptsz) \
  X("cuLibraryGetGlobal", 12000, 0, cuLibraryGetGlobal) \
  X("cuLibraryGetKernel", 12000, 0, cuLibraryGetKernel) \
  X("cuLibraryGetModule", 12000, 0, cuLibraryGetModule) \
  X("cuLibraryLoadData", 12000, 0, cuLibraryLoadData) \
  X("cuLibraryLoadFromFile", 12000, 0, cuLibraryLoadFromFile) \
  X("cuLibraryUnload", 12000, 0, cuLibraryUnload) \
  X("cuLaunchHostFunc", 10000, 0, cuLaunchHostFunc) \
  X("cuLaunchHostFunc", 10000, 2, cuLaunchHostFunc_ptsz) \
  X("cuOccupancyAvailableDynamicSMemPerBlock", 10020, 0, cuOccupancyAvailableDynamicSMemPerBlock) \
  X("cuOccupancyMaxActiveBlocksPerMultiprocessor", 6050, 0, cuOccupancyMaxActiveBlocksPerMultiprocessor) \
  X("cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", 7000, 0, cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags) \
  X("cuOccupancyMaxPotentialBlockSize", 6050, 0, cuOccupancyMaxPotentialBlockSize) \
  X("cuOccupancyMaxPotentialBlockSizeWithFlags", 7000, 0, cuOccupancyMaxPotentialBlockSizeWithFlags) \
  X("cuStreamAddCallback", 5000, 0, cuStreamAddCallback) \
  X("cuStreamAddCallback", 7000, 2, cuStreamAddCallback_ptsz) \
  X("cuMemAddressFree", 10020, 0, cuMemAddressFree) \
  X("cuMemAddressReserve", 10020, 0, cuMemAddressReserve) \
  X("cuMemAlloc", 3020, 0, cuMemAlloc_v2) \
  X("cuMemAllocAsync", 11020, 0, cuMemAllocAsync) \
  X("cuMemAllocAsync", 11020, 2, cuMemAllocAsync_ptsz) \
  X("cuMemAllocFromPoolAsync", 11020, 0, cuMemAllocFromPoolAsync) \
  X("cuMemAllocFromPoolAsync", 11020, 2, cuMemAllocFromPoolAsync_ptsz) \
  X("cuMemAllocHost", 3020, 0, cuMemAllocHost_v2) \
  X("cuMemAllocManaged", 6000, 0, cuMemAllocManaged) \
  X("cuMemAllocPitch", 3020, 0, cuMemAllocPitch_v2) \
  X("cuMemFree", 3020, 0, cuMemFree_v2) \
  X("cuMemFreeAsync", 11020, 0, cuMemFreeAsync) \
  X("cuMemFreeAsync", 11020, 2, cuMemFreeAsync_ptsz) \
  X("cuMemFreeHost", 2000, 0, cuMemFreeHost) \
  X("cuMemCreate", 10020, 0, cuMemCreate) \
  X("cuMemGetAddressRange", 3020, 0, cuMemGetAddressRange_v2) \
  X("cuMemGetAllocationGranularity", 10020, 0, cuMemGetAllocationGranularity) \
  X("cuMemGetInfo", 3020, 0, cuMemGetInfo_v2) \
  X("cuMemHostAlloc", 2020, 0, cuMemHostAlloc) \
  X("cuMemHostGetDevicePointer", 3020, 0, cuMemHostGetDevicePointer_v2) \
  X("cuMemHostGetFlags", 2030, 0, cuMemHostGetFlags) \
  X("cuMemHostRegister", 4000, 0, cuMemHostRegister) \
  X("cuMemHostRegister", 6050, 0, cuMemHostRegister_v2) \
  X("cuMemHostUnregister", 4000, 0, cuMemHostUnregister) \
  X("cuMemMap", 10020, 0, cuMemMap) \
  X("cuMemRelease", 10020, 0, cuMemRelease) \
  X("cuMemSetAccess", 10020, 0, cuMemSetAccess) \
  X("cuMemUnmap", 10020, 0, cuMemUnmap) \
  X("cuMemcpy", 4000, 0, cuMemcpy) \
  X("cuMemcpy", 7000, 2, cuMemcpy_ptds) \
  X("cuMemcpy2D", 3020, 0, cuMemcpy2D_v2) \
  X("cuMemcpy2D", 7000, 2, cuMemcpy2D_v2_ptds) \
  X("cuMemcpy2DAsync", 3020, 0, cuMemcpy2DAsync_v2) \
  X("cuMemcpy2DAsync", 7000, 2, cuMemcpy2DAsync_v2_ptsz) \
  X("cuMemcpy2DUnaligned", 3020, 0, cuMemcpy2DUnaligned_v2) \
  X("cuMemcpy2DUnaligned", 7000, 2, cuMemcpy2DUnaligned_v2_ptds) \
  X("cuMemcpy3D", 3020, 0, cuMemcpy3D_v2) \
  X("cuMemcpy3D", 7000, 2, cuMemcpy3D_v2_ptds) \
  X("cuMemcpy3DAsync", 3020, 0, cuMemcpy3DAsync_v2) \
  X("cuMemcpy3DAsync", 7000, 2, cuMemcpy3DAsync_v2_ptsz) \
  X("cuMemcpyAsync", 4000, 0, cuMemcpyAsync) \
  X("cuMemcpyAsync", 7000, 2, cuMemcpyAsync_ptsz) \
  X("cuMemcpyDtoD", 3020, 0, cuMemcpyDtoD_v2) \
  X("cuMemcpyDtoD", 7000, 2, cuMemcpyDtoD_v2_ptds) \
  X("cuMemcpyDtoDAsync", 3020, 0, cuMemcpyDtoDAsync_v2) \
  X("cuMemcpyDtoDAsync", 7000, 2, cuMemcpyDtoDAsync_v2_ptsz) \
  X("cuMemcpyDtoH", 3020, 0, cuMemcpyDtoH_v2) \
  X("cuMemcpyDtoH", 7000, 2, cuMemcpyDtoH_v2_ptds) \
  X("cuMemcpyDtoHAsync", 3020, 0, cuMemcpyDtoHAsync_v2) \
  X("cuMemcpyDtoHAsync", 7000, 2, cuMemcpyDtoHAsync_v2_ptsz) \
  X("cuMemcpyHtoD", 3020, 0, cuMemcpyHtoD_v2) \
  X("cuMemcpyHtoD", 7000, 2, cuMemcpyHtoD_v2_ptds) \
  X("cuMemcpyHtoDAsync", 3020, 0, cuMemcpyHtoDAsync_v2) \
  X("cuMemcpyHtoDAsync", 7000, 2, cuMemcpyHtoDAsync_v2_ptsz) \
  X("cuMemcpyPeer", 4000, 0, cuMemcpyPeer) \
  X("cuMemcpyPeer", 7000, 2, cuMemcpyPeer_ptds) \
  X("cuMemcpyPeerAsync", 4000, 0, cuMemcpyPeerAsync) \
  X("cuMemcpyPeerAsync", 7000, 2, cuMemcpyPeerAsync_ptsz) \
  X("cuMemcpy3DPeer", 4000, 0, cuMemcpy3DPeer) \
  X("cuMemcpy3DPeer", 7000, 2, cuMemcpy3DPeer_ptds) \
  X("cuMemcpy3DPeerAsync", 4000, 0, cuMemcpy3DPeerAsync) \
  X("cuMemcpy3DPeerAsync", 7000, 2, cuMemcpy3DPeerAsync_ptsz) \
  X("cuMemcpy3DBatchAsync", 12080, 0, cuMemcpy3DBatchAsync) \
  X("cuMemcpy3DBatchAsync", 12080, 2, cuMemcpy3DBatchAsync_ptsz) \
  X("cuMemcpy3DBatchAsync", 13000, 0, cuMemcpy3DBatchAsync_v2) \
  X("cuMemcpy3DBatchAsync", 13000, 2, cuMemcpy3DBatchAsync_v2_ptsz) \
  X("cuMemcpyBatchAsync", 12080, 0, cuMemcpyBatchAsync) \
  X("cuMemcpyBatchAsync", 12080, 2, cuMemcpyBatchAsync_ptsz) \
  X("cuMemcpyBatchAsync", 13000, 0, cuMemcpyBatchAsync_v2) \
  X("cuMemcpyBatchAsync", 13000, 2, cuMemcpyBatchAsync_v2_ptsz) \
  X("cuMemPrefetchAsync", 8000, 0, cuMemPrefetchAsync) \
  X("cuMemPrefetchAsync", 8000, 2, cuMemPrefetchAsync_ptsz) \
  X("cuMemPrefetchAsync", 12020, 0, cuMemPrefetchAsync_v2) \
  X("cuMemPrefetchAsync", 12020, 2, cuMemPrefetchAsync_v2_ptsz) \
  X("cuMemDiscardBatchAsync", 13000, 0, cuMemDiscardBatchAsync) \
  X("cuMemDiscardBatchAsync", 13000, 2, cuMemDiscardBatchAsync_ptsz) \
  X("cuMemDiscardAndPrefetchBatchAsync", 13000, 0, cuMemDiscardAndPrefetchBatchAsync) \
  X("cuMemDiscardAndPrefetchBatchAsync", 13000, 2, cuMemDiscardAndPrefetchBatchAsync_ptsz) \
  X("cuMemPrefetchBatchAsync", 13000, 0, cuMemPrefetchBatchAsync) \
  X("cuMemPrefetchBatchAsync", 13000, 2, cuMemPrefetchBatchAsync_ptsz) \
  X("cuMemsetD16", 3020, 0, cuMemsetD16_v2) \
  X("cuMemsetD16", 7000, 2, cuMemsetD16_v2_ptds) \
  X("cuMemsetD16Async", 3020, 0, cuMemsetD16Async) \
  X("cuMemsetD16Async", 7000, 2, cuMemsetD16Async_ptsz) \
  X("cuMemsetD2D16", 3020, 0, cuMemsetD2D16_v2) \
  X("cuMemsetD2D16", 7000, 2, cuMemsetD2D16_v2_ptds) \
  X("cuMemsetD2D16Async", 3020, 0, cuMemsetD2D16Async) \
  X("cuMemsetD2D16Async", 7000, 2, cuMemsetD2D16Async_ptsz) \
  X("cuMemsetD2D32", 3020, 0, cuMemsetD2D32_v2) \
  X("cuMemsetD2D32", 7000, 2, cuMemsetD2D32_v2_ptds) \
  X("cuMemsetD2D32Async", 3020, 0, cuMemsetD2D32Async) \
  X("cuMemsetD2D32Async", 7000, 2, cuMemsetD2D32Async_ptsz) \
  X("cuMemsetD2D8", 3020, 0, cuMemsetD2D8_v2) \
  X("cuMemsetD2D8", 7000, 2, cuMemsetD2D8_v2_ptds) \
  X("cuMemsetD2D8Async", 3020, 0, cuMemsetD2D8Async) \
  X("cuMemsetD2D8Async", 7000, 2, cuMemsetD2D8Async_ptsz) \
  X("cuMemsetD32", 3020, 0, cuMemsetD32_v2) \
  X("cuMemsetD32", 7000, 2, cuMemsetD32_v2_ptds) \
  X("cuMemsetD32Async", 3020, 0, cuMemsetD32Async) \
  X("cuMemsetD32Async", 7000, 2, cuMemsetD32Async_ptsz) \
  X("cuMemsetD8", 3020, 0, cuMemsetD8_v2) \
  X("cuMemsetD8", 7000, 2, cuMemsetD8_v2_ptds) \
  X("cuMemsetD8Async", 3020, 0, cuMemsetD8Async) \
  X("cuMemsetD8Async", 7000, 2, cuMemsetD8Async_ptsz) \
  X("cuModuleGetFunction", 2000, 0, cuModuleGetFunction) \
  X("cuModuleGetGlobal", 3020, 0, cuModuleGetGlobal_v2) \
  X("cuModuleGetLoadingMode", 11070, 0, cuModuleGetLoadingMode) \
  X("cuModuleLoad", 2000, 0, cuModuleLoad) \
  X("cuModuleLoadData", 2000, 0, cuModuleLoadData) \
  X("cuModuleLoadDataEx", 2010, 0, cuModuleLoadDataEx) \
  X("cuModuleLoadFatBinary", 2000, 0, cuModuleLoadFatBinary) \
  X("cuModuleUnload", 2000, 0, cuModuleUnload) \
  X("cuPointerGetAttribute", 4000, 0, cuPointerGetAttribute) \
  X("cuPointerGetAttributes", 7000, 0, cuPointerGetAttributes) \
  X("cuStreamBeginCapture", 10000, 0, cuStreamBeginCapture) \
  X("cuStreamBeginCapture", 10010, 0, cuStreamBeginCapture_v2) \
  X("cuStreamBeginCapture", 10000, 2, cuStreamBeginCapture_ptsz) \
  X("cuStreamBeginCapture", 10010, 2, cuStreamBeginCapture_v2_ptsz) \
  X("cuStreamBeginCaptureToGraph", 12030, 0, cuStreamBeginCaptureToGraph) \
  X("cuMemBatchDecompressAsync", 12060, 0, cuMemBatchDecompressAsync) \
  X("cuMemBatchDecompressAsync", 12060, 2, cuMemBatchDecompressAsync_ptsz) \
  X("cuStreamBeginCaptureToGraph", 12030, 2, cuStreamBeginCaptureToGraph_ptsz) \
  X("cuStreamCreate", 2000, 0, cuStreamCreate) \
  X("cuStreamCreateWithPriority", 5050, 0, cuStreamCreateWithPriority) \
  X("cuStreamDestroy", 2000, 0, cuStreamDestroy) \
  X("cuStreamDestroy", 4000, 0, cuStreamDestroy_v2) \
  X("cuStreamEndCapture", 10000, 0, cuStreamEndCapture) \
  X("cuStreamEndCapture", 10000, 2, cuStreamEndCapture_ptsz) \
  X("cuStreamGetCaptureInfo", 10010, 0, cuStreamGetCaptureInfo) \
  X("cuStreamGetCaptureInfo", 11030, 0, cuStreamGetCaptureInfo_v2) \
  X("cuStreamGetCaptureInfo", 12030, 0, cuStreamGetCaptureInfo_v3) \
  X("cuStreamGetCaptureInfo", 10010, 2, cuStreamGetCaptureInfo_ptsz) \
  X("cuStreamGetCaptureInfo", 11030, 2, cuStreamGetCaptureInfo_v2_ptsz) \
  X("cuStreamGetCaptureInfo", 12030, 2, cuStreamGetCaptureInfo_v3_ptsz) \
  X("cuStreamGetCtx", 9020, 0, cuStreamGetCtx) \
  X("cuStreamGetCtx", 12050, 0, cuStreamGetCtx_v2) \
  X("cuStreamGetCtx", 9020, 2, cuStreamGetCtx_ptsz) \
  X("cuStreamGetCtx", 12050, 2, cuStreamGetCtx_v2_ptsz) \
  X("cuStreamGetDevice", 12080, 0, cuStreamGetDevice) \
  X("cuStreamGetDevice", 12080, 2, cuStreamGetDevice_ptsz) \
  X("cuStreamGetFlags", 5050, 0, cuStreamGetFlags) \
  X("cuStreamGetFlags", 7000, 2, cuStreamGetFlags_ptsz) \
  X("cuStreamGetId", 12000, 0, cuStreamGetId) \
  X("cuStreamGetId", 12000, 2, cuStreamGetId_ptsz) \
  X("cuStreamGetPriority", 5050, 0, cuStreamGetPriority) \
  X("cuStreamGetPriority", 7000, 2, cuStreamGetPriority_ptsz) \
  X("cuStreamIsCapturing", 10000, 0, cuStreamIsCapturing) \
  X("cuStreamIsCapturing", 10000, 2, cuStreamIsCapturing_ptsz) \
  X("cuStreamQuery", 2000, 0, cuStreamQuery) \
  X("cuStreamQuery", 7000, 2, cuStreamQuery_ptsz) \
  X("cuStreamSynchronize", 2000, 0, cuStreamSynchronize) \
  X("cuStreamSynchronize", 7000, 2, cuStreamSynchronize_ptsz) \
  X("cuStreamWaitEvent", 3020, 0, cuStreamWaitEvent) \
  X("cuStreamWaitEvent", 7000, 2, cuStreamWaitEvent_ptsz) \
  X("cuStreamWaitValue32", 8000, 0, cuStreamWaitValue32) \
  X("cuStreamWaitValue32", 8000, 2, cuStreamWaitValue32_ptsz) \
  X("cuStreamWaitValue32", 11070, 0, cuStreamWaitValue32_v2) \
  X("cuStreamWaitValue32", 11070, 2, cuStreamWaitValue32_v2_ptsz) \
  X("cuStreamWaitValue64", 9000, 0, cuStreamWaitValue64) \
  X("cuStreamWaitValue64", 9000, 2, cuStreamWaitValue64_ptsz) \
  X("cuStreamWaitValue64", 11070, 0, cuStreamWaitValue64_v2) \
  X("cuStreamWaitValue64", 11070, 2, cuStreamWaitValue64_v2_ptsz) \
  X("cuStreamWriteValue32", 8000, 0, cuStreamWriteValue32) \
  X("cuStreamWriteValue32", 8000, 2, cuStreamWriteValue32_ptsz) \
  X("cuStreamWriteValue32", 11070, 0, cuStreamWriteValue32_v2) \
  X("cuStreamWriteValue32", 11070, 2, cuStreamWriteValue32_v2_ptsz) \
  X("cuStreamWriteValue64", 9000, 0, cuStreamWriteValue64) \
  X("cuStreamWriteValue64", 9000, 2, cuStreamWriteValue64_ptsz) \
  X("cuStreamWriteValue64", 11070, 0, cuStreamWriteValue64_v2) \
  X("cuStreamWriteValue64", 11070, 2, cuStreamWriteValue64_v2_ptsz) \
  X("cuStreamBatchMemOp", 8000, 0, cuStreamBatchMemOp) \
  X("cuStreamBatchMemOp", 8000, 2, cuStreamBatchMemOp_ptsz) \
  X("cuStreamBatchMemOp", 11070, 0, cuStreamBatchMemOp_v2) \
  X("cuStreamBatchMemOp", 11070, 2, cuStreamBatchMemOp_v2_ptsz) \
  X("cuThreadExchangeStreamCaptureMode", 10010, 0, cuThreadExchangeStreamCaptureMode) \
  X("simcuda_hint_next_launch_ns", 0, 0, simcuda_hint_next_launch_ns) \

struct proc_entry {
  const char *name;
  int version;
  int per_thread;
  void *function;
};

static const struct proc_entry proc_table[] = {
#define SIM_PROC_ENTRY(name, version, flags, fn) {name, version, flags != 0, (void *)fn},
  SIM_PROC_TABLE(SIM_PROC_ENTRY)
#undef SIM_PROC_ENTRY
};

#define PROC_TABLE_SIZE (sizeof proc_table / sizeof proc_table[0])

/* The newest row of `name` with the given per-thread-ness usable at `version`;
 * sets *known when the name exists at all. */
static const struct proc_entry *best_row(const char *name, int version, int per_thread, int *known)
{
  const struct proc_entry *best = NULL;
  for (size_t i = 0; i < PROC_TABLE_SIZE; i++) {
    const struct proc_entry *e = &proc_table[i];
    if (strcmp(e->name, name) != 0 || e->per_thread != per_thread)
      continue;
    *known = 1;
    if (e->version <= version && (!best || e->version > best->version))
      best = e;
  }
  return best;
}

/* Shared by both cuGetProcAddress versions. */
static CUresult get_proc_address(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                 CUdriverProcAddressQueryResult *status)
{
  if (status)
    *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  if (!symbol || !pfn || (flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM
                                                | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)))
    return CUDA_ERROR_INVALID_VALUE;
  *pfn = NULL;
  int known = 0;
  const struct proc_entry *e = NULL;
  if (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) {
    e = best_row(symbol, cudaVersion, 1, &known);
    if (!known) /* no per-thread variant: the function is the same for both */
      e = best_row(symbol, cudaVersion, 0, &known);
  } else {
    e = best_row(symbol, cudaVersion, 0, &known);
  }
  if (!e) {
    if (status && known)
      *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
    return CUDA_ERROR_NOT_FOUND;
  }
  *pfn = e->function;
  if (status)
    *status = CU_GET_PROC_ADDRESS_SUCCESS;
  return CUDA_SUCCESS;
}

/** Looks up a driver function by name, ABI version and flags (CUDA 12 form). */
SIM_API CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                     CUdriverProcAddressQueryResult *symbolStatus)
{
  return get_proc_address(symbol, pfn, cudaVersion, flags, symbolStatus);
}

/** The CUDA 11.3 form of cuGetProcAddress (no status argument). */
SIM_API CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
  return get_proc_address(symbol, pfn, cudaVersion, flags, NULL);
}

/** Private export tables of the real driver are not simulated. */
SIM_API CUresult cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
  if (ppExportTable)
    *ppExportTable = NULL;
  return CUDA_ERROR_NOT_SUPPORTED;
}
