/*
 * What dt_app.c and dt_linked.c share: the driver library dt_app opened (RTLD_LOCAL),
 * the failure line, and the small helpers every mode uses.
 */
#ifndef DT_APP_H
#define DT_APP_H

#include <cuda.h>

/* Prints "dt_app: ..." on stderr; evaluates to 1 (a mode's failure exit status). */
#define FAIL(...) (fprintf(stderr, "dt_app: " __VA_ARGS__), fputc('\n', stderr), 1)

typedef CUresult (*get_proc5_fn)(const char *, void **, int, cuuint64_t,
                                 CUdriverProcAddressQueryResult *);
typedef CUresult (*get_proc4_fn)(const char *, void **, int, cuuint64_t);
typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void **, void **);

/** libcuda.so.1 as dt_app opened it (RTLD_LOCAL). */
extern void *dt_libcuda;

/** A driver function looked up in dt_libcuda by name (NULL when missing). */
void *dt_sym(const char *name);

/** cuInit, device 0's primary context current, and function `kernel` of a loaded module. */
int dt_setup(CUfunction *f, const char *kernel);

/** cuCtxSynchronize through dt_libcuda: 0, or 1 after a FAIL line. */
int dt_ctx_sync(void);

/** n launches of f (2 blocks of 32 threads) through `launch`: 0, or 1 after a FAIL line. */
int dt_launch_n(launch_fn launch, CUfunction f, int n);

/* The modes of dt_linked.c (built into dt_app only: they need -lcuda). */
int dt_run_linked(void);
int dt_run_alloc(void);
int dt_run_shapes(void);
int dt_run_graph(void);
int dt_run_bench(long n);
int dt_run_bench_alloc(long n);

/* dt_vmm.c */
int dt_run_vmm(void);
int dt_bench_vmm(long n);

#endif
