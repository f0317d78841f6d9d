/*
 * GPU idle-time analysis: findings (launch-bound runs, copies from pageable memory,
 * synchronous copies, syncs that waited on little GPU work, gaps spent allocating) and
 * their fixes.
 */
#include "gaps_internal.h"

#include <stdio.h>
#include <string.h>
#include <stdlib.h>

static void close_run(fstate *f, devstate *d) {
  if (d->run_count >= f->g->o.launch_bound_min && d->run_count) {
    d->lb_stretches++;
    d->lb_kernels += d->run_count;
    d->lb_gpu += d->run_gpu;
    d->lb_cpu += d->run_cpu;
    if (d->run_count > d->lb_longest) {
      d->lb_longest = d->run_count;
      d->lb_first = d->run_first;
      d->lb_last = d->run_last;
    }
  }
  d->run_count = d->run_gpu = d->run_cpu = 0;
}

static void add_copy(copystat *c, unsigned kind, uint64_t bytes, uint64_t gpu, uint64_t cpu,
                     uint64_t s, uint64_t e) {
  if (!c->count++) c->first_ns = s;
  c->kinds |= 1u << kind;
  c->bytes += bytes;
  c->gpu_ns += gpu;
  c->cpu_ns += cpu;
  c->last_ns = max_u64(c->last_ns, e);
}

/* Launch-bound runs and copy patterns, per activity in delivery order. */
void ct_gaps_findings_on_activity(fstate *f, devstate *d, const ct_activity *a) {
  uint64_t dur = a->end_ns - a->start_ns;
  uint64_t call = a->has_call && a->call_end_ns > a->call_begin_ns ? a->call_end_ns - a->call_begin_ns : 0;
  if (a->type == CT_GPU_KERNEL || a->type == CT_GPU_GEMM) {
    if (a->has_call && dur < call + call / 4) { /* no longer than its launch, within 25% */
      if (!d->run_count) d->run_first = a->start_ns;
      d->run_count++;
      d->run_last = max_u64(d->run_last, a->end_ns);
      d->run_gpu += dur;
      d->run_cpu += call;
    } else {
      close_run(f, d);
    }
    return;
  }
  close_run(f, d);
  if (a->type != CT_GPU_MEMCPY) return;
  uint64_t kind = 0, bytes = 0;
  int pageable = 0, sync = 0;
  if (a->detail == CT_DETAIL_MEMOP) {
    kind = a->d.memop.kind < 16 ? a->d.memop.kind : 0;
    bytes = a->d.memop.bytes;
    pageable = a->d.memop.src_mem == CT_MEM_PAGEABLE || a->d.memop.dst_mem == CT_MEM_PAGEABLE;
    sync = !a->d.memop.async;
  } else if (a->api) {
    sync = !strstr(a->api, "Async");
  }
  if (pageable) add_copy(&d->pageable, (unsigned)kind, bytes, dur, call, a->start_ns, a->end_ns);
  if (a->detail == CT_DETAIL_MEMOP && bytes && dur) {
    const struct ct_memop *m = &a->d.memop;
    int pinned = (m->src_mem == CT_MEM_PINNED && m->dst_mem == CT_MEM_DEVICE) ||
                 (m->src_mem == CT_MEM_DEVICE && m->dst_mem == CT_MEM_PINNED);
    if (pageable || pinned) {
      typeof(d->rate_pinned[0]) *r = pageable ? &d->rate_pageable[kind] : &d->rate_pinned[kind];
      r->bytes += bytes;
      r->gpu_ns += dur;
    }
  }
  if (sync && a->has_call) add_copy(&d->synccopy, (unsigned)kind, bytes, dur, call, a->start_ns, a->end_ns);
  if (sync && a->has_call && pageable) add_copy(&d->both, (unsigned)kind, bytes, dur, call, a->start_ns, a->end_ns);
}

/* Whether a call blocks the CPU until GPU work completes, or polls it (cls: NAME_* bits of its name). */
int ct_gaps_is_blocking(const ct_span *s, unsigned cls) {
  if (cls & (NAME_SYNCHRONIZE | NAME_POLL)) return 1; /* a poll of GPU work waits as a sync does */
  if (cls & NAME_ASYNC) return 0;
  if (s->detail == CT_DETAIL_MEMOP) return !s->d.memop.async && s->d.memop.kind != CT_MEMOP_MEMSET;
  return (cls & NAME_MEMCPY) != 0;
}

/* Whether the device gap [a, b] was opened by the return of the sync [begin, end]: the
 * GPU went idle during the call (or just after it, GPU clocks mapped onto the host's). */
