/*
 * Python frames of call stacks (stacks_python.h): the PYCODE records of a process,
 * by id, and the frames their STACK nodes become.
 */
#include "stacks_python.h"

#include <stdlib.h>
#include <string.h>

#include "stats.h"

const char ct_stacks_python_note[] = "python";

/* A code object's names, in a map keyed by its PYCODE id (8 bytes). */
typedef struct code_val {
  char *file, *qualname; /* NULL: not defined (a lookup made the slot) */
  uint64_t first_line;
} code_val;

struct ct_pycodes {
  ct_map *m;
};

int ct_frame_is_python(const char *note) {
  return note && (note == ct_stacks_python_note || !strcmp(note, ct_stacks_python_note));
}

int ct_stacks_is_python_library(const char *file) {
  if (!file || !*file) return 1;
  if (!strncmp(file, "<frozen ", 8)) return 1;
  if (strstr(file, "/site-packages/") || strstr(file, "/dist-packages/")) return 1;
  const char *lib = strstr(file, "/lib/python3."); /* the standard library: .../lib/python3.N/x.py */
  return lib != NULL;
}

ct_pycodes *ct_pycodes_new(void) {
  ct_pycodes *t = calloc(1, sizeof *t);
  if (t && !(t->m = ct_map_new(sizeof(code_val)))) {
    free(t);
    return NULL;
  }
  return t;
}

void ct_pycodes_free(ct_pycodes *t) {
  if (!t) return;
  for (size_t i = 0; i < ct_map_count(t->m); i++) {
    code_val *c = ct_map_entry(t->m, i, NULL, NULL);
    free(c->file);
    free(c->qualname);
  }
  ct_map_free(t->m);
  free(t);
}

int ct_pycodes_add(ct_pycodes *t, uint64_t id, const char *file, const char *qualname,
                   uint64_t first_line) {
  code_val *c = id ? ct_map_get(t->m, &id, sizeof id, NULL) : NULL;
  if (!id || (c && c->file)) return 0;
  if (!c) return -1;
  char *f = strdup(file ? file : ""), *q = strdup(qualname && *qualname ? qualname : "?");
  if (!f || !q) {
    free(f);
    free(q);
    return -1;
  }
  *c = (code_val){f, q, first_line};
  return 0;
}

ct_frame *ct_pycodes_frame(ct_pycodes *t, uint64_t pc) {
  uint64_t id = CT_STACK_PY_CODE(pc);
  const code_val *c = t ? ct_map_get(t->m, &id, sizeof id, NULL) : NULL;
  if (c && !c->file) c = NULL;
  ct_frame *f = calloc(1, sizeof *f);
  if (!f) return NULL;
  f->pc = pc;
  f->module = "";
  f->note = ct_stacks_python_note;
  f->function = strdup(c ? c->qualname : "?");
  f->file = strdup(c ? c->file : "");
  f->symbol = strdup("");
  unsigned line = (unsigned)CT_STACK_PY_LINE(pc);
  f->line = line == CT_STACK_PY_LINE_MAX ? 0 : line;
  if (!f->function || !f->file || !f->symbol) {
    free((char *)f->function);
    free((char *)f->file);
    free((char *)f->symbol);
    free(f);
    return NULL;
  }
  return f;
}
