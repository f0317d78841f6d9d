/*
 * The Perfetto protobuf encoder of the export (cutrace dump --perfetto; chrome_internal.h,
 * docs/dump.md): a `Trace` (protos/perfetto/trace/trace.proto: repeated TracePacket
 * packet = 1), written packet by packet, on one trusted_packet_sequence_id.
 *
 * Field numbers are Perfetto's (google/perfetto, protos/perfetto/trace/, commit
 * ec5d16b14b74): trace_packet.proto, track_event/track_event.proto,
 * track_event/track_descriptor.proto, process_descriptor.proto, thread_descriptor.proto,
 * counter_descriptor.proto, track_event/debug_annotation.proto,
 * interned_data/interned_data.proto; their use as in docs/reference/
 * synthetic-track-event.md.
 *
 * - Tracks: a CPU process is a TrackDescriptor with a ProcessDescriptor, its threads
 *   TrackDescriptors with a ThreadDescriptor, its synthetic tracks (tracer, pauses)
 *   named custom tracks under it; a GPU row is a named top-level custom track and its
 *   streams (and idle tracks, queue counters) named custom tracks under it, sorted by
 *   sibling_order_rank (the JSON's sort indices); a stream's gpu_user_annotation
 *   slices have tracks of their own next to it, one per range depth
 *   (pf_annotation_track in chrome_perfetto_tracks.c says why). uuids are numbered
 *   in order of first use (a track per (pid, tid), as the JSON's).
 * - A slice is two packets: TYPE_SLICE_BEGIN at its start (category, name, args as
 *   debug annotations, flow ids) and TYPE_SLICE_END at its end.
 * - Event names, categories, annotation names and string values are interned
 *   (InternedData in the packet that first uses them; SEQ_NEEDS_INCREMENTAL_STATE).
 *   The table is bounded: past INTERN_MAX entries it is dropped and the sequence's
 *   state cleared (SEQ_INCREMENTAL_STATE_CLEARED), so memory does not grow with the
 *   trace.
 * - Flows: flow_ids (fixed64) on the call's slice, terminating_flow_ids on its GPU
 *   work's slice; ids as the JSON's (correlation | file << 40).
 * - Timestamps: ns of the host's CLOCK_MONOTONIC, absolute, on the trace's default clock.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chrome_perfetto.h"

/* The InternedData field of each kind of interned string (interned_data.proto). */
static const unsigned interned_field[IN_KINDS] = {1, 2, 3, 29};

/* Writes pf->packet as one `packet` (field 1) of the Trace. */
void pf_write_packet(ct_chrome *c) {
  chr_perfetto *pf = c->pf;
  if (pf->packet.failed) pf->failed = 1;
  uint8_t head[11];
  head[0] = 1 << 3 | PB_LEN;
  unsigned n = 1 + pb_varint_encode(head + 1, pf->packet.n);
  fwrite_unlocked(head, 1, n, c->f);
  fwrite_unlocked(pf->packet.p, 1, pf->packet.n, c->f);
  pb_clear(&pf->packet);
}

/* Drops the interning table when full (between packets): the next packet clears the
 * sequence's incremental state and interns again. */
static __attribute__((noinline)) void intern_reset(ct_chrome *c) {
  chr_perfetto *pf = c->pf;
  pf_flows_flush(c, 1); /* the slices queued use the table's iids */
  ct_map *fresh = ct_map_new(sizeof(uint64_t));
  if (!fresh) return; /* keep the full one */
  ct_map_free(pf->iids);
  pf->iids = fresh;
  memset(pf->next_iid, 0, sizeof pf->next_iid);
  pf->intern_bytes = 0;
  pf->need_clear = 1;
  pf->generation++;
}

static inline void intern_limit(ct_chrome *c) {
  chr_perfetto *pf = c->pf;
  if (ct_map_count(pf->iids) >= pf->intern_max || pf->intern_bytes >= INTERN_MAX_BYTES)
    intern_reset(c);
}

/* The iid of s (n bytes) among the strings of kind; new ones go into this packet's
 * InternedData. 0 when out of memory. */
