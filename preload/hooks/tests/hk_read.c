/* hk_read: prints one trace file for the hooks' tests, through the shared reader.
 * One line per record: "<kind> field=value ..." in schema order, and for each
 * string "S <id> <hex bytes>" (hex, so that any byte survives). Last line:
 * "STATUS damaged=<0|1> records=<n>". Exit status 0, or 2 when the file cannot
 * be opened. */
#include <stdio.h>

#include "codec.h"
#include "reader.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: hk_read FILE.ctr\n");
    return 2;
  }
  char err[300];
  ct_reader *reader = ct_reader_open(argv[1], err, sizeof err);
  if (!reader) {
    fprintf(stderr, "hk_read: %s\n", err);
    return 2;
  }
  ct_record rec;
  while (ct_reader_next(reader, &rec)) {
    if (rec.kind == CT_KIND_STRING) {
      printf("S %llu ", (unsigned long long)rec.u.string.id);
      for (uint32_t i = 0; i < rec.str_len; i++)
        printf("%02x", (unsigned char)rec.str[i]);
      putchar('\n');
      continue;
    }
    fputs(ct_kind_name(rec.kind), stdout);
    for (unsigned f = 0; f < rec.nfields; f++)
      printf(" %s=%llu", ct_field_name(rec.kind, f), (unsigned long long)rec.u.v[f]);
    putchar('\n');
  }
  const ct_read_status *st = ct_reader_status(reader);
  printf("STATUS damaged=%d records=%llu\n", st->damaged, (unsigned long long)st->records);
  ct_reader_close(reader);
  return 0;
}
