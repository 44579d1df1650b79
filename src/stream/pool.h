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
/* Creates factory stream `id` on device `device` of the context (0 ..
 * ndevices-1): a stream's backend goes on the device it is placed on. */
int cls__factory_create_on(cls_context *ctx, int id, int device, void **out);
/* Placement policies (CLS_PLACEMENT, src/stream/relocate.c). */
enum { CLS__PLACE_FIRST, CLS__PLACE_SPREAD };
/* The device stream `id` is created on: cls_stream_place's choice, else
 * the policy's (spread: id mod ndevices; first: 0). */
static inline int cls__place_of(const cls_context *ctx, int id) {
  if (ctx->placed[id])
    return ctx->placed[id] - 1;
  return ctx->placement == CLS__PLACE_SPREAD ? id % ctx->ndevices : 0;
}
/* The context's devices from a CLS_DEVICE selection (one, "all", or a
 * list: cls__device_choose_many), with what every one of them allows
 * (ctx->info's maximum allocation and memory, max_work_items); the
 * default policy (spread over several devices) unless one was given. */
int cls__place_devices(cls_context *ctx, const char *spec, bool policy_given);
/* CLS_RELOCATE (docs/devices.md). */
enum { CLS__RELOCATE_OFF, CLS__RELOCATE_SAME, CLS__RELOCATE_OTHER };
/* CLS_RELOCATE's grammar: "off", "same" or "other", exactly; CLS_ECONFIG. */
int cls__relocate_parse(const char *text, int *out);
/* Whether an OpenCL status, returned for a command, means its queue is
 * lost rather than the command failed (docs/devices.md, "Lease expiry"). */
static inline bool cls__lost_status(cl_int status) { return status == CL_DEVICE_NOT_AVAILABLE; }
/* Automatic relocation: the streams of ctx->lost_mask move to a fresh
 * queue (CLS_RELOCATE same or other).  Called where no driver call is in
 * progress: before a command, and after a sync's polls.  Returns the
 * first error; a stream that could not move stays in the mask. */
int cls__relocate_lost(cls_context *ctx);
/* CLS_PLACEMENT's grammar: "spread" or "first", exactly; CLS_ECONFIG. */
int cls__placement_parse(const char *text, int *out);
/* Moves s to a fresh backend queue on `device`: waits for the retired
 * queue's work (cls__stream_poll with wait: completions proven, failures
 * reported through F8), closes it through the driver, opens the fresh one,
 * and raises s->generation.  `why` is logged with both generations; NULL:
 * a placement before the first command (cls_stream_place), which keeps
 * the generation. */
int cls__stream_relocate(cls_context *ctx, struct cls__stream *s, int device, const char *why);
/* CLS_ESTREAM, recorded, unless 0 <= id < CLS_MAX_STREAMS. */
int cls__stream_check_id(int id);

#endif /* CLS_POOL_H */
