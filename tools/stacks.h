/*
 * Call stacks of one traced process, for the cutrace commands: the STACK nodes and
 * MODULE records of a trace file (format 1.1, docs/format.md) kept in a table whose
 * memory follows the unique nodes and modules, never the trace's length, and their
 * offline symbolisation with elfutils' libdwfl (function, file:line where the module
 * has debug information, C++ names demangled).
 *
 * What a frame says when the module's file cannot be used (docs/report.md):
 *   - no module contains the address:    function "0x<pc>", module ""
 *   - the file is missing or unreadable:  function "<module>+0x<offset>"
 *   - its build-id differs from the one
 *     recorded when the process ran:      function "<module>+0x<offset>", note "build-id mismatch"
 * so a report never names a function the traced process did not run.
 */
#ifndef CUTRACE_STACKS_H
#define CUTRACE_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "cutrace/format.h"

/* One symbolised frame. Strings live as long as the table; "" when unknown. */
typedef struct ct_frame {
  uint64_t pc;            /* the address as recorded */
  uint64_t offset;        /* pc - the module's bias (the address in its file) */
  const char *function;   /* demangled function, or a module+offset / 0x address */
  const char *file;       /* source file (full path as in the debug info) */
  unsigned line;          /* 0 when unknown */
  const char *module;     /* the module's path (the program's for the main one) */
  const char *note;       /* NULL, "build-id mismatch" or "file missing" */
  int cuda;               /* in CUDA's own libraries, the tracer, or nvcc's launch stubs */
  const char *symbol;     /* the raw (mangled) name, "" when unknown */
  /* When the code at pc was inlined: the function it was inlined into (the logical
   * caller, at the same pc, with the line of the inlined call); NULL for the function
   * that really holds pc. */
  const struct ct_frame *inlined_in;
} ct_frame;

/* The note of a Python frame (format 1.3): function is its qualified name, file its
 * co_filename, line the line being run, module "". */
extern const char ct_stacks_python_note[];

/* Whether a frame's note marks it as a Python frame. */
int ct_frame_is_python(const char *note);

/* Whether a Python file is library code (the standard library, site-packages,
 * dist-packages, frozen modules), not the program's own. */
int ct_stacks_is_python_library(const char *file);

/* The stack table of one process. */
typedef struct ct_stacks ct_stacks;

/* A new empty table. NULL when out of memory. */
ct_stacks *ct_stacks_new(void);

/* Frees the table, its symbols and its libdwfl sessions. NULL is ignored. */
void ct_stacks_free(ct_stacks *s);

/* Sets the program's path, used for a MODULE record whose path is "" (the main
 * program). */
void ct_stacks_set_exe(ct_stacks *s, const char *exe);

/* Adds a STACK node (a repeated id keeps its first definition). Returns 0, or -1 when
 * out of memory. */
int ct_stacks_add_node(ct_stacks *s, const struct ct_stack *node);

/* Adds a MODULE record with its resolved path and hex build-id ("" when none).
 * Returns 0, or -1 when out of memory. */
int ct_stacks_add_module(ct_stacks *s, const struct ct_module *m, const char *path,
                         const char *build_id);

/* Adds a PYCODE record with its resolved file and qualified name (a repeated id
 * keeps its first definition). Returns 0, or -1 when out of memory. */
int ct_stacks_add_pycode(ct_stacks *s, const struct ct_pycode *code, const char *file,
                         const char *qualname);

/* Number of nodes and modules held. */
size_t ct_stacks_nodes(const ct_stacks *s);
size_t ct_stacks_modules(const ct_stacks *s);

/*
 * The addresses of the stack whose innermost node is id, innermost first, into
 * pcs[0..max). Returns how many were written (0 when id is 0 or unknown); a path
 * that names an unknown node or loops ends there.
 */
unsigned ct_stacks_walk(const ct_stacks *s, uint64_t id, uint64_t *pcs, unsigned max);

/*
 * The symbol of the frame at pc: the innermost logical frame (an inlined function's
 * when the code was inlined; follow inlined_in for the functions it was inlined
 * into). A pc with CT_STACK_PY is a Python frame, named from its PYCODE record
 * (function "?" when that record is missing). Every recorded pc is a return address (the instruction after a call), so the
 * lookup is at pc - 1: the line is the call's, not the next statement's. Cached per
 * address; never NULL (when out of memory a static "?" frame).
 */
const ct_frame *ct_stacks_symbol(ct_stacks *s, uint64_t pc);

/*
 * Symbolises the stack of node id into frames[0..max), innermost first, inlined
 * calls expanded into frames of their own. Returns the count. *site gets the index of
 * the call site: the first frame outside CUDA's own libraries (libcudart, libcuda,
 * libcublas*, ...), the tracer, nvcc's generated launch stubs (__device_stub_*) and
 * the host function of the kernel they launch (the `kernel<<<...>>>` wrapper); the
 * count (no such frame) when every frame is inside them. When the stack has Python
 * frames the call site is the innermost Python frame of the program's own code (not
 * ct_stacks_is_python_library), else the innermost Python frame: the line of the
 * script that called the library, not the library's C++.
 */
unsigned ct_stacks_resolve(ct_stacks *s, uint64_t id, const ct_frame **frames, unsigned max,
                           unsigned *site);

/* Whether a module path is one of CUDA's own libraries or the tracer's (folded). */
int ct_stacks_is_cuda_module(const char *path);

#endif
