/* Internal: the context's stream pool.  Streams are created lazily, on
 * first use, through the driver's open(); they live until the context is
 * destroyed (context.c closes them). */
#ifndef CLS_POOL_H
#define CLS_POOL_H

#include "base/context.h"

int cls__pool_init(cls_context *ctx, const struct cls_stream_factory *f, void *fdata);

/* Returns the stream, creating its backend through the driver on first
 * use; NULL with the error recorded when id is out of range or creation
 * failed.  cls__stream_get is the inline fast path of every command. */
struct cls__stream *cls__stream_open(cls_context *ctx, int id, int *err);
static inline struct cls__stream *cls__stream_get(cls_context *ctx, int id, int *err) {
  if ((unsigned)id < CLS_MAX_STREAMS && ctx->pool.streams[id].created)
    return &ctx->pool.streams[id];
  return cls__stream_open(ctx, id, err);
}
/* Creates factory stream `id` (a driver's numbering: a logical stream, or
 * a shared queue); CLS_ECL recorded on failure. */
int cls__factory_create(cls_context *ctx, int id, void **out);
/* Creates factory stream `id` on device `device` of the context (0 ..
 * ndevices-1): a stream's backend goes on the device it is placed on. */
int cls__factory_create_on(cls_context *ctx, int id, int device, void **out);
/* Placement policies (CLS_PLACEMENT, src/core/relocate.c). */
enum { CLS__PLACE_FIRST, CLS__PLACE_SPREAD };
/* The device stream `id` is created on: cls_stream_place's choice, else
 * the policy's (spread: id mod ndevices; first: 0). */
static inline int cls__place_of(const cls_context *ctx, int id) {
  if (ctx->placed[id])
    return ctx->placed[id] - 1;
  return ctx->placement == CLS__PLACE_SPREAD ? id % ctx->ndevices : 0;
}
/* CLS_ESTREAM, recorded, unless 0 <= id < CLS_MAX_STREAMS. */
int cls__stream_check_id(int id);

#endif /* CLS_POOL_H */
