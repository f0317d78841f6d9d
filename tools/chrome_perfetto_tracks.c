/*
 * The Perfetto encoder's tracks (chrome_perfetto.h): TrackDescriptors for CPU processes
 * (ProcessDescriptor), their threads (ThreadDescriptor) and named tracks, GPU rows and
 * their named tracks, the NVTX ranges' tracks of each stream, counter tracks
 * (CounterDescriptor), and the root track's ordering. Field numbers:
 * track_event/track_descriptor.proto, process_descriptor.proto, thread_descriptor.proto,
 * counter_descriptor.proto (google/perfetto ec5d16b14b74).
 */
#include <stdio.h>
#include <string.h>

#include "chrome_perfetto.h"

/* A named (custom) track's name, and no merging with same-named siblings: the UI
 * merges tracks by name by default, and trace_processor takes a later descriptor's
 * name (a GPU row named again once its DEVICE record came) only for tracks that do
 * not merge (TrackEventTracker::ReserveDescriptorTrack, ec5d16b14b74). */
static void named(pb_buf *d, const char *name) {
  pb_string(d, TD_NAME, name);
  pb_uint(d, TD_SIBLING_MERGE_BEHAVIOR, SIBLING_MERGE_BEHAVIOR_NONE);
}

/* The uuid of track (pid, tid): small numbers in order of first use (they are written
 * with every event: a varint of 1 or 2 bytes). 0 when out of memory. */
uint64_t pf_uuid(chr_perfetto *pf, uint64_t pid, uint64_t tid) {
  cached_uuid *e = &pf->uuid_cache[(pid * 31 + tid) % UUID_CACHE];
  if (e->uuid && e->pid == pid && e->tid == tid) return e->uuid;
  uint64_t key[2] = {pid, tid};
  int created = 0;
  uint64_t *uuid = ct_map_get(pf->uuids, key, sizeof key, &created);
  if (!uuid) {
    pf->failed = 1;
    return 0;
  }
  if (created) *uuid = ++pf->last_uuid;
  *e = (cached_uuid){pid, tid, *uuid};
  return *uuid;
}

/* Process rows: a CPU process's and a GPU row's uuid. */
uint64_t pf_cpu_row_uuid(chr_perfetto *pf, uint64_t pid) { return pf_uuid(pf, pid, UINT64_MAX); }
uint64_t pf_gpu_row_uuid(chr_perfetto *pf, uint64_t pid) {
  return pf_uuid(pf, pid, UINT64_MAX - 1);
}

/* A sort index as a sibling_order_rank (int32). */
static uint64_t rank_of(uint64_t sort) { return sort > 0x7fffffff ? 0x7fffffff : sort; }

void pf_process(ct_chrome *c, uint64_t pid, const char *name, int gpu, uint64_t sort) {
  chr_perfetto *pf = c->pf;
  pb_buf *d = &pf->item;
  pb_clear(d);
  if (gpu) {
    pb_uint(d, TD_UUID, pf_gpu_row_uuid(pf, pid));
    named(d, name);
    pb_uint(d, TD_CHILD_ORDERING, CHILD_ORDERING_EXPLICIT);
  } else {
    pb_uint(d, TD_UUID, pf_cpu_row_uuid(pf, pid));
    pb_buf proc = {0};
    pb_uint(&proc, PD_PID, pid);
    pb_string(&proc, PD_PROCESS_NAME, name);
    pb_message(d, TD_PROCESS, &proc);
    if (proc.failed) pf->failed = 1;
    pb_free(&proc);
  }
  if (sort != UINT64_MAX) pb_uint(d, TD_SIBLING_ORDER_RANK, rank_of(sort));
  pf_write_descriptor(c);
}

