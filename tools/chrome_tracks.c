/*
 * The Chrome / Perfetto export's tracks (chrome_internal.h): naming each thread, stream,
 * GPU row and tracer track the first time it is used, the track ids of streams and
 * tracer work, and the sort order of the rows.
 */
#include <stdlib.h>
#include <string.h>

#include "chrome_internal.h"

/* Names a track the first time it is used (or again when a better name arrives). */
void chr_ensure_track(ct_chrome *c, uint64_t pid, uint64_t tid, enum chr_track_kind kind,
                         const char *name, int force) {
  track_state *ts = chr_track_get(c, pid, tid);
  if (ts && ts->named && !force) return;
  if (ts) ts->named = 1;
  c->enc->track(c, pid, tid, kind, name);
}

/* 1 when track (pid, tid) has its name already (a cheap test before making one). */
int chr_track_named(ct_chrome *c, uint64_t pid, uint64_t tid) {
  const track_state *ts = chr_track_get(c, pid, tid);
  return ts && ts->named;
}

/* Appends s (NULL: "(null)", as printf's %s) to buf holding *at bytes, cut to len - 1
 * bytes in all (as snprintf cuts). */
void chr_append(char *buf, size_t len, size_t *at, const char *s) {
  if (!s) s = "(null)";
  size_t n = strlen(s);
  if (*at + n >= len) n = len - 1 - *at;
  memcpy(buf + *at, s, n);
  *at += n;
  buf[*at] = 0;
}

void chr_ensure_cpu_thread(ct_chrome *c, uint64_t tid) {
  if (chr_track_named(c, c->pid, tid)) return;
  char name[64];
  snprintf(name, sizeof name, "thread %llu", (unsigned long long)tid);
  chr_ensure_track(c, c->pid, tid, CHR_TRACK_THREAD, name, 0);
}

uint64_t chr_stream_tid(const ct_chrome *c, uint64_t stream) {
  return chr_multi(c) ? stream : stream + c->file_index * STREAM_TID_SHIFT;
}

/* The " (pid P)" that tells apart the tracks of several files sharing a GPU row
 * ("" when the rows are not shared). */
const char *chr_shared_row_owner(const ct_chrome *c, char *buf, size_t len) {
  buf[0] = 0;
  if (c->file_index && !chr_multi(c)) snprintf(buf, len, " (pid %llu)", (unsigned long long)c->pid);
  return buf;
}

/* The sort index of the current file's CPU process row (its pid for one file; several
 * files: the rows go in file order, each file's GPUs right under its process). */
uint64_t chr_cpu_row_sort_index(const ct_chrome *c) {
  return chr_multi(c) ? (c->file_index + 1) * GPU_ROW_FILE_STRIDE : c->pid;
}

void chr_rename_gpu_row(ct_chrome *c, uint64_t device) {
  uint64_t row = chr_gpu_pid(c, device);
  const track_state *ts = chr_track_get(c, row, UINT64_MAX);
  if (!ts || !ts->named) return; /* named when first used */
  char name[160];
  chr_gpu_row_name(c, device, name, sizeof name);
  c->enc->process(c, row, name, 1, UINT64_MAX);
}

void chr_ensure_gpu_row(ct_chrome *c, uint64_t device) {
  uint64_t row = chr_gpu_pid(c, device);
  track_state *ds = chr_track_get(c, row, UINT64_MAX);
  if (!ds || ds->named) return;
  ds->named = 1;
  char name[160];
  chr_gpu_row_name(c, device, name, sizeof name);
  uint64_t order = chr_multi(c) ? chr_cpu_row_sort_index(c) + 1 + device % (GPU_ROW_FILE_STRIDE - 1)
                                : 5000000 + device;
  c->enc->process(c, row, name, 1, order);
}

void chr_ensure_gpu_track(ct_chrome *c, uint64_t device, uint64_t stream) {
  uint64_t tid = chr_stream_tid(c, stream), row = chr_gpu_pid(c, device);
  if (chr_track_named(c, row, tid)) return;
  chr_ensure_gpu_row(c, device);
  char name[96], owner[48];
  snprintf(name, sizeof name, "stream %llu%s", (unsigned long long)stream,
           chr_shared_row_owner(c, owner, sizeof owner));
  chr_ensure_track(c, row, tid, CHR_TRACK_GPU, name, 0);
}

/* The synthetic track of the tracer's work labelled what on thread tid. */
uint64_t chr_tracer_track(ct_chrome *c, uint64_t tid, const char *what) {
  unsigned char key[8 + 64];
  size_t n = strlen(what) < 64 ? strlen(what) : 64;
  memcpy(key, &tid, 8);
  memcpy(key + 8, what, n);
  int created = 0;
  uint64_t *t = ct_map_get(c->tracer_tracks, key, 8 + n, &created);
  if (!t) return TRACER_TID_BASE;
  if (created) {
    *t = TRACER_TID_BASE + c->next_tracer_tid++;
    char name[128];
    snprintf(name, sizeof name, "cutrace: %.64s (thread %llu)", what, (unsigned long long)tid);
    chr_ensure_track(c, c->pid, *t, CHR_TRACK_PROCESS, name, 0);
  }
  return *t;
}
