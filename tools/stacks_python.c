/*
 * Python frames of call stacks (stacks_python.h): the PYCODE records of a process,
 * by id, and the frames their STACK nodes become.
 */
#include "stacks_python.h"

#include <stdlib.h>
#include <string.h>

const char ct_stacks_python_note[] = "python";

typedef struct code_slot {
  uint64_t id; /* 0 = empty */
  char *file, *qualname;
  uint64_t first_line;
} code_slot;

struct ct_pycodes {
  code_slot *slots;
  size_t n, cap;
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

static size_t slot_of(uint64_t id, size_t cap) {
  return (size_t)((id * 0x9E3779B97F4A7C15ull) >> 21) & (cap - 1);
}

ct_pycodes *ct_pycodes_new(void) { return calloc(1, sizeof(ct_pycodes)); }

void ct_pycodes_free(ct_pycodes *t) {
  if (!t) return;
  for (size_t i = 0; i < t->cap; i++) {
    free(t->slots[i].file);
    free(t->slots[i].qualname);
  }
  free(t->slots);
  free(t);
}

static const code_slot *find(const ct_pycodes *t, uint64_t id) {
  if (!id || !t->cap) return NULL;
  for (size_t i = slot_of(id, t->cap); t->slots[i].id; i = (i + 1) & (t->cap - 1))
    if (t->slots[i].id == id) return &t->slots[i];
  return NULL;
}

int ct_pycodes_add(ct_pycodes *t, uint64_t id, const char *file, const char *qualname,
                   uint64_t first_line) {
  if (!id || find(t, id)) return 0;
  if ((t->n + 1) * 2 > t->cap) {
    size_t ncap = t->cap ? t->cap * 2 : 256;
    code_slot *na = calloc(ncap, sizeof *na);
    if (!na) return -1;
    for (size_t i = 0; i < t->cap; i++) {
      if (!t->slots[i].id) continue;
      size_t j = slot_of(t->slots[i].id, ncap);
      while (na[j].id) j = (j + 1) & (ncap - 1);
      na[j] = t->slots[i];
    }
    free(t->slots);
    t->slots = na;
    t->cap = ncap;
  }
  char *f = strdup(file ? file : ""), *q = strdup(qualname && *qualname ? qualname : "?");
  if (!f || !q) {
    free(f);
    free(q);
    return -1;
  }
  size_t j = slot_of(id, t->cap);
  while (t->slots[j].id) j = (j + 1) & (t->cap - 1);
  t->slots[j] = (code_slot){id, f, q, first_line};
  t->n++;
  return 0;
}

ct_frame *ct_pycodes_frame(const ct_pycodes *t, uint64_t pc) {
  const code_slot *c = t ? find(t, CT_STACK_PY_CODE(pc)) : NULL;
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
