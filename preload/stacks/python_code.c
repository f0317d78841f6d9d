/*
 * CPython code objects for Python frames (python_internal.h): checked reads of the
 * interpreter's objects, the process-wide table of code objects and their PYCODE
 * records, and the line-number decoder of co_linetable.
 *
 * Every read here goes through ctpy_read (process_vm_readv on our own pid), so an
 * object that is not what the layout says makes a read fail or a check refuse it,
 * never a fault. These reads run only when a stack is new (the slow path).
 *
 * The line table (CPython's Objects/locations.md, 3.11 to 3.13): a sequence of
 * entries, each a first byte 1CCCCLLL (bit 7 set; C the code; L+1 the number of
 * 2-byte code units the entry covers) and then, by code:
 *   0-9    short form: one more byte (columns); the line does not change
 *   10-12  one-line form: the line changes by C-10; two more bytes (columns)
 *   13     no columns: a signed varint line delta
 *   14     long form: a signed varint line delta, then 3 varints (end line delta,
 *          column, end column)
 *   15     no location: the line is not changed, the entry has none
 * Varints are 6-bit groups, least significant first, bit 6 set on all but the last;
 * a signed varint holds (abs << 1) | sign. Lines start at co_firstlineno. This file
 * implements that description; it does not copy CPython's code.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/core.h"
#include "python_internal.h"

#define MAX_STR_CHARS 1024    /* longer file names and qualified names are cut */
#define MAX_TABLE_BYTES 65536 /* longer line tables: the line is unknown */

struct ctpy_interp ctpy;

struct code_entry {
  uint64_t code, filename, qualname; /* the object and the two it points to; 0 = empty */
  int64_t first_line;
  uint64_t units;                    /* Py_SIZE: 2-byte code units */
  uint64_t id, file_sid, qual_sid;   /* PYCODE id and its strings */
};

static struct code_entry *codes;
static size_t code_mask, code_count;
static uint64_t next_code_id;

int ctpy_read(uint64_t addr, void *buf, size_t len) {
  struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};
  if (!addr) return -1;
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

int ctpy_read_u64(uint64_t addr, uint64_t *v) { return ctpy_read(addr, v, sizeof *v); }

/* Appends code point c as UTF-8. */
static size_t put_utf8(char *out, size_t at, uint32_t c) {
  if (c < 0x80) {
    out[at++] = (char)c;
  } else if (c < 0x800) {
    out[at++] = (char)(0xc0 | c >> 6);
    out[at++] = (char)(0x80 | (c & 0x3f));
  } else if (c < 0x10000) {
    out[at++] = (char)(0xe0 | c >> 12);
    out[at++] = (char)(0x80 | ((c >> 6) & 0x3f));
    out[at++] = (char)(0x80 | (c & 0x3f));
  } else {
    out[at++] = (char)(0xf0 | (c >> 18 & 0x07));
    out[at++] = (char)(0x80 | ((c >> 12) & 0x3f));
    out[at++] = (char)(0x80 | ((c >> 6) & 0x3f));
    out[at++] = (char)(0x80 | (c & 0x3f));
  }
  return at;
}

/*
 * The string id of str object s (interned for the trace), from its canonical data:
 * compact ASCII (1 byte per character after PyASCIIObject) or compact non-ASCII
 * (1, 2 or 4 bytes per character after PyCompactUnicodeObject, encoded here to UTF-8;
 * its cached UTF-8 copy is not used: another thread may be creating it). Returns 0
 * when s is not a compact str.
 */
static uint64_t read_str(uint64_t s) {
  const struct ctpy_layout *L = &ctpy.L;
  uint64_t type = 0, length = 0;
  uint32_t state = 0;
  if (ctpy_read_u64(s + (uint64_t)L->ob_type, &type) || type != ctpy.str_type ||
      ctpy_read_u64(s + (uint64_t)L->str_length, &length) ||
      ctpy_read(s + (uint64_t)L->str_state, &state, sizeof state))
    return 0;
  unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
  if (!compact || (kind != 1 && kind != 2 && kind != 4) || (ascii && kind != 1)) return 0;
  size_t n = length < MAX_STR_CHARS ? (size_t)length : MAX_STR_CHARS;
  uint8_t raw[MAX_STR_CHARS * 4];
  char out[MAX_STR_CHARS * 4];
  uint64_t data = s + (uint64_t)(ascii ? L->ascii_size : L->compact_size);
  if (n && ctpy_read(data, raw, n * kind)) return 0;
  if (ascii) return ctp_intern_n((const char *)raw, n);
  size_t at = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t c = kind == 1 ? raw[i] : kind == 2 ? ((const uint16_t *)raw)[i] : ((const uint32_t *)raw)[i];
    at = put_utf8(out, at, c > 0x10ffff ? 0xfffd : c);
  }
  return ctp_intern_n(out, at);
}

static void emit_code(const struct code_entry *e) {
  ct_record r;
  r.kind = CT_KIND_PYCODE;
  r.u.pycode = (struct ct_pycode){.id = e->id, .file = e->file_sid, .qualname = e->qual_sid,
                                  .first_line = (uint64_t)(e->first_line > 0 ? e->first_line : 0)};
  ctp_emit(&r);
}

static size_t slot_of(uint64_t code) {
  uint64_t h = code * 0x9e3779b97f4a7c15ull;
  return (size_t)(h ^ (h >> 29));
}

