/*
 * Looks a symbol up in a loaded object's own ELF tables (.dynsym, .dynstr, the GNU
 * hash table and .gnu.version), the way the dynamic linker does, without calling
 * dlsym: used to find libc's dlsym and dlvsym, which libtrace.so itself exports.
 * Only the default version of a symbol (version index without the hidden bit) is
 * returned. Layout of DT_GNU_HASH: nbuckets, symoffset, bloom size, bloom shift,
 * the bloom words, the buckets, then one hash value per symbol from symoffset on
 * whose low bit marks the end of a chain.
 */
#include <elf.h>
#include <link.h>
#include <string.h>

#include "driver_internal.h"

struct lookup {
  const char *object, *name;
  void *found;
};

CTP_NO_SANITIZE static uint32_t gnu_hash(const char *s) {
  uint32_t h = 5381;
  for (; *s; s++)
    h = h * 33 + (unsigned char)*s;
  return h;
}

/* A d_ptr value as an address (glibc relocates most of them in place already). */
/* strcmp(a, b) == 0, by hand: in a sanitizer build strcmp is one of its runtime's
 * interceptors, not usable while it initialises (see ctpd_elf_default_symbol). */
CTP_NO_SANITIZE static int same_name(const char *a, const char *b) {
  for (; *a && *a == *b; a++, b++) {
  }
  return *a == *b;
}

CTP_NO_SANITIZE static uintptr_t dyn_addr(const struct dl_phdr_info *info, ElfW(Addr) v) {
  return v < info->dlpi_addr ? info->dlpi_addr + v : v;
}

CTP_NO_SANITIZE static void lookup_in(const struct dl_phdr_info *info, const ElfW(Dyn) *dyn, struct lookup *l) {
  const ElfW(Sym) *symtab = NULL;
  const char *strtab = NULL;
  const uint32_t *gnu = NULL;
  const ElfW(Half) *versym = NULL;
  for (; dyn->d_tag != DT_NULL; dyn++) {
    switch (dyn->d_tag) {
    case DT_SYMTAB: symtab = (const ElfW(Sym) *)dyn_addr(info, dyn->d_un.d_ptr); break;
    case DT_STRTAB: strtab = (const char *)dyn_addr(info, dyn->d_un.d_ptr); break;
    case DT_GNU_HASH: gnu = (const uint32_t *)dyn_addr(info, dyn->d_un.d_ptr); break;
    case DT_VERSYM: versym = (const ElfW(Half) *)dyn_addr(info, dyn->d_un.d_ptr); break;
    default: break;
    }
  }
  if (!symtab || !strtab || !gnu)
    return;
  uint32_t nbuckets = gnu[0], symoffset = gnu[1], bloom_size = gnu[2];
  if (!nbuckets)
    return;
  const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(gnu + 4) + bloom_size);
  const uint32_t *chain = buckets + nbuckets;
  uint32_t h = gnu_hash(l->name);
  uint32_t i = buckets[h % nbuckets];
  if (i < symoffset)
    return;
  for (;; i++) {
    uint32_t ch = chain[i - symoffset];
    const ElfW(Sym) *s = &symtab[i];
    if ((ch | 1) == (h | 1) && s->st_shndx != SHN_UNDEF && s->st_value &&
        same_name(strtab + s->st_name, l->name) && (!versym || !(versym[i] & 0x8000))) {
      l->found = (void *)(info->dlpi_addr + s->st_value);
      return;
    }
    if (ch & 1)
      return;
  }
}

#if CTP_TSAN || CTP_ASAN
/*
 * A ThreadSanitizer or AddressSanitizer build (scripts/tsan, scripts/asan): the
 * sanitizer's runtime, while it initialises, looks up every function it intercepts
 * with dlsym(RTLD_NEXT), which is ours, which needs libc's dlsym found here.
 * dl_iterate_phdr is one of their interceptors, not usable yet, so the loaded objects
 * are walked through the dynamic linker's r_debug list instead (no lock: at that
 * point nothing else runs; later calls find the pointers
 * already set). Every function on this path is CTP_NO_SANITIZE.
 */
/* 1 when name ends with "/" object (or is object): strstr is an interceptor too. */
CTP_NO_SANITIZE static int path_names(const char *path, const char *object) {
  const char *base = path;
  for (const char *p = path; *p; p++)
    if (*p == '/')
      base = p + 1;
  return same_name(base, object);
}

CTP_NO_SANITIZE void *ctpd_elf_default_symbol(const char *object, const char *name) {
  struct lookup l = {object, name, NULL};
  for (const struct link_map *m = _r_debug.r_map; m && !l.found; m = m->l_next) {
    if (!m->l_name || !path_names(m->l_name, object) || !m->l_ld)
      continue;
    struct dl_phdr_info info = {.dlpi_addr = m->l_addr, .dlpi_name = m->l_name};
    lookup_in(&info, m->l_ld, &l);
  }
  return l.found;
}
#else
static int visit(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  struct lookup *l = arg;
  if (!info->dlpi_name || !strstr(info->dlpi_name, l->object))
    return 0;
  for (int i = 0; i < info->dlpi_phnum; i++)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
      lookup_in(info, (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr), l);
  return l->found != NULL;
}

void *ctpd_elf_default_symbol(const char *object, const char *name) {
  struct lookup l = {object, name, NULL};
  dl_iterate_phdr(visit, &l);
  return l.found;
}
#endif
