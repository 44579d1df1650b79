/* Logging: one line per event, to stderr or to the user's callback.  F9:
 * every failure minted is logged once at level "errors". */
#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const level_names[] = {"off", "errors", "streams", "full"};

int cls__log_level_parse(const char *s, int *level) {
  for (int i = 0; i < 4; i++)
    if (strcmp(s, level_names[i]) == 0) {
      *level = i;
      return CLS_OK;
    }
  return cls__error(CLS_ECONFIG, 0,
                    "CLS_LOG='%s': expected off, errors, streams or full", s);
}

void cls__logger_init(struct cls__logger *lg) {
  lg->level = CLS_LOG_ERRORS;
  lg->fn = NULL;
  lg->user = NULL;
}

void cls__log_line(const struct cls__logger *lg, int level, const char *fmt, ...) {
  char line[CLS__LOG_LINE_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (lg->fn)
    lg->fn(lg->user, level, line);
  else
    fprintf(stderr, "clstream[%s]: %s\n", level_names[level], line);
}
