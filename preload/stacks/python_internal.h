/*
 * Between python.c (finding the interpreter, walking the thread's frames, merging
 * them into the native stack) and python_code.c (checked reads of CPython objects,
 * PYCODE records, line numbers). Everything here runs on a capture's slow path
 * (a stack not seen before) with the Python lock held, unless said otherwise.
 */
#ifndef CUTRACE_PRELOAD_PYTHON_INTERNAL_H
#define CUTRACE_PRELOAD_PYTHON_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "python_layouts.h"
#include "trace.h"

/* The interpreter found in the process: its layout and type objects. */
struct ctpy_interp {
  struct ctpy_layout L;
  uint64_t version;                     /* Py_Version (PY_VERSION_HEX) */
  uint64_t code_type, str_type, bytes_type; /* &PyCode_Type, &PyUnicode_Type, &PyBytes_Type */
};

extern struct ctpy_interp ctpy CTP_HIDDEN;

/*
 * Copies len bytes at addr of this process into buf without trusting addr
 * (process_vm_readv on our own pid: an unmapped address fails, never faults).
 * Returns 0 when all were read, -1 otherwise. Any thread, no lock.
 */
int ctpy_read(uint64_t addr, void *buf, size_t len) CTP_HIDDEN;

/* ctpy_read of one 8-byte word into *v. */
int ctpy_read_u64(uint64_t addr, uint64_t *v) CTP_HIDDEN;

/*
 * The PYCODE id of code object `code`, checking it first (its type is PyCode_Type,
 * its file and qualified name are str objects, its line table bytes) and writing
 * its PYCODE record the first time (its strings interned); *nunits gets its size in
 * 2-byte code units. Returns 0 and sets *why (a static phrase) when the object does
 * not look like the layout says.
 */
uint64_t ctpy_code_id(uint64_t code, uint64_t *nunits, const char **why) CTP_HIDDEN;

/*
 * The line run at byte offset `offset` of code object `code` (from its location
 * table, Objects/locations.md); 0 when there is none or the table cannot be read.
 * The offset must have been checked against the code's size (ctpy_code_id).
 */
unsigned ctpy_code_line(uint64_t code, uint64_t offset) CTP_HIDDEN;

/*
 * The line of byte offset addr in a location table (co_linetable) whose code starts
 * at first_line: the line of the entry covering addr (-1 = no location gives 0),
 * 0 when none covers it. Pure; any thread.
 */
unsigned ctpy_decode_line(const uint8_t *table, size_t len, int64_t first_line, uint64_t addr)
    CTP_HIDDEN;

/* Writes every known code's PYCODE record again (a fork child). */
void ctpy_codes_rewrite(void) CTP_HIDDEN;

#endif
