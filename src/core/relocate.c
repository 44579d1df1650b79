/* Devices of a context, stream placement and relocation
 * (docs/devices.md).
 *
 * A context spans one device or several of one platform (CLS_DEVICE=all,
 * or a list), with one cl_context over them.  Each stream is placed on a
 * device when it is created: cls_stream_place's choice, else the policy
 * (spread: stream i on device i mod N; first: device 0).  A stream's
 * backend queue is a lease: cls__stream_relocate retires it and gives the
 * stream a fresh one, and the stream's generation goes up.  Fencing: the
 * retired queue's work is waited for before it goes (what completed is
 * proven, what failed is reported through F8 as any failure), so no later
 * command is ever ordered after an event of a retired generation: each
 * of its commands is at or below s->completed, which is what the ordering
 * code checks before it takes an event (src/order). */
#include "core/relocate.h"
#include "stream/pool.h"
#include "device/device.h"
#include "stream/contract.h"
#include "failure/poll.h"
#include "trace/trace.h"
#include "util/parse.h"

#include <stdio.h>

#include <stdint.h>
#include <string.h>

int cls__placement_parse(const char *text, int *out) {
  /* In the order of CLS__PLACE_FIRST, CLS__PLACE_SPREAD. */
  static const char *const words[] = {"first", "spread"};
  _Static_assert(CLS__PLACE_FIRST == 0 && CLS__PLACE_SPREAD == 1, "words[] in enum order");
  struct cls__parser ps = {"CLS_PLACEMENT", text, NULL};
  return cls__parse_word(&ps, words, 2, out, "a placement is 'spread' or 'first'");
}

int cls__relocate_parse(const char *text, int *out) {
  /* In the order of CLS__RELOCATE_OFF, _SAME, _OTHER. */
  static const char *const words[] = {"off", "same", "other"};
  _Static_assert(CLS__RELOCATE_OFF == 0 && CLS__RELOCATE_SAME == 1 && CLS__RELOCATE_OTHER == 2,
                 "words[] in enum order");
  struct cls__parser ps = {"CLS_RELOCATE", text, NULL};
  return cls__parse_word(&ps, words, 3, out, "a relocation policy is 'off', 'same' or 'other'");
}

int cls__recover_parse(const char *text, unsigned *out) {
  struct cls__parser ps = {"CLS_RECOVER", text, NULL};
  int rc = cls__parse_text(&ps);
  if (rc < 0)
    return rc;
  uint64_t n;
  if (strcmp(text, "off") == 0)
    *out = 0;
  else if (strcmp(text, "on") == 0)
    *out = CLS__RECOVER_DEFAULT;
  else if (text[0] >= '0' && text[0] <= '9' &&
           (rc = cls__parse_uint(&ps, "the bound", cls__span_of(text), 1, 1000, &n)) == CLS_OK)
    *out = (unsigned)n;
  else
    return rc < 0 ? rc
                  : cls__parse_fail(&ps, "recovery is 'off', 'on' or a bound from 1 to 1000");
  return CLS_OK;
}

int cls__place_devices(cls_context *ctx, const char *spec, bool policy_given) {
  struct cls__device_choice devs[CLS_MAX_DEVICES];
  int n = 0;
  int rc = cls__device_choose_many(spec, devs, &n);
  if (rc < 0)
    return rc;
  ctx->ndevices = n;
  ctx->platform = devs[0].platform;
  ctx->device = devs[0].device;
  ctx->info = devs[0].info;
  size_t items = SIZE_MAX;
  for (int i = 0; i < n; i++) {
    ctx->devices[i] = devs[i].device;
    ctx->dev_info[i] = devs[i].info;
    /* What the context promises for any buffer or launch is what every
     * one of its devices allows. */
    const struct cls_device_info *d = &devs[i].info;
    if (d->max_alloc_size < ctx->info.max_alloc_size)
      ctx->info.max_alloc_size = d->max_alloc_size;
    if (d->global_mem_size < ctx->info.global_mem_size)
      ctx->info.global_mem_size = d->global_mem_size;
    cl_uint bits = 0;
    clGetDeviceInfo(devs[i].device, CL_DEVICE_ADDRESS_BITS, sizeof bits, &bits, NULL);
    size_t m = bits && bits < sizeof(size_t) * 8 ? ((size_t)1 << bits) - 1 : SIZE_MAX;
    if (m < items)
      items = m;
  }
  ctx->max_work_items = items;
  if (!policy_given)
    ctx->placement = n > 1 ? CLS__PLACE_SPREAD : CLS__PLACE_FIRST;
  return CLS_OK;
}

