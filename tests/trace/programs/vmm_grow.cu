/*
 * A buffer that grows the way PyTorch's expandable segments grow
 * (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True; ExpandableSegment in
 * c10/cuda/CUDACachingAllocator.cpp), for test_vmm.py (simulated GPU): one
 * cuMemAddressReserve of 16 segments of 2 MiB (the granularity), then GROW (4) steps,
 * each cuMemCreate of one segment, cuMemMap of it at the end of the mapped part,
 * cuMemSetAccess read-write, and one launch of v_work over the whole mapped part
 * (short: the GPU then waits while the next step grows the buffer). Then a copy of a pattern over all four
 * segments and back (one copy across the handles' borders), a shrink as PyTorch
 * does it (cudaDeviceSynchronize, then cuMemUnmap and cuMemRelease of the last two
 * segments), one segment mapped again, the same copies over three segments, and
 * the teardown: cuMemUnmap and cuMemRelease of the three, cuMemAddressFree. The
 * host buffers are filled before and compared after, so that between two GPU
 * operations the CPU is only in CUDA calls: every gap is planted.
 * Before all that, a cuMemCreate of 4 KiB (not a multiple of the granularity) must
 * fail with CUDA_ERROR_INVALID_VALUE.
 * The driver entry points come from dlsym on libcuda.so.1 (what PyTorch's DriverAPI
 * did up to 2.5), or with the argument "procaddr" from cuGetProcAddress_v2 at 12000
 * (what cudaGetDriverEntryPointByVersion reaches). Built twice (programs/meson.build):
 * shared cudart, and the simulated runtime linked in statically (vmm_grow_static).
 * Prints "vmm_grow: ok" and exits 0 when every call did what it should.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime.h>

#define SEGMENT ((size_t)2 << 20)
#define RESERVED 16
#define GROW 4

__global__ void v_work(float *x, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}

static struct {
  CUresult (*reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
  CUresult (*address_free)(CUdeviceptr, size_t);
  CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
                     unsigned long long);
  CUresult (*release)(CUmemGenericAllocationHandle);
  CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
  CUresult (*unmap)(CUdeviceptr, size_t);
  CUresult (*set_access)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
  CUresult (*granularity)(size_t *, const CUmemAllocationProp *, CUmemAllocationGranularity_flags);
} drv;

static int failed;

static void check(cudaError_t err, const char *what) {
  if (err != cudaSuccess) {
    fprintf(stderr, "vmm_grow: %s: %s\n", what, cudaGetErrorString(err));
    failed = 1;
  }
}

static void check_cu(CUresult r, CUresult want, const char *what) {
  if (r != want) {
    fprintf(stderr, "vmm_grow: %s: %d, expected %d\n", what, (int)r, (int)want);
    failed = 1;
  }
}

/* The driver entry point `name`, by dlsym or by cuGetProcAddress_v2. */
static void *lookup(void *lib, const char *name, int procaddr) {
  if (!procaddr) return dlsym(lib, name);
  typedef CUresult (*get_proc_fn)(const char *, void **, int, cuuint64_t,
                                  CUdriverProcAddressQueryResult *);
  get_proc_fn get_proc = (get_proc_fn)dlsym(lib, "cuGetProcAddress_v2");
  void *fn = NULL;
  CUdriverProcAddressQueryResult status;
  if (!get_proc || get_proc(name, &fn, 12000, 0, &status) != CUDA_SUCCESS) return NULL;
  return fn;
}

static int resolve(int procaddr) {
  void *lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!lib) lib = dlopen("libcuda.so.1", RTLD_LAZY);
  if (!lib) return -1;
#define GET(member, name) *(void **)&drv.member = lookup(lib, name, procaddr)
  GET(reserve, "cuMemAddressReserve");
  GET(address_free, "cuMemAddressFree");
  GET(create, "cuMemCreate");
  GET(release, "cuMemRelease");
  GET(map, "cuMemMap");
  GET(unmap, "cuMemUnmap");
  GET(set_access, "cuMemSetAccess");
  GET(granularity, "cuMemGetAllocationGranularity");
#undef GET
  return drv.reserve && drv.address_free && drv.create && drv.release && drv.map && drv.unmap &&
                 drv.set_access && drv.granularity
             ? 0
             : -1;
}