static int sync_opened_gap(uint64_t begin, uint64_t end, uint64_t a) {
  return a >= begin && a <= end + SYNC_GAP_SLACK_NS;
}

/* Counts the gap [a, b] that the little sync [begin, end] opened: its idle, and its
 * idle after the sync returned (the part inside the call is in the calls - GPU). */
static void count_sync_gap(devstate *d, uint64_t end, uint64_t a, uint64_t b) {
  d->ls_gaps++;
  d->ls_gap_idle += b - a;
  uint64_t from = max_u64(a, end);
  if (b <= from) return;
  d->ls_after_idle += b - from;
  unsigned k = ring_next_slot(&d->lsa_head, &d->lsa_n, LS_AFTER_RING);
  d->lsafter[k].from = from; /* a later little sync may begin inside it */
  d->lsafter[k].to = b;
}

/* Whether the gap [a, b] lasted at most max_after after the return (end) of a sync. */
static int short_after(uint64_t end, uint64_t a, uint64_t b, uint64_t max_after) {
  uint64_t from = max_u64(a, end);
  return b <= from || b - from <= max_after;
}

/* A device gap [a, b] of cause sync (max_after UINT64_MAX), or launch_overhead (max_after
 * the launch threshold: it counts only when it lasted at most that after the sync's
 * return): judges first the pending syncs that ended before b (their GPU time is final:
 * the gap's start is), then counts the gap for the latest unmatched little sync that
 * opened it, else keeps it for a sync judged later. */
void ct_gaps_findings_on_sync_gap(fstate *f, devstate *d, uint64_t a, uint64_t b, uint64_t max_after) {
  ct_gaps_judge_syncs(f, d, b);
  typeof(d->lsync[0]) *best = NULL;
  for (unsigned i = d->lsync_n; i-- > 0;) { /* newest first: judged in end order */
    typeof(d->lsync[0]) *s = &d->lsync[(d->lsync_head + i) % PENDING_SYNCS];
    if (!s->end) continue; /* matched */
    if (s->end + SYNC_GAP_SLACK_NS < a) break; /* it and the older ones returned too early */
    if (sync_opened_gap(s->begin, s->end, a) && short_after(s->end, a, b, max_after) &&
        (!best || s->begin > best->begin))
      best = s;
  }
  if (best) {
    count_sync_gap(d, best->end, a, b);
    best->begin = best->end = 0; /* matched */
    f->ls_state = LS_YES;
    return;
  }
  unsigned k = ring_next_slot(&d->sgap_head, &d->sgap_n, PENDING_SYNCS);
  d->sgap[k] = (struct sync_gap){.a = a, .b = b, .max_after = max_after};
  f->ls_state = LS_PENDING; /* the other findings' parts of it wait with it */
  f->ls_slot = k;
}

/* Judges a sync call whose time is final: counted when it waited on little GPU work,
 * with the sync gap its return opened when that gap is known, else kept to match it. */
static void judge_sync(fstate *f, devstate *d, uint64_t begin, uint64_t end, const char *name) {
  uint64_t busy = ct_gaps_busy_between(d, begin, end);
  if (!busy || busy >= f->g->o.sync_work_ns) return; /* nothing to wait on, or enough */
  if (!d->ls_count++) {
    d->ls_first = begin;
    d->ls_name = name;
  }
  d->ls_last = end;
  d->ls_cpu += end - begin;
  d->ls_gpu += busy;
  for (unsigned i = 0; i < d->lsa_n; i++) { /* idle after an earlier one's return: counted */
    unsigned k = (d->lsa_head + i) % LS_AFTER_RING;
    d->ls_twice += overlap(begin, end, d->lsafter[k].from, d->lsafter[k].to);
  }
  for (unsigned i = d->sgap_n; i-- > 0;) { /* newest first: classified in time order */
    typeof(d->sgap[0]) *g = &d->sgap[(d->sgap_head + i) % PENDING_SYNCS];
    if (!g->b) continue; /* matched */
    if (g->a < begin) break; /* it and the older ones began before this sync */
    if (sync_opened_gap(begin, end, g->a) && short_after(end, g->a, g->b, g->max_after)) {
      count_sync_gap(d, end, g->a, g->b);
      for (unsigned m = 0; m < CT_MEET_N; m++) d->meet[m] += g->meet[m];
      ct_gaps_enders_held_lsync(f, g);
      g->a = g->b = 0; /* matched */
      return;
    }
  }
  unsigned k = ring_next_slot(&d->lsync_head, &d->lsync_n, PENDING_SYNCS);
  d->lsync[k].begin = begin;
  d->lsync[k].end = end;
}

