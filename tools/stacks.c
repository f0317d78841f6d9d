/*
 * Call stacks of one traced process and their offline symbolisation (stacks.h).
 *
 * Each MODULE gets its own libdwfl session, opened on its first lookup: the file is
 * reported at the module's load bias (dwfl_report_elf with add_p_vaddr false places
 * an ET_DYN file at that base; an ET_EXEC file keeps its own addresses), its GNU
 * build-id compared with the recorded one, and the debug information found by
 * dwfl_standard_find_debuginfo (the file itself, .gnu_debuglink, /usr/lib/debug).
 * Facts from elfutils' libdwfl.h.
 */
#include "stacks.h"

#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

enum module_state { MOD_UNTRIED, MOD_OK, MOD_MISSING, MOD_MISMATCH };

typedef struct module {
  uint64_t start, end, bias;
  char *path, *build_id;
  enum module_state state;
  Dwfl *dwfl;
  Dwfl_Module *mod;
} module;

typedef struct node_slot {
  uint64_t id, parent, pc; /* id 0 = empty */
} node_slot;

typedef struct frame_slot {
  uint64_t pc;
  ct_frame *frame; /* NULL = empty */
} frame_slot;

struct ct_stacks {
  node_slot *nodes;
  size_t nnodes, capnodes;
  module *mods;
  size_t nmods, capmods;
  int mods_sorted;
  frame_slot *frames;
  size_t nframes, capframes;
  char *exe;
};

static const ct_frame unknown_frame = {0, 0, "?", "", 0, "", NULL, 0};

