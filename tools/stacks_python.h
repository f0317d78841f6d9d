/*
 * Python frames of call stacks (format 1.3), for tools/stacks.c: the PYCODE records
 * of one process and the frames of STACK nodes whose pc has CT_STACK_PY.
 */
#ifndef CUTRACE_STACKS_PYTHON_H
#define CUTRACE_STACKS_PYTHON_H

#include "stacks.h"

/* The code objects of one process (a ct_map of stats.h by PYCODE id). */
typedef struct ct_pycodes ct_pycodes;

/* A new empty table; NULL when out of memory. */
ct_pycodes *ct_pycodes_new(void);

/* Frees the table. NULL is ignored. */
void ct_pycodes_free(ct_pycodes *t);

/* Adds a code object (a repeated id keeps its first definition). Returns 0, or -1
 * when out of memory. */
int ct_pycodes_add(ct_pycodes *t, uint64_t id, const char *file, const char *qualname,
                   uint64_t first_line);

/* A new frame for Python pc (CT_STACK_PY set): function the qualified name, file the
 * code's file, line the pc's, note ct_stacks_python_note; strings malloc'd (freed
 * with the frame by tools/stacks.c). NULL when out of memory. */
ct_frame *ct_pycodes_frame(ct_pycodes *t, uint64_t pc);

#endif
