/* API surface: cuGetProcAddress by name, version and flags; exported names;
 * errors on bad handles and bad launch configurations; pinned vs pageable
 * pointer attributes; copies and fills moving real bytes; devices; modules;
 * per-thread default streams. Runs with SIMCUDA_DEVICES=2. */
#include "drv_test.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

typedef CUresult (*get_proc_v2_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

static void *lib;

/* cuGetProcAddress_v2 must give the address of the exported `want` symbol. */
static void expect_proc(const char *name, int version, cuuint64_t flags, const char *want)
{
  void *pfn = NULL;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  CHECK_CU(cuGetProcAddress(name, &pfn, version, flags, &status));
  CHECK(status == CU_GET_PROC_ADDRESS_SUCCESS);
  void *expected = dlsym(lib, want);
  if (pfn != expected) {
    fprintf(stderr, "cuGetProcAddress(%s, %d, %llu) is not %s\n", name, version, (unsigned long long)flags, want);
    exit(1);
  }
}

static void check_proc_address(void)
{
  lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  CHECK(lib);
  expect_proc("cuGetProcAddress", 11030, 0, "cuGetProcAddress");
  expect_proc("cuGetProcAddress", 12000, 0, "cuGetProcAddress_v2");
  expect_proc("cuGetProcAddress", 13000, 0, "cuGetProcAddress_v2");
  expect_proc("cuEventElapsedTime", 12000, 0, "cuEventElapsedTime");
  expect_proc("cuEventElapsedTime", 13000, 0, "cuEventElapsedTime_v2");
  expect_proc("cuLaunchKernel", 13000, 0, "cuLaunchKernel");
  expect_proc("cuLaunchKernel", 13000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, "cuLaunchKernel");
  expect_proc("cuLaunchKernel", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuLaunchKernel_ptsz");
  expect_proc("cuMemcpyHtoD", 13000, 0, "cuMemcpyHtoD_v2");
  expect_proc("cuMemcpyHtoD", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuMemcpyHtoD_v2_ptds");
  expect_proc("cuMemcpyAsync", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuMemcpyAsync_ptsz");
  expect_proc("cuInit", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuInit");
  expect_proc("cuStreamGetCaptureInfo", 13000, 0, "cuStreamGetCaptureInfo_v3");
  expect_proc("cuStreamGetCaptureInfo", 11030, 0, "cuStreamGetCaptureInfo_v2");
  expect_proc("cuStreamGetCaptureInfo", 10010, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
              "cuStreamGetCaptureInfo_ptsz");
  expect_proc("cuStreamBeginCapture", 10000, 0, "cuStreamBeginCapture");
  expect_proc("cuStreamBeginCapture", 13000, 0, "cuStreamBeginCapture_v2");
  expect_proc("cuCtxSynchronize", 12000, 0, "cuCtxSynchronize");
  expect_proc("cuCtxSynchronize", 13000, 0, "cuCtxSynchronize_v2");
  expect_proc("cuStreamDestroy", 13000, 0, "cuStreamDestroy_v2");
  expect_proc("cuGraphInstantiate", 13000, 0, "cuGraphInstantiateWithFlags");
  expect_proc("cuGraphInstantiate", 11000, 0, "cuGraphInstantiate_v2");
  expect_proc("simcuda_hint_next_launch_ns", 13000, 0, "simcuda_hint_next_launch_ns");

  void *pfn = (void *)1;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
  CHECK_RESULT(cuGetProcAddress("cuNoSuchFunction", &pfn, 13000, 0, &status), CUDA_ERROR_NOT_FOUND);
  CHECK(pfn == NULL && status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  CHECK_RESULT(cuGetProcAddress("", &pfn, 13000, 0, &status), CUDA_ERROR_NOT_FOUND);
  CHECK(status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  CHECK_RESULT(cuGetProcAddress("cuLibraryLoadData", &pfn, 11080, 0, &status), CUDA_ERROR_NOT_FOUND);
  CHECK(status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  CHECK_RESULT(cuGetProcAddress("cuInit", &pfn, 13000, 8, &status), CUDA_ERROR_INVALID_VALUE);
  /* The 11.3 form, reached through the table itself. */
  CUresult (*v1)(const char *, void **, int, cuuint64_t) = NULL;
  CHECK_CU(cuGetProcAddress("cuGetProcAddress", (void **)&v1, 11030, 0, &status));
  CHECK_CU(v1("cuEventRecord", &pfn, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM));
  CHECK(pfn == dlsym(lib, "cuEventRecord_ptsz"));

  /* Names a tracer or a -lcuda program resolves directly. */
  static const char *const exported[] = {
    "cuEventRecord", "cuEventRecord_ptsz", "cuEventElapsedTime_v2", "cuLaunchKernelEx", "cuLaunchKernel_ptsz",
    "cuMemcpyHtoDAsync_v2", "cuMemcpy_ptds", "cuStreamGetCaptureInfo_v3", "cuGetExportTable",
    "cuMemAlloc_v2", "cuCtxCreate_v4", "cuTexObjectCreate", "cuGraphAddKernelNode_v2",
  };
  for (size_t i = 0; i < sizeof exported / sizeof exported[0]; i++)
    CHECK(dlsym(lib, exported[i]) != NULL);
  CHECK(dlsym(lib, "sim_lock") == NULL); /* internals stay hidden */
  const void *table = (const void *)1;
  CUuuid id = {{0}};
  CHECK_RESULT(cuGetExportTable(&table, &id), CUDA_ERROR_NOT_SUPPORTED);
  /* An entry point the simulator does not model answers NOT_SUPPORTED. */
  CUresult (*tex)(void) = (CUresult (*)(void))dlsym(lib, "cuTexObjectCreate");
  CHECK(tex() == CUDA_ERROR_NOT_SUPPORTED);
}

static void check_errors_and_devices(void)
{
  const char *s = NULL;
  CHECK_CU(cuGetErrorName(CUDA_ERROR_CAPTURED_EVENT, &s));
  CHECK(!strcmp(s, "CUDA_ERROR_CAPTURED_EVENT"));
  CHECK_CU(cuGetErrorString(CUDA_ERROR_INVALID_VALUE, &s));
  CHECK(!strcmp(s, "invalid argument"));
  CHECK_RESULT(cuGetErrorString((CUresult)12345, &s), CUDA_ERROR_INVALID_VALUE);
  int version = 0, count = 0, value = 0;
  CHECK_CU(cuDriverGetVersion(&version));
  CHECK(version == 13000);
  CHECK_CU(cuDeviceGetCount(&count));
  CHECK(count == 2);
  CUdevice dev;
  CHECK_CU(cuDeviceGet(&dev, 1));
  CHECK_RESULT(cuDeviceGet(&dev, 2), CUDA_ERROR_INVALID_DEVICE);
  char name[64];
  CHECK_CU(cuDeviceGetName(name, sizeof name, 0));
  CHECK(!strcmp(name, "cutrace simulated GPU"));
  CHECK_CU(cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0));
  CHECK(value == 9);
  CHECK_CU(cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0));
  CHECK(value == 132);
  size_t total = 0;
  CHECK_CU(cuDeviceTotalMem(&total, 0));
  CHECK(total == (size_t)141 << 30);
  CUcontext ctx = NULL, popped = NULL;
  CHECK_CU(cuDevicePrimaryCtxRetain(&ctx, 1));
  CHECK_CU(cuCtxPushCurrent(ctx));
  CHECK_CU(cuCtxGetDevice(&dev));
  CHECK(dev == 1);
  CHECK_CU(cuCtxPopCurrent(&popped));
  CHECK(popped == ctx);
  CHECK_CU(cuCtxGetDevice(&dev));
  CHECK(dev == 0);
  CHECK_RESULT(cuCtxSetCurrent((CUcontext)0x1234), CUDA_ERROR_INVALID_CONTEXT);
}

static void check_memory(void)
{
  const size_t n = 4096;
  CUdeviceptr dev, managed;
  void *pinned;
  char *pageable = malloc(n), *registered = malloc(n), *back = malloc(n);
  CHECK(pageable && registered && back);
  CHECK_CU(cuMemAlloc(&dev, n));
  CHECK_CU(cuMemAllocManaged(&managed, n, CU_MEM_ATTACH_GLOBAL));
  CHECK_CU(cuMemAllocHost(&pinned, n));
  CHECK_CU(cuMemHostRegister(registered, n, 0));
  CHECK_RESULT(cuMemHostRegister(registered + 8, 16, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  unsigned int type = 0;
  CHECK_CU(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dev + 100));
  CHECK(type == CU_MEMORYTYPE_DEVICE);
  CHECK_CU(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)pinned));
  CHECK(type == CU_MEMORYTYPE_HOST);
  CHECK_CU(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(registered + 10)));
  CHECK(type == CU_MEMORYTYPE_HOST);
  int is_managed = 0;
  CHECK_CU(cuPointerGetAttribute(&is_managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, managed));
  CHECK(is_managed == 1);
  CHECK_RESULT(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)pageable),
               CUDA_ERROR_INVALID_VALUE);
  CHECK_RESULT(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dev + n), CUDA_ERROR_INVALID_VALUE);
  CUpointer_attribute attrs[2] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
  int ordinal = 5;
  type = 99;
  void *data[2] = {&type, &ordinal};
  CHECK_CU(cuPointerGetAttributes(2, attrs, data, (CUdeviceptr)pageable));
  CHECK(type == 0);
  CHECK_CU(cuPointerGetAttributes(2, attrs, data, dev));
  CHECK(type == CU_MEMORYTYPE_DEVICE && ordinal == 0);

  /* Bytes move: host -> device -> device -> host, 2-D copies and fills. */
  for (size_t i = 0; i < n; i++)
    pageable[i] = (char)(i * 7);
  CHECK_CU(cuMemcpyHtoD(dev, pageable, n));
  CHECK_CU(cuMemcpyDtoD(managed, dev, n));
  CHECK_CU(cuMemcpy((CUdeviceptr)back, managed, n));
  CHECK(!memcmp(back, pageable, n));
  CHECK_CU(cuMemsetD32(dev, 0x01020304u, n / 4));
  CHECK_CU(cuMemsetD2D16(dev, 64, 0xabcd, 8, 4)); /* 16 bytes in each of 4 rows of 64 */
  CHECK_CU(cuMemcpyDtoH(back, dev, n));
  unsigned int word;
  unsigned short half;
  memcpy(&word, back + 16, 4);
  CHECK(word == 0x01020304u);
  memcpy(&half, back + 3 * 64 + 14, 2);
  CHECK(half == 0xabcd);
  memcpy(&word, back + 4 * 64, 4);
  CHECK(word == 0x01020304u);
  CUDA_MEMCPY2D copy = {0};
  copy.srcMemoryType = CU_MEMORYTYPE_HOST;
  copy.srcHost = pageable;
  copy.srcPitch = 100;
  copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.dstDevice = dev;
  copy.dstPitch = 10;
  copy.WidthInBytes = 10;
  copy.Height = 5;
  CHECK_CU(cuMemcpy2D(&copy));
  CHECK_CU(cuMemcpyDtoH(back, dev, 50));
  for (int r = 0; r < 5; r++)
    CHECK(!memcmp(back + r * 10, pageable + r * 100, 10));
  CHECK_RESULT(cuMemcpyHtoD((CUdeviceptr)registered, pageable, n + 1), CUDA_ERROR_INVALID_VALUE);
  CHECK_RESULT(cuMemcpyHtoD((CUdeviceptr)back, pageable, 16), CUDA_ERROR_INVALID_VALUE);
  CHECK_RESULT(cuMemsetD8((CUdeviceptr)pageable, 0, 16), CUDA_ERROR_INVALID_VALUE);

  CHECK_RESULT(cuMemFree(dev + 1), CUDA_ERROR_INVALID_VALUE);
  CHECK_RESULT(cuMemAlloc(&dev, (size_t)1 << 62), CUDA_ERROR_OUT_OF_MEMORY);
  CHECK_CU(cuMemHostUnregister(registered));
  CHECK_RESULT(cuMemHostUnregister(registered), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
  CHECK_RESULT(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)registered),
               CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuMemFreeHost(pinned));
  CHECK_CU(cuMemFree(managed));
  free(pageable);
  free(registered);
  free(back);
}

