/*
 * The writer thread's rounds (writer.c runs them). Each takes a snapshot of every
 * thread buffer's head, drains the STRING queue, then each buffer up to its snapshot,
 * encoding records into one chunk (common/codec.h). A chunk becomes a zstd frame when
 * it reaches CUTRACE_FRAME_KB or is CUTRACE_FLUSH_MS old, and the frame goes to the
 * sink (sink.c: the file, or the stream to a collector).
 *
 * Why strings come first: a record that uses string S was emitted after S was
 * queued; if the snapshot saw that record, the queue append is visible when the
 * writer takes the queue's lock afterwards, so S lands in the file earlier.
 */
#include <errno.h>
#include <string.h>

#include "writer.h"

/* Compresses and writes the current chunk as one frame, then empties it. */
static void frame_flush(struct writer *w) {
  if (!w->chunk.len) return;
  int saved = errno;
  uint64_t begin = ctp_now_ns();
  /* Nowhere to write (a lost collector, a closed descriptor): not even compressed. */
  const char *why = w->sink.fd >= 0 ? NULL : w->sink.stream ? "no connection" : "no trace file";
  size_t n = why ? 0 : ct_chunk_compress(&w->chunk, w->cctx, ctp_cfg.zstd_level, w->out, w->out_cap);
  if (!n && !why) why = "compression failed";
  if (n && w->sink.fd >= 0 && !ctp_sink_intact(&w->sink)) {
    /* The program closed our descriptor (closefrom, a daemon's clean-up) and the
     * number may now be one of its own files: never write there again. */
    w->sink.fd = -1;
    why = w->sink.stream ? "the program closed the stream's descriptor"
                         : "the program closed the trace file's descriptor";
  }
  int ok = !why && ctp_sink_write(&w->sink, w->out, n) == 0;
  if (!ok && !why) {
    why = ctp_sink_reason(&w->sink, errno);
    /* A stream cut inside a frame cannot go on: the collector would get garbage. */
    if (w->sink.stream) ctp_sink_close(&w->sink);
  }
  if (ok) {
    w->written_records += w->chunk.records;
  } else {
    w->lost_records += w->chunk.records;
    if (!w->warned) {
      w->warned = 1;
      ctp_warn("cannot %s (%s); records are being lost", ctp_sink_failure(&w->sink), why);
    }
  }
  ct_chunk_reset(&w->chunk);
  /* A frame of only the writer's own TRACER records is not reported in turn:
   * otherwise an idle process would write one frame per CUTRACE_FLUSH_MS forever. */
  if (w->in_thread && w->chunk_has_program)
    ctp_emit_tracer("flush", begin, ctp_now_ns(), ok ? n : 0);
  w->chunk_has_program = 0;
  errno = saved;
}

static void add_record(struct writer *w, const ct_record *rec) {
  if (!w->chunk.len) w->chunk_start_ns = ctp_now_ns();
  if (ct_chunk_add(&w->chunk, rec) < 0) {
    frame_flush(w);
    w->chunk_start_ns = ctp_now_ns();
    if (ct_chunk_add(&w->chunk, rec) < 0) return; /* cannot happen: cap >= one record */
  }
  if (rec->kind == CT_KIND_DROP) w->dropped += rec->u.drop.count;
  if (w->chunk.len + CT_MAX_RECORD_BYTES > ctp_cfg.frame_bytes) frame_flush(w);
}

static void add_string(void *arg, uint64_t id, const char *s, size_t len) {
  struct writer *w = arg;
  w->chunk_has_program = 1;
  if (w->chunk.len + len + CT_MAX_RECORD_BYTES > w->chunk.cap) frame_flush(w);
  if (!w->chunk.len) w->chunk_start_ns = ctp_now_ns();
  if (ct_chunk_add_string(&w->chunk, id, s, len) < 0) return;
  if (w->chunk.len + CT_MAX_RECORD_BYTES > ctp_cfg.frame_bytes) frame_flush(w);
}

/* Writes a PAUSE record (window.c's transitions). */
static void add_pause(void *arg, const ct_record *rec) {
  struct writer *w = arg;
  w->chunk_has_program = 1;
  add_record(w, rec);
}

/* Writes a DROP record for drops of b up to cumulative count total not yet in the file. */
static void add_drop(struct writer *w, struct ctp_tbuf *b, uint64_t total, uint64_t first_ns,
                     uint64_t last_ns) {
  if (total <= b->drops_written) return;
  ct_record r;
  r.kind = CT_KIND_DROP;
  r.u.drop = (struct ct_drop){.tid = b->tid, .count = total - b->drops_written,
                              .first_ns = first_ns, .last_ns = last_ns};
  b->drops_written = total;
  add_record(w, &r);
}

