/* Planted kernel attributes (SIMCUDA_KERNEL_ATTRS) and the occupancy calculator of the
 * simulated device.
 *
 * The arithmetic is the CUDA occupancy calculator's (the toolkit's cuda_occupancy.h,
 * cudaOccMaxActiveBlocksPerMultiprocessor, with partitioned global caching off and the
 * default shared memory carveout), with the limits of compute capability 9.0 (the CUDA
 * C++ Programming Guide's "Technical Specifications per Compute Capability" table; the
 * same numbers device.c answers): the resident blocks of one SM are the least of
 *   - 32 blocks per SM;
 *   - warps: 64 warps per SM / the block's warps (threads rounded up to 32);
 *   - registers: registers per warp = regs x 32 rounded up to 256; each of the 4 SM
 *     sub-partitions holds 65536 / 4 registers, so floor(16384 / per warp) warps, 4x
 *     that per SM, / the block's warps; 0 when regs > 255 or a block needs more than
 *     65536 registers (its warps rounded up to a multiple of 4 counted);
 *   - shared memory: 233472 bytes per SM / (static + dynamic + 1024 reserved per block,
 *     rounded up to 128); 0 when static + dynamic exceeds the 232448 bytes a block may
 *     opt in to.
 */
#include "module.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIM_SMS 132
#define SIM_WARP 32
#define SIM_MAX_WARPS_PER_SM 64        /* 2048 threads */
#define SIM_MAX_BLOCKS_PER_SM 32
#define SIM_REGS_PER_SM 65536
#define SIM_REGS_PER_BLOCK 65536
#define SIM_REG_UNIT 256               /* registers are allocated per warp in 256s */
#define SIM_SUBPARTITIONS 4
#define SIM_MAX_REGS_PER_THREAD 255
#define SIM_SHARED_PER_SM 233472
#define SIM_SHARED_OPTIN_PER_BLOCK 232448
#define SIM_SHARED_RESERVED_PER_BLOCK 1024
#define SIM_SHARED_UNIT 128

/* ---- SIMCUDA_KERNEL_ATTRS ---- */

struct attr_rule {
  char *pattern;
  int regs, static_smem, local_bytes;
};

static struct attr_rule *rules;
static size_t rule_count;
static pthread_once_t rules_once = PTHREAD_ONCE_INIT;

/* Parses one "regs:static_smem:local" triple; returns 0 on success. */
static int parse_triple(const char *text, struct attr_rule *r)
{
  char *end = NULL;
  long v[3];
  for (int i = 0; i < 3; i++) {
    v[i] = strtol(text, &end, 10);
    if (end == text || v[i] < 0 || v[i] > 1 << 20 || *end != (i < 2 ? ':' : '\0'))
      return -1;
    text = end + 1;
  }
  r->regs = (int)v[0], r->static_smem = (int)v[1], r->local_bytes = (int)v[2];
  return 0;
}

/* Reads SIMCUDA_KERNEL_ATTRS ("pattern=regs:static_smem:local,..."); all or nothing. */
static void load_rules(void)
{
  const char *text = getenv("SIMCUDA_KERNEL_ATTRS");
  if (!text || !*text)
    return;
  size_t capacity = 1;
  for (const char *p = text; *p; p++)
    capacity += *p == ',';
  char *copy = strdup(text);
  struct attr_rule *parsed = calloc(capacity, sizeof *parsed);
  size_t count = 0;
  int bad = !copy || !parsed;
  char *save = NULL;
  for (char *item = bad ? NULL : strtok_r(copy, ",", &save); item && !bad;
       item = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(item, '=');
    if (!eq || eq == item || parse_triple(eq + 1, &parsed[count]) != 0) {
      bad = 1;
      break;
    }
    *eq = '\0';
    parsed[count].pattern = strdup(item);
    bad = parsed[count++].pattern == NULL;
  }
  free(copy);
  if (bad) {
    fprintf(stderr, "simcuda: ignoring SIMCUDA_KERNEL_ATTRS=%s (expected name=regs:static_smem:local,...)\n",
            text);
    for (size_t i = 0; parsed && i < count; i++)
      free(parsed[i].pattern);
    free(parsed);
    return;
  }
  rules = parsed;
  rule_count = count;
}

void sim_kernel_attrs(const char *name, int *regs, int *static_smem, int *local_bytes)
{
  pthread_once(&rules_once, load_rules);
  *regs = 32, *static_smem = 0, *local_bytes = 0;
  struct sim_demangled d = {0, NULL};
  for (size_t i = 0; i < rule_count; i++) {
    if (sim_kernel_name_matches(name, rules[i].pattern, &d)) {
      *regs = rules[i].regs, *static_smem = rules[i].static_smem;
      *local_bytes = rules[i].local_bytes;
      break;
    }
  }
  free(d.text);
}

/* ---- occupancy ---- */

static int round_up(int v, int unit) { return (v + unit - 1) / unit * unit; }
static int min_int(int a, int b) { return a < b ? a : b; }

