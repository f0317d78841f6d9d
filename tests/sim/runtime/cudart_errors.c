/* Error state and error names of the simulated libcudart. */
#include "cudart_internal.h"

#include <stddef.h>

static __thread cudaError_t last_error = cudaSuccess;

/* X(code, name, description): runtime errors, with the descriptions the real
 * runtime prints for the common ones. */
#define RT_ERRORS(X) \
  X(0, cudaSuccess, "no error") \
  X(1, cudaErrorInvalidValue, "invalid argument") \
  X(2, cudaErrorMemoryAllocation, "out of memory") \
  X(3, cudaErrorInitializationError, "initialization error") \
  X(4, cudaErrorCudartUnloading, "driver shutting down") \
  X(9, cudaErrorInvalidConfiguration, "invalid configuration argument") \
  X(12, cudaErrorInvalidPitchValue, "invalid pitch argument") \
  X(13, cudaErrorInvalidSymbol, "invalid device symbol") \
  X(16, cudaErrorInvalidHostPointer, "invalid host pointer") \
  X(17, cudaErrorInvalidDevicePointer, "invalid device pointer") \
  X(21, cudaErrorInvalidMemcpyDirection, "invalid copy direction for memcpy") \
  X(34, cudaErrorStubLibrary, "CUDA driver is a stub library") \
  X(35, cudaErrorInsufficientDriver, "CUDA driver version is insufficient for CUDA runtime version") \
  X(36, cudaErrorCallRequiresNewerDriver, "API call is not supported in the installed CUDA driver") \
  X(46, cudaErrorDevicesUnavailable, "CUDA-capable device(s) is/are busy or unavailable") \
  X(52, cudaErrorMissingConfiguration, "__global__ function call is not configured") \
  X(98, cudaErrorInvalidDeviceFunction, "invalid device function") \
  X(100, cudaErrorNoDevice, "no CUDA-capable device is detected") \
  X(101, cudaErrorInvalidDevice, "invalid device ordinal") \
  X(127, cudaErrorStartupFailure, "device kernel image is invalid") \
  X(200, cudaErrorInvalidKernelImage, "device kernel image is invalid") \
  X(201, cudaErrorDeviceUninitialized, "invalid device context") \
  X(209, cudaErrorNoKernelImageForDevice, "no kernel image is available for execution on the device") \
  X(215, cudaErrorUnsupportedLimit, "unsupported limit") \
  X(217, cudaErrorPeerAccessUnsupported, "peer access is not supported between these two devices") \
  X(218, cudaErrorInvalidPtx, "a PTX JIT compilation failed") \
  X(300, cudaErrorInvalidSource, "device kernel image is invalid") \
  X(301, cudaErrorFileNotFound, "file not found") \
  X(302, cudaErrorSharedObjectSymbolNotFound, "shared object symbol not found") \
  X(303, cudaErrorSharedObjectInitFailed, "shared object initialization failed") \
  X(304, cudaErrorOperatingSystem, "OS call failed or operation not supported on this OS") \
  X(400, cudaErrorInvalidResourceHandle, "invalid resource handle") \
  X(401, cudaErrorIllegalState, "the operation cannot be performed in the present state") \
  X(500, cudaErrorSymbolNotFound, "named symbol not found") \
  X(600, cudaErrorNotReady, "device not ready") \
  X(700, cudaErrorIllegalAddress, "an illegal memory access was encountered") \
  X(701, cudaErrorLaunchOutOfResources, "too many resources requested for launch") \
  X(702, cudaErrorLaunchTimeout, "the launch timed out and was terminated") \
  X(704, cudaErrorPeerAccessAlreadyEnabled, "peer access is already enabled") \
  X(705, cudaErrorPeerAccessNotEnabled, "peer access has not been enabled") \
  X(709, cudaErrorContextIsDestroyed, "context is destroyed") \
  X(710, cudaErrorAssert, "device-side assert triggered") \
  X(712, cudaErrorHostMemoryAlreadyRegistered, "part or all of the requested memory range is already mapped") \
  X(713, cudaErrorHostMemoryNotRegistered, "pointer does not correspond to a registered memory region") \
  X(715, cudaErrorIllegalInstruction, "an illegal instruction was encountered") \
  X(716, cudaErrorMisalignedAddress, "misaligned address") \
  X(719, cudaErrorLaunchFailure, "unspecified launch failure") \
  X(720, cudaErrorCooperativeLaunchTooLarge, "too many blocks in cooperative launch") \
  X(800, cudaErrorNotPermitted, "operation not permitted") \
  X(801, cudaErrorNotSupported, "operation not supported") \
  X(900, cudaErrorStreamCaptureUnsupported, "operation not permitted when stream is capturing") \
  X(901, cudaErrorStreamCaptureInvalidated, "operation failed due to a previous error during capture") \
  X(902, cudaErrorStreamCaptureMerge, "operation would result in a merge of separate capture sequences") \
  X(903, cudaErrorStreamCaptureUnmatched, "capture was not ended in the same stream as it began") \
  X(904, cudaErrorStreamCaptureUnjoined, "capturing stream has unjoined work") \
  X(905, cudaErrorStreamCaptureIsolation, "dependency created on uncaptured work in another stream") \
  X(906, cudaErrorStreamCaptureImplicit, "operation would make the legacy stream depend on a capturing blocking stream") \
  X(907, cudaErrorCapturedEvent, "operation not permitted on an event last recorded in a capturing stream") \
  X(908, cudaErrorStreamCaptureWrongThread, "attempt to terminate a thread-local capture sequence from another thread") \
  X(909, cudaErrorTimeout, "wait operation timed out") \
  X(910, cudaErrorGraphExecUpdateFailure, "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update") \
  X(913, cudaErrorFunctionNotLoaded, "the function is not loaded") \
  X(999, cudaErrorUnknown, "unknown error")

