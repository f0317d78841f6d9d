/*
 * libtrace.so as an NVTX v3 injection library.
 *
 * NVTX v3 is header-only: every library that includes nvToolsExt.h carries its own
 * copy of the loader (nvtx3/nvtxDetail/nvtxInit.h). On its first NVTX call it reads
 * NVTX_INJECTION64_PATH, dlopens that path, looks up the exported
 * InitializeInjectionNvtx2 and calls it with its export-table getter; the tool then
 * writes its handlers into the caller's function-pointer slots through
 * GetModuleFunctionTable (nvtxTypes.h, nvtxImpl.h). Slots a tool leaves alone become
 * no-ops. So InitializeInjectionNvtx2 runs once per NVTX-using module.
 *
 * Without the environment variable nothing is loaded on Linux: the dlsym(NULL, ...)
 * search for an already-loaded tool ("InitializeInjectionNvtx2Preinject") is
 * compiled out (NVTX_SUPPORT_ALREADY_INJECTED_LIBRARY is 0 in CUDA 13's headers),
 * and the static-injection pointer InitializeInjectionNvtx2_fnptr is a weak *hidden*
 * symbol of each module, which an LD_PRELOAD object cannot interpose. Hence the
 * constructor below sets NVTX_INJECTION64_PATH to this library's own path.
 *
 * Handled: CORE (Mark, RangeStart/End, RangePush/Pop in A, W and Ex forms) and
 * CORE2 (the domain versions, DomainCreate, DomainRegisterString). Category and
 * thread naming, resources, CUDA/OpenCL object naming and the sync module are left
 * to NVTX's no-ops.
 *
 * Handles given to the program encode string ids: a domain handle is the id of the
 * domain's name (NULL = default domain, NVTX's own meaning), a registered string
 * handle is the string's id. Creating a domain twice with one name gives one handle.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include "nvtx_internal.h"

/* Longest wide-string name kept, in UTF-8 bytes (longer ones are cut). */
#define NVTX_WIDE_NAME_MAX 1024

/* Interns a wide (UTF-32 on Linux) string as UTF-8; 0 for NULL. */
static uint64_t intern_wide(const wchar_t *ws) {
  if (!ws) return 0;
  char buf[NVTX_WIDE_NAME_MAX];
  size_t n = 0;
  for (; *ws; ws++) {
    uint32_t c = (uint32_t)*ws;
    if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) c = 0xFFFD;
    size_t need = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    if (n + need > sizeof buf) break;
    if (need == 1) {
      buf[n++] = (char)c;
    } else if (need == 2) {
      buf[n++] = (char)(0xC0 | (c >> 6));
      buf[n++] = (char)(0x80 | (c & 0x3F));
    } else if (need == 3) {
      buf[n++] = (char)(0xE0 | (c >> 12));
      buf[n++] = (char)(0x80 | ((c >> 6) & 0x3F));
      buf[n++] = (char)(0x80 | (c & 0x3F));
    } else {
      buf[n++] = (char)(0xF0 | (c >> 18));
      buf[n++] = (char)(0x80 | ((c >> 12) & 0x3F));
      buf[n++] = (char)(0x80 | ((c >> 6) & 0x3F));
      buf[n++] = (char)(0x80 | (c & 0x3F));
    }
  }
  return ctp_intern_n(buf, n);
}

/* The string id of an event's message, 0 when it has none. */
static uint64_t message_of(const nvtxEventAttributes_t *attr) {
  if (!attr || attr->size < offsetof(nvtxEventAttributes_t, message) + sizeof attr->message)
    return 0;
  switch (attr->messageType) {
  case NVTX_MESSAGE_TYPE_ASCII:
    return nvtx_intern_name(attr->message.ascii);
  case NVTX_MESSAGE_TYPE_UNICODE:
    return intern_wide(attr->message.unicode);
  case NVTX_MESSAGE_TYPE_REGISTERED:
    return (uint64_t)(uintptr_t)attr->message.registered;
  default:
    return 0;
  }
}

static inline uint64_t domain_of(nvtxDomainHandle_t domain) { return (uint64_t)(uintptr_t)domain; }

void nvtx_mark(uint64_t domain, uint64_t name) {
  if (!ctp_enabled || __atomic_load_n(&ctp_paused, __ATOMIC_RELAXED)) return;
  ct_record rec;
  rec.kind = CT_KIND_MARK;
  rec.nfields = 4;
  rec.str_len = 0;
  rec.str = NULL;
  rec.u.mark.tid = ctp_tid();
  rec.u.mark.domain = domain;
  rec.u.mark.name = name;
  rec.u.mark.ts_ns = ctp_now_ns();
  ctp_emit(&rec);
}

/* ---- CORE module ---- */
/* The handlers leave errno alone: ctp_intern_n and ctp_emit preserve it, and so
 * does the thread-state allocation in nvtx_stack.c. */

