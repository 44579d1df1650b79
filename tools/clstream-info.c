/* clstream-info: lists every OpenCL platform the ICD loader offers, with
 * its devices or why it has none, the device the default selection and
 * $CLS_DEVICE pick, the driver a context runs on, and the quirks probed on
 * its device; with --cache, the persistent program cache and a cold and
 * warm build.  The platforms come from OpenCL itself: clstream's device
 * list has only platforms that have devices.
 *
 * --json prints the same facts as one JSON object for scripts (a section
 * per key of `sections` below; docs/install.md shows its shape).
 *
 * Exit status: 0 on success, 1 when no device is found (or the selection or
 * the context fails), 2 on a usage error. */
#include <clstream.h>
#include <clstream/cl.h>

#include "device/hints.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *to) {
  fprintf(to,
          "Usage: clstream-info [--help] [--version] [--json] [--cache]\n"
          "\n"
          "Lists every OpenCL platform the ICD loader offers, with its devices\n"
          "or why it has none, the device the default selection picks, the device\n"
          "$CLS_DEVICE picks (when set) and the driver a context runs on.\n"
          "--json prints the same as one JSON object, for scripts.\n"
          "\n"
          "  --cache  the persistent program cache instead: its directory, entries\n"
          "           and size, and a small program built cold, then warm (in a\n"
          "           temporary directory: the cache itself is not touched)\n"
          "\n"
          "Environment:\n"
          "  CLS_DEVICE     device selection: \"P:D\", \"cpu\", \"gpu\", \"accelerator\",\n"
          "                 or part of a platform or device name (\"pocl\")\n"
          "  CLS_SCHEDULER  driver and its parameters: \"event\", \"scheduler\",\n"
          "                 \"scheduler:interleave,max_tasks=8\"; CLS_SCHEDULER=help\n"
          "                 prints every driver with its parameters\n"
          "  CLS_PRECISE    \"1\": exact attribution of failures (an OpenCL event per\n"
          "                 command); \"0\" or unset: ranged where the device allows it\n"
          "  CLS_EVENT_EVERY  ranged: the most commands without an event (default 64)\n"
          "  CLS_CACHE      \"off\" turns the persistent program cache off\n"
          "  CLS_CACHE_DIR  its directory (default $XDG_CACHE_HOME/clstream,\n"
          "                 else ~/.cache/clstream)\n"
          "  CLS_CACHE_MAX  its cap in bytes, or with K, M or G (default 64M)\n"
          "  OCL_ICD_VENDORS  restricts the OpenCL ICD loader to these vendors\n"
          "  RUSTICL_ENABLE   the drivers Mesa's rusticl offers devices of\n"
          "                   (none until set; llvmpipe is the CPU one)\n");
}

static const char *type_name(int type) {
  switch (type) {
  case CLS_DEVICE_CPU: return "CPU";
  case CLS_DEVICE_GPU: return "GPU";
  case CLS_DEVICE_ACCELERATOR: return "accelerator";
  default: return "other";
  }
}

/* "7.6 GiB" style: the largest binary unit that keeps the value >= 1. */
static const char *human_bytes(unsigned long long n, char *buf, size_t cap) {
  static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double v = (double)n;
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    u++;
  }
  if (u == 0)
    snprintf(buf, cap, "%llu bytes", n);
  else
    snprintf(buf, cap, "%.1f %s (%llu bytes)", v, units[u], n);
  return buf;
}

static void print_device(const struct cls_device_info *d) {
  char b[64];
  printf("  [%d:%d] %s (%s)\n", d->platform_index, d->device_index,
         d->device_name, type_name(d->type));
  printf("    device version     %s\n", d->device_version);
  printf("    driver version     %s\n", d->driver_version);
  printf("    compute units      %u\n", d->compute_units);
  printf("    global memory      %s\n", human_bytes(d->global_mem_size, b, sizeof b));
  printf("    max allocation     %s\n", human_bytes(d->max_alloc_size, b, sizeof b));
  printf("    local memory       %s\n", human_bytes(d->local_mem_size, b, sizeof b));
  printf("    max work-group     %zu\n", d->max_work_group_size);
  printf("    work-item sizes    %zu x %zu x %zu\n", d->max_work_item_sizes[0],
         d->max_work_item_sizes[1], d->max_work_item_sizes[2]);
  printf("    base address align %u bytes\n", d->base_addr_align);
}