static size_t hash_u64(uint64_t v, size_t cap) {
  return (size_t)((v * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
}

ct_stacks *ct_stacks_new(void) { return calloc(1, sizeof(ct_stacks)); }

void ct_stacks_free(ct_stacks *s) {
  if (!s) return;
  for (size_t i = 0; i < s->nmods; i++) {
    if (s->mods[i].dwfl) dwfl_end(s->mods[i].dwfl);
    free(s->mods[i].path);
    free(s->mods[i].build_id);
  }
  for (size_t i = 0; i < s->capframes; i++) {
    ct_frame *f = s->frames[i].frame;
    if (!f) continue;
    free((char *)f->function);
    free((char *)f->file);
    free(f);
  }
  free(s->mods);
  free(s->nodes);
  free(s->frames);
  free(s->exe);
  free(s);
}

void ct_stacks_set_exe(ct_stacks *s, const char *exe) {
  free(s->exe);
  s->exe = exe && *exe ? strdup(exe) : NULL;
}

size_t ct_stacks_nodes(const ct_stacks *s) { return s->nnodes; }
size_t ct_stacks_modules(const ct_stacks *s) { return s->nmods; }

/* ---- nodes ------------------------------------------------------------------------ */

static const node_slot *find_node(const ct_stacks *s, uint64_t id) {
  if (!id || !s->capnodes) return NULL;
  for (size_t i = hash_u64(id, s->capnodes); s->nodes[i].id; i = (i + 1) & (s->capnodes - 1))
    if (s->nodes[i].id == id) return &s->nodes[i];
  return NULL;
}

int ct_stacks_add_node(ct_stacks *s, const struct ct_stack *node) {
  if (!node->id || find_node(s, node->id)) return 0;
  if ((s->nnodes + 1) * 2 > s->capnodes) {
    size_t ncap = s->capnodes ? s->capnodes * 2 : 256;
    node_slot *na = calloc(ncap, sizeof *na);
    if (!na) return -1;
    for (size_t i = 0; i < s->capnodes; i++) {
      if (!s->nodes[i].id) continue;
      size_t j = hash_u64(s->nodes[i].id, ncap);
      while (na[j].id) j = (j + 1) & (ncap - 1);
      na[j] = s->nodes[i];
    }
    free(s->nodes);
    s->nodes = na;
    s->capnodes = ncap;
  }
  size_t j = hash_u64(node->id, s->capnodes);
  while (s->nodes[j].id) j = (j + 1) & (s->capnodes - 1);
  s->nodes[j] = (node_slot){node->id, node->parent, node->pc};
  s->nnodes++;
  return 0;
}

unsigned ct_stacks_walk(const ct_stacks *s, uint64_t id, uint64_t *pcs, unsigned max) {
  unsigned n = 0;
  /* a path longer than the node count loops (a damaged or hand-made file) */
  for (const node_slot *nd = find_node(s, id); nd && n < max && n <= s->nnodes;
       nd = find_node(s, nd->parent))
    pcs[n++] = nd->pc;
  return n;
}

/* ---- modules ---------------------------------------------------------------------- */

int ct_stacks_add_module(ct_stacks *s, const struct ct_module *m, const char *path,
                         const char *build_id) {
  if (m->end <= m->start) return 0;
  for (size_t i = 0; i < s->nmods; i++) /* the same mapping written again */
    if (s->mods[i].start == m->start && s->mods[i].end == m->end) return 0;
  if (s->nmods == s->capmods) {
    size_t ncap = s->capmods ? s->capmods * 2 : 32;
    module *nm = realloc(s->mods, ncap * sizeof *nm);
    if (!nm) return -1;
    s->mods = nm;
    s->capmods = ncap;
  }
  module *md = &s->mods[s->nmods];
  memset(md, 0, sizeof *md);
  md->start = m->start;
  md->end = m->end;
  md->bias = m->bias;
  md->path = strdup(path ? path : "");
  md->build_id = strdup(build_id ? build_id : "");
  if (!md->path || !md->build_id) {
    free(md->path);
    free(md->build_id);
    return -1;
  }
  s->nmods++;
  s->mods_sorted = 0;
  return 0;
}

static int cmp_module(const void *a, const void *b) {
  const module *x = a, *y = b;
  return x->start < y->start ? -1 : x->start > y->start;
}

static module *find_module(ct_stacks *s, uint64_t pc) {
  if (!s->mods_sorted) {
    qsort(s->mods, s->nmods, sizeof *s->mods, cmp_module);
    s->mods_sorted = 1;
  }
  size_t lo = 0, hi = s->nmods; /* the last module starting at or below pc */
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (s->mods[mid].start <= pc) lo = mid + 1;
    else hi = mid;
  }
  return lo && pc < s->mods[lo - 1].end ? &s->mods[lo - 1] : NULL;
}

/* The file behind a module: its path, or the program's for the main one (""). */
static const char *module_file(const ct_stacks *s, const module *md) {
  return *md->path ? md->path : s->exe ? s->exe : "";
}

int ct_stacks_is_cuda_module(const char *path) {
  static const char *const prefixes[] = {"libcuda.so", "libcudart.so", "libcublas.so",
                                         "libcublasLt.so", "libtrace.so", "libnvToolsExt.so",
                                         "libcufft.so", "libcurand.so", "libcusparse.so",
                                         "libcusolver.so", "libnvrtc.so", "libnvJitLink.so"};
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
    if (!strncmp(base, prefixes[i], strlen(prefixes[i]))) return 1;
  return 0;
}

/* Whether the file's build-id (from libdwfl) is the recorded hex string. */
static int build_id_matches(Dwfl_Module *mod, const char *hex) {
  const unsigned char *bits;
  GElf_Addr vaddr;
  int n = dwfl_module_build_id(mod, &bits, &vaddr);
  if (!*hex) return 1; /* nothing recorded: nothing to compare */
  if (n <= 0 || strlen(hex) != (size_t)n * 2) return 0;
  for (int i = 0; i < n; i++) {
    char two[3];
    snprintf(two, sizeof two, "%02x", bits[i]);
    if (strncasecmp(two, hex + 2 * i, 2)) return 0;
  }
  return 1;
}

static const Dwfl_Callbacks offline_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

/* Opens the module's file in its own libdwfl session, once. */
static void open_module(ct_stacks *s, module *md) {
  if (md->state != MOD_UNTRIED) return;
  md->state = MOD_MISSING;
  const char *file = module_file(s, md);
  if (!*file || *file == '[') return; /* [vdso] and other pseudo files */
  md->dwfl = dwfl_begin(&offline_callbacks);
  if (!md->dwfl) return;
  dwfl_report_begin(md->dwfl);
  md->mod = dwfl_report_elf(md->dwfl, file, file, -1, md->bias, false);
  dwfl_report_end(md->dwfl, NULL, NULL);
  if (!md->mod) return;
  if (dwfl_module_getelf(md->mod, &(GElf_Addr){0}) && !build_id_matches(md->mod, md->build_id)) {
    md->state = MOD_MISMATCH;
    return;
  }
  md->state = MOD_OK;
}

/* ---- symbols ---------------------------------------------------------------------- */

static char *printf_dup(const char *fmt, const char *a, uint64_t b) {
  char buf[600];
  snprintf(buf, sizeof buf, fmt, a, (unsigned long long)b);
  return strdup(buf);
}

static const char *base_name(const char *path) {
  const char *b = strrchr(path, '/');
  return b ? b + 1 : path;
}

/* Fills f for pc (f->pc set) from the modules. Strings are malloc'd. */
static void symbolise(ct_stacks *s, ct_frame *f) {
  module *md = find_module(s, f->pc);
  if (!md) {
    f->function = printf_dup("%s0x%llx", "", f->pc);
    return;
  }
  f->module = module_file(s, md);
  f->offset = f->pc - md->bias;
  f->cuda = ct_stacks_is_cuda_module(f->module);
  open_module(s, md);
  if (md->state != MOD_OK) {
    f->note = md->state == MOD_MISMATCH ? "build-id mismatch" : "file missing";
    f->function = printf_dup("%s+0x%llx", base_name(f->module), f->offset);
    return;
  }
  GElf_Addr addr = f->pc ? f->pc - 1 : 0;
  GElf_Off off;
  GElf_Sym sym;
  const char *name = dwfl_module_addrinfo(md->mod, addr, &off, &sym, NULL, NULL, NULL);
  if (name) {
    char buf[1024];
    f->function = strdup(ct_demangle(name, buf, sizeof buf));
  } else {
    f->function = printf_dup("%s+0x%llx", base_name(f->module), f->offset);
  }
  Dwfl_Line *line = dwfl_module_getsrc(md->mod, addr);
  int lineno = 0;
  const char *src = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
  if (src) {
    f->file = strdup(src);
    f->line = lineno > 0 ? (unsigned)lineno : 0;
  }
  /* nvcc's generated launch stubs (__device_stub__*, in <name>.cudafe1.stub.c) sit
   * between the program's launch and the runtime: fold them with the libraries */
  if (name && (!strncmp(name, "__device_stub_", 14) || (src && strstr(src, ".stub.c"))))
    f->cuda = 1;
}

const ct_frame *ct_stacks_symbol(ct_stacks *s, uint64_t pc) {
  if ((s->nframes + 1) * 2 > s->capframes) {
    size_t ncap = s->capframes ? s->capframes * 2 : 256;
    frame_slot *na = calloc(ncap, sizeof *na);
    if (!na) return &unknown_frame;
    for (size_t i = 0; i < s->capframes; i++) {
      if (!s->frames[i].frame) continue;
      size_t j = hash_u64(s->frames[i].pc, ncap);
      while (na[j].frame) j = (j + 1) & (ncap - 1);
      na[j] = s->frames[i];
    }
    free(s->frames);
    s->frames = na;
    s->capframes = ncap;
  }
  size_t j = hash_u64(pc, s->capframes);
  for (; s->frames[j].frame; j = (j + 1) & (s->capframes - 1))
    if (s->frames[j].pc == pc) return s->frames[j].frame;
  ct_frame *f = calloc(1, sizeof *f);
  if (!f) return &unknown_frame;
  f->pc = pc;
  f->module = "";
  symbolise(s, f);
  if (!f->function) f->function = strdup("?");
  if (!f->file) f->file = strdup("");
  if (!f->function || !f->file) {
    free((char *)f->function);
    free((char *)f->file);
    free(f);
    return &unknown_frame;
  }
  s->frames[j] = (frame_slot){pc, f};
  s->nframes++;
  return f;
}

unsigned ct_stacks_resolve(ct_stacks *s, uint64_t id, const ct_frame **frames, unsigned max,
                           unsigned *site) {
  uint64_t pcs[256];
  unsigned n = ct_stacks_walk(s, id, pcs, max < 256 ? max : 256);
  *site = n;
  for (unsigned i = 0; i < n; i++) {
    frames[i] = ct_stacks_symbol(s, pcs[i]);
    if (*site == n && !frames[i]->cuda) *site = i;
  }
  return n;
}
