/* Images: memory objects addressed by pixel, named by buffer handles.
 *
 * An image owns its cl_mem (OpenCL cannot carve an image from a buffer
 * page), in a slot of its stream like a buffer's, so the handle, the
 * generation, the failure record and the ordering facts are the buffer's
 * own and every rule applies unchanged.  A freed image waits for its uses
 * on other streams as a block does (memory.c); then it is kept among its
 * stream's spares, and the next image of the same description on that
 * stream takes it back, ordered after the last use on the owning stream
 * as a reused block is.  The device's limits and formats are asked once
 * per device, at the first image call, and cached in the context. */
#include "memory/memory.h"
#include "failure/failure.h"
#include "stream/pool.h"

#include <stdlib.h>
#include <string.h>

extern struct cls__failure cls__never_written;

/* OpenCL 2.0's query, asked only of a 2.0 device: the headers target 1.2. */
#ifndef CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS
#define CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS 0x104C
#endif

/* ------------------------------------------------------------------ */
/* Formats                                                             */
/* ------------------------------------------------------------------ */

static const struct {
  unsigned value;
  const char *name;
  unsigned channels;
} orders[] = {
    {CL_R, "CL_R", 1},           {CL_A, "CL_A", 1},
    {CL_RG, "CL_RG", 2},         {CL_RA, "CL_RA", 2},
    {CL_RGB, "CL_RGB", 3},       {CL_RGBA, "CL_RGBA", 4},
    {CL_BGRA, "CL_BGRA", 4},     {CL_ARGB, "CL_ARGB", 4},
    {CL_INTENSITY, "CL_INTENSITY", 1}, {CL_LUMINANCE, "CL_LUMINANCE", 1},
    {CL_Rx, "CL_Rx", 2},         {CL_RGx, "CL_RGx", 3},
    {CL_RGBx, "CL_RGBx", 4},
#ifdef CL_DEPTH
    {CL_DEPTH, "CL_DEPTH", 1},
#endif
#ifdef CL_sRGBA
    {CL_sRGB, "CL_sRGB", 3},     {CL_sRGBx, "CL_sRGBx", 4},
    {CL_sRGBA, "CL_sRGBA", 4},   {CL_sBGRA, "CL_sBGRA", 4},
    {CL_ABGR, "CL_ABGR", 4},
#endif
};

/* size: per channel; packed: per pixel, whatever the order */
static const struct {
  unsigned value;
  const char *name;
  unsigned size;
  bool packed;
} types[] = {
    {CL_SNORM_INT8, "CL_SNORM_INT8", 1, false},
    {CL_SNORM_INT16, "CL_SNORM_INT16", 2, false},
    {CL_UNORM_INT8, "CL_UNORM_INT8", 1, false},
    {CL_UNORM_INT16, "CL_UNORM_INT16", 2, false},
    {CL_UNORM_SHORT_565, "CL_UNORM_SHORT_565", 2, true},
    {CL_UNORM_SHORT_555, "CL_UNORM_SHORT_555", 2, true},
    {CL_UNORM_INT_101010, "CL_UNORM_INT_101010", 4, true},
    {CL_SIGNED_INT8, "CL_SIGNED_INT8", 1, false},
    {CL_SIGNED_INT16, "CL_SIGNED_INT16", 2, false},
    {CL_SIGNED_INT32, "CL_SIGNED_INT32", 4, false},
    {CL_UNSIGNED_INT8, "CL_UNSIGNED_INT8", 1, false},
    {CL_UNSIGNED_INT16, "CL_UNSIGNED_INT16", 2, false},
    {CL_UNSIGNED_INT32, "CL_UNSIGNED_INT32", 4, false},
    {CL_HALF_FLOAT, "CL_HALF_FLOAT", 2, false},
    {CL_FLOAT, "CL_FLOAT", 4, false},
};

#define COUNT(a) (sizeof(a) / sizeof *(a))

const char *cls__image_order_name(unsigned order) {
  for (size_t i = 0; i < COUNT(orders); i++)
    if (orders[i].value == order)
      return orders[i].name;
  return NULL;
}

const char *cls__image_type_name(unsigned type) {
  for (size_t i = 0; i < COUNT(types); i++)
    if (types[i].value == type)
      return types[i].name;
  return NULL;
}