/* As clstream's device list (src/device/device.c): it numbers platforms
 * in the loader's order, up to this many. */
#define MAX_PLATFORMS 16

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

/* Every platform, with clstream's devices of it, or why it has none.
 * Returns the number of platforms. */
static cl_uint print_platforms(const struct cls_device_info *devs, size_t count) {
  cl_platform_id plats[MAX_PLATFORMS];
  cl_uint np = 0;
  cl_int rc = clGetPlatformIDs(MAX_PLATFORMS, plats, &np);
  if (rc != CL_SUCCESS || np == 0) {
    char why[512];
    printf("No OpenCL platform: %s.\n\n", cls__no_platform_hint(why, sizeof why));
    return 0;
  }
  if (np > MAX_PLATFORMS)
    np = MAX_PLATFORMS;
  printf("%u OpenCL platform%s, %zu device%s:\n\n", np, np == 1 ? "" : "s", count,
         count == 1 ? "" : "s");
  for (cl_uint p = 0; p < np; p++) {
    char name[128], vendor[128], version[256], why[160];
    platform_str(plats[p], CL_PLATFORM_NAME, name, sizeof name);
    platform_str(plats[p], CL_PLATFORM_VENDOR, vendor, sizeof vendor);
    platform_str(plats[p], CL_PLATFORM_VERSION, version, sizeof version);
    printf("platform %u: %s (%s), %s\n", p, name, vendor, version);
    int shown = 0;
    for (size_t i = 0; i < count; i++)
      if (devs[i].platform_index == (int)p) {
        print_device(&devs[i]);
        shown++;
      }
    if (!shown) {
      cl_uint nd = 0;
      cl_int st = clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd);
      printf("    no device: %s\n", no_device_reason(name, st, why, sizeof why));
    }
    printf("\n");
  }
  return np;
}

static void print_error(const char *what, int rc) {
  const char *detail = cls_last_error_detail();
  printf("%-22s %s: %s\n", what, cls_err_name(rc), cls_strerror(rc));
  if (detail[0])
    printf("%s%s", detail, detail[strlen(detail) - 1] == '\n' ? "" : "\n");
}

static const char *answer(int v) {
  return v == 1 ? "yes" : v == 0 ? "no" : "unknown (handled as the worst case)";
}

/* The attribution mode in force (F8a) and why: the context made with no
 * options, so $CLS_PRECISE, $CLS_EVENT_EVERY and the device decide it. */
static void print_attribution(cls_context *ctx) {
  int mode;
  const char *why = NULL;
  unsigned every = 0;
  int rc = cls_context_attribution(ctx, &mode, &why, &every);
  if (rc != CLS_OK) {
    print_error("attribution:", rc);
    return;
  }
  if (mode == CLS_ATTRIBUTION_RANGED)
    printf("%-22s ranged (an OpenCL event every %u commands at most)\n", "attribution:", every);
  else
    printf("%-22s exact (an OpenCL event per command)\n", "attribution:");
  printf("%-22s %s\n", "", why ? why : "");
}

/* The context device's quirks, each with the workaround it selects
 * (README "Portability"). */