struct rt_error_entry {
  int code;
  const char *name;
  const char *text;
};

static const struct rt_error_entry error_table[] = {
#define RT_ERROR_ENTRY(code, name, text) {code, #name, text},
  RT_ERRORS(RT_ERROR_ENTRY)
#undef RT_ERROR_ENTRY
};

static const struct rt_error_entry *find_error(int code)
{
  for (size_t i = 0; i < sizeof error_table / sizeof error_table[0]; i++)
    if (error_table[i].code == code)
      return &error_table[i];
  return NULL;
}

cudaError_t rt_fail(cudaError_t err)
{
  if (err != cudaSuccess && err != cudaErrorNotReady)
    last_error = err;
  return err;
}

cudaError_t rt_from_driver(CUresult r)
{
  switch (r) {
  case CUDA_SUCCESS: return cudaSuccess;
  case CUDA_ERROR_NOT_INITIALIZED: return cudaErrorInitializationError;
  case CUDA_ERROR_DEINITIALIZED: return cudaErrorCudartUnloading;
  case CUDA_ERROR_INVALID_CONTEXT: return cudaErrorDeviceUninitialized;
  case CUDA_ERROR_INVALID_HANDLE: return cudaErrorInvalidResourceHandle;
  case CUDA_ERROR_NOT_FOUND: return cudaErrorSymbolNotFound;
  case CUDA_ERROR_INVALID_IMAGE: return cudaErrorInvalidKernelImage;
  default:
    /* The runtime numbers match the driver numbers for the other codes. */
    return find_error((int)r) ? (cudaError_t)r : cudaErrorUnknown;
  }
}

cudaError_t rt_check(CUresult r)
{
  return rt_fail(rt_from_driver(r));
}

/** Returns the calling thread's last error and resets it to cudaSuccess. */
SIM_EXPORT cudaError_t cudaGetLastError(void)
{
  cudaError_t e = last_error;
  last_error = cudaSuccess;
  return e;
}

/** Returns the calling thread's last error without resetting it. */
SIM_EXPORT cudaError_t cudaPeekAtLastError(void)
{
  return last_error;
}

/** Returns the description of a runtime error code. */
SIM_EXPORT const char *cudaGetErrorString(cudaError_t error)
{
  const struct rt_error_entry *e = find_error((int)error);
  return e ? e->text : "unrecognized error code";
}

/** Returns the enumerator name of a runtime error code. */
SIM_EXPORT const char *cudaGetErrorName(cudaError_t error)
{
  const struct rt_error_entry *e = find_error((int)error);
  return e ? e->name : "unrecognized error code";
}