size_t cls__image_pixel_size(unsigned order, unsigned type) {
  size_t ch = 0;
  for (size_t i = 0; i < COUNT(orders); i++)
    if (orders[i].value == order)
      ch = orders[i].channels;
  for (size_t i = 0; ch && i < COUNT(types); i++)
    if (types[i].value == type)
      return types[i].packed ? types[i].size : ch * types[i].size;
  return 0;
}

/* "CL_RGBA/CL_FLOAT", or the numbers where clstream has no name. */
static void format_name(unsigned order, unsigned type, char *out, size_t cap) {
  const char *o = cls__image_order_name(order), *t = cls__image_type_name(type);
  char ob[16], tb[16];
  if (!o)
    snprintf(ob, sizeof ob, "order %#x", order), o = ob;
  if (!t)
    snprintf(tb, sizeof tb, "type %#x", type), t = tb;
  snprintf(out, cap, "%s/%s", o, t);
}

/* ------------------------------------------------------------------ */
/* The device's limits and formats                                     */
/* ------------------------------------------------------------------ */

static const cl_mem_object_type cl_types[3] = {CL_MEM_OBJECT_IMAGE2D, CL_MEM_OBJECT_IMAGE3D,
                                               CL_MEM_OBJECT_IMAGE2D_ARRAY};

static void caps_free(struct cls__image_caps *c) {
  if (!c)
    return;
  for (int t = 0; t < 3; t++)
    free(c->formats[t]);
  free(c);
}

void cls__image_caps_free(cls_context *ctx) {
  for (int d = 0; d < CLS_MAX_DEVICES; d++) {
    caps_free(ctx->image_caps[d]);
    ctx->image_caps[d] = NULL;
  }
}

const struct cls__image_caps *cls__image_caps(cls_context *ctx, int device) {
  if (device < 0 || device >= ctx->ndevices)
    device = 0;
  if (ctx->image_caps[device])
    return ctx->image_caps[device];
  struct cls__image_caps *c = calloc(1, sizeof *c);
  if (!c) {
    cls__error(CLS_ENOMEM, 0, "out of host memory");
    return NULL;
  }
  cl_device_id d = ctx->devices[device];
  cl_int rc = clGetDeviceInfo(d, CL_DEVICE_IMAGE_SUPPORT, sizeof c->support, &c->support, NULL);
  if (rc != CL_SUCCESS) {
    cls__error(CLS_ECL, rc, "clGetDeviceInfo(CL_DEVICE_IMAGE_SUPPORT) failed: %s",
               cls_cl_status_name(rc));
    free(c);
    return NULL;
  }
  if (c->support) {
    clGetDeviceInfo(d, CL_DEVICE_IMAGE2D_MAX_WIDTH, sizeof(size_t), &c->max2d[0], NULL);
    clGetDeviceInfo(d, CL_DEVICE_IMAGE2D_MAX_HEIGHT, sizeof(size_t), &c->max2d[1], NULL);
    clGetDeviceInfo(d, CL_DEVICE_IMAGE3D_MAX_WIDTH, sizeof(size_t), &c->max3d[0], NULL);
    clGetDeviceInfo(d, CL_DEVICE_IMAGE3D_MAX_HEIGHT, sizeof(size_t), &c->max3d[1], NULL);
    clGetDeviceInfo(d, CL_DEVICE_IMAGE3D_MAX_DEPTH, sizeof(size_t), &c->max3d[2], NULL);
    clGetDeviceInfo(d, CL_DEVICE_IMAGE_MAX_ARRAY_SIZE, sizeof(size_t), &c->max_array, NULL);
    if (ctx->dev_info[device].cl_version >= 200 &&
        clGetDeviceInfo(d, CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS, sizeof c->read_write_args,
                        &c->read_write_args, NULL) != CL_SUCCESS)
      c->read_write_args = 0;
    for (int t = 0; t < 3; t++) {
      cl_uint n = 0;
      if (clGetSupportedImageFormats(ctx->clctx, CL_MEM_READ_WRITE, cl_types[t], 0, NULL, &n) !=
              CL_SUCCESS ||
          n == 0)
        continue; /* none of this type */
      c->formats[t] = calloc(n, sizeof *c->formats[t]);
      if (!c->formats[t] || clGetSupportedImageFormats(ctx->clctx, CL_MEM_READ_WRITE, cl_types[t],
                                                       n, c->formats[t], NULL) != CL_SUCCESS) {
        free(c->formats[t]);
        c->formats[t] = NULL;
        continue;
      }
      c->nformats[t] = n;
    }
  }
  ctx->image_caps[device] = c;
  return c;
}

