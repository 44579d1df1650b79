/* Internal: buffer memory (memory.c).  Buffers are carved from pages on
 * the stream they were allocated on; a freed block is reused only once its
 * uses on every stream have completed. */
#ifndef CLS_MEMORY_H
#define CLS_MEMORY_H

#include "base/handle.h"

int cls__memory_alloc(cls_context *ctx, struct cls__stream *s, size_t size,
                      cls_buffer *out);
int cls__memory_free(cls_context *ctx, cls_buffer h);
void cls__memory_fini(cls_context *ctx, struct cls__stream *s);
/* A free slot of m (its index), and giving one back (image.c's too). */
int cls__memory_take_slot(struct cls__memory *m, int *index);
void cls__memory_put_slot(struct cls__memory *m, int index);

/* Images (image.c).  An image owns its cl_mem; a freed one is kept among
 * its stream's spares (the oldest released when full), taken back by the
 * next image of the same description. */
int cls__image_alloc(cls_context *ctx, struct cls__stream *s, const struct cls_image_desc *desc,
                     cls_buffer *out);
/* A freed image whose uses have all completed, but those on its own
 * stream up to own_seq: kept as a spare or released.  Takes `image`. */
void cls__image_release(struct cls__memory *m, cl_mem mem, struct cls__image *image,
                        uint64_t own_seq);
/* The device's image limits and formats, asked once (then cached in the
 * context); NULL with the error recorded when they cannot be asked. */
struct cls__image_caps {
  cl_bool support;          /* CL_DEVICE_IMAGE_SUPPORT */
  size_t max2d[2];          /* CL_DEVICE_IMAGE2D_MAX_WIDTH, _HEIGHT */
  size_t max3d[3];          /* CL_DEVICE_IMAGE3D_MAX_WIDTH, _HEIGHT, _DEPTH */
  size_t max_array;         /* CL_DEVICE_IMAGE_MAX_ARRAY_SIZE (1.2) */
  cl_uint read_write_args;  /* CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS (2.0; 0 below) */
  cl_uint nformats[3];      /* by enum cls_image_type - 1 */
  cl_image_format *formats[3];
};
const struct cls__image_caps *cls__image_caps(cls_context *ctx, int device);
void cls__image_caps_free(cls_context *ctx);
/* Bytes per pixel of a format, 0 for one clstream does not know. */
size_t cls__image_pixel_size(unsigned order, unsigned type);
/* "CL_RGBA" / "CL_FLOAT", or NULL for a value clstream does not name. */
const char *cls__image_order_name(unsigned order);
const char *cls__image_type_name(unsigned type);

/* Where a slot's bytes are as a (cl_mem, offset) pair that is no
 * sub-buffer: a buffer's page and its bytes' offset in it (after the guard
 * in guard mode), an image's own object at 0.  What is handed to code
 * clstream did not write (foreign callbacks, cls_buffer_mem): libraries
 * take offsets, and PoCL 3.1 crashes copying between an image and a
 * sub-buffer. */
static inline cl_mem cls__slot_base(const cls_context *ctx, const struct cls__slot *s,
                                    size_t *offset) {
  if (!s->page) {
    *offset = 0;
    return s->mem;
  }
  *offset = s->offset + (ctx->guard ? ctx->hooks.guard.before(ctx) : 0);
  return s->page->mem;
}

#endif /* CLS_MEMORY_H */
