/* The public image operations: formats, allocation, and the transfers of
 * regions (upload, download, copy, fill, to and from buffers).  Each
 * validates everything before OpenCL sees it, then runs through cls__run
 * like every other command: an image is a slot with a failure record, so
 * F1-F12 apply as to buffers (src/memory/image.c). */
#include "api/enter.h"
#include "core/command.h"
#include "core/refusal.h"
#include "memory/memory.h"
#include "stream/pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

CLS_API int cls_image_formats(cls_context *ctx, int stream, int type,
                              struct cls_image_format *out, size_t cap, size_t *count) {
  if (!count || (cap && !out))
    return cls__error(CLS_EINVAL, 0, "cls_image_formats: NULL argument");
  *count = 0;
  if (type < CLS_IMAGE_2D || type > CLS_IMAGE_2D_ARRAY)
    return cls__error(CLS_EINVAL, 0, "cls_image_formats: image type %d", type);
  CLS__ENTER(ctx);
  int rc;
  struct cls__stream *s = cls__stream_get(ctx, stream, &rc);
  const struct cls__image_caps *c = s ? cls__image_caps(ctx, s->device) : NULL;
  if (s && !c)
    rc = cls__error_code(CLS_ECL);
  if (c) {
    rc = CLS_OK;
    *count = c->nformats[type - 1];
    for (size_t i = 0; i < cap && i < *count; i++) {
      const cl_image_format *f = &c->formats[type - 1][i];
      out[i].order = f->image_channel_order;
      out[i].data_type = f->image_channel_data_type;
      out[i].order_name = cls__image_order_name(f->image_channel_order);
      out[i].type_name = cls__image_type_name(f->image_channel_data_type);
      out[i].pixel_size = cls__image_pixel_size(f->image_channel_order,
                                                f->image_channel_data_type);
      if (!out[i].order_name)
        out[i].order_name = "?";
      if (!out[i].type_name)
        out[i].type_name = "?";
    }
  }
  cls__unlock(ctx);
  return rc;
}

CLS_API int cls_image_alloc(cls_context *ctx, int stream, const struct cls_image_desc *desc,
                            cls_image *out) {
  if (!out || !desc)
    return cls__error(CLS_EINVAL, 0, "cls_image_alloc: NULL argument");
  *out = CLS_BUFFER_NULL;
  CLS__ENTER(ctx);
  int rc;
  struct cls__stream *s = cls__stream_get(ctx, stream, &rc);
  if (s)
    rc = cls__image_alloc(ctx, s, desc, out);
  cls__unlock(ctx);
  return rc;
}

/* A handle resolved to a slot of the kind wanted (an image, or a buffer of
 * bytes: `image`), or NULL with *rc recorded: a bad handle, or the other
 * kind. */
static struct cls__slot *resolve_kind(cls_context *ctx, const char *fn, cls_buffer h, bool image,
                                      int *rc) {
  struct cls__slot *s = cls__resolve(ctx, h);
  if (!s) {
    int err = cls__resolve_error(ctx, h);
    *rc = cls__error(err, 0, "%s: %s %#llx: %s", fn, image ? "image" : "buffer",
                     (unsigned long long)h.bits, cls_strerror(err));
    return NULL;
  }
  if (!s->image != !image) {
    *rc = cls__error(CLS_EINVAL, 0, "%s: handle %#llx names %s", fn, (unsigned long long)h.bits,
                     image ? "a buffer, not an image" : "an image where a buffer is wanted");
    return NULL;
  }
  return s;
}

static struct cls__slot *resolve_image(cls_context *ctx, const char *fn, cls_image h, int *rc) {
  return resolve_kind(ctx, fn, h, true, rc);
}

/* The buffer end of an image-buffer copy. */
static struct cls__slot *resolve_bytes(cls_context *ctx, const char *fn, cls_buffer h, int *rc) {
  return resolve_kind(ctx, fn, h, false, rc);
}

CLS_API int cls_image_info(cls_context *ctx, cls_image img, struct cls_image_desc *desc,
                           size_t *pixel_size) {
  if (!desc)
    return cls__error(CLS_EINVAL, 0, "cls_image_info: NULL desc");
  CLS__ENTER(ctx);
  int rc = CLS_OK;
  struct cls__slot *s = resolve_image(ctx, "cls_image_info", img, &rc);
  if (s) {
    *desc = s->image->desc;
    if (pixel_size)
      *pixel_size = s->image->pixel;
  }
  cls__unlock(ctx);
  return rc;
}

/* The image's extent in the three coordinates a region uses. */
static void extent(const struct cls__image *im, size_t dim[3]) {
  dim[0] = im->desc.width;
  dim[1] = im->desc.height;
  dim[2] = im->desc.type == CLS_IMAGE_3D         ? im->desc.depth
           : im->desc.type == CLS_IMAGE_2D_ARRAY ? im->desc.array_size
                                                 : 1;
}

