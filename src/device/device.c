/* Device enumeration and the CLS_DEVICE selection rules. */
#include "device/device.h"
#include "device/hints.h"
#include "util/parse.h"

#include <ctype.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_PLATFORMS 16
/* cl_khr_icd: the loader's answer when no ICD is installed (cl_ext.h). */
#define ICD_NO_PLATFORMS (-1001)
#define MAX_DEVICES 64

static void info_str(cl_device_id d, cl_device_info what, char *buf, size_t cap) {
  buf[0] = '\0';
  if (clGetDeviceInfo(d, what, cap, buf, NULL) != CL_SUCCESS)
    buf[0] = '\0';
  buf[cap - 1] = '\0';
}

/* "OpenCL 3.0 ..." -> 300 */
static int parse_version(const char *v) {
  int maj = 0, min = 0;
  if (sscanf(v, "OpenCL %d.%d", &maj, &min) != 2)
    return 0;
  return maj * 100 + min * 10;
}

static void fill_info(cl_platform_id p, cl_device_id d, int pi, int di,
                      struct cls_device_info *o) {
  memset(o, 0, sizeof *o);
  o->platform_index = pi;
  o->device_index = di;
  clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof o->platform_name, o->platform_name, NULL);
  clGetPlatformInfo(p, CL_PLATFORM_VENDOR, sizeof o->platform_vendor, o->platform_vendor, NULL);
  clGetPlatformInfo(p, CL_PLATFORM_VERSION, sizeof o->platform_version, o->platform_version, NULL);
  o->platform_name[sizeof o->platform_name - 1] = '\0';
  o->platform_vendor[sizeof o->platform_vendor - 1] = '\0';
  o->platform_version[sizeof o->platform_version - 1] = '\0';
  info_str(d, CL_DEVICE_NAME, o->device_name, sizeof o->device_name);
  info_str(d, CL_DEVICE_VERSION, o->device_version, sizeof o->device_version);
  info_str(d, CL_DRIVER_VERSION, o->driver_version, sizeof o->driver_version);
  o->cl_version = parse_version(o->device_version);
  cl_device_type t = 0;
  clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof t, &t, NULL);
  o->type = (t & CL_DEVICE_TYPE_GPU) ? CLS_DEVICE_GPU
            : (t & CL_DEVICE_TYPE_CPU) ? CLS_DEVICE_CPU
            : (t & CL_DEVICE_TYPE_ACCELERATOR) ? CLS_DEVICE_ACCELERATOR
                                               : CLS_DEVICE_OTHER;
  cl_uint u = 0;
  cl_ulong ul = 0;
  clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof u, &u, NULL);
  o->compute_units = u;
  clGetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof ul, &ul, NULL);
  o->global_mem_size = ul;
  ul = 0;
  clGetDeviceInfo(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof ul, &ul, NULL);
  o->max_alloc_size = ul;
  ul = 0;
  clGetDeviceInfo(d, CL_DEVICE_LOCAL_MEM_SIZE, sizeof ul, &ul, NULL);
  o->local_mem_size = ul;
  size_t s = 0;
  clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof s, &s, NULL);
  o->max_work_group_size = s;
  size_t items[3] = {0, 0, 0};
  clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof items, items, NULL);
  memcpy(o->max_work_item_sizes, items, sizeof items);
  u = 0;
  clGetDeviceInfo(d, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof u, &u, NULL);
  o->base_addr_align = u >= 8 ? u / 8 : 1; /* reported in bits */
}

/* Walks every device; calls fn until it returns nonzero.  Returns the
 * number of devices seen, or a negative CLS_E* code. */
typedef int (*visit_fn)(void *arg, cl_platform_id p, cl_device_id d,
                        const struct cls_device_info *info);

/* PoCL 3.1 initialises its devices on the first clGetDeviceIDs without a
 * lock: threads that enumerate at once can be told there is no device
 * (measured: 1 of 4 threads creating contexts together got CLS_ENODEV).
 * Enumeration is rare; it is done one thread at a time. */
static pthread_mutex_t visit_lock = PTHREAD_MUTEX_INITIALIZER;

static int visit_locked(visit_fn fn, void *arg);