/* ------------------------------------------------------------------ */
/* Allocation                                                          */
/* ------------------------------------------------------------------ */

/* F12-style checks before OpenCL sees the image: each refusal names the
 * format or the limit. */
static int check_desc(cls_context *ctx, const struct cls__stream *s, struct cls_image_desc *d,
                      size_t *pixel) {
  if (d->type == 0)
    d->type = CLS_IMAGE_2D;
  if (d->type < CLS_IMAGE_2D || d->type > CLS_IMAGE_2D_ARRAY)
    return cls__error(CLS_EINVAL, 0, "cls_image_alloc: image type %d (1: 2D, 2: 3D, 3: 2D array)",
                      d->type);
  if (d->type != CLS_IMAGE_3D) {
    if (d->depth > 1)
      return cls__error(CLS_EINVAL, 0, "cls_image_alloc: depth %zu for an image that is not 3D",
                        d->depth);
    d->depth = 1;
  }
  if (d->type != CLS_IMAGE_2D_ARRAY) {
    if (d->array_size > 1)
      return cls__error(CLS_EINVAL, 0,
                        "cls_image_alloc: array size %zu for an image that is not a 2D array",
                        d->array_size);
    d->array_size = 1;
  }
  if (!d->width || !d->height || !d->depth || !d->array_size)
    return cls__error(CLS_EINVAL, 0, "cls_image_alloc: a zero extent (%zu x %zu x %zu, %zu layers)",
                      d->width, d->height, d->depth, d->array_size);
  const struct cls__image_caps *c = cls__image_caps(ctx, s->device);
  if (!c)
    return cls__error_code(CLS_ECL);
  const char *dev = ctx->dev_info[s->device < ctx->ndevices ? s->device : 0].device_name;
  if (!c->support)
    return cls__error(CLS_ENOSYS, 0,
                      "cls_image_alloc: device '%s' has no image support (CL_DEVICE_IMAGE_SUPPORT "
                      "is false)",
                      dev);
  char fmt[64];
  format_name(d->order, d->data_type, fmt, sizeof fmt);
  int t = d->type - 1;
  bool found = false;
  for (cl_uint i = 0; i < c->nformats[t] && !found; i++)
    found = c->formats[t][i].image_channel_order == d->order &&
            c->formats[t][i].image_channel_data_type == d->data_type;
  *pixel = cls__image_pixel_size(d->order, d->data_type);
  if (!found || !*pixel) {
    static const char *const tn[] = {"2D", "3D", "2D array"};
    cls__error(CLS_ENOSYS, 0,
               "cls_image_alloc: image format %s is not supported for %s images by device '%s' "
               "(%u formats it has: cls_image_formats, clstream-info)",
               fmt, tn[t], dev, c->nformats[t]);
    return CLS_ENOSYS;
  }
  /* The limits: each named as OpenCL names it. */
  static const char *const lim2[] = {"CL_DEVICE_IMAGE2D_MAX_WIDTH", "CL_DEVICE_IMAGE2D_MAX_HEIGHT"};
  static const char *const lim3[] = {"CL_DEVICE_IMAGE3D_MAX_WIDTH", "CL_DEVICE_IMAGE3D_MAX_HEIGHT",
                                     "CL_DEVICE_IMAGE3D_MAX_DEPTH"};
  size_t ext[3] = {d->width, d->height, d->depth};
  static const char *const dim[] = {"width", "height", "depth"};
  for (int i = 0; i < (d->type == CLS_IMAGE_3D ? 3 : 2); i++) {
    size_t max = d->type == CLS_IMAGE_3D ? c->max3d[i] : c->max2d[i];
    if (ext[i] > max)
      return cls__error(CLS_ETOOBIG, 0,
                        "cls_image_alloc: %s image %s %zu exceeds the device's %s of %zu", fmt,
                        dim[i], ext[i], d->type == CLS_IMAGE_3D ? lim3[i] : lim2[i], max);
  }
  if (d->type == CLS_IMAGE_2D_ARRAY && d->array_size > c->max_array)
    return cls__error(CLS_ETOOBIG, 0,
                      "cls_image_alloc: %s image array of %zu layers exceeds the device's "
                      "CL_DEVICE_IMAGE_MAX_ARRAY_SIZE of %zu",
                      fmt, d->array_size, c->max_array);
  size_t bytes = *pixel;
  if (__builtin_mul_overflow(bytes, d->width, &bytes) ||
      __builtin_mul_overflow(bytes, d->height, &bytes) ||
      __builtin_mul_overflow(bytes, d->depth * d->array_size, &bytes) ||
      bytes > ctx->info.max_alloc_size)
    return cls__error(CLS_ETOOBIG, 0,
                      "cls_image_alloc: %s image of %zu x %zu x %zu (%zu layers) exceeds the "
                      "device's maximum allocation of %llu bytes",
                      fmt, d->width, d->height, d->depth, d->array_size, ctx->info.max_alloc_size);
  return CLS_OK;
}