static uint64_t intern(chr_perfetto *pf, enum intern_kind kind, const char *s, size_t n) {
  char stack_key[256];
  char *key = n + 1 <= sizeof stack_key ? stack_key : malloc(n + 1);
  if (!key) return 0;
  key[0] = (char)kind;
  memcpy(key + 1, s, n);
  int created = 0;
  uint64_t *iid = ct_map_get(pf->iids, key, n + 1, &created);
  if (key != stack_key) free(key);
  if (!iid) {
    pf->failed = 1;
    return 0;
  }
  if (created) {
    *iid = ++pf->next_iid[kind];
    pf->intern_bytes += n + 16;
    pb_clear(&pf->entry);
    pb_uint(&pf->entry, 1, *iid);
    pb_bytes(&pf->entry, 2, s, n);
    pb_message(&pf->interned, interned_field[kind], &pf->entry);
  }
  return *iid;
}

static uint64_t intern_str(chr_perfetto *pf, enum intern_kind kind, const char *s) {
  return intern(pf, kind, s, strlen(s));
}

/* intern_str for a string literal (the walk's arg names and categories): looked up by
 * its address first, which a literal keeps for the whole run. */
static uint64_t intern_literal(chr_perfetto *pf, enum intern_kind kind, const char *s) {
  literal_iid *e = &pf->literals[((uintptr_t)s >> 3 ^ kind) % LITERAL_CACHE];
  if (e->s == s && e->kind == kind && e->generation == pf->generation) return e->iid;
  uint64_t iid = intern_str(pf, kind, s);
  if (iid) *e = (literal_iid){s, iid, pf->generation, kind};
  return iid;
}

/* Writes a TrackDescriptor packet (in pf->item). */
void pf_write_descriptor(ct_chrome *c) {
  chr_perfetto *pf = c->pf;
  pf_packet_start(pf, 0);
  pb_message(&pf->packet, PKT_TRACK_DESCRIPTOR, &pf->item);
  pf_write_packet(c);
}

/* ---- the encoder ---------------------------------------------------------------------- */

static int pf_begin(ct_chrome *c) {
  setvbuf(c->f, NULL, _IOFBF, 1 << 20);
  chr_perfetto *pf = calloc(1, sizeof *pf);
  if (!pf) return -1;
  pf->iids = ct_map_new(sizeof(uint64_t));
  pf->counters = ct_map_new(sizeof(uint64_t));
  pf->uuids = ct_map_new(sizeof(uint64_t));
  pf->gpu_tracks = ct_map_new(sizeof(gpu_track));
  if (!pf->iids || !pf->counters || !pf->uuids || !pf->gpu_tracks) {
    ct_map_free(pf->iids);
    ct_map_free(pf->counters);
    ct_map_free(pf->uuids);
    ct_map_free(pf->gpu_tracks);
    free(pf);
    return -1;
  }
  pf->need_clear = 1;
  const char *max = getenv("CUTRACE_PERFETTO_INTERN_MAX");
  pf->intern_max = max && atoi(max) > 0 ? (size_t)atoi(max) : INTERN_MAX;
  c->pf = pf;
  pf_describe_root(c);
  return 0;
}

static int pf_end(ct_chrome *c) {
  chr_perfetto *pf = c->pf;
  pf_flows_flush(c, 0);
  pf_flows_free(pf);
  int failed = pf->failed;
  pb_buf *bufs[] = {&pf->event, &pf->interned, &pf->list, &pf->item, &pf->packet, &pf->entry,
                    &pf->scratch};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) {
    failed |= bufs[i]->failed;
    pb_free(bufs[i]);
  }
  ct_map_free(pf->iids);
  ct_map_free(pf->counters);
  ct_map_free(pf->uuids);
  ct_map_free(pf->gpu_tracks);
  free(pf);
  c->pf = NULL;
  return fflush(c->f) == 0 && !ferror(c->f) && !failed ? 0 : -1;
}

/* Starts the TrackEvent of a slice on track uuid. */
static void slice_begin(ct_chrome *c, const char *cat, const char *name, size_t name_len,
                        uint64_t track, uint64_t begin, uint64_t end) {
  chr_perfetto *pf = c->pf;
  intern_limit(c);
  pb_clear(&pf->event);
  pb_clear(&pf->interned);
  pf->flow_out = 0;
  pf->begin_ns = begin;
  pf->end_ns = end > begin ? end : begin;
  pf->track = track;
  pf->instant = 0;
  pb_uint(&pf->event, TE_TYPE, TYPE_SLICE_BEGIN);
  pb_uint(&pf->event, TE_TRACK_UUID, track);
  pb_uint(&pf->event, TE_CATEGORY_IIDS, intern_literal(pf, IN_CATEGORY, cat));
  pb_uint(&pf->event, TE_NAME_IID, intern(pf, IN_EVENT_NAME, name, name_len));
}

