/*
 * Scratch directories of the C tests, with the rule of the Python tests
 * (tests/lib/cttest.py scratch_dir): made under TMPDIR (else /tmp), removed when the
 * test passed, kept and named on stderr when it failed or CUTRACE_KEEP_TMP=1, so
 * that a failure's traces can be read.
 */
#ifndef CUTRACE_TEST_SCRATCH_H
#define CUTRACE_TEST_SCRATCH_H

#include <stddef.h>

/*
 * Makes a directory TMPDIR/<prefix>XXXXXX (TMPDIR unset or empty: /tmp) and writes
 * its path into buf (cap bytes). Returns buf, or NULL (errno set) when the path does
 * not fit or mkdtemp fails.
 */
char *ct_scratch_dir(const char *prefix, char *buf, size_t cap);

/*
 * Ends a test's use of dir: removes it and everything under it when passed is
 * non-zero and CUTRACE_KEEP_TMP is not "1"; otherwise prints "scratch directory
 * kept: DIR" on stderr. Returns 0, or -1 when something could not be removed.
 */
int ct_scratch_done(const char *dir, int passed);

#endif
