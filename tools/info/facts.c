/* clstream-info's facts, gathered once (facts.h).  The platforms come from
 * OpenCL itself: clstream's device list has only platforms that have
 * devices. */
#include "device/hints.h"
#include "facts.h"

#include <clstream/cl.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *info_type_name(int type) {
  switch (type) {
  case CLS_DEVICE_CPU: return "CPU";
  case CLS_DEVICE_GPU: return "GPU";
  case CLS_DEVICE_ACCELERATOR: return "accelerator";
  default: return "other";
  }
}

/* Records `code` with the detail the last clstream call left. */
static void set_error(struct info_error *e, int code) {
  e->code = code;
  free(e->detail);
  e->detail = strdup(cls_last_error_detail());
}

static void copy_error(struct info_error *to, const struct info_error *from) {
  to->code = from->code;
  free(to->detail);
  to->detail = from->detail ? strdup(from->detail) : NULL;
}

/* Why a platform offers no device, where that can be known: the hints the
 * library's CLS_ENODEV detail gives too (src/device/hints.h). */
static const char *no_device_reason(const char *name, cl_int status, char *buf, size_t cap) {
  return cls__no_device_hint(name, status, buf, cap);
}

static void platform_str(cl_platform_id p, cl_platform_info what, char *buf, size_t cap) {
  buf[0] = '\0';
  if (clGetPlatformInfo(p, what, cap, buf, NULL) != CL_SUCCESS)
    snprintf(buf, cap, "?");
  buf[cap - 1] = '\0';
  for (size_t n = strlen(buf); n && isspace((unsigned char)buf[n - 1]); n--)
    buf[n - 1] = '\0'; /* rusticl's version ends in a space */
}

/* clstream's device list: the count first, then every entry. */
static void gather_list(struct info_facts *f) {
  size_t count = 0;
  int rc = cls_device_list(NULL, 0, &count);
  if (rc == CLS_OK && count) {
    f->devs = calloc(count, sizeof *f->devs);
    f->list_oom = !f->devs;
    rc = f->devs ? cls_device_list(f->devs, count, &f->ndevs) : CLS_ENOMEM;
    if (f->ndevs > count) /* a device went away between the two calls */
      f->ndevs = count;
  }
  set_error(&f->list, rc);
}

/* Every platform, with how many of clstream's devices it has, or why it
 * has none. */
static void gather_platforms(struct info_facts *f) {
  cl_platform_id plats[INFO_MAX_PLATFORMS];
  cl_uint np = 0;
  if (clGetPlatformIDs(INFO_MAX_PLATFORMS, plats, &np) != CL_SUCCESS)
    np = 0;
  if (np > INFO_MAX_PLATFORMS)
    np = INFO_MAX_PLATFORMS;
  f->nplatforms = np;
  for (cl_uint p = 0; p < np; p++) {
    struct info_platform *pl = &f->platforms[p];
    char why[160];
    platform_str(plats[p], CL_PLATFORM_NAME, pl->name, sizeof pl->name);
    platform_str(plats[p], CL_PLATFORM_VENDOR, pl->vendor, sizeof pl->vendor);
    platform_str(plats[p], CL_PLATFORM_VERSION, pl->version, sizeof pl->version);
    for (size_t i = 0; i < f->ndevs; i++)
      if (f->devs[i].platform_index == (int)p)
        pl->ndevices++;
    if (!pl->ndevices) {
      cl_uint nd = 0;
      cl_int st = clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd);
      snprintf(pl->no_device, sizeof pl->no_device, "%s",
               no_device_reason(pl->name, st, why, sizeof why));
    }
  }
}

/* The context's own facts: its devices, driver, attribution (F8a: the
 * context made with no options, so $CLS_PRECISE, $CLS_EVENT_EVERY and the
 * device decide it) and the quirks probed on its device. */
static void gather_context(struct info_facts *f, cls_context *ctx) {
  f->have_context_device = cls_context_device(ctx, &f->context_device) == CLS_OK;
  f->have_context_devices = cls_context_devices(ctx, f->context_devices, CLS_MAX_DEVICES,
                                                &f->ncontext_devices) == CLS_OK;
  f->driver = cls_context_driver(ctx);
  int rc = cls_context_attribution(ctx, &f->attribution_mode, &f->attribution_why,
                                   &f->event_every);
  set_error(&f->attribution_error, rc);
  f->quirks.version = CLS_QUIRKS_VERSION;
  set_error(&f->quirks_error, cls_context_quirks(ctx, &f->quirks));
  int rc2 = CLS_OK;
  for (int t = 0; t < 3 && rc2 == CLS_OK; t++) {
    size_t n = 0;
    rc2 = cls_image_formats(ctx, 0, t + 1, NULL, 0, &n);
    f->image_formats[t] = rc2 == CLS_OK && n ? calloc(n, sizeof *f->image_formats[t]) : NULL;
    if (f->image_formats[t] &&
        (rc2 = cls_image_formats(ctx, 0, t + 1, f->image_formats[t], n, &n)) == CLS_OK)
      f->nimage_formats[t] = n;
  }
  set_error(&f->images_error, rc2);
}