/* A device gap [a, b] of cause c ended by op: the time its launching thread spent in
 * copy and set calls (calls that queue work but launch no kernel) inside it, and the
 * parts of it that two kinds of findings may both claim (CT_MEET_*: the graph
 * candidates' wait, the launch-bound runs' launch call and the copies' calls, inside an
 * alloc gap or a gap a little sync's return opened; fstate.ls_state). */
void ct_gaps_findings_on_gap(fstate *f, devstate *d, uint64_t a, uint64_t b, enum ct_gap_cause c,
                             const opinfo *op) {
  const thstate *th = op->has_call ? ct_gaps_find_thread(f, op->tid) : NULL;
  uint64_t copies = 0;
  if (th && th->copy_end > a) /* a copy call of the thread reaches into the gap */
    for (unsigned i = ring_skip_after(&th->calls, b); i < th->calls.n; i++) {
      const span_ring_entry *e = ring_back(&th->calls, i);
      if (e->end <= a) {
        if (!th->calls.disorder) break; /* older entries end before a too */
        continue;
      }
      if (is_copy_call(e)) copies += overlap(e->begin, e->end, a, b);
    }
  d->copy_in_gaps += copies;
  if (c != CT_GAP_ALLOC && f->ls_state == LS_NO) return;
  /* the graph candidates' wait: from the previous kernel's end, the whole gap when it
   * began after it (a device gap inside the stream's wait) */
  uint64_t graph = op->wait_from && op->wait_from < b ? b - max_u64(a, op->wait_from) : 0;
  uint64_t launch = op->short_kernel ? overlap(op->call_begin, op->call_end, a, b) : 0;
  if (graph && (c == CT_GAP_ALLOC || f->ls_state == LS_YES)) { /* kept by kernel pair */
    struct meet_pair *m = NULL;
    for (unsigned i = 0; i < d->npairs && !m; i++)
      if (d->pairs[i].tid == op->tid && d->pairs[i].stream == op->stream && d->pairs[i].prev == op->wait_after &&
          d->pairs[i].next == op->name)
        m = &d->pairs[i];
    if (!m && d->npairs < MEET_PAIRS) {
      m = &d->pairs[d->npairs++];
      *m = (struct meet_pair){op->tid, op->stream, op->wait_after, op->name, {0, 0}};
    }
    if (m) {
      if (c == CT_GAP_ALLOC) m->ns[0] += graph;
      if (f->ls_state == LS_YES) m->ns[1] += graph;
      graph = 0; /* kept: not in the device's parts below */
    }
  }
  if (c == CT_GAP_ALLOC) {
    d->meet[CT_MEET_GRAPH_ALLOC] += graph;
    d->meet[CT_MEET_LAUNCH_ALLOC] += launch;
    d->meet[CT_MEET_COPY_ALLOC] += copies;
  }
  uint64_t *lsync = f->ls_state == LS_YES       ? d->meet
                    : f->ls_state == LS_PENDING ? d->sgap[f->ls_slot].meet
                                                : NULL;
  if (lsync) {
    lsync[CT_MEET_GRAPH_LSYNC] += graph;
    lsync[CT_MEET_LAUNCH_LSYNC] += launch;
    lsync[CT_MEET_COPY_LSYNC] += copies;
  }
}

/* Judges the pending syncs that end before horizon (all GPU work overlapping them is final). */
void ct_gaps_judge_syncs(fstate *f, devstate *d, uint64_t horizon) {
  while (d->psync_n && d->psync[d->psync_head].end < horizon) {
    judge_sync(f, d, d->psync[d->psync_head].begin, d->psync[d->psync_head].end,
               d->psync[d->psync_head].name);
    d->psync_head = (d->psync_head + 1) % PENDING_SYNCS;
    d->psync_n--;
  }
}

/* A sync call: judged once the GPU time around it is final (GPU clocks mapped onto the
 * host clock may put the end of the work it waited on just after the call's end). */
void ct_gaps_findings_on_sync(fstate *f, const ct_span *s, const char *name) {
  devstate *d = NULL;
  for (unsigned i = 0; i < f->ndevs; i++)
    if (f->devs[i]->device == s->device) d = f->devs[i];
  if (!d) return; /* no GPU work on that device yet: nothing to judge */
  if (d->psync_n == PENDING_SYNCS) ct_gaps_judge_syncs(f, d, d->psync[d->psync_head].end + 1);
  unsigned k = (d->psync_head + d->psync_n++) % PENDING_SYNCS;
  d->psync[k].begin = s->begin_ns;
  d->psync[k].end = s->end_ns;
  d->psync[k].name = name;
}

