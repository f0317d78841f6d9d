/*
 * Start/end NVTX ranges (nvtxRangeStart*, nvtxRangeEnd): they do not nest and may
 * end on another thread than the one that started them, so they live in a
 * process-wide, lock-free table keyed by the id handed back to the program.
 *
 * Ids come from one counter (1, 2, 3, ...). Range id goes into the first free slot
 * among NVTX_SE_PROBES slots starting at id % NVTX_SE_SLOTS; with sequential ids
 * that is almost always the first one. A slot's key is 0 when free, NVTX_SE_BUSY
 * while its owner fills it, and the range id once it is readable. An end claims
 * the slot back with a compare-and-swap, so two ends of one id record it once.
 * When every probed slot is taken (more than a few thousand ranges open at once)
 * the range is not recorded, and its end is ignored.
 */
#include <stdatomic.h>

#include "nvtx_internal.h"

#define NVTX_SE_SLOTS 8192 /* power of two */
#define NVTX_SE_PROBES 64
#define NVTX_SE_BUSY UINT64_MAX

struct nvtx_se_slot {
  _Atomic uint64_t key;
  uint64_t tid;
  uint64_t domain;
  uint64_t name;
  uint64_t begin_ns;
};

static struct nvtx_se_slot se_slots[NVTX_SE_SLOTS];
static _Atomic uint64_t se_next_id = 1;

uint64_t nvtx_range_start(uint64_t domain, uint64_t name) {
  uint64_t now_ns = ctp_now_ns();
  uint64_t id = atomic_fetch_add_explicit(&se_next_id, 1, memory_order_relaxed);
  if (!ctp_is_enabled()) return id;
  for (unsigned k = 0; k < NVTX_SE_PROBES; k++) {
    struct nvtx_se_slot *s = &se_slots[(id + k) & (NVTX_SE_SLOTS - 1)];
    uint64_t free_key = 0;
    if (atomic_load_explicit(&s->key, memory_order_relaxed) != 0 ||
        !atomic_compare_exchange_strong_explicit(&s->key, &free_key, NVTX_SE_BUSY,
                                                 memory_order_acquire, memory_order_relaxed))
      continue;
    s->tid = ctp_tid();
    s->domain = domain;
    s->name = name;
    s->begin_ns = now_ns;
    atomic_store_explicit(&s->key, id, memory_order_release);
    if (nvtx_is_capture_range(name)) ctp_window_range(1); /* only a range its end will find */
    break;
  }
  return id;
}

void nvtx_range_end(uint64_t id) {
  uint64_t now_ns = ctp_now_ns();
  if (CTP_UNLIKELY(id == 0 || id == NVTX_SE_BUSY)) return;
  for (unsigned k = 0; k < NVTX_SE_PROBES; k++) {
    struct nvtx_se_slot *s = &se_slots[(id + k) & (NVTX_SE_SLOTS - 1)];
    if (atomic_load_explicit(&s->key, memory_order_acquire) != id) continue;
    uint64_t tid = s->tid, domain = s->domain, name = s->name, begin_ns = s->begin_ns;
    uint64_t expected = id;
    if (!atomic_compare_exchange_strong_explicit(&s->key, &expected, 0, memory_order_acq_rel,
                                                 memory_order_relaxed))
      return; /* another thread ended it first */
    if (ctp_is_enabled())
      nvtx_emit_range(tid, domain, name, begin_ns, now_ns, 0, CT_RANGE_STARTEND);
    if (nvtx_is_capture_range(name)) ctp_window_range(0);
    return;
  }
}

void nvtx_startend_close_all(uint64_t now_ns) {
  for (unsigned i = 0; i < NVTX_SE_SLOTS; i++) {
    struct nvtx_se_slot *s = &se_slots[i];
    uint64_t key = atomic_load_explicit(&s->key, memory_order_acquire);
    if (key == 0 || key == NVTX_SE_BUSY) continue;
    nvtx_emit_range(s->tid, s->domain, s->name, s->begin_ns, now_ns, 0,
                    CT_RANGE_STARTEND | CT_RANGE_UNCLOSED);
  }
}

void nvtx_startend_after_fork(void) {
  for (unsigned i = 0; i < NVTX_SE_SLOTS; i++) {
    if (atomic_load_explicit(&se_slots[i].key, memory_order_relaxed) != 0)
      atomic_store_explicit(&se_slots[i].key, 0, memory_order_relaxed);
  }
}