void pf_track(ct_chrome *c, uint64_t pid, uint64_t tid, enum chr_track_kind kind,
                     const char *name) {
  chr_perfetto *pf = c->pf;
  pb_buf *d = &pf->item;
  pb_clear(d);
  pb_uint(d, TD_UUID, pf_uuid(pf, pid, tid));
  /* a thread track goes under its process by its ThreadDescriptor's pid, without
   * parent_uuid (docs/reference/synthetic-track-event.md, "Associating Tracks with
   * Threads"); named tracks under their row */
  if (kind != CHR_TRACK_THREAD)
    pb_uint(d, TD_PARENT_UUID,
            kind == CHR_TRACK_GPU ? pf_gpu_row_uuid(pf, pid) : pf_cpu_row_uuid(pf, pid));
  if (kind == CHR_TRACK_THREAD) {
    pb_buf th = {0};
    pb_uint(&th, THD_PID, pid);
    pb_uint(&th, THD_TID, tid);
    pb_string(&th, THD_THREAD_NAME, name);
    pb_message(d, TD_THREAD, &th);
    if (th.failed) pf->failed = 1;
    pb_free(&th);
  } else {
    named(d, name);
  }
  if (kind == CHR_TRACK_GPU) {
    gpu_track *g = ct_map_get(pf->gpu_tracks, (uint64_t[2]){pid, tid}, 16, NULL);
    if (g) snprintf(g->name, sizeof g->name, "%s", name);
  }
  pb_uint(d, TD_SIBLING_ORDER_RANK, rank_of(tid));
  pf_write_descriptor(c);
}

/*
 * The track of the gpu_user_annotation slices of depth depth on a stream: a track of
 * their own under the GPU row, "stream 7 ranges" (depth 0), "stream 7 ranges (depth 1)"
 * (JSON draws them all on the stream's track). An annotation starts in the same ns
 * as its first kernel, and so does an enclosing range's, and it is written after
 * both; trace_processor orders slices that begin together by file order, so on one
 * track the kernel would become the annotation's parent, the inner range the outer's.
 */
uint64_t pf_annotation_track(ct_chrome *c, uint64_t pid, uint64_t tid, uint64_t depth) {
  chr_perfetto *pf = c->pf;
  if (depth > 255) depth = 255;
  uint64_t lane = tid | (depth + 1) << 48, uuid = pf_uuid(pf, pid, lane);
  int created = 0;
  ct_map_get(pf->gpu_tracks, (uint64_t[2]){pid, lane}, 16, &created);
  if (!created) return uuid;
  const gpu_track *g = ct_map_get(pf->gpu_tracks, (uint64_t[2]){pid, tid}, 16, NULL);
  char name[sizeof g->name + 32];
  if (depth) snprintf(name, sizeof name, "%s ranges (depth %u)", g ? g->name : "", (unsigned)depth);
  else snprintf(name, sizeof name, "%s ranges", g ? g->name : "");
  pb_buf *d = &pf->item;
  pb_clear(d);
  pb_uint(d, TD_UUID, uuid);
  pb_uint(d, TD_PARENT_UUID, pf_gpu_row_uuid(pf, pid));
  named(d, name);
  pb_uint(d, TD_SIBLING_ORDER_RANK, rank_of(tid));
  pf_write_descriptor(c);
  return uuid;
}

/* The uuid of the counter track named name on GPU row pid, described on first use
 * (a CounterDescriptor under the row). 0 when out of memory. */
uint64_t pf_counter_track(ct_chrome *c, uint64_t pid, const char *name, int bytes) {
  chr_perfetto *pf = c->pf;
  size_t n = strlen(name);
  char key[8 + 128];
  if (n > 128) n = 128;
  memcpy(key, &pid, 8);
  memcpy(key + 8, name, n);
  int created = 0;
  uint64_t *uuid = ct_map_get(pf->counters, key, 8 + n, &created);
  if (!uuid) {
    pf->failed = 1;
    return 0;
  }
  if (created) {
    *uuid = ++pf->last_uuid;
    pb_buf *d = &pf->item;
    pb_clear(d);
    pb_uint(d, TD_UUID, *uuid);
    pb_uint(d, TD_PARENT_UUID, pf_gpu_row_uuid(pf, pid));
    named(d, name);
    if (bytes) {
      pb_buf counter = {0};
      pb_uint(&counter, CD_UNIT, CD_UNIT_SIZE_BYTES);
      pb_message(d, TD_COUNTER, &counter);
      if (counter.failed) pf->failed = 1;
      pb_free(&counter);
    } else {
      pb_bytes(d, TD_COUNTER, "", 0);
    }
    pf_write_descriptor(c);
  }
  return *uuid;
}

/* The root track (uuid 0): processes and threads in the order of their
 * sibling_order_rank (docs/reference/synthetic-track-event.md, "Process Sorting"). */
void pf_describe_root(ct_chrome *c) {
  pb_buf *d = &c->pf->item;
  pb_clear(d);
  pb_uint(d, TD_UUID, 0);
  pb_uint(d, TD_PROCESS_ORDERING, ORDERING_EXPLICIT);
  pb_uint(d, TD_THREAD_ORDERING, ORDERING_EXPLICIT);
  pf_write_descriptor(c);
}