/* origin and region (NULL: 0, and the rest of the image from origin)
 * into o and r, checked against the image's edges: the refusal names the
 * region and the image. */
static int check_region(const char *fn, const struct cls__image *im, const size_t *origin,
                        const size_t *region, size_t o[3], size_t r[3]) {
  size_t dim[3];
  extent(im, dim);
  for (int i = 0; i < 3; i++) {
    o[i] = origin ? origin[i] : 0;
    r[i] = region ? region[i] : o[i] < dim[i] ? dim[i] - o[i] : 0;
  }
  if (!r[0] || !r[1] || !r[2])
    return cls__error(CLS_EINVAL, 0, "%s: region %zu x %zu x %zu has a zero extent", fn, r[0],
                      r[1], r[2]);
  for (int i = 0; i < 3; i++)
    if (o[i] > dim[i] || r[i] > dim[i] - o[i])
      return cls__error(CLS_ERANGE, 0,
                        "%s: region at (%zu, %zu, %zu) of %zu x %zu x %zu passes the edge of "
                        "the %zu x %zu x %zu image",
                        fn, o[0], o[1], o[2], r[0], r[1], r[2], dim[0], dim[1], dim[2]);
  return CLS_OK;
}

/* A write of a region, as a buffer's of a range (cls__dst_access): F4
 * clears the whole image; a partial one leaves a ranged failure (F8a). */
static int dst_access(const struct cls__image *im, const size_t o[3], const size_t r[3]) {
  size_t dim[3];
  extent(im, dim);
  bool whole = !o[0] && !o[1] && !o[2] && r[0] == dim[0] && r[1] == dim[1] && r[2] == dim[2];
  return CLS_WRITE | (whole ? 0 : CLS__PARTIAL);
}

static int check_pitch(const char *fn, const struct cls__image *im, const size_t r[3],
                       size_t row_pitch, size_t slice_pitch) {
  size_t row = r[0] * im->pixel;
  if (row_pitch && row_pitch < row)
    return cls__error(CLS_EINVAL, 0, "%s: row pitch %zu is less than the row's %zu bytes", fn,
                      row_pitch, row);
  size_t slice = (row_pitch ? row_pitch : row) * r[1];
  if (slice_pitch && slice_pitch < slice)
    return cls__error(CLS_EINVAL, 0, "%s: slice pitch %zu is less than the slice's %zu bytes", fn,
                      slice_pitch, slice);
  if (slice_pitch && r[2] == 1 && im->desc.type == CLS_IMAGE_2D)
    return cls__error(CLS_EINVAL, 0, "%s: a slice pitch for a 2D image", fn);
  return CLS_OK;
}

static int upload(cls_context *ctx, int stream, cls_image dst, const size_t *origin,
                  const size_t *region, const void *src, size_t row_pitch, size_t slice_pitch,
                  int blocking) {
  const char *fn = blocking ? "cls_image_upload" : "cls_image_upload_async";
  CLS__ENTER(ctx);
  int rc;
  struct cls__cmd cmd = {.kind = CLS__CMD_WRITE, .op = "image upload", .nbind = 1};
  struct cls__slot *d = resolve_image(ctx, fn, dst, &rc);
  if (!d)
    goto out;
  size_t o[3], r[3];
  if (!src) {
    rc = cls__error(CLS_EINVAL, 0, "%s: NULL source", fn);
    goto refused;
  }
  if ((rc = check_region(fn, d->image, origin, region, o, r)) < 0 ||
      (rc = check_pitch(fn, d->image, r, row_pitch, slice_pitch)) < 0 ||
      !(cmd.stream = cls__stream_get(ctx, stream, &rc)))
    goto refused;
  cmd.bind[0] = (struct cls__binding){dst, d, dst_access(d->image, o, r)};
  cmd.x = (struct cls_transfer){.dst = d->mem,
                                .size = r[0] * r[1] * r[2] * d->image->pixel,
                                .host_src = src,
                                .blocking = blocking,
                                .image = CLS_TRANSFER_DST_IMAGE,
                                .row_pitch = row_pitch,
                                .slice_pitch = slice_pitch};
  memcpy(cmd.x.dst_origin, o, sizeof o);
  memcpy(cmd.x.region, r, sizeof r);
  rc = cls__run(ctx, &cmd, NULL, NULL);
out:
  cls__unlock(ctx);
  return rc;
refused:
  rc = cls__refused_write(ctx, cmd.kind, cmd.op, stream, dst, d, rc); /* F12 */
  goto out;
}

CLS_API int cls_image_upload(cls_context *ctx, int stream, cls_image dst, const size_t *origin,
                             const size_t *region, const void *src, size_t row_pitch,
                             size_t slice_pitch) {
  return upload(ctx, stream, dst, origin, region, src, row_pitch, slice_pitch, 1);
}