static void print_quirks(cls_context *ctx) {
  struct cls_quirks q = {.version = CLS_QUIRKS_VERSION};
  if (cls_context_quirks(ctx, &q) != CLS_OK) {
    print_error("quirks:", cls_context_quirks(ctx, &q));
    return;
  }
  char b[64];
  printf("\nquirks of the context device (%s in %.1f ms):\n",
         q.probed ? "probed" : "probe did not finish", q.probe_ms);
  printf("  failed event calls its callback      %s\n", answer(q.failed_callback));
  printf("      clstream polls event status; it never relies on callbacks\n");
  printf("  command on a failed event fails      %s", answer(q.dependent_fails));
  if (q.dependent_fails == 1)
    printf(" (status %s)", cls_cl_status_name(q.dependent_status));
  printf("\n      clstream never enqueues a command on an event known to have failed (F7)\n");
  printf("  failure fails later commands (queue) %s\n", answer(q.queue_poisoned));
  printf("      %s\n", q.queue_poisoned == 1
                          ? "the last command's event tells whether any before it failed"
                          : "each command's own event tells whether it failed");
  printf("  clFinish returned before completion  %s\n", answer(q.finish_early));
  printf("      after clFinish clstream waits for the last command's event (always)\n");
  printf("  OpenCL version                       %d.%d\n", q.cl_version / 100,
         q.cl_version / 10 % 10);
  printf("  max allocation                       %s\n", human_bytes(q.max_alloc_size, b, sizeof b));
  printf("  max work-group                       %zu\n", q.max_work_group_size);
  printf("  runs above the kernel's work-group   %s", answer(q.wg_above_kernel_max));
  if (q.kernel_work_group_size >= q.max_work_group_size)
    printf(" (nothing above: a probe kernel reports the device's %zu)", q.kernel_work_group_size);
  else if (q.kernel_work_group_size && q.wg_above_kernel_max == 1)
    printf(" (a probe kernel reports %zu; %zu ran right)", q.kernel_work_group_size,
           q.max_work_group_size);
  else if (q.kernel_work_group_size && q.wg_above_kernel_max == 0)
    printf(" (a probe kernel reports %zu; more did not run right)", q.kernel_work_group_size);
  printf("\n      launches are checked against %s\n",
         q.wg_above_kernel_max == 1
             ? "the device's work-group maximum, not the kernel's"
             : "each kernel's CL_KERNEL_WORK_GROUP_SIZE (cls_kernel_info tells it)");
  printf("  memory page                          %s\n",
         human_bytes(q.page_size, b, sizeof b));
  printf("      sizes and work sizes are checked against these before OpenCL sees them\n");
}

/* One line naming a device: "[0:0] name (CPU, platform)". */
static void print_choice(const char *label, const struct cls_device_info *d) {
  printf("%-22s [%d:%d] %s (%s, %s)\n", label, d->platform_index,
         d->device_index, d->device_name, type_name(d->type), d->platform_name);
}

/* ------------------------------------------------------------------ */
/* --json                                                              */
/* ------------------------------------------------------------------ */

/* A tiny JSON emitter: nested objects and arrays, members separated and
 * indented as they come, strings escaped (RFC 8259: '"', '\\', control
 * characters; other bytes pass as they are, OpenCL strings being ASCII
 * or UTF-8). */
#define JSON_MAX_DEPTH 16
struct json {
  FILE *out;
  int depth;
  int count[JSON_MAX_DEPTH]; /* members written at each level */
};

static void json_string(struct json *j, const char *s) {
  fputc('"', j->out);
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
    switch (*p) {
    case '"': fputs("\\\"", j->out); break;
    case '\\': fputs("\\\\", j->out); break;
    case '\n': fputs("\\n", j->out); break;
    case '\r': fputs("\\r", j->out); break;
    case '\t': fputs("\\t", j->out); break;
    default:
      if (*p < 0x20)
        fprintf(j->out, "\\u%04x", *p);
      else
        fputc(*p, j->out);
    }
  }
  fputc('"', j->out);
}

/* Starts a member: separator, indentation and "key": (key NULL in arrays). */
static void json_key(struct json *j, const char *key) {
  if (j->depth > 0)
    fputs(j->count[j->depth - 1]++ ? ",\n" : "\n", j->out);
  for (int i = 0; i < j->depth; i++)
    fputs("  ", j->out);
  if (key) {
    json_string(j, key);
    fputs(": ", j->out);
  }
}

static void json_open(struct json *j, const char *key, char bracket) {
  json_key(j, key);
  fputc(bracket, j->out);
  if (j->depth < JSON_MAX_DEPTH)
    j->count[j->depth] = 0;
  j->depth++;
}

static void json_close(struct json *j, char bracket) {
  int had = j->depth <= JSON_MAX_DEPTH && j->count[j->depth - 1];
  j->depth--;
  if (had) {
    fputc('\n', j->out);
    for (int i = 0; i < j->depth; i++)
      fputs("  ", j->out);
  }
  fputc(bracket, j->out);
  if (j->depth == 0)
    fputc('\n', j->out);
}

