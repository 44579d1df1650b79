/* The stream pool: the context's streams, created lazily through the
 * driver on first use. */
#include "stream/pool.h"
#include "stream/contract.h"
#include "trace/trace.h"

#include <string.h>

/* cls_backend.on_times: a factory's device times, onto the trace. */
static void on_times(void *arg, int id, uint64_t seq, const char *name, uint64_t start,
                     uint64_t end) {
  cls_context *ctx = arg;
  if (ctx->trace)
    cls__trace_device(ctx->trace, id, name, seq, start, end);
}

int cls__pool_init(cls_context *ctx, const struct cls_stream_factory *f, void *fdata) {
  struct cls__stream_pool *pool = &ctx->pool;
  memset(pool, 0, sizeof *pool);
  if (!f || f->version < 1 || !f->create || !f->destroy || !f->flush || !f->launch ||
      !f->write || !f->read || !f->copy || !f->fill || !f->marker || !f->poll)
    return cls__error(CLS_EVERSION, 0, "stream factory '%s' lacks required members",
                      f && f->name ? f->name : "?");
  pool->factory = f;
  pool->factory_data = fdata;
  pool->last_event = cls__factory_last_event(f);
  pool->backend.platform = ctx->platform;
  pool->backend.device = ctx->device;
  pool->backend.context = ctx->clctx;
  pool->backend.cl_version = ctx->info.cl_version;
  if (ctx->trace) {
    pool->backend.flags = CLS_BACKEND_PROFILE;
    pool->backend.on_times = on_times;
    pool->backend.times_arg = ctx;
  }
  if (ctx->ranged) { /* F8a: events only where needed (src/failure/attribution.c) */
    pool->backend.flags |= CLS_BACKEND_RANGED;
    pool->backend.event_every = ctx->event_every;
  }
  for (int i = 0; i < ctx->ndevices; i++) {
    pool->backends[i] = pool->backend;
    pool->backends[i].device = ctx->devices[i];
    pool->backends[i].cl_version = ctx->dev_info[i].cl_version;
    /* Events let go before their commands finished: not where the device
     * is the host's CPU, whose runtime threads that end such an event are
     * the device's own (slower on PoCL: docs/performance.md). */
    if (ctx->ranged && (ctx->release_early == CLS__EARLY_ON ||
                        (ctx->release_early == CLS__EARLY_AUTO &&
                         ctx->dev_info[i].type != CLS_DEVICE_CPU)))
      pool->backends[i].flags |= CLS_BACKEND_RELEASE_EARLY;
  }
  pool->backend.flags = pool->backends[0].flags; /* device 0's */
  return CLS_OK;
}

int cls__stream_check_id(int id) {
  if (id < 0 || id >= CLS_MAX_STREAMS)
    return cls__error(CLS_ESTREAM, 0, "stream %d is not in 0..%d", id, CLS_MAX_STREAMS - 1);
  return CLS_OK;
}

struct cls__stream *cls__stream_open(cls_context *ctx, int id, int *err) {
  if ((*err = cls__stream_check_id(id)) < 0)
    return NULL;
  struct cls__stream_pool *pool = &ctx->pool;
  struct cls__stream *s = &pool->streams[id];
  if (s->created && !s->backend) {
    /* A relocation whose fresh queue and old place both failed: no queue
     * to enqueue on (src/core/relocate.c). */
    *err = cls__error(CLS_ECL, CL_DEVICE_NOT_AVAILABLE,
                      "stream %d has no queue: relocating it failed, and so did a fresh "
                      "queue where it was",
                      id);
    return NULL;
  }
  if (s->created)
    return s;
  memset(s, 0, sizeof *s);
  s->id = id;
  s->device = cls__place_of(ctx, id);
  int rc = cls__driver_open(ctx, s);
  if (rc < 0) {
    *err = rc;
    return NULL;
  }
  s->created = true;
  s->mem.free_slot = -1;
  if (id >= pool->nstreams)
    pool->nstreams = id + 1;
  if (ctx->ndevices > 1)
    cls__log(&ctx->logger, CLS_LOG_STREAMS, "stream %d created (%s) on device %d (%s)", id,
             pool->factory->name, s->device, ctx->dev_info[s->device].device_name);
  else
    cls__log(&ctx->logger, CLS_LOG_STREAMS, "stream %d created (%s)", id, pool->factory->name);
  if (ctx->trace)
    cls__trace_stream(ctx->trace, id);
  return s;
}

int cls__factory_create(cls_context *ctx, int id, void **out) {
  return cls__factory_create_on(ctx, id, 0, out);
}

int cls__factory_create_on(cls_context *ctx, int id, int device, void **out) {
  struct cls__stream_pool *pool = &ctx->pool;
  cl_int rc = pool->factory->create(pool->factory_data, &pool->backends[device], id, out);
  if (rc != CL_SUCCESS)
    return cls__error(CLS_ECL, rc, "creating backend stream %d (%s factory) on device %d failed: %s",
                      id, pool->factory->name, device, cls_cl_status_name(rc));
  return CLS_OK;
}