/* Appends a finding to the analysis (dropped when out of memory). */
void ct_gaps_add_finding(struct ct_gaps *g, const ct_gaps_finding *fd) {
  if (g->nfinds == g->cap_finds) {
    unsigned ncap = g->cap_finds ? 2 * g->cap_finds : 16;
    ct_gaps_finding *nf = realloc(g->finds, ncap * sizeof *nf);
    if (!nf) return;
    g->finds = nf;
    g->cap_finds = ncap;
  }
  g->finds[g->nfinds++] = *fd;
}

/* The transfer time pinned memory would save on d's pageable copies, at the rate its
 * pinned copies of the same direction ran (bytes per GPU ns, this trace); *measured: 0
 * when a direction has no pinned copy to measure (the saving is then a lower bound). */
static uint64_t pinned_rate_saving(const devstate *d, int *measured) {
  double saved = 0;
  *measured = 1;
  for (unsigned k = 0; k < sizeof d->rate_pinned / sizeof d->rate_pinned[0]; k++) {
    const typeof(d->rate_pinned[0]) *pg = &d->rate_pageable[k], *pin = &d->rate_pinned[k];
    if (!pg->bytes) continue;
    if (!pin->bytes || !pin->gpu_ns) {
      *measured = 0;
      continue;
    }
    double at_pinned = (double)pg->bytes * (double)pin->gpu_ns / (double)pin->bytes;
    if ((double)pg->gpu_ns > at_pinned) saved += (double)pg->gpu_ns - at_pinned;
  }
  return (uint64_t)(saved + 0.5);
}