/* Room for one more code: a table at most half full. */
static int reserve_code(void) {
  if (codes && (code_count + 1) * 2 <= code_mask + 1) return 0;
  size_t n = codes ? (code_mask + 1) * 2 : 1024;
  struct code_entry *fresh = calloc(n, sizeof *fresh);
  if (!fresh) return -1;
  for (size_t i = 0; codes && i <= code_mask; i++) {
    if (!codes[i].code) continue;
    size_t j = slot_of(codes[i].code) & (n - 1);
    while (fresh[j].code) j = (j + 1) & (n - 1);
    fresh[j] = codes[i];
  }
  free(codes);
  codes = fresh;
  code_mask = n - 1;
  return 0;
}

/* The entry of code when its object still has the same name, file and first line. */
static struct code_entry *find_code(uint64_t code, uint64_t filename, uint64_t qualname,
                                    int64_t first_line, size_t *free_slot) {
  size_t i = slot_of(code) & code_mask;
  for (; codes[i].code; i = (i + 1) & code_mask)
    if (codes[i].code == code) {
      *free_slot = i; /* a code object freed and another made at its address: replace */
      return codes[i].filename == filename && codes[i].qualname == qualname &&
                     codes[i].first_line == first_line ? &codes[i] : NULL;
    }
  *free_slot = i;
  return NULL;
}

uint64_t ctpy_code_id(uint64_t code, uint64_t *nunits, const char **why) {
  const struct ctpy_layout *L = &ctpy.L;
  uint64_t type = 0, filename = 0, qualname = 0, units = 0;
  int32_t first_line = 0;
  if (ctpy_read_u64(code + (uint64_t)L->ob_type, &type) || type != ctpy.code_type) {
    *why = "a frame's code is not a code object";
    return 0;
  }
  if (ctpy_read_u64(code + (uint64_t)L->co_filename, &filename) ||
      ctpy_read_u64(code + (uint64_t)L->co_qualname, &qualname) ||
      ctpy_read_u64(code + (uint64_t)L->ob_size, &units) ||
      ctpy_read(code + (uint64_t)L->co_firstlineno, &first_line, sizeof first_line)) {
    *why = "a code object cannot be read";
    return 0;
  }
  if (reserve_code() < 0) {
    *why = "out of memory";
    return 0;
  }
  size_t slot;
  struct code_entry *e = find_code(code, filename, qualname, first_line, &slot);
  if (e) {
    *nunits = e->units;
    return e->id;
  }
  uint64_t table = 0, tsize = 0, ttype = 0;
  if (ctpy_read_u64(code + (uint64_t)L->co_linetable, &table) ||
      ctpy_read_u64(table + (uint64_t)L->ob_type, &ttype) || ttype != ctpy.bytes_type ||
      ctpy_read_u64(table + (uint64_t)L->ob_size, &tsize) || units > (1u << 28)) {
    *why = "a code object's line table is not bytes";
    return 0;
  }
  uint64_t file_sid = read_str(filename), qual_sid = read_str(qualname);
  if (!file_sid || !qual_sid) {
    *why = "a code object's file or name is not a str";
    return 0;
  }
  if (!codes[slot].code) code_count++;
  codes[slot] = (struct code_entry){code, filename, qualname, first_line, units,
                                    ++next_code_id, file_sid, qual_sid};
  emit_code(&codes[slot]);
  *nunits = units;
  return codes[slot].id;
}

unsigned ctpy_decode_line(const uint8_t *t, size_t len, int64_t first_line, uint64_t addr) {
  int64_t line = first_line;
  uint64_t start = 0;
  size_t i = 0;
  while (i < len) {
    uint8_t b = t[i++];
    if (!(b & 0x80)) return 0; /* not an entry's first byte: damaged */
    unsigned code = (b >> 3) & 15;
    uint64_t end = start + 2 * ((uint64_t)(b & 7) + 1);
    int64_t delta = 0;
    if (code == 13 || code == 14) { /* a signed varint: the line delta */
      uint64_t v = 0;
      unsigned shift = 0;
      uint8_t c;
      do {
        if (i >= len || shift > 60) return 0;
        c = t[i++];
        v |= (uint64_t)(c & 63) << shift;
        shift += 6;
      } while (c & 64);
      delta = v & 1 ? -(int64_t)(v >> 1) : (int64_t)(v >> 1);
    } else if (code >= 10 && code <= 12) {
      delta = code - 10;
    }
    line += delta;
    if (addr >= start && addr < end) return code == 15 || line <= 0 ? 0 : (unsigned)line;
    while (i < len && !(t[i] & 0x80)) i++; /* the entry's other bytes */
    start = end;
  }
  return 0;
}

unsigned ctpy_code_line(uint64_t code, uint64_t offset) {
  const struct ctpy_layout *L = &ctpy.L;
  uint64_t table = 0, tsize = 0;
  int32_t first_line = 0;
  if (ctpy_read_u64(code + (uint64_t)L->co_linetable, &table) ||
      ctpy_read_u64(table + (uint64_t)L->ob_size, &tsize) ||
      ctpy_read(code + (uint64_t)L->co_firstlineno, &first_line, sizeof first_line) ||
      tsize > MAX_TABLE_BYTES)
    return 0;
  static uint8_t buf[MAX_TABLE_BYTES]; /* the Python lock is held */
  if (tsize && ctpy_read(table + (uint64_t)L->bytes_sval, buf, (size_t)tsize)) return 0;
  return ctpy_decode_line(buf, (size_t)tsize, first_line, offset);
}

void ctpy_codes_rewrite(void) {
  for (size_t i = 0; codes && i <= code_mask; i++)
    if (codes[i].code) emit_code(&codes[i]);
}
