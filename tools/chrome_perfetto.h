/*
 * What the two files of the Perfetto encoder share (chrome_perfetto.c: packets,
 * interning, slices, args, counters; chrome_perfetto_tracks.c: track descriptors).
 * Field numbers are Perfetto's (google/perfetto, protos/perfetto/trace/, commit
 * ec5d16b14b74), each enum below from the .proto file it names.
 */
#ifndef CUTRACE_CHROME_PERFETTO_H
#define CUTRACE_CHROME_PERFETTO_H

#include "chrome_internal.h"
#include "protobuf.h"

/* TracePacket fields. */
enum { PKT_TIMESTAMP = 8, PKT_TRACK_EVENT = 11, PKT_INTERNED_DATA = 12, PKT_SEQUENCE_ID = 10,
       PKT_SEQUENCE_FLAGS = 13, PKT_TRACK_DESCRIPTOR = 60 };
enum { SEQ_INCREMENTAL_STATE_CLEARED = 1, SEQ_NEEDS_INCREMENTAL_STATE = 2 };
/* TrackEvent fields and types. */
enum { TE_CATEGORY_IIDS = 3, TE_DEBUG_ANNOTATIONS = 4, TE_TYPE = 9, TE_NAME_IID = 10,
       TE_TRACK_UUID = 11, TE_COUNTER_VALUE = 30, TE_FLOW_IDS = 47, TE_TERMINATING_FLOW_IDS = 48 };
enum { TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_INSTANT = 3, TYPE_COUNTER = 4 };
/* TrackDescriptor, ProcessDescriptor, ThreadDescriptor fields. */
enum { TD_UUID = 1, TD_NAME = 2, TD_PROCESS = 3, TD_THREAD = 4, TD_PARENT_UUID = 5,
       TD_COUNTER = 8, TD_CHILD_ORDERING = 11, TD_SIBLING_ORDER_RANK = 12,
       TD_SIBLING_MERGE_BEHAVIOR = 15, SIBLING_MERGE_BEHAVIOR_NONE = 2 };
enum { CHILD_ORDERING_EXPLICIT = 3, TD_PROCESS_ORDERING = 19, TD_THREAD_ORDERING = 20,
       ORDERING_EXPLICIT = 1 };
/* CounterDescriptor (track_event/counter_descriptor.proto): unit = 3, UNIT_SIZE_BYTES = 3. */
enum { CD_UNIT = 3, CD_UNIT_SIZE_BYTES = 3 };
enum { PD_PID = 1, PD_PROCESS_NAME = 6, THD_PID = 1, THD_TID = 2, THD_THREAD_NAME = 5 };
/* DebugAnnotation fields. */
enum { DA_NAME_IID = 1, DA_UINT = 3, DA_INT = 4, DA_DOUBLE = 5, DA_DICT_ENTRIES = 11,
       DA_ARRAY_VALUES = 12, DA_STRING_IID = 17 };
/* What is interned, and the InternedData field of each (entries: iid = 1, name = 2). */
enum intern_kind { IN_CATEGORY, IN_EVENT_NAME, IN_ANNOTATION_NAME, IN_STRING, IN_KINDS };

#define SEQUENCE_ID 1
#define INTERN_MAX 65536          /* interned strings kept before the state is cleared
                                     (CUTRACE_PERFETTO_INTERN_MAX: fewer, for the tests) */
#define INTERN_MAX_BYTES (16 << 20)

/* A GPU track's name, for its NVTX ranges' tracks (annotation_track). */
typedef struct gpu_track {
  char name[96];
} gpu_track;

/* A cache of the iids of string literals (annotation names, categories) by address. */
#define LITERAL_CACHE 64
typedef struct literal_iid {
  const char *s;
  uint64_t iid, generation;
  unsigned kind;
} literal_iid;

/* A cache of track uuids by (pid, tid). */
#define UUID_CACHE 64
typedef struct cached_uuid {
  uint64_t pid, tid, uuid;
} cached_uuid;