/* Resident blocks per SM of f with `block_size` threads and `dynamic_shared` bytes. */
static int blocks_per_sm(const struct sim_function *f, int block_size, size_t dynamic_shared)
{
  if (block_size <= 0 || block_size > 1024)
    return 0;
  int warps = (block_size + SIM_WARP - 1) / SIM_WARP;
  int blocks = min_int(SIM_MAX_BLOCKS_PER_SM, SIM_MAX_WARPS_PER_SM / warps);

  int regs_per_warp = round_up(f->regs * SIM_WARP, SIM_REG_UNIT);
  if (f->regs > SIM_MAX_REGS_PER_THREAD || regs_per_warp * round_up(warps, SIM_SUBPARTITIONS) > SIM_REGS_PER_BLOCK)
    return 0;
  if (regs_per_warp > 0) {
    int warps_per_subpartition = SIM_REGS_PER_SM / SIM_SUBPARTITIONS / regs_per_warp;
    blocks = min_int(blocks, warps_per_subpartition * SIM_SUBPARTITIONS / warps);
  }

  size_t used = (size_t)f->static_smem + dynamic_shared;
  if (used > SIM_SHARED_OPTIN_PER_BLOCK)
    return 0;
  int per_block = round_up((int)used + SIM_SHARED_RESERVED_PER_BLOCK, SIM_SHARED_UNIT);
  return min_int(blocks, SIM_SHARED_PER_SM / per_block);
}

/* The function of a handle, or NULL. */
static struct sim_function *function_of(const void *handle)
{
  sim_lock();
  struct sim_function *f = sim_function_of(handle);
  sim_unlock();
  return f;
}

/** Resident blocks per SM for a block size and dynamic shared memory. */
SIM_API CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, CUfunction func, int blockSize,
                                                                      size_t dynamicSMemSize, unsigned int flags)
{
  (void)flags;
  if (!numBlocks || blockSize <= 0)
    return CUDA_ERROR_INVALID_VALUE;
  struct sim_function *f = function_of(func);
  if (!f)
    return CUDA_ERROR_INVALID_HANDLE;
  *numBlocks = blocks_per_sm(f, blockSize, dynamicSMemSize);
  return CUDA_SUCCESS;
}

/** cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags without flags. */
SIM_API CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func, int blockSize,
                                                             size_t dynamicSMemSize)
{
  return cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize, dynamicSMemSize, 0);
}

/** The block size with the highest occupancy, and the grid that fills the device. */
SIM_API CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(int *minGridSize, int *blockSize, CUfunction func,
                                                           CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                           size_t dynamicSMemSize, int blockSizeLimit,
                                                           unsigned int flags)
{
  (void)flags;
  if (!minGridSize || !blockSize)
    return CUDA_ERROR_INVALID_VALUE;
  struct sim_function *f = function_of(func);
  if (!f)
    return CUDA_ERROR_INVALID_HANDLE;
  int limit = blockSizeLimit > 0 && blockSizeLimit < 1024 ? blockSizeLimit : 1024;
  int best_size = 0, best_threads = 0, best_blocks = 0;
  for (int size = 32; size <= limit; size += 32) {
    size_t shared = blockSizeToDynamicSMemSize ? blockSizeToDynamicSMemSize(size) : dynamicSMemSize;
    int blocks = blocks_per_sm(f, size, shared);
    if (blocks * size >= best_threads) {
      best_threads = blocks * size;
      best_size = size;
      best_blocks = blocks;
    }
  }
  *blockSize = best_size;
  *minGridSize = best_blocks * SIM_SMS;
  return CUDA_SUCCESS;
}

/** cuOccupancyMaxPotentialBlockSizeWithFlags without flags. */
SIM_API CUresult cuOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize, CUfunction func,
                                                  CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                  size_t dynamicSMemSize, int blockSizeLimit)
{
  return cuOccupancyMaxPotentialBlockSizeWithFlags(minGridSize, blockSize, func, blockSizeToDynamicSMemSize,
                                                   dynamicSMemSize, blockSizeLimit, 0);
}

/** Dynamic shared memory per block that still lets numBlocks blocks reside on an SM. */
SIM_API CUresult cuOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize, CUfunction func, int numBlocks,
                                                         int blockSize)
{
  if (!dynamicSmemSize || numBlocks <= 0 || blockSize <= 0 || blockSize > 1024)
    return CUDA_ERROR_INVALID_VALUE;
  struct sim_function *f = function_of(func);
  if (!f)
    return CUDA_ERROR_INVALID_HANDLE;
  size_t per_block = SIM_SHARED_PER_SM / (size_t)numBlocks / SIM_SHARED_UNIT * SIM_SHARED_UNIT;
  size_t taken = SIM_SHARED_RESERVED_PER_BLOCK + (size_t)f->static_smem;
  per_block = per_block > taken ? per_block - taken : 0;
  *dynamicSmemSize = per_block < (size_t)f->max_dynamic_shared ? per_block : (size_t)f->max_dynamic_shared;
  return CUDA_SUCCESS;
}