static int visit(visit_fn fn, void *arg) {
  pthread_mutex_lock(&visit_lock);
  int rc = visit_locked(fn, arg);
  pthread_mutex_unlock(&visit_lock);
  return rc;
}

static int visit_locked(visit_fn fn, void *arg) {
  cl_platform_id plats[MAX_PLATFORMS];
  cl_uint np = 0;
  cl_int rc = clGetPlatformIDs(MAX_PLATFORMS, plats, &np);
  if (rc == ICD_NO_PLATFORMS || (rc == CL_SUCCESS && np == 0))
    return 0;
  if (rc != CL_SUCCESS)
    return cls__error(CLS_ECL, rc, "clGetPlatformIDs failed: %s", cls_cl_status_name(rc));
  if (np > MAX_PLATFORMS)
    np = MAX_PLATFORMS;
  int seen = 0;
  for (cl_uint p = 0; p < np; p++) {
    cl_device_id devs[MAX_DEVICES];
    cl_uint nd = 0;
    if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, MAX_DEVICES, devs, &nd) != CL_SUCCESS)
      continue;
    if (nd > MAX_DEVICES)
      nd = MAX_DEVICES;
    for (cl_uint d = 0; d < nd; d++) {
      struct cls_device_info info;
      fill_info(plats[p], devs[d], (int)p, (int)d, &info);
      seen++;
      if (fn(arg, plats[p], devs[d], &info))
        return seen;
    }
  }
  return seen;
}

struct list_arg {
  struct cls_device_info *out;
  size_t cap, n;
};

static int list_one(void *arg, cl_platform_id p, cl_device_id d,
                    const struct cls_device_info *info) {
  struct list_arg *a = arg;
  if (a->n < a->cap)
    a->out[a->n] = *info;
  a->n++;
  return 0;
}

CLS_API int cls_device_list(struct cls_device_info *out, size_t cap, size_t *count) {
  cls__error_clear();
  if (!count || (cap && !out))
    return cls__error(CLS_EINVAL, 0, "cls_device_list: NULL argument");
  struct list_arg a = {out, cap, 0};
  int rc = visit(list_one, &a);
  if (rc < 0)
    return rc;
  *count = a.n;
  return CLS_OK;
}

enum { SEL_DEFAULT, SEL_INDEX, SEL_TYPE, SEL_NAME, SEL_NAME_INDEX };

struct select_arg {
  int how;
  int p, d, type;
  const char *name;
  bool found;
  cl_platform_id named; /* SEL_NAME_INDEX: the first platform NAME matches */
  char namebuf[128];
  struct cls__device_choice *out;
  /* default rule: first GPU, else first device */
  bool have_first;
  struct cls__device_choice first;
};

static int select_one(void *arg, cl_platform_id p, cl_device_id d,
                      const struct cls_device_info *info) {
  struct select_arg *a = arg;
  bool match = false;
  switch (a->how) {
  case SEL_DEFAULT:
    if (!a->have_first) {
      a->have_first = true;
      a->first.platform = p;
      a->first.device = d;
      a->first.info = *info;
    }
    match = info->type == CLS_DEVICE_GPU;
    break;
  case SEL_INDEX:
    match = info->platform_index == a->p && info->device_index == a->d;
    break;
  case SEL_TYPE:
    match = info->type == a->type;
    break;
  case SEL_NAME_INDEX:
    if (!a->named && (cls__icontains(info->platform_name, a->name) ||
                      cls__icontains(info->platform_vendor, a->name) ||
                      cls__icontains(info->platform_version, a->name)))
      a->named = p;
    match = a->named == p && info->device_index == a->d;
    break;
  case SEL_NAME:
    /* PoCL calls its platform "Portable Computing Language": "pocl" is
     * only in its vendor and version strings. */
    match = cls__icontains(info->platform_name, a->name) || cls__icontains(info->platform_vendor, a->name) ||
            cls__icontains(info->platform_version, a->name) || cls__icontains(info->device_name, a->name);
    break;
  }
  if (match) {
    a->out->platform = p;
    a->out->device = d;
    a->out->info = *info;
    a->found = true;
  }
  return match;
}

