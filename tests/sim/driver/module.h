/* Modules, libraries, functions and kernels, shared by module.c and function.c. */
#ifndef SIM_DRIVER_MODULE_H
#define SIM_DRIVER_MODULE_H

#include "sim.h"

struct sim_global {
  struct sim_global *next;
  CUdeviceptr address;
  size_t size;
  char name[];
};

struct sim_function;

struct sim_module {
  const void *image;
  struct sim_function *functions;
  struct sim_global *globals;
};

struct sim_function {
  struct sim_function *next;
  struct sim_module *module;
  int max_dynamic_shared;
  int loaded;
  uint64_t duration_ns; /* modelled duration, from SIMCUDA_KERNEL_US */
  int regs, static_smem, local_bytes; /* planted by SIMCUDA_KERNEL_ATTRS */
  unsigned legacy_block[3], legacy_shared; /* cuFuncSetBlockShape / cuFuncSetSharedSize */
  unsigned legacy_param_size;             /* cuParamSetSize */
  char name[];
};

struct sim_kernel;

struct sim_library {
  struct sim_module *module;
  struct sim_kernel *kernels;
};

struct sim_kernel {
  struct sim_kernel *next;
  struct sim_library *library;
  struct sim_function *function;
};

#endif