#define json_object(j, key) json_open((j), (key), '{')
#define json_end_object(j) json_close((j), '}')
#define json_array(j, key) json_open((j), (key), '[')
#define json_end_array(j) json_close((j), ']')

static void json_str(struct json *j, const char *key, const char *v) {
  json_key(j, key);
  json_string(j, v);
}
static void json_uint(struct json *j, const char *key, unsigned long long v) {
  json_key(j, key);
  fprintf(j->out, "%llu", v);
}
static void json_int(struct json *j, const char *key, long long v) {
  json_key(j, key);
  fprintf(j->out, "%lld", v);
}
static void json_bool(struct json *j, const char *key, int v) {
  json_key(j, key);
  fputs(v ? "true" : "false", j->out);
}
/* A quirk answer: true, false, or null for CLS_QUIRK_UNKNOWN. */
static void json_answer(struct json *j, const char *key, int v) {
  json_key(j, key);
  fputs(v == 1 ? "true" : v == 0 ? "false" : "null", j->out);
}
static void json_double(struct json *j, const char *key, double v) {
  json_key(j, key);
  fprintf(j->out, "%.3f", v);
}
/* {"code": "CLS_ENODEV", "message": ..., "detail": ...}; detail NULL:
 * cls_last_error_detail(). */
static void json_error_detail(struct json *j, const char *key, int rc, const char *detail) {
  json_object(j, key);
  json_str(j, "code", cls_err_name(rc));
  json_str(j, "message", cls_strerror(rc));
  json_str(j, "detail", detail ? detail : cls_last_error_detail());
  json_end_object(j);
}
#define json_error(j, key, rc) json_error_detail((j), (key), (rc), NULL)

static void json_device(struct json *j, const char *key, const struct cls_device_info *d) {
  json_object(j, key);
  json_int(j, "platform_index", d->platform_index);
  json_int(j, "device_index", d->device_index);
  json_str(j, "name", d->device_name);
  json_str(j, "type", type_name(d->type));
  json_str(j, "platform_name", d->platform_name);
  json_str(j, "device_version", d->device_version);
  json_str(j, "driver_version", d->driver_version);
  json_int(j, "cl_version", d->cl_version);
  json_uint(j, "compute_units", d->compute_units);
  json_uint(j, "global_mem_size", d->global_mem_size);
  json_uint(j, "max_alloc_size", d->max_alloc_size);
  json_uint(j, "local_mem_size", d->local_mem_size);
  json_uint(j, "max_work_group_size", d->max_work_group_size);
  json_array(j, "max_work_item_sizes");
  for (int i = 0; i < 3; i++)
    json_uint(j, NULL, d->max_work_item_sizes[i]);
  json_end_array(j);
  json_uint(j, "base_addr_align", d->base_addr_align);
  json_end_object(j);
}

/* What the sections share: the device list, the context (NULL when
 * creation failed) and the exit status they set. */
struct info {
  struct cls_device_info *devs;
  size_t count;
  cls_context *ctx;
  int ctx_rc; /* why ctx is NULL */
  char ctx_detail[1024]; /* and its cls_last_error_detail() */
  int status;
};

static void section_platforms(struct json *j, struct info *in) {
  cl_platform_id plats[MAX_PLATFORMS];
  cl_uint np = 0;
  if (clGetPlatformIDs(MAX_PLATFORMS, plats, &np) != CL_SUCCESS)
    np = 0;
  if (np > MAX_PLATFORMS)
    np = MAX_PLATFORMS;
  json_array(j, "platforms");
  for (cl_uint p = 0; p < np; p++) {
    char name[128], vendor[128], version[256], why[160];
    platform_str(plats[p], CL_PLATFORM_NAME, name, sizeof name);
    platform_str(plats[p], CL_PLATFORM_VENDOR, vendor, sizeof vendor);
    platform_str(plats[p], CL_PLATFORM_VERSION, version, sizeof version);
    json_object(j, NULL);
    json_uint(j, "index", p);
    json_str(j, "name", name);
    json_str(j, "vendor", vendor);
    json_str(j, "version", version);
    json_array(j, "devices");
    int shown = 0;
    for (size_t i = 0; i < in->count; i++)
      if (in->devs[i].platform_index == (int)p) {
        json_device(j, NULL, &in->devs[i]);
        shown++;
      }
    json_end_array(j);
    if (!shown) {
      cl_uint nd = 0;
      cl_int st = clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd);
      json_str(j, "no_device", no_device_reason(name, st, why, sizeof why));
    }
    json_end_object(j);
  }
  json_end_array(j);
}