/* Adds the findings of device d to the analysis (at the end of its file). */
void ct_gaps_device_findings(fstate *f, devstate *d) {
  struct ct_gaps *g = f->g;
  ct_gaps_finding fd;
  close_run(f, d);
  if (d->lb_stretches) {
    fd = (ct_gaps_finding){CT_FIND_LAUNCH_BOUND, f->proc, d->device, "kernels", d->lb_kernels,
                           d->lb_stretches, 0, d->lb_gpu, d->lb_cpu, d->lb_first, d->lb_last,
                           d->lb_longest,
                           "launch-bound: CUDA graphs or torch.compile(mode='reduce-overhead') "
                           "would help (or fuse the kernels)",
                           0, 0, 0, 0, 0,
                           /* the launches' excess */
                           .saving_ns = d->lb_cpu > d->lb_gpu ? d->lb_cpu - d->lb_gpu : 0};
    ct_gaps_add_finding(g, &fd);
  }
  for (int sync = 0; sync < 2; sync++) {
    const copystat *c = sync ? &d->synccopy : &d->pageable;
    if (!c->count || c->count < g->o.repeat_min) continue;
    char dirs[64] = "";
    for (unsigned k = 0; k < 16; k++) {
      if (!(c->kinds & (1u << k))) continue;
      const char *label = ct_memop_label(k);
      if (!strncmp(label, "memcpy ", 7)) label += 7;
      snprintf(dirs + strlen(dirs), sizeof dirs - strlen(dirs), "%s%s", *dirs ? "," : "", label);
    }
    fd = (ct_gaps_finding){sync ? CT_FIND_SYNC_COPY : CT_FIND_PAGEABLE_COPY, f->proc, d->device,
                           ct_gaps_intern(g, dirs), c->count, 0, c->bytes, c->gpu_ns, c->cpu_ns,
                           c->first_ns, c->last_ns, 0,
                           sync ? "use cudaMemcpyAsync with pinned memory and synchronise once "
                                  "where the data is needed"
                                : "use pinned memory (cudaHostAlloc/cudaHostRegister) and "
                                  "cudaMemcpyAsync",
                           0, 0, 0, 0, 0,
                           /* the calls beyond the transfers */
                           .saving_ns = c->cpu_ns > c->gpu_ns ? c->cpu_ns - c->gpu_ns : 0};
    fd.shared_copies_ns = d->both.cpu_ns > d->both.gpu_ns ? d->both.cpu_ns - d->both.gpu_ns : 0;
    fd.copies_in_gaps_ns = d->copy_in_gaps;
    if (!sync) { /* and the transfers at the pinned rate */
      int measured;
      fd.transfer_saving_ns = pinned_rate_saving(d, &measured);
      fd.saving_ns += fd.transfer_saving_ns;
      fd.lower_bound = !measured;
    }
    ct_gaps_add_finding(g, &fd);
  }
  const tracker *comm = &d->ov[OV_COMM];
  uint64_t exposed = 0, overlap = 0;
  if (d->has_comm) {
    uint64_t both = d->ov[OV_KERNELS].u.busy_ns, sum = comm->u.busy_ns + d->ov[OV_COMPUTE].u.busy_ns;
    overlap = sum > both ? sum - both : 0;
    exposed = comm->u.busy_ns > overlap ? comm->u.busy_ns - overlap : 0;
  }
  if (exposed && comm->u.activities >= g->o.repeat_min &&
      exposed >= EXPOSED_COMM_SHARE * (double)ct_gaps_observed_ns(&d->t.u)) {
    fd = (ct_gaps_finding){CT_FIND_EXPOSED_COMM, f->proc, d->device, "communication",
                           comm->u.activities, 0, 0, exposed, 0, comm->u.first_ns,
                           comm->u.last_ns, 0,
                           "overlap communication with compute: gradient buckets that start "
                           "during backward (DDP bucket_cap_mb), FSDP forward/backward prefetch, "
                           "collectives on their own stream",
                           0, 0, 0, 0, 0, .saving_ns = exposed};
    ct_gaps_add_finding(g, &fd);
  }
  if (d->al_count >= g->o.repeat_min) {
    unsigned best = 0;
    for (unsigned k = 1; k < sizeof d->al_names / sizeof d->al_names[0]; k++)
      if (d->al_names[k] && d->al_name_ns[k] > d->al_name_ns[best]) best = k;
    fd = (ct_gaps_finding){CT_FIND_ALLOC, f->proc, d->device,
                           d->al_names[best] ? d->al_names[best] : "allocation calls",
                           d->al_count, 0, 0, 0, d->al_cpu, d->al_first, d->al_last, 0,
                           "allocate once and reuse the buffers, or use a caching allocator "
                           "or a memory pool (cudaMallocAsync/cudaFreeAsync with a release "
                           "threshold); cudaFree waits for the GPU. PyTorch: do not call "
                           "torch.cuda.empty_cache() inside the loop",
                           0, 0, 0, d->al_idle, 0, .saving_ns = d->al_idle};
    ct_gaps_add_finding(g, &fd);
  }
  if (d->ls_count && (d->ls_count >= g->o.repeat_min || d->ls_cpu >= LITTLE_SYNC_TOTAL_NS)) {
    fd = (ct_gaps_finding){CT_FIND_LITTLE_SYNC, f->proc, d->device, d->ls_name, d->ls_count, 0, 0,
                           d->ls_gpu, d->ls_cpu, d->ls_first, d->ls_last, 0,
                           "remove the sync or move it to where its result is needed: after it "
                           "returns the GPU idles until the next launch",
                           0, 0, 0, d->ls_gap_idle, 0,
                           /* the wait beyond the work, and the drained queue after it */
                           .saving_ns = (d->ls_cpu > d->ls_gpu ? d->ls_cpu - d->ls_gpu : 0) +
                                        (d->ls_after_idle > d->ls_twice ? d->ls_after_idle - d->ls_twice : 0),
                           .sync_gaps = d->ls_gaps, .sync_after_ns = d->ls_after_idle};
    ct_gaps_add_finding(g, &fd);
  }
}

/* The idle part of a finding's saving: what it claims of the device's idle time. */
static uint64_t idle_claim(const ct_gaps_finding *fd) { return fd->saving_ns - fd->not_idle_ns; }

/* Whether a finding is a slow launching call that launched work (the launch calls' time),
 * not one that only began gaps (pattern starts_gaps: a call that queues no work). */
static int slow_launch(const ct_gaps_finding *fd) {
  return fd->kind == CT_FIND_SLOW_CALL && !(fd->pattern && !strcmp(fd->pattern, "starts_gaps"));
}

/* Which part of graph candidate gr's claim finding o may share: 0 the waits inside
 * the kernels' launch calls (launch-bound runs, a slow launching call of the same thread:
 * the launch calls' time), 1 the rest (a host-bound launch of the same thread: its time
 * outside CUDA), -1 none. tid 0: several threads or not known. */
static int graph_part(const ct_gaps_finding *gr, const ct_gaps_finding *o) {
  int same_thread = !o->tid || o->tid == gr->tid;
  if (o->kind == CT_FIND_LAUNCH_BOUND || (slow_launch(o) && same_thread)) return 0;
  if (o->kind == CT_FIND_HOST_BOUND && same_thread) return 1;
  return -1;
}

/* Takes at most limit from the device's part m (enum ct_gaps_meet): time two kinds of
 * findings may both claim, shared once however many findings of those kinds meet on it. */