static void check_handles_and_launches(void)
{
  CUfunction f = test_kernel("_Z4vaddPKfS0_Pfi");
  const char *name = NULL;
  CHECK_CU(cuFuncGetName(&name, f));
  CHECK(!strcmp(name, "_Z4vaddPKfS0_Pfi"));
  CUlibrary library;
  CUkernel kernel;
  CHECK_CU(cuLibraryLoadData(&library, "any image", NULL, NULL, 0, NULL, NULL, 0));
  CHECK_CU(cuLibraryGetKernel(&kernel, library, "_Z6kernelv"));
  CHECK_CU(cuKernelGetName(&name, kernel));
  CHECK(!strcmp(name, "_Z6kernelv"));
  CHECK_CU(cuFuncGetName(&name, (CUfunction)kernel));
  CHECK(!strcmp(name, "_Z6kernelv"));
  CHECK_CU(cuLaunchKernel((CUfunction)kernel, 1, 1, 1, 64, 1, 1, 0, NULL, NULL, NULL));
  CUlaunchConfig config = {.gridDimX = 2, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 128, .blockDimY = 1,
                           .blockDimZ = 1};
  CHECK_CU(cuLaunchKernelEx(&config, f, NULL, NULL));
  config.blockDimX = 2048;
  CHECK_RESULT(cuLaunchKernelEx(&config, f, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
  CHECK_RESULT(cuLaunchKernel(f, 0, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
  CHECK_RESULT(cuLaunchKernel(f, 1, 1, 1, 32, 32, 2, 0, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
  CHECK_RESULT(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 65536, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100000));
  CHECK_CU(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 65536, NULL, NULL, NULL));
  CHECK_RESULT(cuLaunchCooperativeKernel(f, 100000, 1, 1, 1024, 1, 1, 0, NULL, NULL),
               CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
  CHECK_RESULT(cuLaunchKernel((CUfunction)0x1234, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL),
               CUDA_ERROR_INVALID_HANDLE);
  int blocks = 0, min_grid = 0, block_size = 0;
  CHECK_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 256, 0));
  CHECK(blocks == 8);
  CHECK_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 64, 100000));
  CHECK(blocks == 2);
  CHECK_CU(cuOccupancyMaxPotentialBlockSize(&min_grid, &block_size, f, NULL, 0, 0));
  CHECK(block_size == 1024 && min_grid == 2 * 132);

  CUstream s;
  CUevent e, untimed;
  CHECK_CU(cuStreamCreateWithPriority(&s, CU_STREAM_NON_BLOCKING, -3));
  int priority = 0;
  unsigned int flags = 0;
  CHECK_CU(cuStreamGetPriority(s, &priority));
  CHECK_CU(cuStreamGetFlags(s, &flags));
  CHECK(priority == -3 && flags == CU_STREAM_NON_BLOCKING);
  CHECK_RESULT(cuStreamCreate(&s, 0x40), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuEventCreate(&e, 0));
  CHECK_CU(cuEventCreate(&untimed, CU_EVENT_DISABLE_TIMING));
  float ms;
  CHECK_CU(cuEventQuery(e)); /* never recorded: complete */
  CHECK_RESULT(cuEventElapsedTime(&ms, e, e), CUDA_ERROR_INVALID_HANDLE);
  CHECK_CU(cuEventRecord(e, s));
  CHECK_CU(cuEventRecord(untimed, s));
  CHECK_CU(cuStreamSynchronize(s));
  CHECK_RESULT(cuEventElapsedTime(&ms, e, untimed), CUDA_ERROR_INVALID_HANDLE);
  CHECK_RESULT(cuStreamSynchronize((CUstream)0x1234), CUDA_ERROR_INVALID_HANDLE);
  CHECK_RESULT(cuStreamQuery((CUstream)0x1234), CUDA_ERROR_INVALID_HANDLE);
  CHECK_RESULT(cuEventRecord((CUevent)0x1234, s), CUDA_ERROR_INVALID_HANDLE);
  CHECK_RESULT(cuEventQuery((CUevent)0x1234), CUDA_ERROR_INVALID_HANDLE);
  CHECK_RESULT(cuStreamWaitEvent(s, (CUevent)0x1234, 0), CUDA_ERROR_INVALID_HANDLE);
  CHECK_CU(cuStreamDestroy(s));
  CHECK_RESULT(cuStreamQuery(s), CUDA_ERROR_INVALID_HANDLE);
  CHECK_RESULT(cuStreamDestroy(s), CUDA_ERROR_INVALID_HANDLE);
  CHECK_CU(cuEventDestroy(e));
  CHECK_RESULT(cuEventDestroy(e), CUDA_ERROR_INVALID_HANDLE);
  CHECK_CU(cuEventDestroy(untimed));
}

/* Each thread has its own per-thread default stream, distinct from the legacy one. */
static void *stream_ids(void *out)
{
  unsigned long long *ids = out;
  CHECK_CU(cuCtxSetCurrent((CUcontext)(uintptr_t)ids[0]));
  CHECK_CU(cuStreamGetId(CU_STREAM_PER_THREAD, &ids[1]));
  CHECK_CU(cuStreamGetId(CU_STREAM_LEGACY, &ids[2]));
  return NULL;
}

static void check_per_thread_streams(CUcontext ctx)
{
  unsigned long long mine[3] = {(uintptr_t)ctx, 0, 0}, other[3] = {(uintptr_t)ctx, 0, 0};
  stream_ids(mine);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, stream_ids, other) == 0);
  CHECK(pthread_join(t, NULL) == 0);
  CHECK(mine[2] == other[2]);
  CHECK(mine[1] != other[1] && mine[1] != mine[2] && other[1] != other[2]);
  unsigned long long null_id = 0, ptsz_id = 0;
  CHECK_CU(cuStreamGetId(NULL, &null_id));
  CHECK(null_id == mine[2]);
  CUresult (*get_id_ptsz)(CUstream, unsigned long long *) = NULL;
  CUdriverProcAddressQueryResult status;
  CHECK_CU(cuGetProcAddress("cuStreamGetId", (void **)&get_id_ptsz, 13000,
                            CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &status));
  CHECK_CU(get_id_ptsz(NULL, &ptsz_id));
  CHECK(ptsz_id == mine[1]);
}

int main(void)
{
  setenv("SIMCUDA_DEVICES", "2", 1);
  CUcontext ctx = test_init();
  check_proc_address();
  check_errors_and_devices();
  check_memory();
  check_handles_and_launches();
  check_per_thread_streams(ctx);
  CHECK_CU(cuCtxSynchronize());
  puts("drv_api ok");
  return 0;
}