/* The default selection, $CLS_DEVICE's (when set) and the context's. */
static void section_selection(struct json *j, struct info *in) {
  struct cls_device_info pick;
  json_object(j, "selection");
  int rc = cls_device_select(NULL, &pick);
  if (rc == CLS_OK) {
    json_device(j, "default", &pick);
  } else {
    json_error(j, "default", rc);
    in->status = 1;
  }
  const char *env = getenv("CLS_DEVICE");
  if (env) {
    json_str(j, "CLS_DEVICE", env);
    rc = cls_device_select(env, &pick);
    if (rc == CLS_OK) {
      json_device(j, "CLS_DEVICE_device", &pick);
    } else {
      json_error(j, "CLS_DEVICE_error", rc);
      in->status = 1;
    }
  }
  json_end_object(j);
}

/* The context (it honours $CLS_DEVICE and $CLS_SCHEDULER): device, driver,
 * or why it could not be made. */
static void section_context(struct json *j, struct info *in) {
  json_object(j, "context");
  if (!in->ctx) {
    json_error_detail(j, "error", in->ctx_rc, in->ctx_detail);
  } else {
    struct cls_device_info d, devs[CLS_MAX_DEVICES];
    size_t ndev = 0;
    if (cls_context_device(in->ctx, &d) == CLS_OK)
      json_device(j, "device", &d);
    if (cls_context_devices(in->ctx, devs, CLS_MAX_DEVICES, &ndev) == CLS_OK)
      json_int(j, "devices", (long long)ndev);
    json_str(j, "driver", cls_context_driver(in->ctx));
    int mode;
    const char *why = NULL;
    unsigned every = 0;
    int rc = cls_context_attribution(in->ctx, &mode, &why, &every);
    if (rc != CLS_OK) {
      json_error(j, "attribution", rc);
    } else {
      json_object(j, "attribution");
      json_str(j, "mode", mode == CLS_ATTRIBUTION_RANGED ? "ranged" : "exact");
      json_str(j, "why", why ? why : "");
      json_uint(j, "event_every", every);
      json_end_object(j);
    }
  }
  json_end_object(j);
}

static void section_quirks(struct json *j, struct info *in) {
  struct cls_quirks q = {.version = CLS_QUIRKS_VERSION};
  int rc = in->ctx ? cls_context_quirks(in->ctx, &q) : CLS_EINVAL;
  if (rc != CLS_OK) {
    json_error(j, "quirks", rc);
    return;
  }
  json_object(j, "quirks");
  json_bool(j, "probed", q.probed == 1);
  json_double(j, "probe_ms", q.probe_ms);
  json_answer(j, "failed_callback", q.failed_callback);
  json_answer(j, "dependent_fails", q.dependent_fails);
  if (q.dependent_fails == 1)
    json_str(j, "dependent_status", cls_cl_status_name(q.dependent_status));
  json_answer(j, "queue_poisoned", q.queue_poisoned);
  json_answer(j, "finish_early", q.finish_early);
  json_int(j, "cl_version", q.cl_version);
  json_uint(j, "max_alloc_size", q.max_alloc_size);
  json_uint(j, "max_work_group_size", q.max_work_group_size);
  json_answer(j, "wg_above_kernel_max", q.wg_above_kernel_max);
  json_uint(j, "kernel_work_group_size", q.kernel_work_group_size);
  json_uint(j, "page_size", q.page_size);
  json_end_object(j);
}

/* Whether the device gives kernel argument info (clGetKernelArgInfo):
 * without it CLS_ARG cannot infer an access and F11 trusts the
 * declaration (README "Portability"). */
