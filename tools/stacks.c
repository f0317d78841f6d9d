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

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "stacks_python.h"

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
  ct_pycodes *py; /* PYCODE records (format 1.3), made on the first */
};

static const ct_frame unknown_frame = {0, 0, "?", "", 0, "", NULL, 0, "", NULL};

/* Frees a frame and the frames it was inlined into. */
static void free_chain(ct_frame *f) {
  while (f) {
    ct_frame *next = (ct_frame *)f->inlined_in;
    free((char *)f->function);
    free((char *)f->file);
    free((char *)f->symbol);
    free(f);
    f = next;
  }
}

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
  for (size_t i = 0; i < s->capframes; i++) free_chain(s->frames[i].frame);
  free(s->mods);
  free(s->nodes);
  free(s->frames);
  free(s->exe);
  ct_pycodes_free(s->py);
  free(s);
}

int ct_stacks_add_pycode(ct_stacks *s, const struct ct_pycode *code, const char *file,
                         const char *qualname) {
  if (!s->py && !(s->py = ct_pycodes_new())) return -1;
  return ct_pycodes_add(s->py, code->id, file, qualname, code->first_line);
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
  uint64_t seen[256];
  unsigned n = 0;
  for (const node_slot *nd = find_node(s, id); nd && n < max; nd = find_node(s, nd->parent)) {
    for (unsigned i = 0; i < n && i < 256; i++) /* a cycle (a damaged or hand-made file) */
      if (seen[i] == nd->id) return n;
    if (n < 256) seen[n] = nd->id;
    pcs[n++] = nd->pc;
  }
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
    if (s->nmods) qsort(s->mods, s->nmods, sizeof *s->mods, cmp_module); /* mods NULL when none */
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

/* A string attribute of die, following DW_AT_abstract_origin / DW_AT_specification. */
static const char *die_string(Dwarf_Die *die, unsigned name) {
  Dwarf_Attribute a;
  return dwarf_attr_integrate(die, name, &a) ? dwarf_formstring(&a) : NULL;
}

/* The raw (linkage, else plain) name of a function's DIE, or NULL. */
static const char *die_symbol(Dwarf_Die *die) {
  const char *n = die_string(die, DW_AT_linkage_name);
  if (!n) n = die_string(die, DW_AT_MIPS_linkage_name);
  return n ? n : die_string(die, DW_AT_name);
}

/* Sets a frame's names from a raw symbol (demangled for display). */
static void set_names(ct_frame *f, const char *raw) {
  char buf[1024];
  f->symbol = strdup(raw ? raw : "");
  f->function = raw ? strdup(ct_demangle(raw, buf, sizeof buf)) : NULL;
}

/* A new frame at pc in module md's file, sharing its module fields with like. */
static ct_frame *frame_like(const ct_frame *like) {
  ct_frame *f = calloc(1, sizeof *f);
  if (!f) return NULL;
  f->pc = like->pc;
  f->offset = like->offset;
  f->module = like->module;
  f->cuda = like->cuda;
  return f;
}

/*
 * The inlined calls at addr, from the DWARF scopes (innermost first): each inlined
 * subroutine becomes a frame above f, and the line of the call to it (DW_AT_call_file,
 * DW_AT_call_line) becomes the line of the frame it was inlined into. On return f is
 * the physical function's frame, its file and line those of the outermost inlined
 * call; *head the innermost frame (f when nothing was inlined).
 */
static void inline_frames(Dwfl_Module *mod, Dwarf_Addr addr, ct_frame *f, ct_frame **head) {
  *head = f;
  Dwarf_Addr bias;
  Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, &bias);
  Dwarf_Die *scopes = NULL;
  int n = cu ? dwarf_getscopes(cu, addr - bias, &scopes) : 0;
  Dwarf_Files *files = NULL;
  size_t nfiles = 0;
  ct_frame *last = NULL; /* the innermost-but-one built so far */
  for (int i = 0; i < n; i++) {
    int tag = dwarf_tag(&scopes[i]);
    if (tag == DW_TAG_subprogram) break;
    if (tag != DW_TAG_inlined_subroutine) continue;
    ct_frame *in = frame_like(f);
    if (!in) break;
    set_names(in, die_symbol(&scopes[i]));
    in->file = (char *)f->file; /* the line table's line belongs to the inlined code */
    in->line = f->line;
    f->file = NULL;
    f->line = 0;
    Dwarf_Attribute a;
    Dwarf_Word file_idx = 0, line = 0;
    if (!files) dwarf_getsrcfiles(cu, &files, &nfiles);
    if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &a), &file_idx) == 0 && files &&
        file_idx < nfiles) {
      const char *src = dwarf_filesrc(files, file_idx, NULL, NULL);
      f->file = src ? strdup(src) : NULL;
    }
    if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &a), &line) == 0)
      f->line = (unsigned)line;
    if (last) last->inlined_in = in;
    else *head = in;
    last = in;
  }
  if (last) last->inlined_in = f;
  free(scopes);
}

/* Whether a function belongs to the CUDA runtime or libraries linked statically into
 * the program (nvcc's default static cudart, libcublas_static): the runtime's API
 * (cudaLaunchKernel, cudaMemcpyAsync, ...), its internals (cudart::..., __cudart*), the
 * driver API and cuBLAS entry points. */