/* Whether a probe kernel's arguments come back with their access and
 * names (README "Portability"). */
static void gather_argument_info(struct info_facts *f, cls_context *ctx) {
  static const char *src = "__kernel void cls_info_probe(__global const int *in, "
                           "__global int *out) { out[0] = in[0]; }\n";
  cls_program *prog = NULL;
  cls_kernel *k = NULL;
  struct cls_kernel_info ki = {.version = CLS_KERNEL_INFO_VERSION};
  int rc = cls_program_build(ctx, src, NULL, &prog);
  if (rc == CLS_OK)
    rc = cls_kernel_get(ctx, prog, "cls_info_probe", &k);
  if (rc == CLS_OK)
    rc = cls_kernel_info(k, &ki);
  set_error(&f->argument_info_error, rc);
  if (rc == CLS_OK) {
    f->argument_access = ki.nargs == 2 && ki.args[0].access == CLS_READ &&
                         ki.args[1].access == CLS_READ_WRITE;
    f->argument_names = ki.nargs == 2 && strcmp(ki.args[0].name, "in") == 0;
  }
  if (prog)
    cls_program_release(ctx, prog);
}

static void gather_drivers(struct info_facts *f) {
  f->default_driver = cls_default_driver();
  size_t n = cls_driver_count();
  f->drivers = calloc(n ? n : 1, sizeof *f->drivers);
  for (size_t i = 0; f->drivers && i < n; i++) {
    const char *name = NULL, *desc = NULL;
    if (cls_driver_info(i, &name, &desc) == CLS_OK)
      f->drivers[f->ndrivers++] = (struct info_driver){name, desc};
  }
}

static void gather_cache(struct info_facts *f, cls_context *ctx) {
  struct cls_cache_info ci = {.version = CLS_CACHE_INFO_VERSION};
  if (!ctx || cls_context_cache(ctx, &ci) != CLS_OK)
    return;
  ci.dir = strdup(ci.dir ? ci.dir : ""); /* the context's goes with it */
  if (!ci.dir)
    return;
  f->cache = ci;
  f->have_cache = 1;
}

int info_facts_gather(struct info_facts *f, unsigned extras) {
  memset(f, 0, sizeof *f);
  f->version = cls_version_string();
  f->icd_vendors = getenv("OCL_ICD_VENDORS");
  f->cls_device = getenv("CLS_DEVICE");
  gather_list(f);
  gather_platforms(f);
  f->have_device = f->list.code == CLS_OK && f->ndevs > 0;
  cls_context *ctx = NULL;
  if (f->have_device) {
    set_error(&f->default_error, cls_device_select(NULL, &f->default_pick));
    if (f->cls_device)
      set_error(&f->env_error, cls_device_select(f->cls_device, &f->env_pick));
    /* A fact that needs the context says CLS_EINVAL without one, with the
     * detail the selection left (as --json always did). */
    struct info_error no_context = {0};
    set_error(&no_context, CLS_EINVAL);
    /* A $CLS_DEVICE that selects nothing makes no context: it would fail
     * the same way. */
    if (f->env_error.code != CLS_OK)
      copy_error(&f->context_error, &f->env_error);
    else
      set_error(&f->context_error, cls_context_create(&ctx, NULL));
    if (ctx) {
      gather_context(f, ctx);
    } else {
      copy_error(&f->quirks_error, &no_context);
      copy_error(&f->argument_info_error, &no_context);
      copy_error(&f->images_error, &no_context);
    }
    if (extras & INFO_ARGUMENT_INFO) {
      f->argument_info_asked = 1;
      if (ctx)
        gather_argument_info(f, ctx);
    }
    free(no_context.detail);
  }
  gather_drivers(f);
  gather_cache(f, ctx);
  cls_context_destroy(ctx);
  int failed = f->list.code != CLS_OK || !f->have_device || f->default_error.code != CLS_OK ||
               f->env_error.code != CLS_OK || f->context_error.code != CLS_OK;
  return failed ? 1 : 0;
}

void info_facts_free(struct info_facts *f) {
  struct info_error *errors[] = {&f->list,          &f->default_error,     &f->env_error,
                                 &f->context_error, &f->attribution_error, &f->quirks_error,
                                 &f->argument_info_error, &f->images_error};
  for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
    free(errors[i]->detail);
  free((char *)f->cache.dir);
  free(f->drivers);
  free(f->devs);
  for (int t = 0; t < 3; t++)
    free(f->image_formats[t]);
  memset(f, 0, sizeof *f);
}