static void section_argument_info(struct json *j, struct info *in) {
  static const char *src = "__kernel void cls_info_probe(__global const int *in, "
                           "__global int *out) { out[0] = in[0]; }\n";
  cls_program *prog = NULL;
  cls_kernel *k = NULL;
  struct cls_kernel_info ki = {.version = CLS_KERNEL_INFO_VERSION};
  int rc = in->ctx ? cls_program_build(in->ctx, src, NULL, &prog) : CLS_EINVAL;
  if (rc == CLS_OK)
    rc = cls_kernel_get(in->ctx, prog, "cls_info_probe", &k);
  if (rc == CLS_OK)
    rc = cls_kernel_info(k, &ki);
  if (rc != CLS_OK) {
    json_error(j, "argument_info", rc);
  } else {
    json_object(j, "argument_info");
    json_bool(j, "access", ki.nargs == 2 && ki.args[0].access == CLS_READ &&
                               ki.args[1].access == CLS_READ_WRITE);
    json_bool(j, "names", ki.nargs == 2 && strcmp(ki.args[0].name, "in") == 0);
    json_end_object(j);
  }
  if (prog)
    cls_program_release(in->ctx, prog);
}

static void section_drivers(struct json *j, struct info *in) {
  (void)in;
  json_object(j, "drivers");
  json_str(j, "default", cls_default_driver());
  json_array(j, "built");
  for (size_t i = 0; i < cls_driver_count(); i++) {
    const char *name = NULL, *desc = NULL;
    if (cls_driver_info(i, &name, &desc) != CLS_OK)
      continue;
    json_object(j, NULL);
    json_str(j, "name", name);
    json_str(j, "description", desc);
    json_end_object(j);
  }
  json_end_array(j);
  json_end_object(j);
}

static void section_cache(struct json *j, struct info *in) {
  struct cls_cache_info ci = {.version = CLS_CACHE_INFO_VERSION};
  if (!in->ctx || cls_context_cache(in->ctx, &ci) != CLS_OK)
    return;
  json_object(j, "cache");
  json_bool(j, "enabled", ci.enabled);
  if (ci.enabled) {
    json_str(j, "directory", ci.dir);
    json_uint(j, "entries", ci.entries);
    json_uint(j, "bytes", ci.bytes);
    json_uint(j, "max_bytes", ci.max_bytes);
  }
  json_end_object(j);
}

/* The sections of --json, in order: a new one is a function and a line. */
static const struct {
  int needs_device; /* left out when no device was found */
  void (*emit)(struct json *, struct info *);
} sections[] = {
    {0, section_platforms}, {1, section_selection},     {1, section_context},
    {1, section_quirks},    {1, section_argument_info}, {0, section_drivers},
    {1, section_cache},
};

static int json_main(void) {
  struct json j = {.out = stdout};
  struct info in = {0};
  json_object(&j, NULL);
  json_str(&j, "clstream", cls_version_string());
  size_t count = 0;
  int rc = cls_device_list(NULL, 0, &count);
  if (rc == CLS_OK && count) {
    in.devs = calloc(count, sizeof *in.devs);
    rc = in.devs ? cls_device_list(in.devs, count, &in.count) : CLS_ENOMEM;
    if (in.count > count)
      in.count = count;
  }
  if (rc != CLS_OK) {
    json_error(&j, "error", rc);
    in.status = 1;
  } else if (in.count == 0) {
    json_str(&j, "error", "no OpenCL device found");
    const char *vendors = getenv("OCL_ICD_VENDORS");
    if (vendors)
      json_str(&j, "OCL_ICD_VENDORS", vendors);
    in.status = 1;
  } else {
    const char *env = getenv("CLS_DEVICE");
    struct cls_device_info pick;
    /* As the text output: a $CLS_DEVICE that selects nothing makes no
     * context (it would fail the same way). */
    in.ctx_rc = env ? cls_device_select(env, &pick) : CLS_OK;
    if (in.ctx_rc == CLS_OK)
      in.ctx_rc = cls_context_create(&in.ctx, NULL);
    if (in.ctx_rc != CLS_OK) {
      snprintf(in.ctx_detail, sizeof in.ctx_detail, "%s", cls_last_error_detail());
      in.status = 1;
    }
  }
  int have_device = rc == CLS_OK && in.count > 0;
  for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
    if (have_device || !sections[i].needs_device)
      sections[i].emit(&j, &in);
  json_end_object(&j);
  cls_context_destroy(in.ctx);
  free(in.devs);
  return in.status ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* --cache                                                             */
/* ------------------------------------------------------------------ */

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

#define CACHE_PROBE_SRC                                                     \
  "kernel void saxpy(global const float *x, global float *y, float a) {\n"  \
  "  size_t i = get_global_id(0);\n"                                        \
  "  y[i] = a * x[i] + y[i];\n"                                             \
  "}\n"

/* One build of the probe program in a new context on `dir` (NULL: the
 * configured one); its time in ms, or a negative code. */
static double timed_build(const char *dir, const char *options, struct cls_cache_info *ci) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .cache_dir = dir};
  cls_context *ctx = NULL;
  int rc = cls_context_create(&ctx, &o);
  if (rc != CLS_OK) {
    print_error("context:", rc);
    return rc;
  }
  cls_program *p = NULL;
  double t0 = now_ms();
  rc = cls_program_build(ctx, CACHE_PROBE_SRC, options, &p);
  double ms = now_ms() - t0;
  ci->version = CLS_CACHE_INFO_VERSION;
  if (rc == CLS_OK)
    rc = cls_context_cache(ctx, ci);
  if (rc != CLS_OK)
    print_error("build:", rc);
  cls_context_destroy(ctx);
  return rc == CLS_OK ? ms : rc;
}