static int is_cuda_function(const char *fn) {
  if (!strncmp(fn, "cudart::", 8) || !strncmp(fn, "__cuda", 6) || !strncmp(fn, "cublas", 6))
    return 1;
  if (!strncmp(fn, "cuda", 4) && fn[4] >= 'A' && fn[4] <= 'Z') return 1;
  return fn[0] == 'c' && fn[1] == 'u' && fn[2] >= 'A' && fn[2] <= 'Z';
}

/* The frames at pc (f->pc set, innermost returned) from the modules. Strings malloc'd. */
static ct_frame *symbolise(ct_stacks *s, ct_frame *f) {
  module *md = find_module(s, f->pc);
  if (!md) {
    f->function = printf_dup("%s0x%llx", "", f->pc);
    return f;
  }
  f->module = module_file(s, md);
  f->offset = f->pc - md->bias;
  f->cuda = ct_stacks_is_cuda_module(f->module);
  open_module(s, md);
  if (md->state != MOD_OK) {
    f->note = md->state == MOD_MISMATCH ? "build-id mismatch" : "file missing";
    f->function = printf_dup("%s+0x%llx", base_name(f->module), f->offset);
    return f;
  }
  GElf_Addr addr = f->pc ? f->pc - 1 : 0;
  GElf_Off off;
  GElf_Sym sym;
  set_names(f, dwfl_module_addrinfo(md->mod, addr, &off, &sym, NULL, NULL, NULL));
  if (!f->function) f->function = printf_dup("%s+0x%llx", base_name(f->module), f->offset);
  Dwfl_Line *line = dwfl_module_getsrc(md->mod, addr);
  int lineno = 0;
  const char *src = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
  if (src) {
    f->file = strdup(src);
    f->line = lineno > 0 ? (unsigned)lineno : 0;
  }
  ct_frame *head;
  inline_frames(md->mod, addr, f, &head);
  for (ct_frame *x = head; x; x = (ct_frame *)x->inlined_in) {
    if (!x->function) x->function = strdup("?");
    /* nvcc's generated launch stubs (__device_stub_*, in <name>.cudafe1.stub.c), the
     * toolkit's inline launch helpers (crt headers, __cuda...) and a static runtime sit
     * between the program's launch and the driver: fold them with the libraries */
    if (!strncmp(x->function, "__device_stub_", 14) || is_cuda_function(x->function) ||
        (x->file && (strstr(x->file, ".stub.c") || strstr(x->file, "/include/crt/"))))
      x->cuda = 1;
  }
  return head;
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
  ct_frame *head;
  if (pc & CT_STACK_PY) { /* a Python frame (format 1.3) */
    if (!(head = ct_pycodes_frame(s->py, pc))) return &unknown_frame;
    s->frames[j] = (frame_slot){pc, head};
    s->nframes++;
    return head;
  }
  ct_frame *f = calloc(1, sizeof *f);
  if (!f) return &unknown_frame;
  f->pc = pc;
  f->module = "";
  head = symbolise(s, f);
  for (ct_frame *x = head; x; x = (ct_frame *)x->inlined_in) {
    if (!x->function) x->function = strdup("?");
    if (!x->file) x->file = strdup("");
    if (!x->symbol) x->symbol = strdup("");
    if (!x->function || !x->file || !x->symbol) {
      free_chain(head);
      return &unknown_frame;
    }
  }
  s->frames[j] = (frame_slot){pc, head};
  s->nframes++;
  return head;
}

/* Whether symbol is the host function of the kernel that the launch stub whose
 * (demangled) function is stub launches: "__device_stub__Z6kernelPf(float*)" launches
 * "_Z6kernelPf", "__device_stub__kernel(float*)" launches "kernel". */
static int is_stub_kernel(const char *stub, const char *symbol) {
  if (strncmp(stub, "__device_stub__", 15) || !*symbol) return 0;
  const char *k = stub + 15, *paren = strchr(k, '(');
  size_t n = paren ? (size_t)(paren - k) : strlen(k);
  if (symbol[0] == '_' && symbol[1] == 'Z' && k[0] == 'Z') symbol++;
  return n && strlen(symbol) == n && !strncmp(symbol, k, n);
}

unsigned ct_stacks_resolve(ct_stacks *s, uint64_t id, const ct_frame **frames, unsigned max,
                           unsigned *site) {
  uint64_t pcs[256];
  unsigned npc = ct_stacks_walk(s, id, pcs, max < 256 ? max : 256), n = 0;
  const char *stub = "";
  unsigned py_any = UINT32_MAX, py_user = UINT32_MAX; /* innermost Python frames */
  *site = UINT32_MAX;
  for (unsigned i = 0; i < npc && n < max; i++) {
    for (const ct_frame *fr = ct_stacks_symbol(s, pcs[i]); fr && n < max; fr = fr->inlined_in) {
      frames[n] = fr;
      if (ct_frame_is_python(fr->note)) {
        if (py_any == UINT32_MAX) py_any = n;
        if (py_user == UINT32_MAX && !ct_stacks_is_python_library(fr->file)) py_user = n;
      }
      if (!strncmp(fr->function, "__device_stub__", 15)) stub = fr->function;
      int folded = fr->cuda || is_stub_kernel(stub, fr->symbol);
      if (*site == UINT32_MAX && !folded) *site = n;
      n++;
    }
  }
  if (py_any != UINT32_MAX) *site = py_user != UINT32_MAX ? py_user : py_any;
  if (*site == UINT32_MAX) *site = n;
  return n;
}