static CUmemAllocationProp prop;
static CUmemGenericAllocationHandle handles[RESERVED];
static CUdeviceptr base;

/* Maps one new segment at index i (cuMemCreate, cuMemMap, cuMemSetAccess). */
static void grow(int i) {
  check_cu(drv.create(&handles[i], SEGMENT, &prop, 0), CUDA_SUCCESS, "cuMemCreate");
  check_cu(drv.map(base + i * SEGMENT, SEGMENT, 0, handles[i], 0), CUDA_SUCCESS, "cuMemMap");
  CUmemAccessDesc access = {};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = 0;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  check_cu(drv.set_access(base + i * SEGMENT, SEGMENT, &access, 1), CUDA_SUCCESS, "cuMemSetAccess");
}

/* Gives segment i back (cuMemUnmap, cuMemRelease). */
static void shrink(int i) {
  check_cu(drv.unmap(base + i * SEGMENT, SEGMENT), CUDA_SUCCESS, "cuMemUnmap");
  check_cu(drv.release(handles[i]), CUDA_SUCCESS, "cuMemRelease");
}

/* The host side of the copies, filled before the GPU work begins and compared after
 * it ends, so that the only host work between the GPU's operations is CUDA calls. */
static unsigned char *pattern[2], *readback[2];

/* Copies pattern[k] over the first `segments` segments and back into readback[k]. */
static void round_trip(int k, int segments) {
  size_t n = segments * SEGMENT;
  check(cudaMemcpy((void *)base, pattern[k], n, cudaMemcpyHostToDevice), "cudaMemcpy HtoD");
  check(cudaMemcpy(readback[k], (void *)base, n, cudaMemcpyDeviceToHost), "cudaMemcpy DtoH");
}

static int host_buffers(void) {
  for (int k = 0; k < 2; k++) {
    pattern[k] = (unsigned char *)malloc(GROW * SEGMENT);
    readback[k] = (unsigned char *)calloc(1, GROW * SEGMENT);
    if (!pattern[k] || !readback[k]) return -1;
    for (size_t i = 0; i < GROW * SEGMENT; i++) pattern[k][i] = (unsigned char)(i * 7 + k + 1);
  }
  return 0;
}

static void compare(int k, int segments) {
  if (memcmp(pattern[k], readback[k], segments * SEGMENT) != 0) {
    fprintf(stderr, "vmm_grow: bytes read back differ (%d segments)\n", segments);
    failed = 1;
  }
}

int main(int argc, char **argv) {
  check(cudaFree(0), "cudaFree(0)");
  if (host_buffers() != 0 || resolve(argc > 1 && !strcmp(argv[1], "procaddr")) != 0) {
    fprintf(stderr, "vmm_grow: driver entry points not found (or no host memory)\n");
    return 1;
  }
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  size_t granularity = 0;
  check_cu(drv.granularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), CUDA_SUCCESS,
           "cuMemGetAllocationGranularity");
  if (granularity != SEGMENT) {
    fprintf(stderr, "vmm_grow: granularity %zu\n", granularity);
    failed = 1;
  }
  CUmemGenericAllocationHandle odd = 0x5eed; /* a stale value the failing call leaves */
  check_cu(drv.create(&odd, 4096, &prop, 0), CUDA_ERROR_INVALID_VALUE, "cuMemCreate of 4 KiB");
  check_cu(drv.reserve(&base, RESERVED * SEGMENT, 0, 0, 0), CUDA_SUCCESS, "cuMemAddressReserve");
  for (int i = 0; i < GROW; i++) {
    grow(i);
    size_t n = (i + 1) * SEGMENT / sizeof(float);
    v_work<<<(unsigned)((n + 255) / 256), 256>>>((float *)base, n);
    check(cudaGetLastError(), "launch");
  }
  round_trip(0, GROW);
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize before unmap");
  shrink(3);
  shrink(2);
  grow(2);
  round_trip(1, 3);
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize at the end");
  for (int i = 0; i < 3; i++) shrink(i);
  check_cu(drv.address_free(base, RESERVED * SEGMENT), CUDA_SUCCESS, "cuMemAddressFree");
  compare(0, GROW);
  compare(1, 3);
  printf("vmm_grow: %s\n", failed ? "FAILED" : "ok");
  return failed;
}
