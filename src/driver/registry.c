/* The driver registry: the drivers built in, those the application
 * registered (cls_driver_register), and selection by name. */
#include "driver/driver.h"
#include "util/parse.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Filtered by configure (--enable-drivers). */
static const struct cls_driver_ops *const drivers[] = {
#ifdef CLS_HAVE_DRIVER_EVENT
    &cls__event_driver,
#endif
#ifdef CLS_HAVE_DRIVER_SCHEDULER
    &cls__scheduler_driver,
#endif
};
#define NBUILTIN (sizeof drivers / sizeof drivers[0])

/* Registered drivers, after the built-in ones: appended under the mutex,
 * never removed, so a pointer read under it stays valid. */
#define MAX_REGISTERED 16
static const struct cls_driver_ops *registered[MAX_REGISTERED];
static size_t nregistered;
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;

/* Driver i of all of them (built in first), or NULL past the last. */
static const struct cls_driver_ops *driver_at(size_t i) {
  if (i < NBUILTIN)
    return drivers[i];
  pthread_mutex_lock(&registry_lock);
  const struct cls_driver_ops *d = i - NBUILTIN < nregistered ? registered[i - NBUILTIN] : NULL;
  pthread_mutex_unlock(&registry_lock);
  return d;
}

static void list_drivers(void) {
  const struct cls_driver_ops *d;
  for (size_t i = 0; (d = driver_at(i)); i++)
    cls__error_append("\n  %-10s %s%s", d->name, d->description,
                      strcmp(d->name, CLS_DEFAULT_DRIVER) == 0 ? " (default)" : "");
}

/* What every driver must be, built in, registered or given in the
 * context's options. */
int cls__driver_check(const struct cls_driver_ops *d) {
  if (!d)
    return cls__error(CLS_EINVAL, 0, "driver: NULL ops");
  /* 3 and 5: struct cls_driver_cmd had another layout; 4: struct
   * cls_driver_stream (driver.h). */
  if (d->version < 6 || d->version > CLS_DRIVER_OPS_VERSION)
    return cls__error(CLS_EVERSION, 0,
                      "driver '%s' has ops version %u (this library: 6..%d)",
                      d->name ? d->name : "(no name)", d->version, CLS_DRIVER_OPS_VERSION);
  if (!d->name || !*d->name || d->name[strspn(d->name, "abcdefghijklmnopqrstuvwxyz0123456789_-")])
    return cls__error(CLS_EINVAL, 0, "driver name '%s' is not [a-z0-9_-]+",
                      d->name ? d->name : "(NULL)");
  if (strcmp(d->name, "help") == 0)
    return cls__error(CLS_EINVAL, 0, "driver name 'help' is CLS_SCHEDULER's own");
  if (!d->description)
    return cls__error(CLS_EINVAL, 0, "driver '%s' has no description", d->name);
  const char *missing = !d->create    ? "create"
                        : !d->destroy ? "destroy"
                        : !d->open    ? "open"
                        : !d->close   ? "close"
                        : !d->poll    ? "poll"
                        : !d->order   ? "order"
                        : !d->submit  ? "submit"
                                      : NULL;
  if (missing)
    return cls__error(CLS_EINVAL, 0, "driver '%s' lacks the required member %s()", d->name,
                      missing);
  return CLS_OK;
}

CLS_API int cls_driver_register(const struct cls_driver_ops *ops) {
  cls__error_clear();
  int rc = cls__driver_check(ops);
  if (rc < 0)
    return rc;
  pthread_mutex_lock(&registry_lock);
  for (size_t i = 0; i < NBUILTIN + nregistered; i++) {
    const struct cls_driver_ops *d = i < NBUILTIN ? drivers[i] : registered[i - NBUILTIN];
    if (d == ops) {
      pthread_mutex_unlock(&registry_lock);
      return CLS_OK;
    }
    if (strcmp(d->name, ops->name) == 0) {
      pthread_mutex_unlock(&registry_lock);
      return cls__error(CLS_EDRIVER, 0, "cls_driver_register: a driver named '%s' exists",
                        ops->name);
    }
  }
  if (nregistered == MAX_REGISTERED) {
    pthread_mutex_unlock(&registry_lock);
    return cls__error(CLS_ERANGE, 0, "cls_driver_register: %d drivers are registered already",
                      MAX_REGISTERED);
  }
  registered[nregistered++] = ops;
  pthread_mutex_unlock(&registry_lock);
  return CLS_OK;
}

/* CLS_SCHEDULER=help: every driver with its syntax and parameters, once, on
 * stderr (the one place a user asking for help looks; the error detail
 * then only says it was printed, so a program that prints the detail does
 * not show the list twice). */
