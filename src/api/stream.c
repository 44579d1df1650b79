/* The stream-level public calls: sync (which ends non-blocking downloads
 * with what F8 found) and statistics. */
#include "failure/poll.h"
#include "api/enter.h"
#include "core/relocate.h"
#include "failure/report.h"
#include "trace/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

CLS_API int cls_stream_stats(cls_context *ctx, int stream, struct cls_stream_stats *out) {
  CLS__ENTER_OUT(ctx, out, stream);
  struct cls__stream *s = cls__stream_peek(ctx, stream);
  if (s)
    *out = s->stats;
  else
    memset(out, 0, sizeof *out);
  cls__unlock(ctx);
  return CLS_OK;
}

CLS_API int cls_stream_events(cls_context *ctx, int stream, uint64_t *out) {
  CLS__ENTER_OUT(ctx, out, stream);
  struct cls__stream *s = cls__stream_peek(ctx, stream);
  uint64_t (*events)(void *) = cls__factory_events(ctx->pool.factory);
  *out = events && s && s->backend ? events(s->backend) : 0;
  cls__unlock(ctx);
  return CLS_OK;
}

CLS_API int cls_stats_reset(cls_context *ctx) {
  CLS__ENTER(ctx);
  struct cls__stream_pool *pool = &ctx->pool;
  for (int i = 0; i < pool->nstreams; i++)
    memset(&pool->streams[i].stats, 0, sizeof pool->streams[i].stats);
  cls__unlock(ctx);
  return CLS_OK;
}

/* Ends the non-blocking downloads of `stream` (-1: all): those an F8 replay
 * marked are answered with their failures. */
static int finish_reads(cls_context *ctx, int stream, cls_report **report) {
  struct cls__failure *found[64];
  size_t nfound = 0;
  struct cls__pending_read **pp = &ctx->reads;
  while (*pp) {
    struct cls__pending_read *r = *pp;
    if (stream >= 0 && r->stream != stream) {
      pp = &r->next;
      continue;
    }
    *pp = r->next;
    cls__log_forget_read(ctx, r);
    if (r->failure) {
      if (nfound < 64)
        found[nfound++] = r->failure; /* the reference moves to found */
      else
        cls__failure_unref(r->failure);
    }
    free(r);
  }
  if (!nfound)
    return CLS_OK;
  char what[32];
  if (stream >= 0)
    snprintf(what, sizeof what, "sync of stream %d", stream);
  else
    snprintf(what, sizeof what, "sync");
  int rc = cls__report_from(what, found, nfound, report);
  for (size_t i = 0; i < nfound; i++)
    cls__failure_unref(found[i]);
  return rc;
}

/* Recovery under a driver that defers: a sync's wait met a lost queue
 * whose tasks the driver kept (cls_driver_kept), so it is not over until
 * they ran on the fresh queue.  Each round is a loss: bounded as a
 * command's replays are. */
static bool kept_lost(const cls_context *ctx, unsigned round) {
  if ((!ctx->lost_mask && !ctx->keep.nlost) || round >= ctx->recover)
    return false;
  if (ctx->keep.nlost) /* lost after their enqueue: kept until run again */
    return true;
  for (uint64_t m = ctx->lost_mask; m; m &= m - 1) {
    const struct cls__stream *s = &ctx->pool.streams[__builtin_ctzll(m)];
    if (s->replay_pending)
      return true;
  }
  return false;
}

CLS_API int cls_stream_sync(cls_context *ctx, int stream, cls_report **report) {
  if (report)
    *report = NULL;
  CLS__ENTER_STREAM(ctx, stream);
  int rc = CLS_OK;
  struct cls__stream *s = cls__stream_peek(ctx, stream);
  if (s) {
    for (unsigned round = 0;; round++) {
      rc = cls__stream_poll(ctx, s, true);
      if (rc == CLS_OK)
        rc = cls__poll_all(ctx, false); /* what s waited on has finished too */
      if (rc < 0 || !kept_lost(ctx, round))
        break;
      cls__relocate_lost(ctx); /* recovery: the kept tasks run on the fresh queue */
    }
    if (rc == CLS_OK)
      rc = finish_reads(ctx, stream, report);
    s->host_synced = s->submitted; /* its host memory is the caller's again */
  }
  cls__relocate_pending(ctx); /* queues the polls found lost move now */
  if (ctx->trace)
    cls__trace_flush(ctx->trace);
  cls__unlock(ctx);
  return rc;
}

CLS_API int cls_sync(cls_context *ctx, cls_report **report) {
  if (report)
    *report = NULL;
  CLS__ENTER(ctx);
  int rc;
  for (unsigned round = 0;; round++) {
    rc = cls__poll_all(ctx, true);
    if (rc < 0 || !kept_lost(ctx, round))
      break;
    cls__relocate_lost(ctx); /* recovery: the kept tasks run on the fresh queue */
  }
  if (rc == CLS_OK)
    rc = finish_reads(ctx, -1, report);
  for (int i = 0; i < ctx->pool.nstreams; i++) /* host memory is the caller's again */
    ctx->pool.streams[i].host_synced = ctx->pool.streams[i].submitted;
  cls__relocate_pending(ctx); /* queues the polls found lost move now */
  if (ctx->trace)
    cls__trace_flush(ctx->trace);
  cls__unlock(ctx);
  return rc;
}