static void h_mark_ex(const nvtxEventAttributes_t *attr) { nvtx_mark(0, message_of(attr)); }
static void h_mark_a(const char *message) { nvtx_mark(0, nvtx_intern_name(message)); }
static void h_mark_w(const wchar_t *message) { nvtx_mark(0, intern_wide(message)); }
static nvtxRangeId_t h_range_start_ex(const nvtxEventAttributes_t *attr) {
  return nvtx_range_start(0, message_of(attr));
}
static nvtxRangeId_t h_range_start_a(const char *message) {
  return nvtx_range_start(0, nvtx_intern_name(message));
}
static nvtxRangeId_t h_range_start_w(const wchar_t *message) {
  return nvtx_range_start(0, intern_wide(message));
}
static void h_range_end(nvtxRangeId_t id) { nvtx_range_end(id); }
static int h_range_push_ex(const nvtxEventAttributes_t *attr) {
  return nvtx_range_push(0, message_of(attr));
}
static int h_range_push_a(const char *message) {
  return nvtx_range_push(0, nvtx_intern_name(message));
}
static int h_range_push_w(const wchar_t *message) { return nvtx_range_push(0, intern_wide(message)); }
static int h_range_pop(void) { return nvtx_range_pop(0); }

/* ---- CORE2 module (domains) ---- */

static void h_domain_mark_ex(nvtxDomainHandle_t domain, const nvtxEventAttributes_t *attr) {
  nvtx_mark(domain_of(domain), message_of(attr));
}
static nvtxRangeId_t h_domain_range_start_ex(nvtxDomainHandle_t domain,
                                             const nvtxEventAttributes_t *attr) {
  return nvtx_range_start(domain_of(domain), message_of(attr));
}
static void h_domain_range_end(nvtxDomainHandle_t domain, nvtxRangeId_t id) { nvtx_range_end(id); }
static int h_domain_range_push_ex(nvtxDomainHandle_t domain, const nvtxEventAttributes_t *attr) {
  return nvtx_range_push(domain_of(domain), message_of(attr));
}
static int h_domain_range_pop(nvtxDomainHandle_t domain) {
  return nvtx_range_pop(domain_of(domain));
}
static nvtxStringHandle_t h_domain_register_string_a(nvtxDomainHandle_t domain, const char *s) {
  return (nvtxStringHandle_t)(uintptr_t)ctp_intern(s);
}
static nvtxStringHandle_t h_domain_register_string_w(nvtxDomainHandle_t domain,
                                                     const wchar_t *s) {
  return (nvtxStringHandle_t)(uintptr_t)intern_wide(s);
}
static nvtxDomainHandle_t h_domain_create_a(const char *name) {
  return (nvtxDomainHandle_t)(uintptr_t)ctp_intern(name);
}
static nvtxDomainHandle_t h_domain_create_w(const wchar_t *name) {
  return (nvtxDomainHandle_t)(uintptr_t)intern_wide(name);
}
static void h_domain_destroy(nvtxDomainHandle_t domain) {
  /* Nothing to free: a handle is a string id. */
}

/* ---- installation ---- */

/* Handlers by NvtxCallbackIdCore / NvtxCallbackIdCore2 (NULL: left to NVTX's no-op). */
static NvtxFunctionPointer core_handlers[NVTX_CBID_CORE_SIZE];
static NvtxFunctionPointer core2_handlers[NVTX_CBID_CORE2_SIZE];

#define NVTX_SET(table, id, fn) table[id] = (NvtxFunctionPointer)(fn)

static void fill_handler_tables(void) {
  NVTX_SET(core_handlers, NVTX_CBID_CORE_MarkEx, h_mark_ex);
  NVTX_SET(core_handlers, NVTX_CBID_CORE_MarkA, h_mark_a);
  NVTX_SET(core_handlers, NVTX_CBID_CORE_MarkW, h_mark_w);
  NVTX_SET(core_handlers, NVTX_CBID_CORE_RangeStartEx, h_range_start_ex);
  NVTX_SET(core_handlers, NVTX_CBID_CORE_RangeStartA, h_range_start_a);
  NVTX_SET(core_handlers, NVTX_CBID_CORE_RangeStartW, h_range_start_w);
  NVTX_SET(core_handlers, NVTX_CBID_CORE_RangeEnd, h_range_end);
  NVTX_SET(core_handlers, NVTX_CBID_CORE_RangePushEx, h_range_push_ex);
  NVTX_SET(core_handlers, NVTX_CBID_CORE_RangePushA, h_range_push_a);
  NVTX_SET(core_handlers, NVTX_CBID_CORE_RangePushW, h_range_push_w);
  NVTX_SET(core_handlers, NVTX_CBID_CORE_RangePop, h_range_pop);

  NVTX_SET(core2_handlers, NVTX_CBID_CORE2_DomainMarkEx, h_domain_mark_ex);
  NVTX_SET(core2_handlers, NVTX_CBID_CORE2_DomainRangeStartEx, h_domain_range_start_ex);
  NVTX_SET(core2_handlers, NVTX_CBID_CORE2_DomainRangeEnd, h_domain_range_end);
  NVTX_SET(core2_handlers, NVTX_CBID_CORE2_DomainRangePushEx, h_domain_range_push_ex);
  NVTX_SET(core2_handlers, NVTX_CBID_CORE2_DomainRangePop, h_domain_range_pop);
  NVTX_SET(core2_handlers, NVTX_CBID_CORE2_DomainRegisterStringA, h_domain_register_string_a);
  NVTX_SET(core2_handlers, NVTX_CBID_CORE2_DomainRegisterStringW, h_domain_register_string_w);
  NVTX_SET(core2_handlers, NVTX_CBID_CORE2_DomainCreateA, h_domain_create_a);
  NVTX_SET(core2_handlers, NVTX_CBID_CORE2_DomainCreateW, h_domain_create_w);
  NVTX_SET(core2_handlers, NVTX_CBID_CORE2_DomainDestroy, h_domain_destroy);
}