static void print_help(FILE *to) {
  fprintf(to, "clstream: scheduler drivers: CLS_SCHEDULER=NAME[:PARAMETERS], the parameters\n"
              "comma-separated (scheduler:interleave,max_tasks=8); built in, then registered;\n"
              "CLS_SCHEDULER=/path/to/driver.so[:PARAMETERS] loads one (docs/drivers.md):\n");
  const struct cls_driver_ops *d;
  for (size_t i = 0; (d = driver_at(i)); i++) {
    fprintf(to, "\n  %s%s\n    %s\n", d->usage ? d->usage : d->name,
            strcmp(d->name, CLS_DEFAULT_DRIVER) == 0 ? "  (default)" : "", d->description);
    if (!d->params || !d->params[0].syntax)
      fprintf(to, "    no parameters\n");
    for (const struct cls_driver_param *p = d->params; p && p->syntax; p++)
      fprintf(to, "    %-12s %s\n", p->syntax, p->meaning);
  }
  fflush(to);
}

/* A driver from a shared object: CLS_SCHEDULER=PATH[:PARAMETERS], PATH
 * the first n characters of spec.  The object stays loaded (a context
 * made with it runs its code); dlopen counts the loads of one path, so
 * creating many contexts with it loads it once. */
static int load_driver(const char *spec, size_t n, const struct cls_driver_ops **out) {
  char path[4096];
  if (n >= sizeof path)
    return cls__error(CLS_EDRIVER, 0, "CLS_SCHEDULER: a driver path of %zu characters", n);
  memcpy(path, spec, n);
  path[n] = '\0';
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h)
    return cls__error(CLS_EDRIVER, 0, "CLS_SCHEDULER: loading driver '%s' failed: %s", path,
                      dlerror());
  void *sym = dlsym(h, CLS_DRIVER_ENTRY);
  cls_driver_entry_fn entry = NULL;
  if (sym)
    memcpy(&entry, &sym, sizeof entry);
  const struct cls_driver_ops *d = entry ? entry() : NULL;
  if (!d) {
    dlclose(h);
    return cls__error(CLS_EDRIVER, 0,
                      "CLS_SCHEDULER: '%s' is not a clstream driver (%s() %s)", path,
                      CLS_DRIVER_ENTRY, entry ? "returned NULL" : "is not exported");
  }
  int rc = cls__driver_check(d);
  if (rc < 0) {
    dlclose(h);
    cls__error_append(" (loaded from '%s')", path);
    return rc;
  }
  *out = d;
  return CLS_OK;
}

/* The CLS_SCHEDULER grammar is NAME[:PARAMETERS]; the driver parses its
 * parameters (src/util/parse.h), this the whole text and the name. */
int cls__driver_find(const char *spec, const struct cls_driver_ops *given,
                     const struct cls_driver_ops **out, const char **params) {
  if (given) {
    int rc = cls__driver_check(given);
    if (rc < 0)
      return rc;
    *out = given;
    *params = NULL;
    if (!spec || !*spec)
      return CLS_OK;
  } else if (!spec || !*spec) {
    spec = CLS_DEFAULT_DRIVER;
  }
  struct cls__parser ps = {"CLS_SCHEDULER", spec, NULL};
  int rc = cls__parse_text(&ps);
  if (rc < 0)
    return rc;
  size_t n = strcspn(spec, ":");
  *params = spec[n] == ':' ? spec + n + 1 : NULL;
  if (*params && !**params)
    return cls__parse_fail(&ps, "nothing after ':' (drop the ':' or give parameters)");
  if (given) {
    if (strlen(given->name) != n || strncmp(given->name, spec, n) != 0)
      return cls__parse_fail(&ps, "names another driver than the options' driver '%s' (give "
                                  "'%s:PARAMETERS' or nothing)",
                             given->name, given->name);
    return CLS_OK;
  }
  if (n == 4 && strncmp(spec, "help", 4) == 0) {
    print_help(stderr);
    return cls__error(CLS_EDRIVER, 0,
                      "scheduler \"help\": the drivers and their parameters were printed on "
                      "stderr; no context is created until one is named");
  }
  if (memchr(spec, '/', n))
    return load_driver(spec, n, out);
  const struct cls_driver_ops *d;
  for (size_t i = 0; (d = driver_at(i)); i++)
    if (strlen(d->name) == n && strncmp(d->name, spec, n) == 0) {
      if ((rc = cls__driver_check(d)) < 0)
        return rc;
      *out = d;
      return CLS_OK;
    }
  cls__error(CLS_EDRIVER, 0,
             "unknown scheduler driver '%.*s' (CLS_SCHEDULER=help shows their parameters); "
             "drivers:",
             (int)n, spec);
  list_drivers();
  return CLS_EDRIVER;
}

CLS_API size_t cls_driver_count(void) {
  pthread_mutex_lock(&registry_lock);
  size_t n = NBUILTIN + nregistered;
  pthread_mutex_unlock(&registry_lock);
  return n;
}

CLS_API int cls_driver_info(size_t i, const char **name, const char **description) {
  cls__error_clear();
  const struct cls_driver_ops *d = driver_at(i);
  if (!d)
    return cls__error(CLS_ERANGE, 0, "cls_driver_info: no driver %zu", i);
  if (name)
    *name = d->name;
  if (description)
    *description = d->description;
  return CLS_OK;
}

CLS_API const char *cls_default_driver(void) { return CLS_DEFAULT_DRIVER; }
