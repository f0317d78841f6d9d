/* Arguments of the helper binaries (helper_args.h). */
#include "helper_args.h"

#include <stdio.h>
#include <string.h>

#include "output.h"

int ha_usage_error(const char *prog, const char *message) {
  fprintf(stderr, "%s: %s (try: %s --help)\n", prog, message, prog);
  return 2;
}

int ha_number(const char *prog, const char *what, const char *s, uint64_t *v) {
  if (ct_parse_u64(s, v) == 0) return 0;
  fprintf(stderr, "%s: %s takes a number, not '%s' (try: %s --help)\n", prog, what, s, prog);
  return 2;
}

/* The option of opts that arg names ("--name" or "--name=..."), or NULL. */
static const ha_option *find_option(const ha_option *opts, const char *arg, const char **eq) {
  for (const ha_option *o = opts; o->name; o++) {
    size_t n = strlen(o->name);
    if (strncmp(arg, o->name, n)) continue;
    if (arg[n] == 0) {
      *eq = NULL;
      return o;
    }
    if (arg[n] == '=' && o->value) {
      *eq = arg + n + 1;
      return o;
    }
  }
  return NULL;
}

int ha_parse(const char *prog, const char *usage, int argc, char **argv, const ha_option *opts,
             const char **operands, int max, int *noperands) {
  int options = 1;
  *noperands = 0;
  for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      fputs(usage, stdout);
      return 0;
    }
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (options && !strcmp(a, "--")) {
      options = 0;
      continue;
    }
    if (!options || a[0] != '-' || !a[1]) {
      if (*noperands == max) {
        fprintf(stderr, "%s: too many arguments at '%s' (try: %s --help)\n", prog, a, prog);
        return 2;
      }
      operands[(*noperands)++] = a;
      continue;
    }
    const char *val;
    const ha_option *o = find_option(opts, a, &val);
    if (!o) {
      fprintf(stderr, "%s: unknown option '%s' (try: %s --help)\n", prog, a, prog);
      return 2;
    }
    if (!o->value) {
      *o->flag = 1;
      continue;
    }
    if (!val) {
      if (i + 1 >= argc) {
        fprintf(stderr, "%s: %s needs a value (try: %s --help)\n", prog, o->name, prog);
        return 2;
      }
      val = argv[++i];
    }
    if (ha_number(prog, o->name, val, o->value)) return 2;
  }
  return -1;
}