/* Moves b's records up to its snapshot into the chunk. */
static void drain_buffer(struct writer *w, struct ctp_tbuf *b) {
  uint64_t t = b->tail, end = b->snap_head, m = b->mask;
  const uint64_t *ring = b->ring;
  if (t != end && b->tid != (uint64_t)w->thread_tid) w->chunk_has_program = 1;
  ct_record r;
  unsigned since_release = 0;
  while (t < end) {
    uint64_t hdr = ring[t & m];
    unsigned nf = (unsigned)(hdr >> 8) & 0xff;
    if (CTP_UNLIKELY(nf > CT_MAX_FIELDS || (uint8_t)hdr >= CT_MAX_KINDS ||
                     ct_kind_nfields((uint8_t)hdr) != nf)) {
      t = end; /* not a record header: never expected; skip what is left */
      break;
    }
    r.kind = (uint8_t)hdr;
    for (unsigned i = 0; i < nf; i++) r.u.v[i] = ring[(t + 1 + i) & m];
    t += 1 + nf;
    if (r.kind == CT_KIND_DROP)
      add_drop(w, b, r.u.drop.count, r.u.drop.first_ns, r.u.drop.last_ns);
    else
      add_record(w, &r);
    w->taken_records++;
    if (++since_release == 4096) { /* give the producer its space back early */
      __atomic_store_n(&b->tail, t, __ATOMIC_RELEASE);
      since_release = 0;
    }
  }
  __atomic_store_n(&b->tail, t, __ATOMIC_RELEASE);
  __atomic_store_n(&b->kicked, 0, __ATOMIC_RELAXED);
}

/*
 * One round: strings, the first records (PROCESS, JOB, ...), then every buffer. Drops not yet in
 * the ring are reported for exited threads, and for every thread when the round
 * is final or urgent (a fatal signal); final also always writes the chunk.
 */
void ctp_writer_pass(struct writer *w, int final) {
  unsigned urgent = __atomic_load_n(&w->urgent_req, __ATOMIC_ACQUIRE);
  struct ctp_tbuf *list = ctp_buffers_head();
  for (struct ctp_tbuf *b = list; b; b = b->next)
    b->snap_head = __atomic_load_n(&b->head, __ATOMIC_ACQUIRE);
  ctp_strings_drain(add_string, w);
  if (w->process_pending) {
    w->chunk_has_program = 1;
    for (unsigned i = 0; i < w->nfirst; i++) add_record(w, &w->first[i]);
    w->process_pending = 0;
  }
  /* After the snapshot: every record in it that followed a pause's beginning or end
   * comes after that PAUSE record (window.c). */
  ctp_window_drain(add_pause, w);
  for (struct ctp_tbuf *b = list; b; b = b->next) {
    if (b->announce) {
      ct_record t;
      t.kind = CT_KIND_THREAD;
      t.u.thread = (struct ct_thread){.tid = b->tid, .name = b->name_id, .start_ns = b->start_ns};
      add_record(w, &t);
      b->announce = 0;
    }
    drain_buffer(w, b);
    int done = __atomic_load_n(&b->done, __ATOMIC_ACQUIRE);
    if ((done && b->tail == __atomic_load_n(&b->head, __ATOMIC_ACQUIRE)) || final ||
        urgent != w->urgent_done)
      add_drop(w, b, __atomic_load_n(&b->drops_total, __ATOMIC_ACQUIRE), b->drop_first_ns,
               b->drop_last_ns);
  }
  if (!final) ctp_buffers_reap();
  if (w->chunk.len &&
      (final || urgent != w->urgent_done || ctp_now_ns() - w->chunk_start_ns >= ctp_cfg.flush_ns))
    frame_flush(w);
  __atomic_store_n(&w->urgent_done, urgent, __ATOMIC_RELEASE);
}

/* The last round: everything left, the END record, close. */
void ctp_writer_finish_file(struct writer *w) {
  w->in_thread = 0; /* no TRACER records: nothing would write them */
  ctp_writer_pass(w, 0); /* a thread that exited meanwhile: its last DROP */
  ctp_writer_pass(w, 1);
  ct_record end;
  end.kind = CT_KIND_END;
  end.u.end = (struct ct_end){.records = w->written_records + w->chunk.records,
                              .drops = w->dropped + w->lost_records,
                              .end_ns = ctp_now_ns()};
  add_record(w, &end);
  frame_flush(w);
  ctp_sink_close(&w->sink);
}