/*
 * Writes handlers[1..count-1] into the caller's table of module. Returns 1 when the
 * module exists in the caller's NVTX (an older NVTX may lack CORE2), else 0.
 */
static int install_module(const NvtxExportTableCallbacks *callbacks, NvtxCallbackModule module,
                          const NvtxFunctionPointer *handlers, unsigned count) {
  NvtxFunctionTable table = NULL;
  unsigned int size = 0;
  if (!callbacks->GetModuleFunctionTable(module, &table, &size) || !table) return 0;
  /* size counts the slots 0..size-1 (slot 0 unused); the caller may be older or newer. */
  for (unsigned id = 1; id < size && id < count; id++) {
    if (handlers[id] && table[id]) *table[id] = handlers[id];
  }
  return 1;
}

static pthread_once_t handlers_once = PTHREAD_ONCE_INIT;

/* 0 when CUTRACE_NVTX=0 asks to leave NVTX alone; another value than 0 or 1 gets one
 * line on stderr (once, unless CUTRACE_QUIET is set to anything but 0/no) and counts as 1. */
static int nvtx_wanted(void) {
  const char *v = getenv("CUTRACE_NVTX");
  if (!v || !*v || !strcmp(v, "1")) return 1;
  if (!strcmp(v, "0")) return 0;
  static int warned;
  if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
    ctp_warn("CUTRACE_NVTX='%.64s' is not 0 or 1; using 1", v);
  return 1;
}

/*
 * The NVTX injection entry point, called by each NVTX-using module on its first
 * NVTX call. Installs the range and mark handlers and returns 1, or returns 0
 * (NVTX then turns every call of that module into a no-op) when tracing is off or
 * CUTRACE_NVTX=0.
 */
CTP_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  int saved_errno = errno;
  int ok = 0;
  if (get_export_table && nvtx_wanted() && ctp_start()) {
    const NvtxExportTableCallbacks *callbacks = get_export_table(NVTX_ETID_CALLBACKS);
    if (callbacks && callbacks->struct_size >= sizeof *callbacks &&
        callbacks->GetModuleFunctionTable) {
      nvtx_ranges_init();
      pthread_once(&handlers_once, fill_handler_tables);
      ok = install_module(callbacks, NVTX_CB_MODULE_CORE, core_handlers, NVTX_CBID_CORE_SIZE);
      install_module(callbacks, NVTX_CB_MODULE_CORE2, core2_handlers, NVTX_CBID_CORE2_SIZE);
      const NvtxExportTableVersionInfo *version = get_export_table(NVTX_ETID_VERSIONINFO);
      if (version && version->struct_size >= sizeof *version && version->SetInjectionNvtxVersion)
        version->SetInjectionNvtxVersion(NVTX_VERSION);
    }
  }
  errno = saved_errno;
  return ok;
}

/*
 * Points NVTX_INJECTION64_PATH at this library (absolute path, found with dladdr) so
 * that every NVTX-using module of a plain LD_PRELOAD run loads it, unless the
 * variable is already set (another tool, or `cutrace record`), CUTRACE_NVTX=0, or
 * tracing is off. Runs from libtrace.so's constructors; ctp_start is idempotent, so
 * the order against the core's constructor does not matter.
 */
__attribute__((constructor)) static void nvtx_point_injection_here(void) {
  int saved_errno = errno;
  if (!getenv("NVTX_INJECTION64_PATH") && nvtx_wanted() && ctp_start()) {
    Dl_info info;
    if (dladdr((void *)InitializeInjectionNvtx2, &info) && info.dli_fname && info.dli_fname[0]) {
      char *absolute = realpath(info.dli_fname, NULL);
      setenv("NVTX_INJECTION64_PATH", absolute ? absolute : info.dli_fname, 0);
      free(absolute);
    }
  }
  errno = saved_errno;
}
