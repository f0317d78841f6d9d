/*
 * Gaps kept for later (dump --chrome / --perfetto): the gaps analysis runs in the same
 * read of a file as the export (model_tee.h), but the export writes the gaps after
 * the file's other events, so the gaps found on the way are kept here, in order,
 * and handed over afterwards, about 13 bytes each (inside_call included). Memory stays bounded: past
 * CT_GAP_SPILL_MEM bytes they go to an unnamed temporary file.
 */
#ifndef CUTRACE_GAP_SPILL_H
#define CUTRACE_GAP_SPILL_H

#include "gaps.h"

#ifndef CT_GAP_SPILL_MEM /* (a test sets it small) */
#define CT_GAP_SPILL_MEM (1u << 20) /* bytes kept in memory before the temporary file */
#endif

typedef struct ct_gap_spill ct_gap_spill;

/* An empty spill, or NULL when out of memory. */
ct_gap_spill *ct_gap_spill_new(void);

/* Keeps a copy of gap (its strings included); user is the spill (a ct_gaps_each-style
 * callback). A failure (no memory, no temporary file) is remembered: see replay. */
void ct_gap_spill_add(void *spill, const ct_gap_info *gap);

/* Calls fn for every gap kept, in the order added, with proc (may be NULL) as their
 * process. Returns 0; -1 without calling fn when a gap could not be kept (the caller
 * then finds the gaps again another way); 1 when reading the temporary file back
 * failed part way (the gaps after that are lost). */
int ct_gap_spill_replay(ct_gap_spill *s, const ct_proc *proc,
                        void (*fn)(void *user, const ct_gap_info *gap), void *user);

/* Frees the spill and closes its temporary file; NULL is ignored. */
void ct_gap_spill_free(ct_gap_spill *s);

#endif
