/* Error names and descriptions: cuGetErrorName / cuGetErrorString. */
#include "sim.h"

#include <stddef.h>

/* X(code, description): every CUresult of cuda.h 13.0. */
#define SIM_ERRORS(X) \
  X(CUDA_SUCCESS, "no error") \
  X(CUDA_ERROR_INVALID_VALUE, "invalid argument") \
  X(CUDA_ERROR_OUT_OF_MEMORY, "out of memory") \
  X(CUDA_ERROR_NOT_INITIALIZED, "initialization error") \
  X(CUDA_ERROR_DEINITIALIZED, "driver shutting down") \
  X(CUDA_ERROR_PROFILER_DISABLED, "profiler disabled") \
  X(CUDA_ERROR_PROFILER_NOT_INITIALIZED, "profiler not initialized") \
  X(CUDA_ERROR_PROFILER_ALREADY_STARTED, "profiler already started") \
  X(CUDA_ERROR_PROFILER_ALREADY_STOPPED, "profiler already stopped") \
  X(CUDA_ERROR_STUB_LIBRARY, "stub library") \
  X(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, "call requires newer driver") \
  X(CUDA_ERROR_DEVICE_UNAVAILABLE, "device unavailable") \
  X(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected") \
  X(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal") \
  X(CUDA_ERROR_DEVICE_NOT_LICENSED, "device not licensed") \
  X(CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid") \
  X(CUDA_ERROR_INVALID_CONTEXT, "invalid device context") \
  X(CUDA_ERROR_CONTEXT_ALREADY_CURRENT, "context already current") \
  X(CUDA_ERROR_MAP_FAILED, "map failed") \
  X(CUDA_ERROR_UNMAP_FAILED, "unmap failed") \
  X(CUDA_ERROR_ARRAY_IS_MAPPED, "array is mapped") \
  X(CUDA_ERROR_ALREADY_MAPPED, "already mapped") \
  X(CUDA_ERROR_NO_BINARY_FOR_GPU, "no binary for gpu") \
  X(CUDA_ERROR_ALREADY_ACQUIRED, "already acquired") \
  X(CUDA_ERROR_NOT_MAPPED, "not mapped") \
  X(CUDA_ERROR_NOT_MAPPED_AS_ARRAY, "not mapped as array") \
  X(CUDA_ERROR_NOT_MAPPED_AS_POINTER, "not mapped as pointer") \
  X(CUDA_ERROR_ECC_UNCORRECTABLE, "ecc uncorrectable") \
  X(CUDA_ERROR_UNSUPPORTED_LIMIT, "unsupported limit") \
  X(CUDA_ERROR_CONTEXT_ALREADY_IN_USE, "context already in use") \
  X(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "peer access unsupported") \
  X(CUDA_ERROR_INVALID_PTX, "invalid ptx") \
  X(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT, "invalid graphics context") \
  X(CUDA_ERROR_NVLINK_UNCORRECTABLE, "nvlink uncorrectable") \
  X(CUDA_ERROR_JIT_COMPILER_NOT_FOUND, "jit compiler not found") \
  X(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "unsupported ptx version") \
  X(CUDA_ERROR_JIT_COMPILATION_DISABLED, "jit compilation disabled") \
  X(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY, "unsupported exec affinity") \
  X(CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC, "unsupported devside sync") \
  X(CUDA_ERROR_CONTAINED, "contained") \
  X(CUDA_ERROR_INVALID_SOURCE, "invalid source") \
  X(CUDA_ERROR_FILE_NOT_FOUND, "file not found") \
  X(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, "shared object symbol not found") \
  X(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, "shared object init failed") \
  X(CUDA_ERROR_OPERATING_SYSTEM, "operating system") \
  X(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle") \
  X(CUDA_ERROR_ILLEGAL_STATE, "illegal state") \
  X(CUDA_ERROR_LOSSY_QUERY, "lossy query") \
  X(CUDA_ERROR_NOT_FOUND, "named symbol not found") \
  X(CUDA_ERROR_NOT_READY, "device not ready") \
  X(CUDA_ERROR_ILLEGAL_ADDRESS, "illegal address") \
  X(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "launch out of resources") \
  X(CUDA_ERROR_LAUNCH_TIMEOUT, "launch timeout") \
  X(CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING, "launch incompatible texturing") \
  X(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "peer access already enabled") \
  X(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, "peer access not enabled") \
  X(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, "primary context active") \
  X(CUDA_ERROR_CONTEXT_IS_DESTROYED, "context is destroyed") \
  X(CUDA_ERROR_ASSERT, "assert") \
  X(CUDA_ERROR_TOO_MANY_PEERS, "too many peers") \
  X(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "part or all of the requested memory range is already mapped") \
  X(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "pointer does not correspond to a registered memory region") \
  X(CUDA_ERROR_HARDWARE_STACK_ERROR, "hardware stack error") \
  X(CUDA_ERROR_ILLEGAL_INSTRUCTION, "illegal instruction") \
  X(CUDA_ERROR_MISALIGNED_ADDRESS, "misaligned address") \
  X(CUDA_ERROR_INVALID_ADDRESS_SPACE, "invalid address space") \
  X(CUDA_ERROR_INVALID_PC, "invalid pc") \
  X(CUDA_ERROR_LAUNCH_FAILED, "launch failed") \
  X(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, "cooperative launch too large") \
  X(CUDA_ERROR_TENSOR_MEMORY_LEAK, "tensor memory leak") \
  X(CUDA_ERROR_NOT_PERMITTED, "operation not permitted") \
  X(CUDA_ERROR_NOT_SUPPORTED, "operation not supported") \
  X(CUDA_ERROR_SYSTEM_NOT_READY, "system not ready") \
  X(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "system driver mismatch") \
  X(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, "compat not supported on device") \
  X(CUDA_ERROR_MPS_CONNECTION_FAILED, "mps connection failed") \
  X(CUDA_ERROR_MPS_RPC_FAILURE, "mps rpc failure") \
  X(CUDA_ERROR_MPS_SERVER_NOT_READY, "mps server not ready") \
  X(CUDA_ERROR_MPS_MAX_CLIENTS_REACHED, "mps max clients reached") \
  X(CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED, "mps max connections reached") \
  X(CUDA_ERROR_MPS_CLIENT_TERMINATED, "mps client terminated") \
  X(CUDA_ERROR_CDP_NOT_SUPPORTED, "cdp not supported") \
  X(CUDA_ERROR_CDP_VERSION_MISMATCH, "cdp version mismatch") \
  X(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "operation not permitted when stream is capturing") \
  X(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "operation failed due to a previous error during capture") \
  X(CUDA_ERROR_STREAM_CAPTURE_MERGE, "stream capture merge") \
  X(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, "stream capture unmatched") \
  X(CUDA_ERROR_STREAM_CAPTURE_UNJOINED, "stream capture unjoined") \
  X(CUDA_ERROR_STREAM_CAPTURE_ISOLATION, "stream capture isolation") \
  X(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, "operation would make the legacy stream depend on a capturing blocking stream") \
  X(CUDA_ERROR_CAPTURED_EVENT, "operation not permitted on an event last recorded in a capturing stream") \
  X(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, "attempt to terminate a thread-local capture sequence from another thread") \
  X(CUDA_ERROR_TIMEOUT, "timeout") \
  X(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, "graph exec update failure") \
  X(CUDA_ERROR_EXTERNAL_DEVICE, "external device") \
  X(CUDA_ERROR_INVALID_CLUSTER_SIZE, "invalid cluster size") \
  X(CUDA_ERROR_FUNCTION_NOT_LOADED, "function not loaded") \
  X(CUDA_ERROR_INVALID_RESOURCE_TYPE, "invalid resource type") \
  X(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, "invalid resource configuration") \
  X(CUDA_ERROR_KEY_ROTATION, "key rotation") \
  X(CUDA_ERROR_UNKNOWN, "unknown error") \

struct error_entry {
  CUresult code;
  const char *name;
  const char *description;
};

static const struct error_entry errors[] = {
#define SIM_ERROR_ENTRY(code, text) {code, #code, text},
  SIM_ERRORS(SIM_ERROR_ENTRY)
#undef SIM_ERROR_ENTRY
};

static const struct error_entry *find_error(CUresult code)
{
  for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
    if (errors[i].code == code)
      return &errors[i];
  return NULL;
}

/* Gives the name or the description of `error`. */
static CUresult error_text(CUresult error, const char **pStr, int want_name)
{
  if (!pStr)
    return CUDA_ERROR_INVALID_VALUE;
  const struct error_entry *e = find_error(error);
  *pStr = !e ? NULL : want_name ? e->name : e->description;
  return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/** Describes `error` in words; CUDA_ERROR_INVALID_VALUE for unknown codes. */
SIM_API CUresult cuGetErrorString(CUresult error, const char **pStr)
{
  return error_text(error, pStr, 0);
}

/** Gives the enum name of `error`; CUDA_ERROR_INVALID_VALUE for unknown codes. */
SIM_API CUresult cuGetErrorName(CUresult error, const char **pStr)
{
  return error_text(error, pStr, 1);
}
