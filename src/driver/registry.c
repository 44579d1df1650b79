/* The driver registry: one table of ops structs, and selection by name. */
#include "driver/driver.h"
#include "util/parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Filtered by configure (--enable-drivers). */
static const struct cls__driver_ops *const drivers[] = {
#ifdef CLS_HAVE_DRIVER_EVENT
    &cls__event_driver,
#endif
#ifdef CLS_HAVE_DRIVER_SCHEDULER
    &cls__scheduler_driver,
#endif
};
#define NDRIVERS (sizeof drivers / sizeof drivers[0])

static void list_drivers(void) {
  for (size_t i = 0; i < NDRIVERS; i++)
    cls__error_append("\n  %-10s %s%s", drivers[i]->name, drivers[i]->description,
                      strcmp(drivers[i]->name, CLS_DEFAULT_DRIVER) == 0 ? " (default)" : "");
}

/* CLS_SCHEDULER=help: every driver with its syntax and parameters, once, on
 * stderr (the one place a user asking for help looks; the error detail
 * then only says it was printed, so a program that prints the detail does
 * not show the list twice). */
static void print_help(FILE *to) {
  fprintf(to, "clstream: scheduler drivers: CLS_SCHEDULER=NAME[:PARAMETERS], the parameters\n"
              "comma-separated (scheduler:interleave,max_tasks=8):\n");
  for (size_t i = 0; i < NDRIVERS; i++) {
    const struct cls__driver_ops *d = drivers[i];
    fprintf(to, "\n  %s%s\n    %s\n", d->usage ? d->usage : d->name,
            strcmp(d->name, CLS_DEFAULT_DRIVER) == 0 ? "  (default)" : "", d->description);
    if (!d->params || !d->params[0].syntax)
      fprintf(to, "    no parameters\n");
    for (const struct cls__driver_param *p = d->params; p && p->syntax; p++)
      fprintf(to, "    %-12s %s\n", p->syntax, p->meaning);
  }
  fflush(to);
}

/* The CLS_SCHEDULER grammar is NAME[:PARAMETERS]; the driver parses its
 * parameters (src/util/parse.h), this the whole text and the name. */
int cls__driver_find(const char *spec, const struct cls__driver_ops **out, const char **params) {
  if (!spec || !*spec)
    spec = CLS_DEFAULT_DRIVER;
  struct cls__parser ps = {"CLS_SCHEDULER", spec, NULL};
  int rc = cls__parse_text(&ps);
  if (rc < 0)
    return rc;
  size_t n = strcspn(spec, ":");
  *params = spec[n] == ':' ? spec + n + 1 : NULL;
  if (*params && !**params)
    return cls__parse_fail(&ps, "nothing after ':' (drop the ':' or give parameters)");
  if (n == 4 && strncmp(spec, "help", 4) == 0) {
    print_help(stderr);
    return cls__error(CLS_EDRIVER, 0,
                      "scheduler \"help\": the drivers and their parameters were printed on "
                      "stderr; no context is created until one is named");
  }
  for (size_t i = 0; i < NDRIVERS; i++)
    if (strlen(drivers[i]->name) == n && strncmp(drivers[i]->name, spec, n) == 0) {
      if (drivers[i]->version < 1 || drivers[i]->version > CLS__DRIVER_OPS_VERSION)
        return cls__error(CLS_EVERSION, 0, "driver '%s' has ops version %u", drivers[i]->name,
                          drivers[i]->version);
      *out = drivers[i];
      return CLS_OK;
    }
  cls__error(CLS_EDRIVER, 0,
             "unknown scheduler driver '%.*s' (CLS_SCHEDULER=help shows their parameters); "
             "drivers:",
             (int)n, spec);
  list_drivers();
  return CLS_EDRIVER;
}

CLS_API size_t cls_driver_count(void) { return NDRIVERS; }

CLS_API int cls_driver_info(size_t i, const char **name, const char **description) {
  cls__error_clear();
  if (i >= NDRIVERS)
    return cls__error(CLS_ERANGE, 0, "cls_driver_info: no driver %zu", i);
  if (name)
    *name = drivers[i]->name;
  if (description)
    *description = drivers[i]->description;
  return CLS_OK;
}

CLS_API const char *cls_default_driver(void) { return CLS_DEFAULT_DRIVER; }
