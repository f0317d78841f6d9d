/*
 * The check of the tools' C unit tests: a condition that does not hold is counted in
 * `failures` and the first 20 are printed with their file, line and message (printf
 * arguments); each test's main returns failures != 0. One test program per file includes it.
 */
#ifndef CT_TEST_CHECK_H
#define CT_TEST_CHECK_H

#include <stdio.h>

static int failures;
#define CHECK(c, ...)                                                                         \
  do {                                                                                        \
    if (!(c) && failures++ < 20) { /* the first 20 printed; a loop may fail thousands */    \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);                                             \
      printf(__VA_ARGS__);                                                                    \
      putchar('\n');                                                                          \
    }                                                                                         \
  } while (0)

#endif
