/* The public calls of devices, placement and relocation
 * (src/core/relocate.c does the work; docs/devices.md). */
#include "api/enter.h"
#include "core/relocate.h"

#include <string.h>

CLS_API int cls_context_devices(cls_context *ctx, struct cls_device_info *out, size_t cap,
                                size_t *count) {
  cls__error_clear();
  if (!ctx || !count || (cap && !out))
    return cls__error(CLS_EINVAL, 0, "cls_context_devices: NULL argument");
  CLS__LIVE(ctx, "cls_context_devices");
  /* Fixed since the context was created: no lock needed. */
  for (size_t i = 0; i < cap && i < (size_t)ctx->ndevices; i++)
    out[i] = ctx->dev_info[i];
  *count = (size_t)ctx->ndevices;
  return CLS_OK;
}

static int check_device(const cls_context *ctx, const char *call, int device) {
  if (device < 0 || device >= ctx->ndevices)
    return cls__error(CLS_ERANGE, 0, "%s: device %d is not in 0..%d (the context's devices)",
                      call, device, ctx->ndevices - 1);
  return CLS_OK;
}

CLS_API int cls_stream_place(cls_context *ctx, int stream, int device) {
  CLS__ENTER_STREAM(ctx, stream);
  int rc = check_device(ctx, "cls_stream_place", device);
  struct cls__stream *s = cls__stream_peek(ctx, stream);
  if (rc == CLS_OK && s && (s->issued || s->submitted || s->generation))
    rc = cls__error(CLS_EINVAL, 0,
                    "cls_stream_place: stream %d has had commands on device %d already "
                    "(cls_stream_relocate moves it)",
                    stream, s->device);
  if (rc == CLS_OK) {
    ctx->placed[stream] = (unsigned char)(device + 1);
    /* Used, but no command yet (a buffer allocated on it): its queue
     * moves now, before anything was enqueued on it. */
    if (s && s->device != device)
      rc = cls__stream_relocate(ctx, s, device, NULL); /* not a relocation */
  }
  cls__unlock(ctx);
  return rc;
}

CLS_API int cls_stream_device(cls_context *ctx, int stream, int *device) {
  CLS__ENTER_OUT(ctx, device, stream);
  struct cls__stream *s = cls__stream_peek(ctx, stream);
  *device = s ? s->device : cls__place_of(ctx, stream);
  cls__unlock(ctx);
  return CLS_OK;
}

CLS_API int cls_stream_generation(cls_context *ctx, int stream, uint64_t *generation) {
  CLS__ENTER_OUT(ctx, generation, stream);
  struct cls__stream *s = cls__stream_peek(ctx, stream);
  *generation = s ? s->generation : 0;
  cls__unlock(ctx);
  return CLS_OK;
}

CLS_API int cls_stream_relocate(cls_context *ctx, int stream, int device, uint64_t generation) {
  CLS__ENTER_STREAM(ctx, stream);
  int rc = check_device(ctx, "cls_stream_relocate", device);
  struct cls__stream *s = cls__stream_peek(ctx, stream);
  uint64_t now = s ? s->generation : 0;
  if (rc == CLS_OK && generation < now)
    rc = cls__error(CLS_ESTALEGEN, 0,
                    "cls_stream_relocate: stream %d is at generation %llu; the request names "
                    "generation %llu, retired since",
                    stream, (unsigned long long)now, (unsigned long long)generation);
  else if (rc == CLS_OK && generation > now)
    rc = cls__error(CLS_EINVAL, 0,
                    "cls_stream_relocate: stream %d is at generation %llu; generation %llu "
                    "does not exist yet",
                    stream, (unsigned long long)now, (unsigned long long)generation);
  if (rc == CLS_OK && !s) {
    /* Not used yet: created where it is sent, then moved to a fresh queue
     * like any stream (generation 1; the scheduler's rule for a relocated
     * stream, a queue of its own, holds for it too). */
    unsigned char placed = ctx->placed[stream];
    ctx->placed[stream] = (unsigned char)(device + 1);
    s = cls__stream_open(ctx, stream, &rc);
    ctx->placed[stream] = placed;
  }
  if (rc == CLS_OK)
    rc = cls__stream_relocate(ctx, s, device, "requested");
  cls__unlock(ctx);
  return rc;
}
