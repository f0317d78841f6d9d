/* The driver's one lock and the registry of live handles, which lets every entry
 * point reject a stale or made-up handle with the real error instead of
 * dereferencing it. Open addressing keyed by the pointer value. */
#include "sim.h"

#include <stdlib.h>

static pthread_mutex_t driver_lock = PTHREAD_MUTEX_INITIALIZER;

struct slot {
  const void *handle; /* NULL = empty, TOMBSTONE = deleted */
  enum sim_kind kind;
};

#define TOMBSTONE ((const void *)1)

static struct slot *slots;
static size_t slot_count; /* power of two */
static size_t used;       /* live + tombstones */

/* fork() while another thread holds the lock would leave the child's copy locked
 * for ever: take it around fork (as glibc does for malloc). */
static void lock_for_fork(void)
{
  pthread_mutex_lock(&driver_lock);
}

static void unlock_after_fork(void)
{
  pthread_mutex_unlock(&driver_lock);
}

__attribute__((constructor)) static void register_fork_handlers(void)
{
  pthread_atfork(lock_for_fork, unlock_after_fork, unlock_after_fork);
}

void sim_lock(void)
{
  pthread_mutex_lock(&driver_lock);
}

void sim_unlock(void)
{
  pthread_mutex_unlock(&driver_lock);
}

static size_t hash_pointer(const void *p)
{
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return (size_t)x;
}

/* Rebuilds the table with room for at least `want` live entries. */
static int grow(size_t want)
{
  size_t n = 64;
  while (n < want * 2)
    n *= 2;
  struct slot *fresh = calloc(n, sizeof *fresh);
  if (!fresh)
    return -1;
  size_t live = 0;
  for (size_t i = 0; i < slot_count; i++) {
    const void *h = slots[i].handle;
    if (!h || h == TOMBSTONE)
      continue;
    size_t j = hash_pointer(h) & (n - 1);
    while (fresh[j].handle)
      j = (j + 1) & (n - 1);
    fresh[j] = slots[i];
    live++;
  }
  free(slots);
  slots = fresh;
  slot_count = n;
  used = live;
  return 0;
}

int sim_handle_add(const void *handle, enum sim_kind kind)
{
  if ((used + 1) * 2 > slot_count && grow(used + 1) != 0)
    return -1;
  size_t j = hash_pointer(handle) & (slot_count - 1);
  while (slots[j].handle && slots[j].handle != TOMBSTONE && slots[j].handle != handle)
    j = (j + 1) & (slot_count - 1);
  if (slots[j].handle != handle && slots[j].handle != TOMBSTONE)
    used++;
  slots[j].handle = handle;
  slots[j].kind = kind;
  return 0;
}

/* Index of `handle`, or -1. */
static long find(const void *handle)
{
  if (!slots || !handle || handle == TOMBSTONE)
    return -1;
  size_t j = hash_pointer(handle) & (slot_count - 1);
  while (slots[j].handle) {
    if (slots[j].handle == handle)
      return (long)j;
    j = (j + 1) & (slot_count - 1);
  }
  return -1;
}

void sim_handle_remove(const void *handle)
{
  long j = find(handle);
  if (j >= 0)
    slots[j].handle = TOMBSTONE;
}

enum sim_kind sim_handle_kind(const void *handle)
{
  long j = find(handle);
  return j >= 0 ? slots[j].kind : SIM_KIND_NONE;
}
