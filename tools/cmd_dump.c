/* cutrace dump: every record of each trace, one line each ("kind field=value ..."),
 * strings resolved; for debugging traces and the tracer. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "codec.h"
#include "commands.h"
#include "reader.h"

static int dump_file(const char *path, void *arg) {
  int *status = arg;
  char err[300];
  ct_reader *r = ct_reader_open(path, err, sizeof err);
  if (!r) {
    fprintf(stderr, "cutrace: %s\n", err);
    *status = 2;
    return 0;
  }
  ct_record rec;
  while (ct_reader_next(r, &rec)) {
    if (rec.kind == CT_KIND_STRING) {
      printf("string id=%llu \"", (unsigned long long)rec.u.string.id);
      for (uint32_t i = 0; i < rec.str_len; i++) {
        unsigned char c = (unsigned char)rec.str[i];
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 32 || c > 126) printf("\\x%02x", c);
        else putchar(c);
      }
      printf("\"\n");
      continue;
    }
    printf("%s", ct_kind_name(rec.kind));
    for (unsigned i = 0; i < rec.nfields; i++)
      printf(" %s=%llu", ct_field_name(rec.kind, i), (unsigned long long)rec.u.v[i]);
    putchar('\n');
  }
  const ct_read_status *st = ct_reader_status(r);
  if (st->damaged) {
    fprintf(stderr, "cutrace: %s: %s; %llu records read\n", path, st->message,
            (unsigned long long)st->records);
    if (*status < 1) *status = 1;
  }
  ct_reader_close(r);
  return 0;
}

int cmd_dump(int argc, char **argv) {
  return cli_run_on_traces(argc, argv, "cutrace dump [DIR|FILE...]", dump_file);
}
