/* clstream-info --json: the facts as one JSON object for scripts, a
 * section per entry of `sections` below (docs/install.md shows its shape),
 * written by a small JSON writer of its own. */
#include "info.h"

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
/* A fact's error, as the model recorded it. */
static void json_error(struct json *j, const char *key, const struct info_error *e) {
  json_error_detail(j, key, e->code, e->detail ? e->detail : "");
}

static void json_device(struct json *j, const char *key, const struct cls_device_info *d) {
  json_object(j, key);
  json_int(j, "platform_index", d->platform_index);
  json_int(j, "device_index", d->device_index);
  json_str(j, "name", d->device_name);
  json_str(j, "type", info_type_name(d->type));
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

static void section_platforms(struct json *j, const struct info_facts *f) {
  json_array(j, "platforms");
  for (unsigned p = 0; p < f->nplatforms; p++) {
    const struct info_platform *pl = &f->platforms[p];
    json_object(j, NULL);
    json_uint(j, "index", p);
    json_str(j, "name", pl->name);
    json_str(j, "vendor", pl->vendor);
    json_str(j, "version", pl->version);
    json_array(j, "devices");
    for (size_t i = 0; i < f->ndevs; i++)
      if (f->devs[i].platform_index == (int)p)
        json_device(j, NULL, &f->devs[i]);
    json_end_array(j);
    if (!pl->ndevices)
      json_str(j, "no_device", pl->no_device);
    json_end_object(j);
  }
  json_end_array(j);
}

/* The default selection, and $CLS_DEVICE's when set. */
static void section_selection(struct json *j, const struct info_facts *f) {
  json_object(j, "selection");
  if (f->default_error.code == CLS_OK)
    json_device(j, "default", &f->default_pick);
  else
    json_error(j, "default", &f->default_error);
  if (f->cls_device) {
    json_str(j, "CLS_DEVICE", f->cls_device);
    if (f->env_error.code == CLS_OK)
      json_device(j, "CLS_DEVICE_device", &f->env_pick);
    else
      json_error(j, "CLS_DEVICE_error", &f->env_error);
  }
  json_end_object(j);
}

/* The context: device, driver and attribution, or why it could not be
 * made. */
static void section_context(struct json *j, const struct info_facts *f) {
  json_object(j, "context");
  if (f->context_error.code != CLS_OK) {
    json_error(j, "error", &f->context_error);
  } else {
    if (f->have_context_device)
      json_device(j, "device", &f->context_device);
    if (f->have_context_devices)
      json_int(j, "devices", (long long)f->ncontext_devices);
    json_str(j, "driver", f->driver);
    if (f->attribution_error.code != CLS_OK) {
      json_error(j, "attribution", &f->attribution_error);
    } else {
      json_object(j, "attribution");
      json_str(j, "mode", f->attribution_mode == CLS_ATTRIBUTION_RANGED ? "ranged" : "exact");
      json_str(j, "why", f->attribution_why ? f->attribution_why : "");
      json_uint(j, "event_every", f->event_every);
      json_end_object(j);
    }
  }
  json_end_object(j);
}

static void section_quirks(struct json *j, const struct info_facts *f) {
  const struct cls_quirks *q = &f->quirks;
  if (f->quirks_error.code != CLS_OK) {
    json_error(j, "quirks", &f->quirks_error);
    return;
  }
  json_object(j, "quirks");
  json_bool(j, "probed", q->probed == 1);
  json_double(j, "probe_ms", q->probe_ms);
  json_answer(j, "failed_callback", q->failed_callback);
  json_answer(j, "dependent_fails", q->dependent_fails);
  if (q->dependent_fails == 1)
    json_str(j, "dependent_status", cls_cl_status_name(q->dependent_status));
  json_answer(j, "queue_poisoned", q->queue_poisoned);
  json_answer(j, "finish_early", q->finish_early);
  json_int(j, "cl_version", q->cl_version);
  json_uint(j, "max_alloc_size", q->max_alloc_size);
  json_uint(j, "max_work_group_size", q->max_work_group_size);
  json_answer(j, "wg_above_kernel_max", q->wg_above_kernel_max);
  json_uint(j, "kernel_work_group_size", q->kernel_work_group_size);
  json_uint(j, "page_size", q->page_size);
  json_end_object(j);
}

/* Whether the device gives kernel argument info: without it CLS_ARG
 * cannot infer an access and F11 trusts the declaration. */
static void section_argument_info(struct json *j, const struct info_facts *f) {
  if (f->argument_info_error.code != CLS_OK) {
    json_error(j, "argument_info", &f->argument_info_error);
    return;
  }
  json_object(j, "argument_info");
  json_bool(j, "access", f->argument_access);
  json_bool(j, "names", f->argument_names);
  json_end_object(j);
}

/* The image formats of the context device, "ORDER/TYPE" by image type. */
static void section_images(struct json *j, const struct info_facts *f) {
  static const char *const types[] = {"2d", "3d", "2d_array"};
  if (f->images_error.code != CLS_OK) {
    json_error(j, "image_formats", &f->images_error);
    return;
  }
  json_object(j, "image_formats");
  for (int t = 0; t < 3; t++) {
    json_array(j, types[t]);
    for (size_t i = 0; i < f->nimage_formats[t]; i++) {
      char name[96];
      snprintf(name, sizeof name, "%s/%s", f->image_formats[t][i].order_name,
               f->image_formats[t][i].type_name);
      json_str(j, NULL, name);
    }
    json_end_array(j);
  }
  json_end_object(j);
}

static void section_drivers(struct json *j, const struct info_facts *f) {
  json_object(j, "drivers");
  json_str(j, "default", f->default_driver);
  json_array(j, "built");
  for (size_t i = 0; i < f->ndrivers; i++) {
    json_object(j, NULL);
    json_str(j, "name", f->drivers[i].name);
    json_str(j, "description", f->drivers[i].description);
    json_end_object(j);
  }
  json_end_array(j);
  json_end_object(j);
}

static void section_cache(struct json *j, const struct info_facts *f) {
  const struct cls_cache_info *ci = &f->cache;
  if (!f->have_cache)
    return;
  json_object(j, "cache");
  json_bool(j, "enabled", ci->enabled);
  if (ci->enabled) {
    json_str(j, "directory", ci->dir);
    json_uint(j, "entries", ci->entries);
    json_uint(j, "bytes", ci->bytes);
    json_uint(j, "max_bytes", ci->max_bytes);
  }
  json_end_object(j);
}

/* The sections, in order: a new one is a function and a line. */
static const struct {
  int needs_device; /* left out when no device was found */
  void (*emit)(struct json *, const struct info_facts *);
} sections[] = {
    {0, section_platforms}, {1, section_selection},     {1, section_context},
    {1, section_quirks},    {1, section_argument_info}, {1, section_images},
    {0, section_drivers},
    {1, section_cache},
};

static void print_json(const struct info_facts *f, FILE *out) {
  struct json j = {.out = out};
  json_object(&j, NULL);
  json_str(&j, "clstream", f->version);
  if (f->list.code != CLS_OK) {
    json_error(&j, "error", &f->list);
  } else if (f->ndevs == 0) {
    json_str(&j, "error", "no OpenCL device found");
    if (f->icd_vendors)
      json_str(&j, "OCL_ICD_VENDORS", f->icd_vendors);
  }
  for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
    if (f->have_device || !sections[i].needs_device)
      sections[i].emit(&j, f);
  json_end_object(&j);
}

const struct info_printer info_json_printer = {"--json", INFO_ARGUMENT_INFO, print_json};
