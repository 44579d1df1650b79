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
    cls__error(CLS_EDRIVER, 0, "scheduler drivers:");
    list_drivers();
    fprintf(stderr, "clstream: %s\n", cls_last_error_detail());
    return CLS_EDRIVER;
  }
  for (size_t i = 0; i < NDRIVERS; i++)
    if (strlen(drivers[i]->name) == n && strncmp(drivers[i]->name, spec, n) == 0) {
      if (drivers[i]->version < 1 || drivers[i]->version > CLS__DRIVER_OPS_VERSION)
        return cls__error(CLS_EVERSION, 0, "driver '%s' has ops version %u", drivers[i]->name,
                          drivers[i]->version);
      *out = drivers[i];
      return CLS_OK;
    }
  cls__error(CLS_EDRIVER, 0, "unknown scheduler driver '%.*s'; drivers:", (int)n, spec);
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