static void pf_slice_open(ct_chrome *c, const char *cat, const char *name, size_t name_len,
                          uint64_t pid, uint64_t tid, uint64_t begin, uint64_t end) {
  slice_begin(c, cat, name, name_len, pf_uuid(c->pf, pid, tid), begin, end);
}

/* An instant: a TYPE_INSTANT event on the thread's track (written by pf_slice_close). */
static void pf_instant_open(ct_chrome *c, const char *cat, const char *name, uint64_t pid,
                            uint64_t tid, uint64_t ts) {
  chr_perfetto *pf = c->pf;
  intern_limit(c);
  pb_clear(&pf->event);
  pb_clear(&pf->interned);
  pf->flow_out = 0;
  pf->begin_ns = pf->end_ns = ts;
  pf->track = pf_uuid(pf, pid, tid);
  pf->instant = 1;
  pb_uint(&pf->event, TE_TYPE, TYPE_INSTANT);
  pb_uint(&pf->event, TE_TRACK_UUID, pf->track);
  pb_uint(&pf->event, TE_CATEGORY_IIDS, intern_literal(pf, IN_CATEGORY, cat));
  pb_uint(&pf->event, TE_NAME_IID, intern_str(pf, IN_EVENT_NAME, name));
}

static void pf_gpu_range_open(ct_chrome *c, const char *name, size_t name_len, uint64_t pid,
                              uint64_t tid, uint64_t depth, uint64_t begin, uint64_t end) {
  uint64_t track = pf_annotation_track(c, pid, tid, depth);
  slice_begin(c, "gpu_user_annotation", name, name_len, track, begin, end);
}

/* Starts a DebugAnnotation named key in pf->item. */
static pb_buf *annotation(chr_perfetto *pf, const char *key) {
  pb_clear(&pf->item);
  pb_uint(&pf->item, DA_NAME_IID, intern_literal(pf, IN_ANNOTATION_NAME, key));
  return &pf->item;
}

/* Appends the annotation in pf->item to the event. */
static void add_annotation(chr_perfetto *pf) {
  pb_message(&pf->event, TE_DEBUG_ANNOTATIONS, &pf->item);
}

static void pf_arg_u64(ct_chrome *c, const char *key, uint64_t v) {
  pb_uint(annotation(c->pf, key), DA_UINT, v);
  add_annotation(c->pf);
}

static void pf_arg_i64(ct_chrome *c, const char *key, int64_t v) {
  pb_uint(annotation(c->pf, key), DA_INT, (uint64_t)v);
  add_annotation(c->pf);
}

static void pf_arg_f3(ct_chrome *c, const char *key, double v) {
  pb_double(annotation(c->pf, key), DA_DOUBLE, v);
  add_annotation(c->pf);
}

static void pf_arg_str(ct_chrome *c, const char *key, const char *s) {
  if (!s) return; /* JSON's null: no annotation */
  chr_perfetto *pf = c->pf;
  pb_uint(annotation(pf, key), DA_STRING_IID, intern_str(pf, IN_STRING, s));
  add_annotation(pf);
}

static void pf_arg_list(ct_chrome *c, const char *key, int dict) {
  (void)dict;
  chr_perfetto *pf = c->pf;
  pb_clear(&pf->list);
  pb_uint(&pf->list, DA_NAME_IID, intern_literal(pf, IN_ANNOTATION_NAME, key));
  pf->list_items = 0;
}

/* Appends the item in pf->item to the open list (array_values) or dict (dict_entries). */
static void add_item(chr_perfetto *pf, int dict) {
  pf->list_items++;
  pb_message(&pf->list, dict ? DA_DICT_ENTRIES : DA_ARRAY_VALUES, &pf->item);
}