static int describe(void *arg, cl_platform_id p, cl_device_id d,
                    const struct cls_device_info *info) {
  cls__error_append("\n  %d:%d  %s / %s (%s)", info->platform_index,
                    info->device_index, info->platform_name, info->device_name,
                    info->type == CLS_DEVICE_GPU   ? "gpu"
                    : info->type == CLS_DEVICE_CPU ? "cpu"
                                                   : "other");
  return 0;
}

/* The platforms that offer no device, each with the reason where it can be
 * known (src/device/hints.h: the hints clstream-info gives), or why there
 * is no platform at all.  An error path. */
static void append_empty_platforms(void) {
  cl_platform_id plats[MAX_PLATFORMS];
  cl_uint np = 0;
  char why[512];
  pthread_mutex_lock(&visit_lock);
  cl_int rc = clGetPlatformIDs(MAX_PLATFORMS, plats, &np);
  if (rc != CL_SUCCESS || np == 0) {
    cls__error_append("; %s", cls__no_platform_hint(why, sizeof why));
    np = 0;
  }
  if (np > MAX_PLATFORMS)
    np = MAX_PLATFORMS;
  for (cl_uint p = 0; p < np; p++) {
    cl_uint nd = 0;
    cl_int st = clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd);
    if (st == CL_SUCCESS && nd > 0)
      continue;
    char name[128] = "";
    clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof name, name, NULL);
    name[sizeof name - 1] = '\0';
    cls__error_append("\n  platform %u (%s): no device: %s", p, name,
                      cls__no_device_hint(name, st, why, sizeof why));
  }
  pthread_mutex_unlock(&visit_lock);
}

/* "P:D": two indices, unsigned decimals.  Beyond INT_MAX no platform or
 * device can exist: refused as malformed, never wrapped onto another. */
static int parse_indices(const struct cls__parser *ps, struct select_arg *a) {
  struct cls__span p, d, all = cls__span_of(ps->text);
  cls__span_split(all, ':', &p, &d);
  uint64_t pi, di;
  int rc;
  if (p.n && isalpha((unsigned char)p.p[0])) {
    /* "NAME:D": device D of the first platform NAME is part of the name,
     * vendor or version of ("pocl:1").  A name starts with a letter. */
    if ((rc = cls__parse_uint(ps, "device index", d, 0, INT_MAX, &di)) < 0)
      return rc;
    size_t n = p.n < sizeof a->namebuf - 1 ? p.n : sizeof a->namebuf - 1;
    memcpy(a->namebuf, p.p, n);
    a->namebuf[n] = '\0';
    a->how = SEL_NAME_INDEX;
    a->name = a->namebuf;
    a->d = (int)di;
    return CLS_OK;
  }
  if ((rc = cls__parse_uint(ps, "platform index", p, 0, INT_MAX, &pi)) < 0 ||
      (rc = cls__parse_uint(ps, "device index", d, 0, INT_MAX, &di)) < 0)
    return rc;
  a->how = SEL_INDEX;
  a->p = (int)pi;
  a->d = (int)di;
  return CLS_OK;
}

/* The CLS_DEVICE grammar: "" (the default), "P:D" (anything with a ':'),
 * a type, or a name substring; no whitespace anywhere (src/util/parse.h). */
static int parse_spec(const char *spec, struct select_arg *a) {
  struct cls__parser ps = {"CLS_DEVICE", spec, NULL};
  int rc = cls__parse_text(&ps);
  if (rc < 0)
    return rc;
  if (strchr(spec, ':'))
    return parse_indices(&ps, a);
  if (strcasecmp(spec, "cpu") == 0) {
    a->how = SEL_TYPE, a->type = CLS_DEVICE_CPU;
  } else if (strcasecmp(spec, "gpu") == 0) {
    a->how = SEL_TYPE, a->type = CLS_DEVICE_GPU;
  } else if (strcasecmp(spec, "accelerator") == 0) {
    a->how = SEL_TYPE, a->type = CLS_DEVICE_ACCELERATOR;
  } else {
    a->how = SEL_NAME;
    a->name = spec;
  }
  return CLS_OK;
}

