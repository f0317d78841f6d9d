/*
 * The Chrome Trace Event JSON encoder of the export (chrome_internal.h, docs/dump.md).
 *
 * Conventions, after Kineto's output (libkineto/src/output_json.cpp, facts only):
 * complete events ph "X" with ts/dur in microseconds and 3 decimals; flows ph "s" (on
 * the call) and ph "f" with bp "e" (on the GPU work), cat "ac2g", id = correlation;
 * process_name / thread_name metadata with sort indices; counters ph "C"; instant
 * events ph "i" with s "t" (handleGenericInstantEvent's field order); top-level
 * deviceProperties, distributedInfo, displayTimeUnit, baseTimeNanoseconds.
 * Everything goes through the document's output buffer (chrome_out.h): stdio per piece
 * and printf for numbers took most of the export's time.
 */
#include <stdlib.h>
#include <string.h>

#include "chrome_internal.h"
#include "chrome_out.h"
#include "output.h"

/* ---- writing helpers ---------------------------------------------------------------- */

/* Writes lit (e.g. ",\"pid\":") followed by v. */
static inline void put_kv(ct_chrome *c, const char *lit, uint64_t v) {
  chr_put_text(c, lit);
  chr_put_u64(c, v);
}

/* A time in ns as microseconds with 3 decimals. */
static inline void put_us(ct_chrome *c, uint64_t ns) {
  chr_out_commit(c, chr_at_us(chr_out_room(c, 24), ns));
}

/* Writes v as printf's "%.3f" does (ct_fmt_fixed3: without printf). */
static void put_f3(ct_chrome *c, double v) {
  char buf[512];
  int w = ct_fmt_fixed3(v, buf, sizeof buf);
  if (w > 0) chr_put_bytes(c, buf, (size_t)w < sizeof buf ? (size_t)w : sizeof buf - 1);
}

/* Writes v in decimal, with its sign. */
static void put_i64(ct_chrome *c, int64_t v) {
  if (v < 0) chr_put_char(c, '-');
  chr_put_u64(c, v < 0 ? -(uint64_t)v : (uint64_t)v);
}

/* Starts the next event (the separator before it). */
static inline void next_event(ct_chrome *c) {
  if (c->nevents++) chr_put_bytes(c, ",\n", 2);
  else chr_put_char(c, '\n');
}

/* A metadata event: {"ph":"M","name":"what","pid":P,"tid":T,"args":{ */
static void meta_open(ct_chrome *c, const char *what, uint64_t pid, uint64_t tid) {
  next_event(c);
  chr_put_text(c, "{\"ph\":\"M\",\"name\":\"");
  chr_put_text(c, what);
  put_kv(c, "\",\"pid\":", pid);
  put_kv(c, ",\"tid\":", tid);
  chr_put_text(c, ",\"args\":{");
}

static void meta(ct_chrome *c, const char *what, uint64_t pid, uint64_t tid, const char *name) {
  meta_open(c, what, pid, tid);
  chr_put_text(c, "\"name\":");
  chr_put_string(c, name);
  chr_put_text(c, "}}");
}

static void sort_index(ct_chrome *c, const char *what, uint64_t pid, uint64_t tid, uint64_t idx) {
  meta_open(c, what, pid, tid);
  put_kv(c, "\"sort_index\":", idx);
  chr_put_text(c, "}}");
}

/* ---- the encoder ---------------------------------------------------------------------- */

static int json_begin(ct_chrome *c) {
  setvbuf(c->f, NULL, _IOFBF, 1 << 20);
  if (!(c->out = malloc(CHR_OUT_CAP))) return -1;
  chr_put_text(c, "{\"schemaVersion\":1,\"displayTimeUnit\":\"ms\",\"traceEvents\":[");
  return 0;
}

static int json_end(ct_chrome *c) {
  chr_put_text(c, "\n],\n");
  chr_put_device_properties(c);
  chr_put_cuda_versions(c);
  chr_put_text(c, ",\n");
  chr_put_distributed_info(c);
  put_kv(c, ",\n\"baseTimeNanoseconds\":", c->base_ns);
  if (c->opt.selection) {
    chr_put_text(c, ",\n\"selection\":");
    chr_put_string(c, c->opt.selection);
  }
  chr_put_text(c, ",\n\"traceName\":\"cutrace\"}\n");
  chr_out_flush(c);
  return fflush(c->f) == 0 && !ferror(c->f) ? 0 : -1;
}

static void json_process(ct_chrome *c, uint64_t pid, const char *name, int gpu, uint64_t sort) {
  (void)gpu;
  meta(c, "process_name", pid, 0, name);
  if (sort != UINT64_MAX) sort_index(c, "process_sort_index", pid, 0, sort);
}