static void pf_item_u64(ct_chrome *c, const char *key, uint64_t v) {
  chr_perfetto *pf = c->pf;
  uint64_t name = key ? intern_str(pf, IN_ANNOTATION_NAME, key) : 0;
  pb_clear(&pf->item);
  if (key) pb_uint(&pf->item, DA_NAME_IID, name);
  pb_uint(&pf->item, DA_UINT, v);
  add_item(pf, key != NULL);
}

static void pf_item_str(ct_chrome *c, const char *key, const char *s) {
  chr_perfetto *pf = c->pf;
  uint64_t name = key ? intern_str(pf, IN_ANNOTATION_NAME, key) : 0;
  uint64_t iid = intern_str(pf, IN_STRING, s ? s : "");
  pb_clear(&pf->item);
  if (key) pb_uint(&pf->item, DA_NAME_IID, name);
  pb_uint(&pf->item, DA_STRING_IID, iid);
  add_item(pf, key != NULL);
}

/* Appends the list or dict; an empty one has no value in Perfetto: left out. */
static void pf_list_close(ct_chrome *c, int dict) {
  (void)dict;
  if (c->pf->list_items) pb_message(&c->pf->event, TE_DEBUG_ANNOTATIONS, &c->pf->list);
}

/* The call's flow: written with its slice once the flow's end is (chrome_perfetto_flows.c). */
static void pf_flow_out(ct_chrome *c, uint64_t id) { c->pf->flow_out = id; }

static void pf_flow_in(ct_chrome *c, uint64_t id) {
  pb_fixed64(&c->pf->event, TE_TERMINATING_FLOW_IDS, id);
  pf_flow_end(c, id);
}

/* Writes the slice (or instant): its begin packet with the strings it interned, and its
 * end packet; or queues it while its flow's end is unknown (chrome_perfetto_flows.c). */
static void pf_slice_close(ct_chrome *c) {
  chr_perfetto *pf = c->pf;
  if (pf->event.failed || pf->interned.failed || pf->list.failed || pf->item.failed ||
      pf->entry.failed)
    pf->failed = 1;
  uint64_t flow = pf->flow_out;
  pf->flow_out = 0;
  pf_flows_close(c, flow);
  pf_flows_release(c);
}

/* JSON's separate flow events: Perfetto has them as the slices' flow ids. */
static void pf_flow(ct_chrome *c, uint64_t id, uint64_t cpu_pid, uint64_t cpu_tid,
                    uint64_t cpu_ts, uint64_t pid, uint64_t tid, uint64_t ts) {
  (void)c, (void)id, (void)cpu_pid, (void)cpu_tid, (void)cpu_ts, (void)pid, (void)tid, (void)ts;
}

/* A counter value, on its track (chrome_perfetto_tracks.c). */
static void pf_counter(ct_chrome *c, const chr_counter_kind *k, uint64_t pid, const char *name,
                       uint64_t ts, uint64_t v) {
  chr_perfetto *pf = c->pf;
  uint64_t uuid = pf_counter_track(c, pid, name, k->bytes);
  if (!uuid) return;
  pb_clear(&pf->event);
  pb_uint(&pf->event, TE_TYPE, TYPE_COUNTER);
  pb_uint(&pf->event, TE_TRACK_UUID, uuid);
  pb_uint(&pf->event, TE_COUNTER_VALUE, v);
  pb_uint(&pf->packet, PKT_TIMESTAMP, ts);
  pf_packet_start(pf, 0);
  pb_message(&pf->packet, PKT_TRACK_EVENT, &pf->event);
  pf_write_packet(c);
}

const chr_encoder chr_perfetto_encoder = {
    .begin = pf_begin, .end = pf_end, .process = pf_process, .track = pf_track,
    .slice_open = pf_slice_open, .instant_open = pf_instant_open, .gpu_range_open = pf_gpu_range_open, .arg_u64 = pf_arg_u64,
    .arg_i64 = pf_arg_i64, .arg_f3 = pf_arg_f3, .arg_time = pf_arg_u64, .arg_str = pf_arg_str,
    .arg_list = pf_arg_list, .item_u64 = pf_item_u64, .item_str = pf_item_str,
    .list_close = pf_list_close, .flow_out = pf_flow_out, .flow_in = pf_flow_in,
    .slice_close = pf_slice_close, .flow = pf_flow, .file_end = pf_flows_file_end,
    .counter = pf_counter};
