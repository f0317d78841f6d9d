/*
 * String interning: a hash set of strings -> ids with lock-free lookups (readers
 * probe an open-addressing table of published entries) and insertion under a
 * lock. A new string is also appended to the STRING queue, which the writer
 * drains before it reads any thread buffer (see writer_pass.c), so a STRING record
 * always precedes the records that use it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

struct str_entry {
  struct str_entry *queue_next; /* STRING queue, under strings_lock */
  uint64_t id, hash;
  size_t len;
  char bytes[];
};

struct str_table {
  size_t mask;                 /* slots - 1 */
  struct str_table *retired;   /* older, smaller tables (readers may still probe them) */
  struct str_entry *slots[];
};

static struct str_table *table; /* published with release, read with acquire */
static size_t table_count;
static uint64_t next_id;
static struct str_entry *queue_head, **queue_tail = &queue_head;
static pthread_mutex_t strings_lock = PTHREAD_MUTEX_INITIALIZER;

/* FNV-1a, 64 bit (public domain constants). */
static uint64_t hash_bytes(const char *s, size_t len) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
  return h;
}

static struct str_entry *lookup(const struct str_table *t, uint64_t h, const char *s, size_t len) {
  if (!t) return NULL;
  for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
    struct str_entry *e = __atomic_load_n(&t->slots[i], __ATOMIC_ACQUIRE);
    if (!e) return NULL;
    if (e->hash == h && e->len == len && memcmp(e->bytes, s, len) == 0) return e;
  }
}

static void place(struct str_table *t, struct str_entry *e) {
  size_t i = e->hash & t->mask;
  while (t->slots[i]) i = (i + 1) & t->mask;
  __atomic_store_n(&t->slots[i], e, __ATOMIC_RELEASE);
}

/* Makes sure one more entry keeps the table at most half full. Caller holds the lock. */
static int grow_if_needed(void) {
  struct str_table *old = table;
  size_t slots = old ? old->mask + 1 : 0;
  if (old && (table_count + 1) * 2 <= slots) return 0;
  size_t n = slots ? slots * 2 : 1024;
  struct str_table *t = calloc(1, sizeof *t + n * sizeof(struct str_entry *));
  if (!t) return -1;
  t->mask = n - 1;
  if (old)
    for (size_t i = 0; i < slots; i++)
      if (old->slots[i]) place(t, old->slots[i]);
  t->retired = old; /* never freed: a reader may be probing it right now */
  __atomic_store_n(&table, t, __ATOMIC_RELEASE);
  return 0;
}

uint64_t ctp_intern_always(const char *s, size_t len) {
  if (!s) return 0;
  if (len > CT_MAX_STRING_BYTES) len = CT_MAX_STRING_BYTES;
  uint64_t h = hash_bytes(s, len);
  struct str_entry *e = lookup(__atomic_load_n(&table, __ATOMIC_ACQUIRE), h, s, len);
  if (CTP_LIKELY(e != NULL)) return e->id;

  int saved = errno;
  /* Copy outside the lock: a bad pointer faults here, never while holding it. */
  struct str_entry *fresh = malloc(sizeof *fresh + len + 1);
  if (!fresh) {
    errno = saved;
    return 0;
  }
  memcpy(fresh->bytes, s, len);
  fresh->bytes[len] = 0;
  fresh->len = len;
  fresh->hash = h;
  fresh->queue_next = NULL;
  uint64_t id = 0;
  pthread_mutex_lock(&strings_lock);
  e = lookup(table, h, s, len);
  if (e) {
    id = e->id;
  } else if (grow_if_needed() == 0) {
    fresh->id = id = ++next_id;
    *queue_tail = fresh;
    queue_tail = &fresh->queue_next;
    place(table, fresh);
    table_count++;
    fresh = NULL;
  }
  pthread_mutex_unlock(&strings_lock);
  free(fresh);
  errno = saved;
  return id;
}

uint64_t ctp_intern_n(const char *s, size_t len) {
  if (!s) return 0;
  if (!__atomic_load_n(&ctp_enabled, __ATOMIC_RELAXED)) return 0;
  return ctp_intern_always(s, len);
}

uint64_t ctp_intern(const char *s) { return s ? ctp_intern_n(s, strlen(s)) : 0; }

void ctp_strings_drain(void (*fn)(void *arg, uint64_t id, const char *s, size_t len), void *arg) {
  pthread_mutex_lock(&strings_lock);
  struct str_entry *e = queue_head;
  queue_head = NULL;
  queue_tail = &queue_head;
  pthread_mutex_unlock(&strings_lock);
  /* Entries are never freed, so they stay valid outside the lock. */
  while (e) {
    struct str_entry *n = e->queue_next;
    e->queue_next = NULL;
    fn(arg, e->id, e->bytes, e->len);
    e = n;
  }
}

/* Orders entries by id for the child's queue. */
static int by_id(const void *a, const void *b) {
  uint64_t x = (*(struct str_entry *const *)a)->id, y = (*(struct str_entry *const *)b)->id;
  return x < y ? -1 : x > y;
}

void ctp_strings_requeue_all(void) {
  pthread_mutex_lock(&strings_lock);
  queue_head = NULL;
  queue_tail = &queue_head;
  struct str_entry **all = table_count ? malloc(table_count * sizeof *all) : NULL;
  if (all) { /* without memory the new file shows these ids as unknown */
    size_t n = 0;
    for (size_t i = 0; i <= table->mask; i++)
      if (table->slots[i]) all[n++] = table->slots[i];
    qsort(all, n, sizeof *all, by_id);
    for (size_t i = 0; i < n; i++) {
      all[i]->queue_next = NULL;
      *queue_tail = all[i];
      queue_tail = &all[i]->queue_next;
    }
    free(all);
  }
  pthread_mutex_unlock(&strings_lock);
}

void ctp_strings_lock(void) { pthread_mutex_lock(&strings_lock); }
void ctp_strings_unlock(void) { pthread_mutex_unlock(&strings_lock); }
