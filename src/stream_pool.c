/* The stream pool: streams are created lazily through the factory, and
 * polled for completions, which is where failures found after the enqueue
 * enter the failure store (F8). */
#include "core.h"
#include "driver.h"
#include "failure.h"

#include <string.h>

int cls__pool_init(cls_context *ctx, struct cls__stream_pool *pool,
                   const struct cls_stream_factory *f, void *fdata) {
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
  return CLS_OK;
}

void cls__pool_fini(cls_context *ctx, struct cls__stream_pool *pool) {
  for (int i = 0; i < pool->nstreams; i++) {
    struct cls__stream *s = &pool->streams[i];
    if (!s->created)
      continue;
    ctx->driver_ops->close(ctx->driver, s); /* waits for the stream's work */
    cls__memory_fini(ctx, s);
    s->created = false;
  }
  pool->nstreams = 0;
}

struct cls__stream *cls__stream_open(cls_context *ctx, int id, int *err) {
  if (id < 0 || id >= CLS_MAX_STREAMS) {
    *err = cls__error(CLS_ESTREAM, 0, "stream %d is not in 0..%d", id, CLS_MAX_STREAMS - 1);
    return NULL;
  }
  struct cls__stream_pool *pool = cls__pool(ctx);
  struct cls__stream *s = &pool->streams[id];
  if (s->created)
    return s;
  memset(s, 0, sizeof *s);
  s->id = id;
  int rc = ctx->driver_ops->open(ctx->driver, s);
  if (rc < 0) {
    *err = rc;
    return NULL;
  }
  s->created = true;
  s->mem.free_slot = -1;
  if (id >= pool->nstreams)
    pool->nstreams = id + 1;
  cls__log(&ctx->log, CLS_LOG_STREAMS, "stream %d created (%s)", id, pool->factory->name);
  return s;
}

void cls__stream_failed(cls_context *ctx, struct cls__stream *s, uint64_t seq, cl_int status,
                        bool deferred) {
  s->failed_seq = seq;
  s->failed_status = status;
  cls__inflight_failed(ctx, s->id, seq, status, deferred);
}

int cls__stream_poll(cls_context *ctx, struct cls__stream *s, bool wait) {
  int rc = ctx->driver_ops->poll(ctx->driver, s, wait);
  cls__inflight_prune(ctx);
  return rc;
}

int cls__poll_all(cls_context *ctx, bool wait) {
  struct cls__stream_pool *pool = cls__pool(ctx);
  int ret = CLS_OK;
  for (int i = 0; i < pool->nstreams; i++)
    if (pool->streams[i].created) {
      int rc = cls__stream_poll(ctx, &pool->streams[i], wait);
      if (rc < 0 && ret == CLS_OK)
        ret = rc;
    }
  return ret;
}