static uint64_t take_meet(uint64_t *meet, enum ct_gaps_meet m, uint64_t limit) {
  uint64_t t = min_u64(meet[m], limit);
  meet[m] -= t;
  return t;
}

static int is_copy_kind(enum ct_finding_kind k) { return k == CT_FIND_PAGEABLE_COPY || k == CT_FIND_SYNC_COPY; }

/* The part of finding b's idle claim that finding a (of the same device, above it)
 * already counts, at most limit: what the two measured in common, gap by gap (meet: the
 * device's CT_MEET_* parts left, taken from), or, for a slow launching call that is a
 * copy and the copy findings, the smaller claim inside the larger (docs/gaps.md,
 * "Findings add up": the matrix). */
static uint64_t shared_claim(const ct_gaps_finding *a, const ct_gaps_finding *b, uint64_t *meet,
                             uint64_t limit) {
  enum ct_finding_kind x = a->kind, y = b->kind;
  limit = min_u64(limit, min_u64(idle_claim(a), idle_claim(b)));
  if (is_copy_kind(x) && is_copy_kind(y)) /* the copies that are both */
    return min_u64(a->shared_copies_ns, limit);
  const ct_gaps_finding *slow = x == CT_FIND_SLOW_CALL ? a : y == CT_FIND_SLOW_CALL ? b : NULL;
  enum ct_finding_kind other = slow == a ? y : x;
  if (slow && other == CT_FIND_ALLOC) return min_u64(slow->held_alloc_ns, limit);
  if (slow && other == CT_FIND_LITTLE_SYNC) return min_u64(slow->held_lsync_ns, limit);
  const ct_gaps_finding *graph = x == CT_FIND_GRAPH_CANDIDATE ? a : y == CT_FIND_GRAPH_CANDIDATE ? b : NULL;
  other = graph == a ? y : x;
  if (graph && other == CT_FIND_ALLOC) return min_u64(graph->held_alloc_ns, limit);
  if (graph && other == CT_FIND_LITTLE_SYNC) return min_u64(graph->held_lsync_ns, limit);
  if (slow_launch(a) && y == CT_FIND_LAUNCH_BOUND) return min_u64(a->held_launch_ns, limit);
  if (x == CT_FIND_LAUNCH_BOUND && slow_launch(b)) return min_u64(b->held_launch_ns, limit);
  if (slow && is_copy_kind(other) && slow->what && (strstr(slow->what, "emcpy") || strstr(slow->what, "emset")))
    return limit; /* a slow call that is a copy: the same calls' time */
  /* alloc_in_loop and sync_little_work claim their gaps whole: the others' parts there */
  enum ct_finding_kind gap_kind = x == CT_FIND_ALLOC || x == CT_FIND_LITTLE_SYNC ? x : y;
  enum ct_finding_kind in_kind = gap_kind == x ? y : x;
  if (gap_kind != CT_FIND_ALLOC && gap_kind != CT_FIND_LITTLE_SYNC) return 0;
  int alloc = gap_kind == CT_FIND_ALLOC;
  if (in_kind == CT_FIND_LAUNCH_BOUND)
    return take_meet(meet, alloc ? CT_MEET_LAUNCH_ALLOC : CT_MEET_LAUNCH_LSYNC, limit);
  if (is_copy_kind(in_kind)) return take_meet(meet, alloc ? CT_MEET_COPY_ALLOC : CT_MEET_COPY_LSYNC, limit);
  return 0; /* apart by construction (the matrix) */
}

/* A finding's or a device's place, ordered by (process, device, place). */
typedef struct devkey {
  unsigned proc;
  uint64_t device;
  unsigned at;
} devkey;

static int cmp_devkey(const void *x, const void *y) {
  const devkey *a = x, *b = y;
  if (a->proc != b->proc) return a->proc < b->proc ? -1 : 1;
  if (a->device != b->device) return a->device < b->device ? -1 : 1;
  return a->at < b->at ? -1 : a->at > b->at;
}

/* What the accounting of one device has used up so far: the device's CT_MEET_* parts
 * left, each graph candidate's two parts left (graph_part: shared at most once over all
 * the findings that meet it), and the findings' total. */
typedef struct account_state {
  uint64_t meet[CT_MEET_N];
  uint64_t (*left_part)[2]; /* by place in at[] */
  uint64_t total;
} account_state;

/* Accounts finding at[i] below the findings at[order[0..nabove)] of device dev, in st:
 * its overlap with them and what it adds (written into the finding when commit, else
 * only returned). */
