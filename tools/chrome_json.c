/*
 * The Chrome Trace Event JSON encoder of the export (chrome_internal.h, docs/dump.md).
 *
 * Conventions, after Kineto's output (libkineto/src/output_json.cpp, facts only):
 * complete events ph "X" with ts/dur in microseconds and 3 decimals; flows ph "s" (on
 * the call) and ph "f" with bp "e" (on the GPU work), cat "ac2g", id = correlation;
 * process_name / thread_name metadata with sort indices; counters ph "C"; top-level
 * deviceProperties, distributedInfo, displayTimeUnit, baseTimeNanoseconds.
 * The hot path avoids printf: it dominated the export's time.
 */
#include <string.h>

#include "chrome_internal.h"
#include "output.h"

/* ---- writing helpers ---------------------------------------------------------------- */

/* Writes literal text. */
static inline void put_lit(ct_chrome *c, const char *s) { fputs_unlocked(s, c->f); }

/* Writes v in decimal. */
void chr_put_u64(ct_chrome *c, uint64_t v) {
  char b[24];
  int i = sizeof b;
  do {
    b[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  fwrite_unlocked(b + i, 1, sizeof b - (size_t)i, c->f);
}

/* Writes lit (e.g. ",\"pid\":") followed by v. */
static inline void put_kv(ct_chrome *c, const char *lit, uint64_t v) {
  put_lit(c, lit);
  chr_put_u64(c, v);
}

void chr_put_string(ct_chrome *c, const char *s) {
  putc('"', c->f);
  if (s) ct_json_write_escaped(c->f, s, strlen(s));
  putc('"', c->f);
}

/* A time in ns as microseconds with 3 decimals (exact). */
static void put_us(ct_chrome *c, uint64_t ns) {
  chr_put_u64(c, ns / 1000);
  char frac[4] = {'.', (char)('0' + ns / 100 % 10), (char)('0' + ns / 10 % 10), (char)('0' + ns % 10)};
  fwrite_unlocked(frac, 1, 4, c->f);
}

/* Starts the next event (the separator before it). */
static void next_event(ct_chrome *c) { fputs(c->nevents++ ? ",\n" : "\n", c->f); }

static void meta(ct_chrome *c, const char *what, uint64_t pid, uint64_t tid, const char *name) {
  next_event(c);
  fprintf(c->f, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%llu,\"tid\":%llu,\"args\":{\"name\":", what,
          (unsigned long long)pid, (unsigned long long)tid);
  chr_put_string(c, name);
  fputs("}}", c->f);
}

static void sort_index(ct_chrome *c, const char *what, uint64_t pid, uint64_t tid, uint64_t idx) {
  next_event(c);
  fprintf(c->f, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%llu,\"tid\":%llu,\"args\":{\"sort_index\":%llu}}",
          what, (unsigned long long)pid, (unsigned long long)tid, (unsigned long long)idx);
}

/* ---- the encoder ---------------------------------------------------------------------- */

static int json_begin(ct_chrome *c) {
  setvbuf(c->f, NULL, _IOFBF, 1 << 20);
  fputs("{\"schemaVersion\":1,\"displayTimeUnit\":\"ms\",\"traceEvents\":[", c->f);
  return 0;
}

static int json_end(ct_chrome *c) {
  FILE *f = c->f;
  fputs("\n],\n", f);
  chr_put_device_properties(c);
  fputs(",\n", f);
  chr_put_distributed_info(c);
  fprintf(f, ",\n\"baseTimeNanoseconds\":%llu,\n\"traceName\":\"cutrace\"}\n",
          (unsigned long long)c->base_ns);
  return fflush(f) == 0 && !ferror(f) ? 0 : -1;
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
static void json_slice_open(ct_chrome *c, const char *cat, const char *name, size_t name_len,
                            uint64_t pid, uint64_t tid, uint64_t begin, uint64_t end) {
  next_event(c);
  put_lit(c, "{\"ph\":\"X\",\"cat\":\"");
  put_lit(c, cat);
  put_lit(c, "\",\"name\":\"");
  ct_json_write_escaped(c->f, name, name_len);
  put_kv(c, "\",\"pid\":", pid);
  put_kv(c, ",\"tid\":", tid);
  put_lit(c, ",\"ts\":");
  put_us(c, begin);
  put_lit(c, ",\"dur\":");
  put_us(c, end > begin ? end - begin : 0);
  put_lit(c, ",\"args\":{");
  c->nargs = 0;
}

static void json_gpu_range_open(ct_chrome *c, const char *name, size_t name_len, uint64_t pid,
                                uint64_t tid, uint64_t depth, uint64_t begin, uint64_t end) {
  (void)depth; /* on the stream's track (Kineto's) */
  json_slice_open(c, "gpu_user_annotation", name, name_len, pid, tid, begin, end);
}

/* Writes an arg's key (and the comma before it). */
static void key(ct_chrome *c, const char *k) {
  FILE *f = c->f;
  if (c->nargs++) putc_unlocked(',', f);
  putc_unlocked('"', f);
  fputs_unlocked(k, f);
  putc_unlocked('"', f);
  putc_unlocked(':', f);
}

static void json_arg_u64(ct_chrome *c, const char *k, uint64_t v) {
  key(c, k);
  chr_put_u64(c, v);
}

static void json_arg_i64(ct_chrome *c, const char *k, int64_t v) {
  key(c, k);
  fprintf(c->f, "%lld", (long long)v);
}

static void json_arg_f3(ct_chrome *c, const char *k, double v) {
  key(c, k);
  fprintf(c->f, "%.3f", v);
}

static void json_arg_time(ct_chrome *c, const char *k, uint64_t ns) {
  key(c, k);
  put_us(c, ns);
}

static void json_arg_str(ct_chrome *c, const char *k, const char *s) {
  key(c, k);
  if (s) chr_put_string(c, s);
  else put_lit(c, "null");
}

static void json_arg_list(ct_chrome *c, const char *k, int dict) {
  key(c, k);
  putc(dict ? '{' : '[', c->f);
  c->nitems = 0;
}

/* Starts a list or dict item (its comma, and its key in a dict). */
static void item(ct_chrome *c, const char *k) {
  if (c->nitems++) putc_unlocked(',', c->f);
  if (!k) return;
  chr_put_string(c, k);
  putc(':', c->f);
}

static void json_item_u64(ct_chrome *c, const char *k, uint64_t v) {
  item(c, k);
  chr_put_u64(c, v);
}

static void json_item_str(ct_chrome *c, const char *k, const char *s) {
  item(c, k);
  chr_put_string(c, s);
}

static void json_list_close(ct_chrome *c, int dict) { putc(dict ? '}' : ']', c->f); }

static void json_flow_mark(ct_chrome *c, uint64_t id) { (void)c, (void)id; }

static void json_slice_close(ct_chrome *c) { put_lit(c, "}}"); }

static void json_flow(ct_chrome *c, uint64_t id, uint64_t cpu_pid, uint64_t cpu_tid,
                      uint64_t cpu_ts, uint64_t pid, uint64_t tid, uint64_t ts) {
  next_event(c);
  put_kv(c, "{\"ph\":\"s\",\"id\":", id);
  put_kv(c, ",\"pid\":", cpu_pid);
  put_kv(c, ",\"tid\":", cpu_tid);
  put_lit(c, ",\"ts\":");
  put_us(c, cpu_ts);
  put_lit(c, ",\"cat\":\"ac2g\",\"name\":\"ac2g\"}");
  next_event(c);
  put_kv(c, "{\"ph\":\"f\",\"id\":", id);
  put_kv(c, ",\"pid\":", pid);
  put_kv(c, ",\"tid\":", tid);
  put_lit(c, ",\"ts\":");
  put_us(c, ts);
  put_lit(c, ",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}");
}

static void json_counter(ct_chrome *c, const chr_counter_kind *k, uint64_t pid, const char *name,
                         uint64_t ts, uint64_t v) {
  next_event(c);
  put_kv(c, "{\"ph\":\"C\",\"pid\":", pid);
  put_lit(c, ",\"ts\":");
  put_us(c, ts);
  put_lit(c, ",\"name\":");
  chr_put_string(c, name);
  put_lit(c, ",\"cat\":");
  chr_put_string(c, k->cat);
  put_lit(c, ",\"args\":{");
  chr_put_string(c, k->key);
  put_kv(c, ":", v);
  put_lit(c, "}}");
}

const chr_encoder chr_json_encoder = {
    .begin = json_begin, .end = json_end, .process = json_process, .track = json_track,
    .slice_open = json_slice_open, .gpu_range_open = json_gpu_range_open, .arg_u64 = json_arg_u64, .arg_i64 = json_arg_i64,
    .arg_f3 = json_arg_f3, .arg_time = json_arg_time, .arg_str = json_arg_str,
    .arg_list = json_arg_list, .item_u64 = json_item_u64, .item_str = json_item_str,
    .list_close = json_list_close, .flow_out = json_flow_mark, .flow_in = json_flow_mark,
    .slice_close = json_slice_close, .flow = json_flow, .counter = json_counter};