static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    char path[4096 + 256 + 2];
    while ((e = readdir(d)))
      if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
      }
    closedir(d);
  }
  rmdir(dir);
}

/* --cache: the cache as a context sees it, and the probe program built
 * cold (a new directory, and a build option no vendor cache has seen),
 * with the vendor's own cache warm but clstream's off, and warm. */
static int print_cache(void) {
  cls_context *ctx = NULL;
  int rc = cls_context_create(&ctx, NULL);
  if (rc != CLS_OK) {
    print_error("context:", rc);
    return 1;
  }
  struct cls_cache_info ci = {.version = CLS_CACHE_INFO_VERSION};
  struct cls_device_info dev;
  rc = cls_context_cache(ctx, &ci);
  cls_context_device(ctx, &dev);
  char b[64];
  printf("persistent program cache (docs/cache.md):\n");
  printf("  device             %s (%s)\n", dev.device_name, dev.platform_name);
  printf("  enabled            %s\n", ci.enabled ? "yes" : "no (CLS_CACHE=off, or no directory)");
  if (ci.enabled) {
    printf("  directory          %s\n", ci.dir);
    printf("  entries            %llu\n", ci.entries);
    printf("  total size         %s\n", human_bytes(ci.bytes, b, sizeof b));
    printf("  cap                %s (CLS_CACHE_MAX)\n", human_bytes(ci.max_bytes, b, sizeof b));
  }
  cls_context_destroy(ctx);

  const char *tmp = getenv("TMPDIR");
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/clstream-info-cache.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    perror("clstream-info: mkdtemp");
    return 1;
  }
  char options[64];
  snprintf(options, sizeof options, "-DCLS_INFO_PROBE=%ld%ld", (long)getpid(), (long)time(NULL));
  struct cls_cache_info cold = {0}, vendor = {0}, warm = {0};
  double t_cold = timed_build(dir, options, &cold);
  const char *was = getenv("CLS_CACHE");
  char *saved = was ? strdup(was) : NULL;
  setenv("CLS_CACHE", "off", 1);
  double t_vendor = t_cold >= 0 ? timed_build(dir, options, &vendor) : -1;
  if (saved)
    setenv("CLS_CACHE", saved, 1);
  else
    unsetenv("CLS_CACHE");
  free(saved);
  double t_warm = t_vendor >= 0 ? timed_build(dir, options, &warm) : -1;
  remove_dir(dir);
  if (t_warm < 0)
    return 1;
  if (!cold.enabled) {
    printf("\n  cold build         %.1f ms (the cache is off: nothing to compare)\n", t_cold);
    return 0;
  }
  printf("\ncold and warm build of a small program (new contexts, in %s, removed after):\n",
         dir);
  printf("  cold               %8.1f ms  compiled from source%s\n", t_cold,
         cold.stores ? ", stored" : ", not stored (the vendor gives no binary)");
  printf("  vendor cache only  %8.1f ms  CLS_CACHE=off: what the vendor keeps itself\n",
         t_vendor);
  printf("  warm               %8.1f ms  %s\n", t_warm,
         warm.hits ? "loaded from the cache"
                   : "compiled from source (the vendor does not load stored binaries)");
  if (warm.hits && t_warm > 0)
    printf("  cold / warm        %8.1fx\n", t_cold / t_warm);
  return 0;
}