int cls__relocate_lost(cls_context *ctx) {
  int ret = CLS_OK;
  for (uint64_t m = ctx->lost_mask; m; m &= m - 1) {
    struct cls__stream *s = cls__stream_peek(ctx, __builtin_ctzll(m));
    int device = s->device;
    if (ctx->relocate == CLS__RELOCATE_OTHER)
      device = (device + 1) % ctx->ndevices; /* the next device */
    int rc = cls__stream_relocate(ctx, s, device, "its queue was lost");
    if (rc < 0 && ret == CLS_OK)
      ret = rc;
  }
  if (ctx->keep.nlost && ctx->hooks.replay_kept) /* recovery: what the lost queues took */
    ctx->hooks.replay_kept(ctx);
  return ret;
}

/* Recovery under a driver that defers (cls_driver_kept): the tasks it kept
 * from the retired queue run on the fresh one, at its next submission;
 * counted, logged once and traced here. */
static __attribute__((noinline)) void replayed(cls_context *ctx, struct cls__stream *s,
                                               uint64_t gen) {
  uint64_t n = s->replay_pending;
  s->replay_pending = 0;
  s->stats.replays += n;
  char msg[160];
  snprintf(msg, sizeof msg, "replayed %llu command%s on generation %llu (lost with generation %llu)",
           (unsigned long long)n, n == 1 ? "" : "s", (unsigned long long)s->generation,
           (unsigned long long)gen);
  cls__log(&ctx->logger, CLS_LOG_ERRORS, "stream %d: %s", s->id, msg);
  if (ctx->trace)
    cls__trace_failure(ctx->trace, "replay", s->id, "deferred", s->issued, msg);
}

int cls__stream_relocate(cls_context *ctx, struct cls__stream *s, int device, const char *why) {
  /* The retired queue's work first: completed (its bytes are kept) or
   * failed (F8 carries its failure), nothing left in between. */
  int rc = cls__stream_poll(ctx, s, true);
  if (rc < 0)
    return rc;
  int old = s->device;
  uint64_t gen = s->generation;
  ctx->driver_ops->close(ctx->driver, &s->pub);
  s->device = device;
  bool placing = why == NULL; /* cls_stream_place: not a relocation */
  s->generation = placing ? gen : gen + 1; /* before open: a driver may look (scheduler) */
  if ((rc = cls__driver_open(ctx, s)) < 0) {
    /* Keep the stream usable: a fresh queue where it was. */
    s->device = old;
    if (cls__driver_open(ctx, s) < 0) {
      s->backend = NULL;
      s->hung = true; /* cls_context_destroy leaves it alone */
    }
    s->generation = gen;
    return rc;
  }
  ctx->lost_mask &= ~(1ull << s->id);
  s->flushed = s->submitted;
  if (placing) {
    cls__log(&ctx->logger, CLS_LOG_STREAMS,
             "stream %d placed on device %d before its first command", s->id, device);
    return CLS_OK;
  }
  s->stats.relocations++;
  cls__log(&ctx->logger, CLS_LOG_ERRORS,
           "stream %d relocated (%s): generation %llu on device %d -> generation %llu on "
           "device %d",
           s->id, why, (unsigned long long)gen, old, (unsigned long long)s->generation, device);
  if (s->replay_pending) /* recovery: what a deferring driver kept goes to the fresh queue */
    replayed(ctx, s, gen);
  return CLS_OK;
}