int cls__device_choose(const char *spec, struct cls__device_choice *out) {
  struct select_arg a = {.how = SEL_DEFAULT, .out = out};
  int rc;
  if (spec && *spec && (rc = parse_spec(spec, &a)) < 0)
    return rc;
  int seen = visit(select_one, &a);
  if (seen < 0)
    return seen;
  if (!a.found && a.how == SEL_DEFAULT && a.have_first) {
    *out = a.first;
    a.found = true;
  }
  if (a.found)
    return CLS_OK;
  cls__error(CLS_ENODEV, 0, "no OpenCL device matches '%s'; devices:",
             spec && *spec ? spec : "(default)");
  if (seen == 0)
    cls__error_append(" none");
  else
    visit(describe, NULL);
  append_empty_platforms();
  return CLS_ENODEV;
}

CLS_API int cls_device_select(const char *spec, struct cls_device_info *out) {
  cls__error_clear();
  if (!out)
    return cls__error(CLS_EINVAL, 0, "cls_device_select: NULL out");
  struct cls__device_choice c[CLS_MAX_DEVICES];
  int n = 0;
  int rc = cls__device_choose_many(spec, c, &n);
  if (rc == CLS_OK)
    *out = c[0].info; /* a list or "all": the context's device 0 */
  return rc;
}

/* One item of a list, as a single selection; the detail quotes the whole
 * text when the item is malformed. */
static int choose_item(const char *whole, struct cls__span item, struct cls__device_choice *out) {
  char buf[160];
  if (item.n == 0 || item.n >= sizeof buf) {
    struct cls__parser ps = {"CLS_DEVICE", whole, NULL};
    return cls__parse_fail(&ps, item.n ? "a device item is too long" : "an empty device item");
  }
  memcpy(buf, item.p, item.n);
  buf[item.n] = '\0';
  if (strcasecmp(buf, "all") == 0) {
    struct cls__parser ps = {"CLS_DEVICE", whole, NULL};
    return cls__parse_fail(&ps, "'all' stands alone, not in a list");
  }
  return cls__device_choose(buf, out);
}

struct all_arg {
  cl_platform_id platform;
  struct cls__device_choice *out;
  int n;
};

static int all_one(void *arg, cl_platform_id p, cl_device_id d,
                   const struct cls_device_info *info) {
  struct all_arg *a = arg;
  if (p != a->platform || a->n >= CLS_MAX_DEVICES)
    return 0;
  a->out[a->n].platform = p;
  a->out[a->n].device = d;
  a->out[a->n].info = *info;
  a->n++;
  return 0;
}

int cls__device_choose_many(const char *spec, struct cls__device_choice *out, int *n) {
  *n = 0;
  if (!spec || !*spec || (!strchr(spec, ',') && strcasecmp(spec, "all") != 0)) {
    int rc = cls__device_choose(spec, &out[0]);
    if (rc == CLS_OK)
      *n = 1;
    return rc;
  }
  struct cls__parser ps = {"CLS_DEVICE", spec, NULL};
  int rc = cls__parse_text(&ps);
  if (rc < 0)
    return rc;
  if (strcasecmp(spec, "all") == 0) {
    /* Every device of the platform the default selection picks. */
    if ((rc = cls__device_choose(NULL, &out[0])) < 0)
      return rc;
    struct all_arg a = {out[0].platform, out, 0};
    if ((rc = visit(all_one, &a)) < 0)
      return rc;
    *n = a.n;
    return CLS_OK;
  }
  struct cls__span rest = cls__span_of(spec), item;
  int count = 0;
  for (;;) {
    bool more = cls__span_split(rest, ',', &item, &rest);
    if (count == CLS_MAX_DEVICES)
      return cls__parse_fail(&ps, "more than %d devices", CLS_MAX_DEVICES);
    if ((rc = choose_item(spec, item, &out[count])) < 0)
      return rc;
    for (int i = 0; i < count; i++) {
      if (out[i].device == out[count].device)
        return cls__parse_fail(&ps, "a device is named twice");
      if (out[i].platform != out[count].platform)
        return cls__parse_fail(&ps, "the devices of one context are of one platform");
    }
    count++;
    if (!more)
      break;
    if (rest.n == 0)
      return cls__parse_fail(&ps, "an empty device item");
  }
  *n = count;
  return CLS_OK;
}
