/*
 * Kernel attribute args of dump --chrome / --perfetto kernel slices (format 1.6), named
 * as PyTorch's profiler (Kineto) names them, with Kineto's meanings
 * (libkineto/src/output_json.cpp writes them; DeviceProperties.cpp, formerly
 * CudaDeviceProperties.cpp, computes them):
 *   "registers per thread"        the function's registers
 *   "shared memory"               static + dynamic shared memory per block, bytes
 *   "blocks per SM"               the grid's blocks / the device's SMs
 *   "warps per SM"                that x the block's threads / 32
 *   "est. achieved occupancy %"   min(blocks per SM, resident blocks per SM) x the block's
 *                                 threads / the SM's max threads, in percent, rounded
 * and ours: "theoretical occupancy %" (the CUDA occupancy calculator's: resident blocks
 * x the block's warps / the SM's warps), "resident blocks per SM", "static shared
 * memory", "dynamic shared memory", "local memory per thread".
 */
#include "chrome_internal.h"
#include "kattr.h"

void chr_on_kernel_attr(void *user, const ct_proc *p, const struct ct_kernel_attr *a,
                        const char *name) {
  (void)p, (void)name;
  ct_chrome *c = user;
  if (!c->kattr) c->kattr = ct_kattr_new();
  if (c->kattr) ct_kattr_add_attr(c->kattr, a);
}

void chr_on_occupancy(void *user, const ct_proc *p, const struct ct_occupancy *o) {
  (void)p;
  ct_chrome *c = user;
  if (!c->kattr) c->kattr = ct_kattr_new();
  if (c->kattr) ct_kattr_add_occupancy(c->kattr, o);
}

void chr_kattr_finish(ct_chrome *c) {
  ct_kattr_free(c->kattr);
  c->kattr = NULL;
}

int chr_put_kernel_attr_args(ct_chrome *c, const ct_activity *a) {
  const struct ct_launch *l = &a->d.launch;
  const struct ct_kernel_attr *k = ct_kattr_find(c->kattr, l->attr);
  if (!k) return 0;
  const chr_encoder *e = c->enc;
  uint64_t threads = l->block_x * l->block_y * l->block_z;
  uint64_t blocks = l->grid_x * l->grid_y * l->grid_z;
  e->arg_u64(c, "registers per thread", k->regs);
  e->arg_u64(c, "shared memory", k->static_smem + l->shmem);
  e->arg_u64(c, "static shared memory", k->static_smem);
  e->arg_u64(c, "dynamic shared memory", l->shmem);
  e->arg_u64(c, "local memory per thread", k->local_bytes);
  const struct ct_device *dev = ct_kattr_device(a->proc, a->device);
  int resident = ct_kattr_blocks(c->kattr, l->attr, a->device, threads, l->shmem);
  if (resident >= 0) e->arg_u64(c, "resident blocks per SM", (uint64_t)resident);
  if (!dev || !dev->sm_count) return 1;
  double grid_per_sm = (double)blocks / (double)dev->sm_count;
  e->arg_f3(c, "blocks per SM", grid_per_sm);
  e->arg_f3(c, "warps per SM", grid_per_sm * (double)threads / 32.0);
  double theoretical = ct_kattr_occupancy_pct(dev, threads, resident);
  if (theoretical < 0) return 1;
  double active = grid_per_sm < resident ? grid_per_sm : (double)resident;
  e->arg_u64(c, "est. achieved occupancy %",
             (uint64_t)(0.5 + 100.0 * active * (double)threads / (double)dev->max_threads_per_sm));
  e->arg_f3(c, "theoretical occupancy %", theoretical);
  return 1;
}
