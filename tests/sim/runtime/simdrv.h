/* Access to the (simulated) CUDA driver, reached exactly as the real runtime does:
 * dlopen("libcuda.so.1"), one dlsym of cuGetProcAddress_v2, then one
 * cuGetProcAddress_v2(name, &pfn, 13000, flags, &status) per driver function.
 * Each simulated library (cudart, cublas, cublasLt) compiles its own copy. */
#ifndef SIM_RUNTIME_SIMDRV_H
#define SIM_RUNTIME_SIMDRV_H

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cudaProfilerTypedefs.h>

#define SIM_EXPORT __attribute__((visibility("default")))

/* The driver ABI version every function is requested at. */
#define SIMDRV_CUDA_VERSION 13000
#define SIMDRV_PTDS CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM

typedef void (*simdrv_hint_fn)(unsigned long long ns);
typedef CUresult (*simdrv_ctx_sync_fn)(CUcontext ctx);

/* X(member, "driver name", function pointer type, cuGetProcAddress flags).
 * The `_pt` members are the per-thread-default-stream variants (flags 2). */
#define SIMDRV_FUNCTIONS(X) \
  X(Init, "cuInit", PFN_cuInit_v2000, 0) \
  X(DriverGetVersion, "cuDriverGetVersion", PFN_cuDriverGetVersion_v2020, 0) \
  X(DeviceGet, "cuDeviceGet", PFN_cuDeviceGet_v2000, 0) \
  X(DeviceGetCount, "cuDeviceGetCount", PFN_cuDeviceGetCount_v2000, 0) \
  X(DeviceGetAttribute, "cuDeviceGetAttribute", PFN_cuDeviceGetAttribute_v2000, 0) \
  X(DeviceGetName, "cuDeviceGetName", PFN_cuDeviceGetName_v2000, 0) \
  X(DeviceTotalMem, "cuDeviceTotalMem", PFN_cuDeviceTotalMem_v3020, 0) \
  X(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", PFN_cuDevicePrimaryCtxRetain_v7000, 0) \
  X(DevicePrimaryCtxReset, "cuDevicePrimaryCtxReset", PFN_cuDevicePrimaryCtxReset_v11000, 0) \
  X(CtxSetCurrent, "cuCtxSetCurrent", PFN_cuCtxSetCurrent_v4000, 0) \
  X(CtxGetCurrent, "cuCtxGetCurrent", PFN_cuCtxGetCurrent_v4000, 0) \
  X(CtxSynchronize, "cuCtxSynchronize", simdrv_ctx_sync_fn, 0) \
  X(ProfilerStart, "cuProfilerStart", PFN_cuProfilerStart_v4000, 0) \
  X(ProfilerStop, "cuProfilerStop", PFN_cuProfilerStop_v4000, 0) \
  X(MemAlloc, "cuMemAlloc", PFN_cuMemAlloc_v3020, 0) \
  X(MemFree, "cuMemFree", PFN_cuMemFree_v3020, 0) \
  X(MemAllocPitch, "cuMemAllocPitch", PFN_cuMemAllocPitch_v3020, 0) \
  X(MemAllocHost, "cuMemAllocHost", PFN_cuMemAllocHost_v3020, 0) \
  X(MemHostAlloc, "cuMemHostAlloc", PFN_cuMemHostAlloc_v2020, 0) \
  X(MemFreeHost, "cuMemFreeHost", PFN_cuMemFreeHost_v2000, 0) \
  X(MemHostRegister, "cuMemHostRegister", PFN_cuMemHostRegister_v6050, 0) \
  X(MemHostUnregister, "cuMemHostUnregister", PFN_cuMemHostUnregister_v4000, 0) \
  X(MemAllocManaged, "cuMemAllocManaged", PFN_cuMemAllocManaged_v6000, 0) \
  X(MemAllocAsync, "cuMemAllocAsync", PFN_cuMemAllocAsync_v11020, 0) \
  X(MemAllocAsync_pt, "cuMemAllocAsync", PFN_cuMemAllocAsync_v11020_ptsz, SIMDRV_PTDS) \
  X(MemFreeAsync, "cuMemFreeAsync", PFN_cuMemFreeAsync_v11020, 0) \
  X(MemFreeAsync_pt, "cuMemFreeAsync", PFN_cuMemFreeAsync_v11020_ptsz, SIMDRV_PTDS) \
  X(MemGetInfo, "cuMemGetInfo", PFN_cuMemGetInfo_v3020, 0) \
  X(PointerGetAttribute, "cuPointerGetAttribute", PFN_cuPointerGetAttribute_v4000, 0) \
  X(Memcpy, "cuMemcpy", PFN_cuMemcpy_v4000, 0) \
  X(Memcpy_pt, "cuMemcpy", PFN_cuMemcpy_v7000_ptds, SIMDRV_PTDS) \
  X(MemcpyAsync, "cuMemcpyAsync", PFN_cuMemcpyAsync_v4000, 0) \
  X(MemcpyAsync_pt, "cuMemcpyAsync", PFN_cuMemcpyAsync_v7000_ptsz, SIMDRV_PTDS) \
  X(MemcpyBatchAsync, "cuMemcpyBatchAsync", PFN_cuMemcpyBatchAsync_v13000, 0) \
  X(MemcpyBatchAsync_pt, "cuMemcpyBatchAsync", PFN_cuMemcpyBatchAsync_v13000_ptsz, SIMDRV_PTDS) \
  X(Memcpy3DBatchAsync, "cuMemcpy3DBatchAsync", PFN_cuMemcpy3DBatchAsync_v13000, 0) \
  X(Memcpy3DBatchAsync_pt, "cuMemcpy3DBatchAsync", PFN_cuMemcpy3DBatchAsync_v13000_ptsz, SIMDRV_PTDS) \
  X(MemPrefetchAsync, "cuMemPrefetchAsync", PFN_cuMemPrefetchAsync_v12020, 0) \
  X(MemPrefetchAsync_pt, "cuMemPrefetchAsync", PFN_cuMemPrefetchAsync_v12020_ptsz, SIMDRV_PTDS) \
  X(MemPrefetchBatchAsync, "cuMemPrefetchBatchAsync", PFN_cuMemPrefetchBatchAsync_v13000, 0) \
  X(MemPrefetchBatchAsync_pt, "cuMemPrefetchBatchAsync", PFN_cuMemPrefetchBatchAsync_v13000_ptsz, SIMDRV_PTDS) \
  X(MemDiscardBatchAsync, "cuMemDiscardBatchAsync", PFN_cuMemDiscardBatchAsync_v13000, 0) \
  X(MemDiscardBatchAsync_pt, "cuMemDiscardBatchAsync", PFN_cuMemDiscardBatchAsync_v13000_ptsz, SIMDRV_PTDS) \
  X(MemDiscardAndPrefetchBatchAsync, "cuMemDiscardAndPrefetchBatchAsync", \
    PFN_cuMemDiscardAndPrefetchBatchAsync_v13000, 0) \
  X(MemDiscardAndPrefetchBatchAsync_pt, "cuMemDiscardAndPrefetchBatchAsync", \
    PFN_cuMemDiscardAndPrefetchBatchAsync_v13000_ptsz, SIMDRV_PTDS) \
  X(Array3DCreate, "cuArray3DCreate", PFN_cuArray3DCreate_v3020, 0) \
  X(Array3DGetDescriptor, "cuArray3DGetDescriptor", PFN_cuArray3DGetDescriptor_v3020, 0) \
  X(ArrayDestroy, "cuArrayDestroy", PFN_cuArrayDestroy_v2000, 0) \
  X(MipmappedArrayCreate, "cuMipmappedArrayCreate", PFN_cuMipmappedArrayCreate_v5000, 0) \
  X(MipmappedArrayDestroy, "cuMipmappedArrayDestroy", PFN_cuMipmappedArrayDestroy_v5000, 0) \
  X(ImportExternalSemaphore, "cuImportExternalSemaphore", PFN_cuImportExternalSemaphore_v10000, 0) \
  X(DestroyExternalSemaphore, "cuDestroyExternalSemaphore", PFN_cuDestroyExternalSemaphore_v10000, 0) \
  X(SignalExternalSemaphoresAsync, "cuSignalExternalSemaphoresAsync", PFN_cuSignalExternalSemaphoresAsync_v10000, 0) \
  X(SignalExternalSemaphoresAsync_pt, "cuSignalExternalSemaphoresAsync", \
    PFN_cuSignalExternalSemaphoresAsync_v10000_ptsz, SIMDRV_PTDS) \
  X(WaitExternalSemaphoresAsync, "cuWaitExternalSemaphoresAsync", PFN_cuWaitExternalSemaphoresAsync_v10000, 0) \
  X(WaitExternalSemaphoresAsync_pt, "cuWaitExternalSemaphoresAsync", \
    PFN_cuWaitExternalSemaphoresAsync_v10000_ptsz, SIMDRV_PTDS) \
  X(Memcpy2DUnaligned, "cuMemcpy2DUnaligned", PFN_cuMemcpy2DUnaligned_v3020, 0) \
  X(Memcpy2DUnaligned_pt, "cuMemcpy2DUnaligned", PFN_cuMemcpy2DUnaligned_v7000_ptds, SIMDRV_PTDS) \
  X(Memcpy2DAsync, "cuMemcpy2DAsync", PFN_cuMemcpy2DAsync_v3020, 0) \
  X(Memcpy2DAsync_pt, "cuMemcpy2DAsync", PFN_cuMemcpy2DAsync_v7000_ptsz, SIMDRV_PTDS) \
  X(Memcpy3D, "cuMemcpy3D", PFN_cuMemcpy3D_v3020, 0) \
  X(Memcpy3D_pt, "cuMemcpy3D", PFN_cuMemcpy3D_v7000_ptds, SIMDRV_PTDS) \
  X(Memcpy3DAsync, "cuMemcpy3DAsync", PFN_cuMemcpy3DAsync_v3020, 0) \
  X(Memcpy3DAsync_pt, "cuMemcpy3DAsync", PFN_cuMemcpy3DAsync_v7000_ptsz, SIMDRV_PTDS) \
  X(Memcpy3DPeer, "cuMemcpy3DPeer", PFN_cuMemcpy3DPeer_v4000, 0) \
  X(Memcpy3DPeer_pt, "cuMemcpy3DPeer", PFN_cuMemcpy3DPeer_v7000_ptds, SIMDRV_PTDS) \
  X(Memcpy3DPeerAsync, "cuMemcpy3DPeerAsync", PFN_cuMemcpy3DPeerAsync_v4000, 0) \
  X(Memcpy3DPeerAsync_pt, "cuMemcpy3DPeerAsync", PFN_cuMemcpy3DPeerAsync_v7000_ptsz, SIMDRV_PTDS) \
  X(MemcpyPeer, "cuMemcpyPeer", PFN_cuMemcpyPeer_v4000, 0) \
  X(MemcpyPeer_pt, "cuMemcpyPeer", PFN_cuMemcpyPeer_v7000_ptds, SIMDRV_PTDS) \
  X(MemcpyPeerAsync, "cuMemcpyPeerAsync", PFN_cuMemcpyPeerAsync_v4000, 0) \
  X(MemcpyPeerAsync_pt, "cuMemcpyPeerAsync", PFN_cuMemcpyPeerAsync_v7000_ptsz, SIMDRV_PTDS) \
  X(MemsetD8, "cuMemsetD8", PFN_cuMemsetD8_v3020, 0) \
  X(MemsetD8_pt, "cuMemsetD8", PFN_cuMemsetD8_v7000_ptds, SIMDRV_PTDS) \
  X(MemsetD8Async, "cuMemsetD8Async", PFN_cuMemsetD8Async_v3020, 0) \
  X(MemsetD8Async_pt, "cuMemsetD8Async", PFN_cuMemsetD8Async_v7000_ptsz, SIMDRV_PTDS) \
  X(MemsetD2D8, "cuMemsetD2D8", PFN_cuMemsetD2D8_v3020, 0) \
  X(MemsetD2D8_pt, "cuMemsetD2D8", PFN_cuMemsetD2D8_v7000_ptds, SIMDRV_PTDS) \
  X(MemsetD2D8Async, "cuMemsetD2D8Async", PFN_cuMemsetD2D8Async_v3020, 0) \
  X(MemsetD2D8Async_pt, "cuMemsetD2D8Async", PFN_cuMemsetD2D8Async_v7000_ptsz, SIMDRV_PTDS) \
  X(StreamCreate, "cuStreamCreate", PFN_cuStreamCreate_v2000, 0) \
  X(StreamCreateWithPriority, "cuStreamCreateWithPriority", PFN_cuStreamCreateWithPriority_v5050, 0) \
  X(StreamDestroy, "cuStreamDestroy", PFN_cuStreamDestroy_v4000, 0) \
  X(StreamQuery, "cuStreamQuery", PFN_cuStreamQuery_v2000, 0) \
  X(StreamQuery_pt, "cuStreamQuery", PFN_cuStreamQuery_v7000_ptsz, SIMDRV_PTDS) \
  X(StreamSynchronize, "cuStreamSynchronize", PFN_cuStreamSynchronize_v2000, 0) \
  X(StreamSynchronize_pt, "cuStreamSynchronize", PFN_cuStreamSynchronize_v7000_ptsz, SIMDRV_PTDS) \
  X(StreamWaitEvent, "cuStreamWaitEvent", PFN_cuStreamWaitEvent_v3020, 0) \
  X(StreamWaitEvent_pt, "cuStreamWaitEvent", PFN_cuStreamWaitEvent_v7000_ptsz, SIMDRV_PTDS) \
  X(LaunchHostFunc, "cuLaunchHostFunc", PFN_cuLaunchHostFunc_v10000, 0) \
  X(LaunchHostFunc_pt, "cuLaunchHostFunc", PFN_cuLaunchHostFunc_v10000_ptsz, SIMDRV_PTDS) \
  X(StreamAddCallback, "cuStreamAddCallback", PFN_cuStreamAddCallback_v5000, 0) \
  X(StreamAddCallback_pt, "cuStreamAddCallback", PFN_cuStreamAddCallback_v7000_ptsz, SIMDRV_PTDS) \
  X(StreamGetFlags, "cuStreamGetFlags", PFN_cuStreamGetFlags_v5050, 0) \
  X(StreamGetFlags_pt, "cuStreamGetFlags", PFN_cuStreamGetFlags_v7000_ptsz, SIMDRV_PTDS) \
  X(StreamGetPriority, "cuStreamGetPriority", PFN_cuStreamGetPriority_v5050, 0) \
  X(StreamGetPriority_pt, "cuStreamGetPriority", PFN_cuStreamGetPriority_v7000_ptsz, SIMDRV_PTDS) \
  X(EventCreate, "cuEventCreate", PFN_cuEventCreate_v2000, 0) \
  X(EventDestroy, "cuEventDestroy", PFN_cuEventDestroy_v4000, 0) \
  X(EventRecord, "cuEventRecord", PFN_cuEventRecord_v2000, 0) \
  X(EventRecord_pt, "cuEventRecord", PFN_cuEventRecord_v7000_ptsz, SIMDRV_PTDS) \
  X(EventRecordWithFlags, "cuEventRecordWithFlags", PFN_cuEventRecordWithFlags_v11010, 0) \
  X(EventRecordWithFlags_pt, "cuEventRecordWithFlags", PFN_cuEventRecordWithFlags_v11010_ptsz, SIMDRV_PTDS) \
  X(EventQuery, "cuEventQuery", PFN_cuEventQuery_v2000, 0) \
  X(EventSynchronize, "cuEventSynchronize", PFN_cuEventSynchronize_v2000, 0) \
  X(EventElapsedTime, "cuEventElapsedTime", PFN_cuEventElapsedTime_v12080, 0) \
  X(ModuleLoadData, "cuModuleLoadData", PFN_cuModuleLoadData_v2000, 0) \
  X(ModuleGetFunction, "cuModuleGetFunction", PFN_cuModuleGetFunction_v2000, 0) \
  X(ModuleGetGlobal, "cuModuleGetGlobal", PFN_cuModuleGetGlobal_v3020, 0) \
  X(LaunchKernel, "cuLaunchKernel", PFN_cuLaunchKernel_v4000, 0) \
  X(LaunchKernel_pt, "cuLaunchKernel", PFN_cuLaunchKernel_v7000_ptsz, SIMDRV_PTDS) \
  X(LaunchKernelEx, "cuLaunchKernelEx", PFN_cuLaunchKernelEx_v11060, 0) \
  X(LaunchKernelEx_pt, "cuLaunchKernelEx", PFN_cuLaunchKernelEx_v11060_ptsz, SIMDRV_PTDS) \
  X(LaunchCooperativeKernel, "cuLaunchCooperativeKernel", PFN_cuLaunchCooperativeKernel_v9000, 0) \
  X(LaunchCooperativeKernel_pt, "cuLaunchCooperativeKernel", PFN_cuLaunchCooperativeKernel_v9000_ptsz, SIMDRV_PTDS) \
  X(FuncGetName, "cuFuncGetName", PFN_cuFuncGetName_v12030, 0) \
  X(FuncGetAttribute, "cuFuncGetAttribute", PFN_cuFuncGetAttribute_v2020, 0) \
  X(FuncSetAttribute, "cuFuncSetAttribute", PFN_cuFuncSetAttribute_v9000, 0) \
  X(OccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor", \
    PFN_cuOccupancyMaxActiveBlocksPerMultiprocessor_v6050, 0) \
  X(StreamBeginCapture, "cuStreamBeginCapture", PFN_cuStreamBeginCapture_v10010, 0) \
  X(StreamBeginCapture_pt, "cuStreamBeginCapture", PFN_cuStreamBeginCapture_v10010_ptsz, SIMDRV_PTDS) \
  X(StreamBeginCaptureToGraph, "cuStreamBeginCaptureToGraph", PFN_cuStreamBeginCaptureToGraph_v12030, 0) \
  X(StreamBeginCaptureToGraph_pt, "cuStreamBeginCaptureToGraph", PFN_cuStreamBeginCaptureToGraph_v12030_ptsz, \
    SIMDRV_PTDS) \
  X(StreamEndCapture, "cuStreamEndCapture", PFN_cuStreamEndCapture_v10000, 0) \
  X(StreamEndCapture_pt, "cuStreamEndCapture", PFN_cuStreamEndCapture_v10000_ptsz, SIMDRV_PTDS) \
  X(StreamIsCapturing, "cuStreamIsCapturing", PFN_cuStreamIsCapturing_v10000, 0) \
  X(StreamIsCapturing_pt, "cuStreamIsCapturing", PFN_cuStreamIsCapturing_v10000_ptsz, SIMDRV_PTDS) \
  X(StreamGetCaptureInfo, "cuStreamGetCaptureInfo", PFN_cuStreamGetCaptureInfo_v12030, 0) \
  X(StreamGetCaptureInfo_pt, "cuStreamGetCaptureInfo", PFN_cuStreamGetCaptureInfo_v12030_ptsz, SIMDRV_PTDS) \
  X(ThreadExchangeStreamCaptureMode, "cuThreadExchangeStreamCaptureMode", PFN_cuThreadExchangeStreamCaptureMode_v10010, 0) \
  X(GraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", PFN_cuGraphInstantiateWithFlags_v11040, 0) \
  X(GraphInstantiateWithParams, "cuGraphInstantiateWithParams", PFN_cuGraphInstantiateWithParams_v12000, 0) \
  X(GraphInstantiateWithParams_pt, "cuGraphInstantiateWithParams", PFN_cuGraphInstantiateWithParams_v12000_ptsz, SIMDRV_PTDS) \
  X(GraphExecUpdate, "cuGraphExecUpdate", PFN_cuGraphExecUpdate_v12000, 0) \
  X(GraphLaunch, "cuGraphLaunch", PFN_cuGraphLaunch_v10000, 0) \
  X(GraphLaunch_pt, "cuGraphLaunch", PFN_cuGraphLaunch_v10000_ptsz, SIMDRV_PTDS) \
  X(GraphUpload, "cuGraphUpload", PFN_cuGraphUpload_v11010, 0) \
  X(GraphUpload_pt, "cuGraphUpload", PFN_cuGraphUpload_v11010_ptsz, SIMDRV_PTDS) \
  X(GraphCreate, "cuGraphCreate", PFN_cuGraphCreate_v10000, 0) \
  X(GraphGetNodes, "cuGraphGetNodes", PFN_cuGraphGetNodes_v10000, 0) \
  X(GraphExecKernelNodeSetParams, "cuGraphExecKernelNodeSetParams", PFN_cuGraphExecKernelNodeSetParams_v12000, 0) \
  X(GraphExecMemsetNodeSetParams, "cuGraphExecMemsetNodeSetParams", PFN_cuGraphExecMemsetNodeSetParams_v10020, 0) \
  X(GraphExecMemcpyNodeSetParams, "cuGraphExecMemcpyNodeSetParams", PFN_cuGraphExecMemcpyNodeSetParams_v10020, 0) \
  X(GraphExecChildGraphNodeSetParams, "cuGraphExecChildGraphNodeSetParams", PFN_cuGraphExecChildGraphNodeSetParams_v11010, 0) \
  X(GraphExecDestroy, "cuGraphExecDestroy", PFN_cuGraphExecDestroy_v10000, 0) \
  X(GraphDestroy, "cuGraphDestroy", PFN_cuGraphDestroy_v10000, 0) \
  X(hint_next_launch_ns, "simcuda_hint_next_launch_ns", simdrv_hint_fn, 0)

/* Every driver function this library uses; a member is NULL when the driver
 * does not provide it. */
struct simdrv {
#define SIMDRV_MEMBER(member, name, type, flags) type member;
  SIMDRV_FUNCTIONS(SIMDRV_MEMBER)
#undef SIMDRV_MEMBER
};

/* The driver table, filled once. */
extern struct simdrv simdrv;

/* Loads libcuda.so.1 and resolves every function (once, thread-safe), then calls
 * cuInit(0). Returns CUDA_SUCCESS, CUDA_ERROR_STUB_LIBRARY-like codes from cuInit,
 * or CUDA_ERROR_SHARED_OBJECT_INIT_FAILED when libcuda.so.1 cannot be loaded. */
CUresult simdrv_load(void);

/* Makes the primary context of `device` current on the calling thread if no
 * context is current. Returns the driver's result. */
CUresult simdrv_ensure_context(int device);

#endif