struct chr_perfetto {
  pb_buf event;    /* the TrackEvent being written */
  pb_buf interned; /* InternedData entries new in its packet */
  pb_buf list;     /* the DebugAnnotation of an open list or dict */
  unsigned list_items;
  pb_buf item, packet;
  pb_buf entry;    /* an InternedData entry */
  ct_map *iids; /* kind byte + string -> uint64_t iid */
  uint64_t next_iid[IN_KINDS];
  size_t intern_bytes;
  int need_clear; /* the next packet clears the sequence's incremental state */
  uint64_t begin_ns, end_ns, track;
  int instant;      /* the open event is an instant: no end packet */
  uint64_t flow_out; /* the flow the open slice starts (0: none) */
  pb_buf scratch;   /* a TrackEvent being written from the queue (chrome_perfetto_flows.c) */
  struct pf_queue *queue; /* slices waiting for their flow's end, and those behind them */
  ct_map *counters; /* (pid, name) -> uint64_t uuid of its counter track */
  ct_map *uuids;    /* (pid, tid) -> uint64_t uuid of its track */
  ct_map *gpu_tracks; /* (pid, tid) -> gpu_track: names of the GPU tracks; (pid, lane):
                         the annotation tracks described */
  size_t intern_max;
  uint64_t generation; /* of the interning table: +1 at each reset */
  literal_iid literals[LITERAL_CACHE];
  cached_uuid uuid_cache[UUID_CACHE];
  uint64_t last_uuid;
  int failed;
};

/* Writes pf->packet as one `packet` (field 1) of the Trace and empties it. */
void pf_write_packet(ct_chrome *c);

/* Starts pf->packet on the sequence (clearing its state when due); needs: the packet
 * uses interned data. */
static inline void pf_packet_start(chr_perfetto *pf, int needs) {
  pb_uint(&pf->packet, PKT_SEQUENCE_ID, SEQUENCE_ID);
  unsigned flags = (needs ? SEQ_NEEDS_INCREMENTAL_STATE : 0) |
                   (pf->need_clear ? SEQ_INCREMENTAL_STATE_CLEARED : 0);
  if (flags) pb_uint(&pf->packet, PKT_SEQUENCE_FLAGS, flags);
  pf->need_clear = 0;
}

/* Writes the TrackDescriptor in pf->item as a packet. */
void pf_write_descriptor(ct_chrome *c);

/* ---- flows (chrome_perfetto_flows.c) ---- */

typedef struct pf_queue pf_queue;

/* Writes the open slice (or instant) in pf->event, with pf->interned, or queues it:
 * flow (0: none) is the flow it starts, drawn only once its end is written. */
void pf_flows_close(ct_chrome *c, uint64_t flow);

/* Notes that flow's end (a GPU slice's terminating_flow_ids) is being written. */
void pf_flow_end(ct_chrome *c, uint64_t flow);

/* Writes the queue's head while it is decided (after a slice that may have decided it). */
void pf_flows_release(ct_chrome *c);

/* Writes everything queued: at the document's end (flows not ended: without their ids),
 * and before the interning state is cleared (optimistic: with them). */
void pf_flows_flush(ct_chrome *c, int optimistic);

/* The end of an input file: its flows end in it (ids are per file), so what still
 * waits is written without its flow id, and the next file's times start afresh. */
void pf_flows_file_end(ct_chrome *c);

/* Frees the queue. */
void pf_flows_free(chr_perfetto *pf);

/* ---- tracks (chrome_perfetto_tracks.c) ---- */

/* The uuid of track (pid, tid): small numbers in order of first use. 0 when out of memory. */
uint64_t pf_uuid(chr_perfetto *pf, uint64_t pid, uint64_t tid);

/* The uuids of a CPU process's and of a GPU row's track. */
uint64_t pf_cpu_row_uuid(chr_perfetto *pf, uint64_t pid);
uint64_t pf_gpu_row_uuid(chr_perfetto *pf, uint64_t pid);

/* The encoder's process and track callbacks (chr_encoder). */
void pf_process(ct_chrome *c, uint64_t pid, const char *name, int gpu, uint64_t sort);
void pf_track(ct_chrome *c, uint64_t pid, uint64_t tid, enum chr_track_kind kind,
              const char *name);

/* The track of the gpu_user_annotation slices of one range depth on stream track
 * (pid, tid), described on first use. */
uint64_t pf_annotation_track(ct_chrome *c, uint64_t pid, uint64_t tid, uint64_t depth);

/* The counter track named name on GPU row pid, described on first use (bytes: its
 * values are bytes, UNIT_SIZE_BYTES); 0 when out of memory. */
uint64_t pf_counter_track(ct_chrome *c, uint64_t pid, const char *name, int bytes);

/* Describes the root track (process and thread ordering). */
void pf_describe_root(ct_chrome *c);

#endif
