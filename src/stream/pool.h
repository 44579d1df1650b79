/* Internal: the context's stream pool.  Streams are created lazily, on
 * first use, through the driver's open(); they live until the context is
 * destroyed (context.c closes them). */
#ifndef CLS_POOL_H
#define CLS_POOL_H

#include "core/context.h"

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
/* The stream if it exists, else NULL; no creation. */
static inline struct cls__stream *cls__stream_peek(cls_context *ctx, int id) {
  if (id < 0 || id >= CLS_MAX_STREAMS)
    return NULL;
  struct cls__stream *s = &ctx->pool.streams[id];
  return s->created ? s : NULL;
}
/* Creates factory stream `id` (a driver's numbering: a logical stream, or
 * a shared queue); CLS_ECL recorded on failure. */
int cls__factory_create(cls_context *ctx, int id, void **out);
/* CLS_ESTREAM, recorded, unless 0 <= id < CLS_MAX_STREAMS. */
int cls__stream_check_id(int id);

#endif /* CLS_POOL_H */
