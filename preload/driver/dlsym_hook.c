/*
 * dlsym and dlvsym, exported by libtrace.so, so that code which fetches driver
 * entry points itself (cudart and cuBLAS: dlsym(h, "cuGetProcAddress_v2"); Triton:
 * dlsym(h, "cuLaunchKernelEx")) gets our wrappers. Rules (see
 * /work/shared/notes/cuda-interception.md, section 2):
 * - RTLD_NEXT and RTLD_DEFAULT lookups are passed to libc's dlsym by a tail jump
 *   (x86-64 assembly below), so glibc still sees the real caller's return address
 *   and resolves relative to it. Our exported cu* wrappers come first in the global
 *   scope anyway, so such lookups already find them.
 * - A lookup by handle is done by libc's dlsym, and when the caller is not
 *   libtrace.so itself and the name is one we wrap, the wrapper is returned.
 * - libc's own functions are found from libc's ELF tables (elf_symbol.c): calling
 *   dlsym or dlvsym for them would land in these very hooks.
 */
#include <dlfcn.h>
#include <string.h>

#include "driver_internal.h"

void *(*ctpd_real_dlsym)(void *, const char *);
void *(*ctpd_real_dlvsym)(void *, const char *, const char *);

CTP_NO_SANITIZE void *ctpd_resolve_real_dl(void) {
  void *fn = __atomic_load_n(&ctpd_real_dlsym, __ATOMIC_ACQUIRE);
  if (fn)
    return fn;
  int saved = errno;
  void *vs = ctpd_elf_default_symbol("libc.so.6", "dlvsym");
  void *s = ctpd_elf_default_symbol("libc.so.6", "dlsym");
  if (vs)
    __atomic_store_n(&ctpd_real_dlvsym, (__typeof__(ctpd_real_dlvsym))vs, __ATOMIC_RELEASE);
  if (s)
    __atomic_store_n(&ctpd_real_dlsym, (__typeof__(ctpd_real_dlsym))s, __ATOMIC_RELEASE);
  errno = saved;
  return s;
}

/* Runs before any other constructor of ours: from then on the fast path holds. */
__attribute__((constructor(101))) static void resolve_at_load(void) { ctpd_resolve_real_dl(); }

/* For the assembly slow path of dlvsym. */
CTPD_HIDDEN void *ctpd_resolve_real_dlvsym(void);
CTP_NO_SANITIZE void *ctpd_resolve_real_dlvsym(void) {
  ctpd_resolve_real_dl();
  return __atomic_load_n(&ctpd_real_dlvsym, __ATOMIC_ACQUIRE);
}

static const void *self_base;

int ctpd_in_self(const void *addr) {
  const void *base = __atomic_load_n(&self_base, __ATOMIC_RELAXED);
  Dl_info info;
  if (!base) {
    if (!dladdr((const void *)&ctpd_in_self, &info))
      return 0;
    base = info.dli_fbase;
    __atomic_store_n(&self_base, base, __ATOMIC_RELAXED);
  }
  return dladdr(addr, &info) && info.dli_fbase == base;
}

/* What a lookup by handle that found p hands back: our wrapper for a wrapped
 * name, unless the caller is libtrace.so itself (the tracer's own lookups). */
static void *wrap_found(void *p, const char *name, const void *caller) {
  if (!p || !name || name[0] != 'c')
    return p;
  int saved = errno;
  if (!ctpd_in_self(caller))
    p = ctpd_wrap_symbol(name, p);
  errno = saved;
  return p;
}

/* A lookup by handle (called by the assembly entry, caller = its return address). */
CTPD_HIDDEN void *ctpd_dlsym_by_handle(void *handle, const char *name, const void *caller);
void *ctpd_dlsym_by_handle(void *handle, const char *name, const void *caller) {
  void *(*real)(void *, const char *) = __atomic_load_n(&ctpd_real_dlsym, __ATOMIC_ACQUIRE);
  if (!real && !(real = (__typeof__(real))ctpd_resolve_real_dl()))
    return NULL;
  return wrap_found(real(handle, name), name, caller);
}

/* The same for dlvsym. */
CTPD_HIDDEN void *ctpd_dlvsym_by_handle(void *handle, const char *name, const char *version,
                                        const void *caller);
void *ctpd_dlvsym_by_handle(void *handle, const char *name, const char *version,
                            const void *caller) {
  void *(*real)(void *, const char *, const char *) =
      __atomic_load_n(&ctpd_real_dlvsym, __ATOMIC_ACQUIRE);
  if (!real && !(real = ctpd_resolve_real_dlvsym()))
    return NULL;
  return wrap_found(real(handle, name, version), name, caller);
}

#if defined(__x86_64__)
/*
 * dlsym(handle, name): RTLD_NEXT ((void *)-1) and RTLD_DEFAULT (0) jump to libc's
 * dlsym with the caller's return address still on the stack; other handles go to
 * ctpd_dlsym_by_handle(handle, name, return address). dlvsym likewise (3 args).
 * endbr64 (a no-op without CET) keeps them valid indirect-branch targets.
 */
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        "dlsym:\n"
        "  endbr64\n"
        "  cmpq $-1, %rdi\n"
        "  je 1f\n"
        "  testq %rdi, %rdi\n"
        "  je 1f\n"
        "  movq (%rsp), %rdx\n"
        "  jmp ctpd_dlsym_by_handle\n"
        "1:\n"
        "  movq ctpd_real_dlsym(%rip), %rax\n"
        "  testq %rax, %rax\n"
        "  jz 2f\n"
        "  jmp *%rax\n"
        "2:\n"
        "  pushq %rdi\n"
        "  pushq %rsi\n"
        "  subq $8, %rsp\n"
        "  call ctpd_resolve_real_dl\n"
        "  addq $8, %rsp\n"
        "  popq %rsi\n"
        "  popq %rdi\n"
        "  testq %rax, %rax\n"
        "  jz 3f\n"
        "  jmp *%rax\n"
        "3:\n"
        "  ret\n"
        ".size dlsym, .-dlsym\n"
        ".globl dlvsym\n"
        ".type dlvsym, @function\n"
        "dlvsym:\n"
        "  endbr64\n"
        "  cmpq $-1, %rdi\n"
        "  je 1f\n"
        "  testq %rdi, %rdi\n"
        "  je 1f\n"
        "  movq (%rsp), %rcx\n"
        "  jmp ctpd_dlvsym_by_handle\n"
        "1:\n"
        "  movq ctpd_real_dlvsym(%rip), %rax\n"
        "  testq %rax, %rax\n"
        "  jz 2f\n"
        "  jmp *%rax\n"
        "2:\n"
        "  pushq %rdi\n"
        "  pushq %rsi\n"
        "  pushq %rdx\n"
        "  call ctpd_resolve_real_dlvsym\n"
        "  popq %rdx\n"
        "  popq %rsi\n"
        "  popq %rdi\n"
        "  testq %rax, %rax\n"
        "  jz 3f\n"
        "  jmp *%rax\n"
        "3:\n"
        "  ret\n"
        ".size dlvsym, .-dlvsym\n");
#endif
