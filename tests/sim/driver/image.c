/* Reads the size of a global from a module image, so that cuModuleGetGlobal can
 * report it. Handles a bare ELF image and a fat binary holding uncompressed ELF
 * images (found by their magic); compressed or PTX-only images give 0. */
#include "sim.h"

#include <elf.h>
#include <string.h>

#define FATBIN_MAGIC 0xBA55ED50u
#define FATBIN_HEADER_SIZE 16
#define FATBIN_MAX_SCAN ((size_t)256 << 20)

/* Size of symbol `name` in the ELF64 image at [p, p + len), or 0. */
static size_t elf_symbol_size(const unsigned char *p, size_t len, const char *name)
{
  if (len < sizeof(Elf64_Ehdr) || memcmp(p, ELFMAG, SELFMAG) != 0 || p[EI_CLASS] != ELFCLASS64)
    return 0;
  Elf64_Ehdr eh;
  memcpy(&eh, p, sizeof eh);
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff >= len
      || eh.e_shnum > (len - eh.e_shoff) / sizeof(Elf64_Shdr))
    return 0;
  for (unsigned i = 0; i < eh.e_shnum; i++) {
    Elf64_Shdr sh, strsh;
    memcpy(&sh, p + eh.e_shoff + i * sizeof sh, sizeof sh);
    if (sh.sh_type != SHT_SYMTAB || sh.sh_link >= eh.e_shnum || sh.sh_entsize != sizeof(Elf64_Sym))
      continue;
    memcpy(&strsh, p + eh.e_shoff + sh.sh_link * sizeof strsh, sizeof strsh);
    if (sh.sh_offset > len || sh.sh_size > len - sh.sh_offset || strsh.sh_offset > len
        || strsh.sh_size > len - strsh.sh_offset)
      return 0;
    const char *strings = (const char *)p + strsh.sh_offset;
    for (size_t off = 0; off + sizeof(Elf64_Sym) <= sh.sh_size; off += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      memcpy(&sym, p + sh.sh_offset + off, sizeof sym);
      if (sym.st_name >= strsh.sh_size)
        continue;
      const char *sym_name = strings + sym.st_name;
      size_t room = strsh.sh_size - sym.st_name;
      if (strnlen(sym_name, room) < room && strcmp(sym_name, name) == 0 && sym.st_size)
        return (size_t)sym.st_size;
    }
  }
  return 0;
}

size_t sim_image_symbol_size(const void *image, const char *name)
{
  const unsigned char *p = image;
  if (!p || !name)
    return 0;
  if (memcmp(p, ELFMAG, SELFMAG) == 0)
    return elf_symbol_size(p, FATBIN_MAX_SCAN, name);
  uint32_t magic;
  memcpy(&magic, p, sizeof magic);
  if (magic != FATBIN_MAGIC)
    return 0;
  /* Fat binary: 16-byte header whose last 8 bytes are the size of the rest. */
  uint64_t fat_size;
  memcpy(&fat_size, p + 8, sizeof fat_size);
  if (fat_size > FATBIN_MAX_SCAN)
    return 0;
  size_t end = FATBIN_HEADER_SIZE + (size_t)fat_size;
  for (size_t i = FATBIN_HEADER_SIZE; i + SELFMAG <= end; i += 8) {
    if (memcmp(p + i, ELFMAG, SELFMAG) != 0)
      continue;
    size_t size = elf_symbol_size(p + i, end - i, name);
    if (size)
      return size;
  }
  return 0;
}