CLS_API int cls_image_upload_async(cls_context *ctx, int stream, cls_image dst,
                                   const size_t *origin, const size_t *region, const void *src,
                                   size_t row_pitch, size_t slice_pitch) {
  return upload(ctx, stream, dst, origin, region, src, row_pitch, slice_pitch, 0);
}

static int download(cls_context *ctx, int stream, cls_image src, const size_t *origin,
                    const size_t *region, void *dst, size_t row_pitch, size_t slice_pitch,
                    cls_report **report, int blocking) {
  const char *fn = blocking ? "cls_image_download" : "cls_image_download_async";
  if (report)
    *report = NULL;
  if (!dst)
    return cls__error(CLS_EINVAL, 0, "%s: NULL destination", fn);
  CLS__ENTER(ctx);
  int rc;
  struct cls__cmd cmd = {.kind = CLS__CMD_READ, .op = "image download", .nbind = 1};
  size_t o[3], r[3];
  struct cls__slot *s;
  if (!(cmd.stream = cls__stream_get(ctx, stream, &rc)) ||
      !(s = resolve_image(ctx, fn, src, &rc)) ||
      (rc = check_region(fn, s->image, origin, region, o, r)) < 0 ||
      (rc = check_pitch(fn, s->image, r, row_pitch, slice_pitch)) < 0)
    goto out;
  cmd.bind[0] = (struct cls__binding){src, s, CLS_READ};
  cmd.x = (struct cls_transfer){.src = s->mem,
                                .size = r[0] * r[1] * r[2] * s->image->pixel,
                                .host_dst = dst,
                                .blocking = blocking,
                                .image = CLS_TRANSFER_SRC_IMAGE,
                                .row_pitch = row_pitch,
                                .slice_pitch = slice_pitch};
  memcpy(cmd.x.src_origin, o, sizeof o);
  memcpy(cmd.x.region, r, sizeof r);
  rc = cls__download_run(ctx, &cmd, report);
out:
  cls__unlock(ctx);
  return rc;
}

CLS_API int cls_image_download(cls_context *ctx, int stream, cls_image src, const size_t *origin,
                               const size_t *region, void *dst, size_t row_pitch,
                               size_t slice_pitch, cls_report **report) {
  return download(ctx, stream, src, origin, region, dst, row_pitch, slice_pitch, report, 1);
}

CLS_API int cls_image_download_async(cls_context *ctx, int stream, cls_image src,
                                     const size_t *origin, const size_t *region, void *dst,
                                     size_t row_pitch, size_t slice_pitch) {
  return download(ctx, stream, src, origin, region, dst, row_pitch, slice_pitch, NULL, 0);
}

/* Two regions of one image overlap (a copy within an image). */
static bool overlap(const size_t a[3], const size_t b[3], const size_t r[3]) {
  for (int i = 0; i < 3; i++)
    if (!cls__ranges_overlap(a[i], a[i] + r[i], b[i], b[i] + r[i]))
      return false;
  return true;
}

/* The copies, each end an image or a buffer: F2 on the source (a tainted
 * one passes its failure on, CLS_ETAINTED), F12 on the destination. */
