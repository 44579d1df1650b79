/* clstream-info's output formats, each behind one methods struct (as
 * hwloc's lstopo keeps its own): a printer writes the facts (facts.h) and
 * asks for the costly ones it prints.  A new format is a file with one
 * struct info_printer and a line in clstream-info.c's table. */
#ifndef CLS_TOOLS_INFO_INFO_H
#define CLS_TOOLS_INFO_INFO_H

#include "facts.h"

#include <stddef.h>
#include <stdio.h>

struct info_printer {
  const char *name; /* the option that picks it: "--json"; NULL: the default */
  unsigned extras;  /* INFO_ARGUMENT_INFO when it prints that fact */
  void (*print)(const struct info_facts *f, FILE *out);
};

extern const struct info_printer info_text_printer; /* text.c */
extern const struct info_printer info_json_printer; /* json.c */

/* text.c's, which --cache shares: "7.6 GiB (8160437862 bytes)", and an
 * error line "WHAT CODE: message" with its detail below. */
const char *info_human_bytes(unsigned long long n, char *buf, size_t cap);
void info_text_error(FILE *out, const char *what, int code, const char *detail);

/* --cache (cache.c): the persistent program cache and a cold and warm
 * build; the exit status. */
int info_cache_main(void);

#endif