static void json_track(ct_chrome *c, uint64_t pid, uint64_t tid, enum chr_track_kind kind,
                       const char *name) {
  (void)kind;
  meta(c, "thread_name", pid, tid, name);
  sort_index(c, "thread_sort_index", pid, tid, tid);
}

/* Writes an X event up to and including "args":{ */
/* Writes ,"pid":P,"tid":T,"ts":TS at p (at most 3 x 20 digits and 19 bytes of keys). */
static inline char *at_pid_tid_ts(char *p, uint64_t pid, uint64_t tid, uint64_t ts) {
  p = CHR_AT_LIT(p, ",\"pid\":");
  p = chr_at_u64(p, pid);
  p = CHR_AT_LIT(p, ",\"tid\":");
  p = chr_at_u64(p, tid);
  p = CHR_AT_LIT(p, ",\"ts\":");
  return chr_at_us(p, ts);
}

static void json_slice_open(ct_chrome *c, const char *cat, const char *name, size_t name_len,
                            uint64_t pid, uint64_t tid, uint64_t begin, uint64_t end) {
  char *p = chr_out_room(c, 24);
  p = c->nevents++ ? CHR_AT_LIT(p, ",\n{\"ph\":\"X\",\"cat\":\"") : CHR_AT_LIT(p, "\n{\"ph\":\"X\",\"cat\":\"");
  chr_out_commit(c, p);
  chr_put_text(c, cat);
  chr_put_bytes(c, "\",\"name\":\"", 10);
  chr_put_escaped(c, name, name_len);
  p = chr_out_room(c, 160); /* 125 at most */
  *p++ = '"';
  p = at_pid_tid_ts(p, pid, tid, begin);
  p = CHR_AT_LIT(p, ",\"dur\":");
  p = chr_at_us(p, end > begin ? end - begin : 0);
  p = CHR_AT_LIT(p, ",\"args\":{");
  chr_out_commit(c, p);
  c->nargs = 0;
}

/* Writes an instant event up to and including "args":{ (Kineto's field order). */
static void json_instant_open(ct_chrome *c, const char *cat, const char *name, uint64_t pid,
                              uint64_t tid, uint64_t ts) {
  next_event(c);
  chr_put_text(c, "{\"ph\":\"i\",\"cat\":");
  chr_put_string(c, cat);
  chr_put_text(c, ",\"s\":\"t\",\"name\":");
  chr_put_string(c, name);
  put_kv(c, ",\"pid\":", pid);
  put_kv(c, ",\"tid\":", tid);
  chr_put_text(c, ",\"ts\":");
  put_us(c, ts);
  chr_put_text(c, ",\"args\":{");
  c->nargs = 0;
}

static void json_gpu_range_open(ct_chrome *c, const char *name, size_t name_len, uint64_t pid,
                                uint64_t tid, uint64_t depth, uint64_t begin, uint64_t end) {
  (void)depth; /* on the stream's track (Kineto's) */
  json_slice_open(c, "gpu_user_annotation", name, name_len, pid, tid, begin, end);
}

/* The cache entry of key k (key_at), filled when k is new; NULL when k is too long
 * to keep. */
static __attribute__((noinline)) struct chr_key_text *key_fill(struct chr_key_text *e,
                                                                const char *k) {
  size_t n = strlen(k);
  if (n + 3 > sizeof e->text) return NULL;
  e->text[0] = '"';
  memcpy(e->text + 1, k, n);
  memcpy(e->text + 1 + n, "\":", 2);
  e->len = n + 3;
  e->key = k;
  return e;
}

/* Writes an arg's key (and the comma before it); returns where to write its value,
 * with room for extra bytes there. Keys are string literals (chr_encoder): their
 * "key": is made once per address and copied. */
static inline char *key_at(ct_chrome *c, const char *k, size_t extra) {
  struct chr_key_text *e = &c->key_cache[(uintptr_t)k * 0x9E3779B97F4A7C15ull >> 56];
  if (__builtin_expect(e->key != k, 0) && !key_fill(e, k)) { /* too long to keep */
    if (c->nargs++) chr_put_char(c, ',');
    chr_put_char(c, '"');
    chr_put_text(c, k); /* as it is, as before */
    chr_put_bytes(c, "\":", 2);
    return chr_out_room(c, extra);
  }
  char *p = chr_out_room(c, 1 + sizeof e->text + extra);
  if (c->nargs++) *p++ = ',';
  memcpy(p, e->text, sizeof e->text); /* all of it: fewer instructions than its length */
  return p + e->len;
}

