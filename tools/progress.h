/* Progress reporting for long inputs: the model calls ct_model_progress_hook (when
 * set) every 2^20 records with the file and the records read so far. Commands set it
 * to print a progress line on stderr when stderr is a terminal. */
#ifndef CUTRACE_PROGRESS_H
#define CUTRACE_PROGRESS_H

#include <stdint.h>

/* Called every 2^20 records while a trace is read; NULL (the default) = silent. */
extern void (*ct_model_progress_hook)(const char *path, uint64_t records);

#endif