static uint64_t account_one(struct ct_gaps *g, const devkey *at, const unsigned *order, unsigned nabove, unsigned i,
                            const ct_gaps_device *dev, account_state *st, int commit) {
  ct_gaps_finding *fd = &g->finds[at[i].at];
  uint64_t shared = 0, meets[2] = {0, 0}; /* a graph candidate: the claims above of each part */
  for (unsigned a = 0; a < nabove; a++) {
    unsigned k = order[a];
    const ct_gaps_finding *above = &g->finds[at[k].at];
    uint64_t room = idle_claim(fd) > shared ? idle_claim(fd) - shared : 0;
    int part;
    if (fd->kind == CT_FIND_GRAPH_CANDIDATE && (part = graph_part(fd, above)) >= 0) {
      meets[part] += idle_claim(above);
    } else if (above->kind == CT_FIND_GRAPH_CANDIDATE && (part = graph_part(above, fd)) >= 0) {
      uint64_t take = min_u64(st->left_part[k][part], room);
      st->left_part[k][part] -= take;
      shared += take;
    } else {
      shared += shared_claim(above, fd, st->meet, room);
    }
  }
  for (int part = 0; part < 2 && fd->kind == CT_FIND_GRAPH_CANDIDATE; part++) {
    uint64_t take = min_u64(st->left_part[i][part], meets[part]);
    st->left_part[i][part] -= take;
    shared += take;
  }
  uint64_t overlap = min_u64(shared, idle_claim(fd));
  uint64_t left = dev->u.idle_ns > st->total ? dev->u.idle_ns - st->total : 0;
  uint64_t adds = min_u64(idle_claim(fd) - overlap, left);
  st->total += adds;
  if (commit) {
    fd->overlap_ns = overlap;
    fd->adds_ns = adds;
  }
  return adds;
}

#define GREEDY_MAX 64 /* findings of one device chosen by what they add; more: saving order */

/* Accounts the findings at[0..n) of device dev (at[] in saving order), choosing at each
 * step the one that adds the most on top of those chosen before (ties: the larger
 * saving, then the earlier in at[]; more than GREEDY_MAX findings: in saving order);
 * their order, into rank[] (the place of each). */
static void account_device(struct ct_gaps *g, const devkey *at, unsigned n, ct_gaps_device *dev,
                           unsigned *rank) {
  account_state st, trial;
  unsigned *order = malloc(n * sizeof *order);
  st.left_part = calloc(n, sizeof *st.left_part);
  trial.left_part = calloc(n, sizeof *trial.left_part);
  char *chosen = calloc(n, 1);
  if (!order || !st.left_part || !trial.left_part || !chosen) { /* out of memory: nothing added up */
    for (unsigned i = 0; i < n; i++) rank[i] = i;
    goto out;
  }
  memcpy(st.meet, dev->meet, sizeof st.meet);
  st.total = 0;
  for (unsigned i = 0; i < n; i++) {
    const ct_gaps_finding *fd = &g->finds[at[i].at];
    if (fd->kind != CT_FIND_GRAPH_CANDIDATE) continue;
    st.left_part[i][0] = min_u64(fd->in_calls_ns, idle_claim(fd));
    st.left_part[i][1] = idle_claim(fd) - st.left_part[i][0];
  }
  for (unsigned step = 0; step < n; step++) {
    unsigned best = n;
    uint64_t best_adds = 0;
    for (unsigned i = 0; i < n; i++) {
      if (chosen[i]) continue;
      if (n > GREEDY_MAX) { /* (n^3): in saving order */
        best = i;
        break;
      }
      memcpy(trial.meet, st.meet, sizeof st.meet);
      memcpy(trial.left_part, st.left_part, n * sizeof *st.left_part);
      trial.total = st.total;
      uint64_t adds = account_one(g, at, order, step, i, dev, &trial, 0);
      /* at[] is in saving order: the first of equal adds has the larger saving */
      if (best == n || adds > best_adds) {
        best = i;
        best_adds = adds;
      }
    }
    account_one(g, at, order, step, best, dev, &st, 1);
    chosen[best] = 1;
    rank[best] = step;
    order[step] = best;
  }
  dev->findings_ns = st.total;
out:
  free(order);
  free(st.left_part);
  free(trial.left_part);
  free(chosen);
}

/* Puts the findings in the order they were accounted per device, the devices' lists
 * merged by what their next finding adds (then its saving, then the process and
 * device): largest first. rank: each finding's place in its device's order. */