/* Writes an arg's key (and the comma before it). */
static void key(ct_chrome *c, const char *k) { chr_out_commit(c, key_at(c, k, 0)); }

static void json_arg_u64(ct_chrome *c, const char *k, uint64_t v) {
  chr_out_commit(c, chr_at_u64(key_at(c, k, 20), v));
}

static void json_arg_i64(ct_chrome *c, const char *k, int64_t v) {
  key(c, k);
  put_i64(c, v);
}

static void json_arg_f3(ct_chrome *c, const char *k, double v) {
  key(c, k);
  put_f3(c, v);
}

static void json_arg_time(ct_chrome *c, const char *k, uint64_t ns) {
  chr_out_commit(c, chr_at_us(key_at(c, k, 24), ns));
}

static void json_arg_str(ct_chrome *c, const char *k, const char *s) {
  key(c, k);
  if (s) chr_put_string(c, s);
  else chr_put_text(c, "null");
}

static void json_arg_list(ct_chrome *c, const char *k, int dict) {
  key(c, k);
  chr_put_char(c, dict ? '{' : '[');
  c->nitems = 0;
}

/* Starts a list or dict item (its comma, and its key in a dict). */
static void item(ct_chrome *c, const char *k) {
  if (c->nitems++) chr_put_char(c, ',');
  if (!k) return;
  chr_put_string(c, k);
  chr_put_char(c, ':');
}

static void json_item_u64(ct_chrome *c, const char *k, uint64_t v) {
  if (k) {
    item(c, k);
    chr_put_u64(c, v);
    return;
  }
  char *p = chr_out_room(c, 21);
  if (c->nitems++) *p++ = ',';
  chr_out_commit(c, chr_at_u64(p, v));
}

static void json_item_str(ct_chrome *c, const char *k, const char *s) {
  item(c, k);
  chr_put_string(c, s);
}

static void json_list_close(ct_chrome *c, int dict) { chr_put_char(c, dict ? '}' : ']'); }

static void json_flow_mark(ct_chrome *c, uint64_t id) { (void)c, (void)id; }

static void json_file_end(ct_chrome *c) { (void)c; }

static void json_slice_close(ct_chrome *c) { chr_put_text(c, "}}"); }

static void json_flow(ct_chrome *c, uint64_t id, uint64_t cpu_pid, uint64_t cpu_tid,
                      uint64_t cpu_ts, uint64_t pid, uint64_t tid, uint64_t ts) {
  char *p = chr_out_room(c, 320); /* 309 at most */
  p = c->nevents++ ? CHR_AT_LIT(p, ",\n{\"ph\":\"s\",\"id\":") : CHR_AT_LIT(p, "\n{\"ph\":\"s\",\"id\":");
  p = chr_at_u64(p, id);
  p = at_pid_tid_ts(p, cpu_pid, cpu_tid, cpu_ts);
  p = CHR_AT_LIT(p, ",\"cat\":\"ac2g\",\"name\":\"ac2g\"}");
  c->nevents++;
  p = CHR_AT_LIT(p, ",\n{\"ph\":\"f\",\"id\":");
  p = chr_at_u64(p, id);
  p = at_pid_tid_ts(p, pid, tid, ts);
  p = CHR_AT_LIT(p, ",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}");
  chr_out_commit(c, p);
}

static void json_counter(ct_chrome *c, const chr_counter_kind *k, uint64_t pid, const char *name,
                         uint64_t ts, uint64_t v) {
  next_event(c);
  put_kv(c, "{\"ph\":\"C\",\"pid\":", pid);
  chr_put_text(c, ",\"ts\":");
  put_us(c, ts);
  chr_put_text(c, ",\"name\":");
  chr_put_string(c, name);
  chr_put_text(c, ",\"cat\":");
  chr_put_string(c, k->cat);
  chr_put_text(c, ",\"args\":{");
  chr_put_string(c, k->key);
  put_kv(c, ":", v);
  chr_put_text(c, "}}");
}

const chr_encoder chr_json_encoder = {
    .begin = json_begin, .end = json_end, .process = json_process, .track = json_track,
    .slice_open = json_slice_open, .instant_open = json_instant_open, .gpu_range_open = json_gpu_range_open, .arg_u64 = json_arg_u64, .arg_i64 = json_arg_i64,
    .arg_f3 = json_arg_f3, .arg_time = json_arg_time, .arg_str = json_arg_str,
    .arg_list = json_arg_list, .item_u64 = json_item_u64, .item_str = json_item_str,
    .list_close = json_list_close, .flow_out = json_flow_mark, .flow_in = json_flow_mark,
    .slice_close = json_slice_close, .flow = json_flow, .file_end = json_file_end,
    .counter = json_counter};