static int copy(cls_context *ctx, const char *fn, int stream, cls_buffer src, bool src_image,
                const size_t *src_origin, size_t src_offset, cls_buffer dst, bool dst_image,
                const size_t *dst_origin, size_t dst_offset, const size_t *region) {
  CLS__ENTER(ctx);
  int rc;
  struct cls__cmd cmd = {.kind = CLS__CMD_COPY, .op = "image copy", .nbind = 2};
  struct cls__slot *s, *d;
  if (!(d = dst_image ? resolve_image(ctx, fn, dst, &rc) : resolve_bytes(ctx, fn, dst, &rc)))
    goto out;
  if (!(s = src_image ? resolve_image(ctx, fn, src, &rc) : resolve_bytes(ctx, fn, src, &rc)))
    goto refused;
  const struct cls__image *im = src_image ? s->image : d->image; /* the one region's */
  size_t so[3] = {0, 0, 0}, dor[3] = {0, 0, 0}, r[3];
  size_t dummy[3];
  if ((rc = check_region(fn, im, src_image ? src_origin : dst_origin, region,
                         src_image ? so : dor, r)) < 0)
    goto refused;
  size_t bytes = r[0] * r[1] * r[2] * im->pixel;
  if (src_image && dst_image) {
    if (s->image->desc.order != d->image->desc.order ||
        s->image->desc.data_type != d->image->desc.data_type) {
      rc = cls__error(CLS_EINVAL, 0, "%s: the images' formats differ", fn);
      goto refused;
    }
    if ((rc = check_region(fn, d->image, dst_origin, r, dor, dummy)) < 0)
      goto refused;
    if (s == d && overlap(so, dor, r)) {
      rc = cls__error(CLS_EINVAL, 0, "%s: source and destination regions overlap", fn);
      goto refused;
    }
  } else {
    size_t off = src_image ? dst_offset : src_offset;
    const struct cls__slot *b = src_image ? d : s;
    if (off > b->size || bytes > b->size - off) {
      rc = cls__error(CLS_ERANGE, 0, "%s: %zu bytes at offset %zu exceed the buffer's %zu", fn,
                      bytes, off, b->size);
      goto refused;
    }
  }
  if (!(cmd.stream = cls__stream_get(ctx, stream, &rc)))
    goto refused;
  cmd.bind[0] = (struct cls__binding){src, s, CLS_READ};
  cmd.bind[1] = (struct cls__binding){
      dst, d, dst_image ? dst_access(d->image, dor, r) : cls__dst_access(dst_offset, bytes, d->size)};
  /* The buffer end by its page and the offset in it: PoCL 3.1 crashes
   * copying between an image and a sub-buffer (the page is the same
   * memory; ordering goes by the slot, not the cl_mem). */
  size_t sbase, dbase;
  cl_mem smem = cls__slot_base(ctx, s, &sbase), dmem = cls__slot_base(ctx, d, &dbase);
  src_offset += sbase;
  dst_offset += dbase;
  cmd.x = (struct cls_transfer){.src = smem,
                                .dst = dmem,
                                .src_offset = src_offset,
                                .dst_offset = dst_offset,
                                .size = bytes,
                                .image = (src_image ? CLS_TRANSFER_SRC_IMAGE : 0u) |
                                         (dst_image ? CLS_TRANSFER_DST_IMAGE : 0u)};
  memcpy(cmd.x.src_origin, so, sizeof so);
  memcpy(cmd.x.dst_origin, dor, sizeof dor);
  memcpy(cmd.x.region, r, sizeof r);
  rc = cls__run(ctx, &cmd, NULL, NULL);
out:
  cls__unlock(ctx);
  return rc;
refused:
  rc = cls__refused_write(ctx, cmd.kind, cmd.op, stream, dst, d, rc); /* F12 */
  goto out;
}

CLS_API int cls_image_copy(cls_context *ctx, int stream, cls_image src, const size_t *src_origin,
                           cls_image dst, const size_t *dst_origin, const size_t *region) {
  return copy(ctx, "cls_image_copy", stream, src, true, src_origin, 0, dst, true, dst_origin, 0,
              region);
}

CLS_API int cls_image_to_buffer(cls_context *ctx, int stream, cls_image src, const size_t *origin,
                                const size_t *region, cls_buffer dst, size_t offset) {
  return copy(ctx, "cls_image_to_buffer", stream, src, true, origin, 0, dst, false, NULL, offset,
              region);
}

CLS_API int cls_buffer_to_image(cls_context *ctx, int stream, cls_buffer src, size_t offset,
                                cls_image dst, const size_t *origin, const size_t *region) {
  return copy(ctx, "cls_buffer_to_image", stream, src, false, NULL, offset, dst, true, origin, 0,
              region);
}

CLS_API int cls_image_fill(cls_context *ctx, int stream, cls_image dst, const void *colour,
                           const size_t *origin, const size_t *region) {
  CLS__ENTER(ctx);
  int rc;
  struct cls__cmd cmd = {.kind = CLS__CMD_FILL, .op = "image fill", .nbind = 1};
  struct cls__slot *d = resolve_image(ctx, "cls_image_fill", dst, &rc);
  if (!d)
    goto out;
  size_t o[3], r[3];
  if (!colour) {
    rc = cls__error(CLS_EINVAL, 0, "cls_image_fill: NULL colour");
    goto refused;
  }
  if ((rc = check_region("cls_image_fill", d->image, origin, region, o, r)) < 0 ||
      !(cmd.stream = cls__stream_get(ctx, stream, &rc)))
    goto refused;
  cmd.bind[0] = (struct cls__binding){dst, d, dst_access(d->image, o, r)};
  cmd.x = (struct cls_transfer){.dst = d->mem,
                                .size = r[0] * r[1] * r[2] * d->image->pixel,
                                .pattern = colour,
                                .pattern_size = 16,
                                .image = CLS_TRANSFER_DST_IMAGE};
  memcpy(cmd.x.dst_origin, o, sizeof o);
  memcpy(cmd.x.region, r, sizeof r);
  rc = cls__run(ctx, &cmd, NULL, NULL);
out:
  cls__unlock(ctx);
  return rc;
refused:
  rc = cls__refused_write(ctx, cmd.kind, cmd.op, stream, dst, d, rc); /* F12 */
  goto out;
}
