/*
 * test-stacks-gen: writes a trace whose call stacks are this program's own, for the
 * tests of `cutrace report --by callsite` and the gaps' ending call (test_stacks.py),
 * independent of the preload. Each planted "call" unwinds the real stack with
 * libunwind at a line marked `CALLSITE: <name>` below, so the test reads the lines it
 * expects from this file, and records this program's mapping as a MODULE with its
 * real GNU build-id; the module path and build-id can be falsified to test the
 * fallbacks.
 *
 * usage: test-stacks-gen FILE [normal|missing|mismatch|odd]
 *
 * odd: the normal trace, then records a damaged or hostile writer could leave: STACK
 * nodes forming a cycle, a node with pc 0, a node whose parent never appears, a
 * repeated id with another pc, a MODULE with end <= start and one covering all
 * addresses with a path that does not exist, and launches naming those nodes and an id
 * never defined (each with a 50 us kernel).
 *
 * Plan, 4 iterations of: launch_a twice (kernels queued back to back); a 2 ms host
 * pause; inside NVTX range "phase_b" (itself inside "iteration") launch_b once (through
 * cudaLaunchForTest, named like a static runtime's function: folded); a 3 ms
 * host pause; inside range "phase_c" gemm_c: a cublasSgemm_v2 call (flagged inner
 * timed, stack) whose two kernels are launched by depth-1 cuLaunchKernel calls without
 * a stack (their parent is the gemm). Every kernel runs 50 us. So: 8 gaps of >= 2 ms,
 * 4 ended by launch_b in phase_b, 4 by gemm_c (cublasSgemm_v2) in phase_c.
 */
#include <elf.h>
#include <libunwind.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec.h"

#define US 1000ull
#define T0 1000000000ull
#define TID 777
#define MAX_NODES 4096

static ct_file_writer *writer;
static uint64_t now = T0, gpu_free = T0, next_corr = 1;
static struct { uint64_t parent, pc; } nodes[MAX_NODES];
static uint64_t nnodes;
static char self_build_id[128];
static uint64_t self_bias, self_start, self_end;

static void add(const ct_record *r) {
  if (ct_file_writer_add(writer, r) < 0) {
    perror("test-stacks-gen");
    exit(1);
  }
}

enum { S_HOST = 1, S_CMD, S_EXE, S_DEV, S_MODPATH, S_BUILDID, S_KA, S_KB, S_KGEMM, S_LAUNCH,
       S_SGEMM, S_DRVLAUNCH, S_ITER, S_PHASE_B, S_PHASE_C, S_THREAD, S_ODDPATH, S_OTHER };

static void string(uint64_t id, const char *s) {
  if (ct_file_writer_add_string(writer, id, s, strlen(s)) < 0) exit(1);
}

/* The STACK node of (parent, pc), written when new. */
static uint64_t node(uint64_t parent, uint64_t pc) {
  for (uint64_t i = 0; i < nnodes; i++)
    if (nodes[i].parent == parent && nodes[i].pc == pc) return i + 1;
  if (nnodes == MAX_NODES) exit(1);
  nodes[nnodes].parent = parent;
  nodes[nnodes].pc = pc;
  ct_record r = {.kind = CT_KIND_STACK};
  r.u.stack = (struct ct_stack){++nnodes, parent, pc};
  add(&r);
  return nnodes;
}

/* The stack of the caller of capture's caller, as STACK nodes: its innermost id. */
static __attribute__((noinline)) uint64_t capture(void) {
  void *pcs[64];
  int n = unw_backtrace(pcs, 64);
  /* pcs[0] is in capture, pcs[1] in record_call: the call site starts at pcs[2] */
  uint64_t parent = 0;
  for (int i = n - 1; i >= 2; i--) parent = node(parent, (uint64_t)(uintptr_t)pcs[i]);
  return parent;
}

static void kernel(uint64_t corr, uint64_t name) {
  uint64_t start = gpu_free > now ? gpu_free : now;
  ct_record r = {.kind = CT_KIND_GPU};
  r.u.gpu = (struct ct_gpu){corr, 0, 0, start, start + 50 * US, CT_GPU_KERNEL, name};
  add(&r);
  gpu_free = start + 50 * US;
}

static void api(uint64_t corr, uint64_t name, uint64_t begin, uint64_t end, uint64_t depth,
                uint64_t flags, uint64_t stack, uint64_t parent) {
  ct_record r = {.kind = CT_KIND_API};
  r.u.api = (struct ct_api){TID, name, begin, end, corr, 0, 0, 0, depth, flags, stack, parent};
  add(&r);
}

