/*
 * Prints every gap ct_gaps_each reports for a trace, one line each:
 * "device stream start_ns end_ns cause ended_by" (stream "-" for a device gap), then
 * "rc N". test_gaps.py compares the lines with `cutrace gaps --format json`.
 * usage: test-gaps-each FILE [MIN_NS]
 */
#include <stdio.h>
#include <stdlib.h>

#include "gaps.h"

static void print_gap(void *user, const ct_gap_info *g) {
  unsigned long *count = user;
  ++*count;
  if (g->stream == UINT64_MAX) printf("%llu - ", (unsigned long long)g->device);
  else printf("%llu %llu ", (unsigned long long)g->device, (unsigned long long)g->stream);
  printf("%llu %llu %s %s %s\n", (unsigned long long)g->start_ns, (unsigned long long)g->end_ns,
         g->cause, g->ended_by ? g->ended_by : "-", g->proc && g->proc->path ? "proc" : "noproc");
}

int main(int argc, char **argv) {
  if (argc != 2 && argc != 3) {
    fprintf(stderr, "usage: test-gaps-each FILE [MIN_NS]\n");
    return 2;
  }
  unsigned long count = 0;
  ct_model_stats st;
  int rc = ct_gaps_each(argv[1], argc == 3 ? strtoull(argv[2], NULL, 10) : 0, print_gap, &count, &st);
  printf("rc %d %lu %s\n", rc, count, st.message);
  return 0;
}