static void order_findings(struct ct_gaps *g, devkey *fk, const unsigned *rank) {
  unsigned n = g->nfinds;
  /* fk[]: by process and device, each device's run in saving order; reordered by rank */
  devkey *tmpk = malloc(n * sizeof *tmpk);
  ct_gaps_finding *out = malloc(n * sizeof *out);
  unsigned *head = malloc((n + 1) * sizeof *head), *end = malloc((n + 1) * sizeof *end);
  if (!tmpk || !out || !head || !end) goto done;
  unsigned nd = 0;
  for (unsigned i = 0, m; i < n; i += m) {
    for (m = 1; i + m < n && fk[i + m].proc == fk[i].proc && fk[i + m].device == fk[i].device;) m++;
    for (unsigned k = 0; k < m; k++) tmpk[i + rank[i + k]] = fk[i + k];
    head[nd] = i;
    end[nd++] = i + m;
  }
  for (unsigned o = 0; o < n; o++) {
    unsigned best = nd;
    for (unsigned d = 0; d < nd; d++) {
      if (head[d] == end[d]) continue;
      if (best == nd) {
        best = d;
        continue;
      }
      const ct_gaps_finding *x = &g->finds[tmpk[head[d]].at], *y = &g->finds[tmpk[head[best]].at];
      if (x->adds_ns > y->adds_ns || (x->adds_ns == y->adds_ns && x->saving_ns > y->saving_ns)) best = d;
    }
    out[o] = g->finds[tmpk[head[best]++].at];
  }
  if (n) memcpy(g->finds, out, n * sizeof *out); /* (no findings: finds is NULL) */
done:
  free(tmpk);
  free(out);
  free(head);
  free(end);
}

void ct_gaps_account_findings(struct ct_gaps *g) {
  for (unsigned k = 0; k < g->ndevs; k++) g->devs[k].findings_ns = 0;
  for (unsigned i = 0; i < g->nfinds; i++) {
    ct_gaps_finding *fd = &g->finds[i];
    uint64_t claim = fd->saving_ns;
    if (fd->kind == CT_FIND_EXPOSED_COMM) claim = 0; /* busy time, not idle */
    if (fd->kind == CT_FIND_PAGEABLE_COPY || fd->kind == CT_FIND_SYNC_COPY)
      claim = min_u64(fd->saving_ns - fd->transfer_saving_ns, fd->copies_in_gaps_ns);
    fd->not_idle_ns = fd->saving_ns - claim;
    fd->overlap_ns = fd->adds_ns = 0;
  }
  /* the findings grouped by device, each group in saving order, and the devices */
  devkey *fk = malloc((g->nfinds + 1) * sizeof *fk), *dk = malloc((g->ndevs + 1) * sizeof *dk);
  unsigned *rank = malloc((g->nfinds + 1) * sizeof *rank);
  if (!fk || !dk || !rank) { /* out of memory: nothing is added up (adds_ns 0) */
    free(fk);
    free(dk);
    free(rank);
    return;
  }
  for (unsigned i = 0; i < g->nfinds; i++) fk[i] = (devkey){g->finds[i].proc, g->finds[i].device, i};
  for (unsigned k = 0; k < g->ndevs; k++) dk[k] = (devkey){g->devs[k].proc, g->devs[k].device, k};
  qsort(fk, g->nfinds, sizeof *fk, cmp_devkey);
  qsort(dk, g->ndevs, sizeof *dk, cmp_devkey);
  unsigned d = 0;
  for (unsigned i = 0, n; i < g->nfinds; i += n) {
    for (n = 1; i + n < g->nfinds && fk[i + n].proc == fk[i].proc && fk[i + n].device == fk[i].device;) n++;
    for (unsigned k = 0; k < n; k++) rank[i + k] = k;
    while (d < g->ndevs && (dk[d].proc < fk[i].proc || (dk[d].proc == fk[i].proc && dk[d].device < fk[i].device)))
      d++;
    if (d < g->ndevs && dk[d].proc == fk[i].proc && dk[d].device == fk[i].device)
      account_device(g, &fk[i], n, &g->devs[dk[d].at], &rank[i]);
  }
  order_findings(g, fk, rank);
  free(fk);
  free(dk);
  free(rank);
}

unsigned ct_gaps_findings_total(const ct_gaps *g, uint64_t *saving_ns, uint64_t *idle_ns) {
  unsigned nd;
  const ct_gaps_device *devs = ct_gaps_devices(g, &nd); /* findings sorted and accounted */
  *saving_ns = *idle_ns = 0;
  for (unsigned k = 0; k < nd; k++) {
    *saving_ns += devs[k].findings_ns;
    *idle_ns += devs[k].u.idle_ns;
  }
  return nd;
}