static void launch_record(uint64_t corr, uint64_t kname) {
  ct_record r = {.kind = CT_KIND_LAUNCH};
  r.u.launch = (struct ct_launch){corr, kname, 1, 1, 1, 128, 1, 1, 0, 0};
  add(&r);
}

/* One cudaLaunchKernel of kernel kname, with the stack of its caller. */
static __attribute__((noinline)) void record_call(uint64_t kname) {
  uint64_t stack = capture(), corr = next_corr++;
  api(corr, S_LAUNCH, now, now + 5 * US, 0, CT_API_TIMED, stack, 0);
  launch_record(corr, kname);
  now += 5 * US;
  kernel(corr, kname);
  now += 1 * US;
}

/* A cublasSgemm_v2 whose two kernels are launched (and timed) by depth-1 driver calls. */
static __attribute__((noinline)) void record_gemm(void) {
  uint64_t stack = capture(), corr = next_corr++, begin = now;
  for (int k = 0; k < 2; k++) {
    uint64_t inner = next_corr++;
    now += 5 * US;
    api(inner, S_DRVLAUNCH, now, now + 3 * US, 1, CT_API_TIMED | CT_API_DRIVER, 0, corr);
    launch_record(inner, S_KGEMM);
    now += 3 * US;
    kernel(inner, S_KGEMM);
  }
  now += 5 * US;
  api(corr, S_SGEMM, begin, now, 0, CT_API_INNER_TIMED, stack, 0);
  now += 1 * US;
}

static void range_on(uint64_t tid, uint64_t name, uint64_t begin, uint64_t end, uint64_t depth) {
  ct_record r = {.kind = CT_KIND_RANGE};
  r.u.range = (struct ct_range){tid, 0, name, begin, end, depth, 0};
  add(&r);
}

static void range(uint64_t name, uint64_t begin, uint64_t end, uint64_t depth) {
  range_on(TID, name, begin, end, depth);
}

static __attribute__((noinline)) void launch_a(void) {
  record_call(S_KA); /* CALLSITE: launch_a */
  now += 0;
}

/* Named like the CUDA runtime's API, as a statically linked cudart's frames are: the
 * call site must be its caller. */
static __attribute__((noinline)) void cudaLaunchForTest(uint64_t kname) {
  record_call(kname);
  now += 0;
}

static __attribute__((noinline)) void launch_b(void) {
  cudaLaunchForTest(S_KB); /* CALLSITE: launch_b */
  now += 0;
}

static __attribute__((noinline)) void gemm_c(void) {
  record_gemm(); /* CALLSITE: gemm_c */
  now += 0;
}

/* Records of a damaged or hostile writer (mode "odd"): see the usage above. */
static void odd_records(void) {
  static const struct ct_stack odd[] = {
      {9001, 9002, 0x1000}, {9002, 9001, 0x2000}, /* a cycle */
      {9003, 0, 0},                                /* pc 0 */
      {9004, 8888, 0x3000},                        /* parent never defined */
      {9001, 0, 0x4000},                           /* an id again, another pc */
  };
  for (unsigned i = 0; i < sizeof odd / sizeof odd[0]; i++) {
    ct_record r = {.kind = CT_KIND_STACK};
    r.u.stack = odd[i];
    add(&r);
  }
  ct_record r = {.kind = CT_KIND_MODULE};
  r.u.module = (struct ct_module){S_MODPATH, 0, 0x5000, 0x5000, 0, now}; /* empty */
  add(&r);
  string(S_ODDPATH, "/nonexistent/everything.so");
  r.u.module = (struct ct_module){S_ODDPATH, 0, 0, UINT64_MAX, 0, now}; /* everything */
  add(&r);
  static const uint64_t ids[] = {9001, 9003, 9004, 424242};
  for (unsigned i = 0; i < 4; i++) {
    uint64_t corr = next_corr++;
    api(corr, S_LAUNCH, now, now + 5 * US, 0, CT_API_TIMED, ids[i], 0);
    launch_record(corr, S_KA);
    now += 5 * US;
    kernel(corr, S_KA);
  }
}

