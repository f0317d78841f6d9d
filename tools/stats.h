/*
 * Bounded-memory statistics for the cutrace tables: a duration summary with exact
 * count/total/min/max and a median from a fixed log-scale histogram, and a hash map
 * from byte keys (names, GEMM shapes) to caller-sized value slots.
 */
#ifndef CUTRACE_STATS_H
#define CUTRACE_STATS_H

#include <stddef.h>
#include <stdint.h>

/*
 * Histogram layout: values below 32 ns have a bucket each; above, every power of two
 * is split into 32 equal sub-buckets (the value's leading bit plus the next 5 bits), so
 * a bucket is at most 1/32 (3.1%) of its lower bound wide. A quantile (the median) is
 * the value of its bucket below 32, else interpolated linearly inside its bucket, and
 * clamped to [min, max]: exact below 32 or when every sample is equal, within 3.1%
 * otherwise.
 */
#define CT_HIST_SUB_BITS 5
#define CT_HIST_BUCKETS ((64 - CT_HIST_SUB_BITS + 1) << CT_HIST_SUB_BITS)

/*
 * Durations of one row: exact totals, histogram for quantiles (allocated lazily). The
 * histogram holds only the window of buckets [hist_lo, hist_lo + hist_n) that samples
 * reached, grown an octave (32 buckets) at a time: buckets outside it are zero.
 */
typedef struct ct_dur_stats {
  uint64_t count, total, min, max;
  uint32_t *hist; /* hist_n counts, or NULL while count <= 1 or out of memory */
  uint64_t first; /* the first sample (kept until the histogram exists) */
  uint32_t hist_lo, hist_n; /* the window's first bucket and width */
} ct_dur_stats;

/* Adds one duration (ns). */
void ct_dur_add(ct_dur_stats *s, uint64_t ns);

/* Adds everything of src into dst (merging rows of several files). */
void ct_dur_merge(ct_dur_stats *dst, const ct_dur_stats *src);

/* The approximate median (see above); 0 when empty. */
uint64_t ct_dur_median(const ct_dur_stats *s);

/* The approximate q-quantile (0 <= q <= 1; 0.5 is the median), as accurate as the
 * median; 0 when empty. */
uint64_t ct_dur_quantile(const ct_dur_stats *s, double q);

/* Frees the histogram. */
void ct_dur_free(ct_dur_stats *s);

/* ---- a map from byte keys to fixed-size value slots ------------------------------- */

typedef struct ct_map ct_map;

/* A new map whose values are value_size zeroed bytes each. NULL when out of memory. */
ct_map *ct_map_new(size_t value_size);

/*
 * The value slot for key (len bytes), created zeroed when new (*created = 1 then, if
 * created is not NULL). NULL when out of memory. Slots stay at the same address
 * until ct_map_free.
 */
void *ct_map_get(ct_map *m, const void *key, size_t len, int *created);

/* The value slot for key (len bytes) when the map holds it, else NULL (nothing created). */
void *ct_map_find(const ct_map *m, const void *key, size_t len);

/*
 * The same for a NUL-terminated name, with a cache keyed by the pointer itself: a
 * name pointer seen before (and not forgotten) is found without hashing its bytes.
 */
void *ct_map_get_name(ct_map *m, const char *name, int *created);

/* Forgets the pointer cache (call when the strings it points to are freed). */
void ct_map_forget_pointers(ct_map *m);

/* Number of entries. */
size_t ct_map_count(const ct_map *m);

/* Entry i (0 <= i < count), in insertion order: its key, key length and value slot. */
void *ct_map_entry(const ct_map *m, size_t i, const void **key, size_t *len);

/* Frees the map (not what the values point to). */
void ct_map_free(ct_map *m);

#endif