int main(int argc, char **argv) {
  int json = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--cache") == 0)
      return print_cache();
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return 0;
    }
    if (strcmp(argv[i], "--json") == 0) {
      json = 1;
      continue;
    }
    if (strcmp(argv[i], "--version") == 0) {
      printf("clstream-info (clstream) %s\n", cls_version_string());
      return 0;
    }
    fprintf(stderr, "clstream-info: unknown option '%s'\n", argv[i]);
    usage(stderr);
    return 2;
  }
  if (json)
    return json_main();

  printf("clstream %s\n\n", cls_version_string());

  /* Ask for the count first, then for every entry. */
  size_t count = 0;
  int rc = cls_device_list(NULL, 0, &count);
  if (rc != CLS_OK) {
    print_error("listing devices:", rc);
    return 1;
  }
  struct cls_device_info *devs = calloc(count ? count : 1, sizeof *devs);
  if (!devs) {
    fprintf(stderr, "clstream-info: out of memory\n");
    return 1;
  }
  size_t listed = 0;
  rc = count ? cls_device_list(devs, count, &listed) : CLS_OK;
  if (rc != CLS_OK) {
    print_error("listing devices:", rc);
    free(devs);
    return 1;
  }
  if (listed < count) /* a device went away between the two calls */
    count = listed;
  print_platforms(devs, count);
  free(devs);
  if (count == 0) {
    printf("No OpenCL device found.\n");
    const char *vendors = getenv("OCL_ICD_VENDORS");
    if (vendors)
      printf("(OCL_ICD_VENDORS=%s restricts the ICD loader)\n", vendors);
    return 1;
  }

  int status = 0;
  struct cls_device_info pick;
  rc = cls_device_select(NULL, &pick);
  if (rc == CLS_OK) {
    print_choice("default selection:", &pick);
  } else {
    print_error("default selection:", rc);
    status = 1;
  }

  const char *env = getenv("CLS_DEVICE");
  if (env) {
    char label[64];
    snprintf(label, sizeof label, "CLS_DEVICE=\"%.30s\":", env);
    rc = cls_device_select(env, &pick);
    if (rc == CLS_OK) {
      print_choice(label, &pick);
    } else {
      print_error(label, rc);
      return 1; /* a context would fail the same way */
    }
  }

  /* A context honours $CLS_DEVICE and $CLS_SCHEDULER. */
  cls_context *ctx = NULL;
  rc = cls_context_create(&ctx, NULL);
  if (rc != CLS_OK) {
    print_error("context:", rc);
    return 1;
  }
  struct cls_device_info cdevs[CLS_MAX_DEVICES];
  size_t ndev = 0;
  if (cls_context_devices(ctx, cdevs, CLS_MAX_DEVICES, &ndev) == CLS_OK)
    for (size_t i = 0; i < ndev && i < CLS_MAX_DEVICES; i++) {
      char label[32];
      if (ndev == 1)
        snprintf(label, sizeof label, "context device:");
      else
        snprintf(label, sizeof label, "context device %zu:", i);
      print_choice(label, &cdevs[i]);
    }
  printf("%-22s %s\n", "context driver:", cls_context_driver(ctx));
  print_attribution(ctx);
  print_quirks(ctx);
  cls_context_destroy(ctx);

  printf("\nscheduler drivers (CLS_SCHEDULER=NAME[:PARAMS]; CLS_SCHEDULER=help lists the "
         "parameters):\n");
  for (size_t i = 0; i < cls_driver_count(); i++) {
    const char *name = NULL, *desc = NULL;
    if (cls_driver_info(i, &name, &desc) == CLS_OK)
      printf("  %-10s %s%s\n", name, desc,
             strcmp(name, cls_default_driver()) == 0 ? " (default)" : "");
  }
  return status;
}