/* This program's own mapping: bias, address range and GNU build-id (hex). */
static int find_self(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  (void)arg;
  if (info->dlpi_name && info->dlpi_name[0]) return 0; /* the main program comes first, "" */
  self_bias = info->dlpi_addr;
  self_start = UINT64_MAX;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uint64_t b = info->dlpi_addr + ph->p_vaddr, e = b + ph->p_memsz;
    if (ph->p_type == PT_LOAD) {
      if (b < self_start) self_start = b;
      if (e > self_end) self_end = e;
    }
    if (ph->p_type != PT_NOTE) continue;
    const char *p = (const char *)b, *end = p + ph->p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const ElfW(Nhdr) *nh = (const void *)p;
      const unsigned char *desc = (const unsigned char *)(p + sizeof *nh + ((nh->n_namesz + 3) & ~3u));
      if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && nh->n_descsz <= 60)
        for (unsigned k = 0; k < nh->n_descsz; k++)
          sprintf(self_build_id + 2 * k, "%02x", desc[k]);
      p = (const char *)desc + ((nh->n_descsz + 3) & ~3u);
    }
  }
  return 1;
}

int main(int argc, char **argv) {
  static const char usage[] = "usage: test-stacks-gen FILE [normal|missing|mismatch|odd]\n";
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      fputs(usage, stdout);
      return 0;
    }
  const char *mode = argc > 2 ? argv[2] : "normal";
  if (argc < 2 || argc > 3 || argv[1][0] == '-' ||
      (strcmp(mode, "normal") && strcmp(mode, "missing") && strcmp(mode, "mismatch") &&
       strcmp(mode, "odd"))) {
    fputs(usage, stderr); /* an option is never taken for FILE */
    return 2;
  }
  dl_iterate_phdr(find_self, NULL);
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[n > 0 ? n : 0] = 0;
  writer = ct_file_writer_open(argv[1], 1 << 20);
  if (!writer) {
    perror(argv[1]);
    return 1;
  }
  static const char *const strs[] = {NULL, "stacks-host", "test-stacks-gen", NULL, "cutrace simulated GPU",
                                     NULL, NULL, "_Z8kernel_aPf", "_Z8kernel_bPf", "sgemm_kernel",
                                     "cudaLaunchKernel", "cublasSgemm_v2", "cuLaunchKernel",
                                     "iteration", "phase_b", "phase_c", "main-thread", NULL,
                                     "other_thread_range"};
  for (unsigned i = 1; i < sizeof strs / sizeof strs[0]; i++)
    if (strs[i]) string(i, strs[i]);
  string(S_EXE, exe);
  /* the main program's MODULE path is "" (PROCESS.exe names it); a falsified one names a
   * file that does not exist */
  string(S_MODPATH, !strcmp(mode, "missing") ? "/nonexistent/cutrace-test-module" : "");
  string(S_BUILDID, !strcmp(mode, "mismatch") ? "00112233445566778899aabbccddeeff00112233" : self_build_id);
  ct_record r = {.kind = CT_KIND_PROCESS};
  r.u.process = (struct ct_process){.pid = 5151, .ppid = 1, .start_ns = T0, .host = S_HOST,
                                    .cmdline = S_CMD, .exe = S_EXE, .runtime_version = 13000};
  add(&r);
  r = (ct_record){.kind = CT_KIND_DEVICE};
  r.u.device = (struct ct_device){.device = 0, .name = S_DEV, .cc_major = 9, .sm_count = 132};
  add(&r);
  r = (ct_record){.kind = CT_KIND_THREAD};
  r.u.thread = (struct ct_thread){TID, S_THREAD, T0};
  add(&r);
  r = (ct_record){.kind = CT_KIND_MODULE};
  r.u.module = (struct ct_module){S_MODPATH, self_bias, self_start, self_end, S_BUILDID, T0};
  add(&r);
  for (int it = 0; it < 4; it++) {
    uint64_t it_begin = now;
    launch_a();
    launch_a();
    now = gpu_free + 2000 * US; /* the host pauses: a planted gap before launch_b */
    uint64_t b_begin = now;
    launch_b();
    range(S_PHASE_B, b_begin - 1 * US, now, 1);
    /* another thread's range, open at the same time and begun later: not b's */
    range_on(TID + 1, S_OTHER, b_begin, now + 1 * US, 0);
    now = gpu_free + 3000 * US; /* a planted gap before gemm_c's kernels */
    uint64_t c_begin = now;
    gemm_c();
    range(S_PHASE_C, c_begin - 1 * US, now, 1);
    range(S_ITER, it_begin, now + 1 * US, 0);
    now += 2 * US;
  }
  if (!strcmp(mode, "odd")) odd_records();
  r = (ct_record){.kind = CT_KIND_END};
  r.u.end = (struct ct_end){.records = 0, .end_ns = gpu_free + 10 * US};
  add(&r);
  if (ct_file_writer_close(writer) < 0) {
    perror(argv[1]);
    return 1;
  }
  return 0;
}