static bool same_desc(const struct cls_image_desc *a, const struct cls_image_desc *b) {
  return a->type == b->type && a->order == b->order && a->data_type == b->data_type &&
         a->width == b->width && a->height == b->height && a->depth == b->depth &&
         a->array_size == b->array_size;
}

static cl_mem create(cls_context *ctx, const struct cls_image_desc *d, cl_int *rc) {
  cl_image_format f = {.image_channel_order = d->order, .image_channel_data_type = d->data_type};
  cl_image_desc cd = {.image_type = cl_types[d->type - 1],
                      .image_width = d->width,
                      .image_height = d->height,
                      .image_depth = d->type == CLS_IMAGE_3D ? d->depth : 0,
                      .image_array_size = d->type == CLS_IMAGE_2D_ARRAY ? d->array_size : 0};
  return clCreateImage(ctx->clctx, CL_MEM_READ_WRITE, &f, &cd, NULL, rc);
}

int cls__image_alloc(cls_context *ctx, struct cls__stream *s, const struct cls_image_desc *desc,
                     cls_buffer *out) {
  struct cls_image_desc d = *desc;
  size_t pixel = 0;
  int rc = check_desc(ctx, s, &d, &pixel);
  if (rc < 0)
    return rc;
  if (ctx->faults) {
    cl_int frc = cls__fault_alloc(ctx->faults, s->id);
    if (frc != CL_SUCCESS)
      return cls__error(CLS_EALLOC, frc, "injected fault: allocation on stream %d failed (%s)",
                        s->id, cls_cl_status_name(frc));
  }
  struct cls__memory *m = &s->mem;
  int index = -1;
  ctx->handles_epoch++;
  if ((rc = cls__memory_take_slot(m, &index)) < 0)
    return rc;
  /* A spare of the same description first: no OpenCL call. */
  cl_mem mem = NULL;
  struct cls__image *img = NULL;
  struct cls__spare_images *sp = m->spares;
  for (size_t i = 0; sp && i < sp->n; i++)
    if (same_desc(&sp->at[i].image->desc, &d)) {
      mem = sp->at[i].mem;
      img = sp->at[i].image;
      sp->at[i] = sp->at[--sp->n];
      break;
    }
  if (!mem) {
    img = calloc(1, sizeof *img);
    cl_int crc = CL_OUT_OF_HOST_MEMORY;
    if (img)
      mem = create(ctx, &d, &crc);
    if (!mem) {
      free(img);
      cls__memory_put_slot(m, index);
      if (crc == CL_OUT_OF_HOST_MEMORY)
        return cls__error(CLS_ENOMEM, 0, "out of host memory");
      char fmt[64];
      format_name(d.order, d.data_type, fmt, sizeof fmt);
      return cls__error(CLS_EALLOC, crc, "clCreateImage(%s, %zu x %zu x %zu, %zu layers) failed: %s",
                        fmt, d.width, d.height, d.depth, d.array_size, cls_cl_status_name(crc));
    }
    img->desc = d;
    img->pixel = pixel;
  }
  struct cls__slot *slot = &m->slots[index];
  slot->live_gen = slot->gen;
  slot->size = pixel * d.width * d.height * d.depth * d.array_size;
  slot->span = slot->size;
  slot->page = NULL;
  slot->offset = 0;
  slot->mem = mem;
  slot->image = img;
  slot->kind = CLS__KIND_IMAGE;
  slot->failure = &cls__never_written;
  /* A spare's last uses on this stream come before the new owner's. */
  slot->writer = img->release_seq ? s->id : -1;
  slot->write_seq = img->release_seq;
  slot->write_stamp = 0;
  slot->read_mask = 0;
  slot->reads_held = 0;
  slot->device = (unsigned char)s->device;
  slot->canary_kernel = NULL;
  *out = cls__handle_make(ctx, s->id, index, slot->gen);
  return CLS_OK;
}

