/* Internal: the context's devices, placement and relocation
 * (docs/devices.md).  Above the pool and F8: a relocation first waits for
 * the retired queue's work (failures reported through F8), then reopens
 * the stream through the driver.  Called by the public entry points and
 * the command path, where no driver call is in progress. */
#ifndef CLS_RELOCATE_H
#define CLS_RELOCATE_H

#include "base/context.h"

/* The context's devices from a CLS_DEVICE selection (one, "all", or a
 * list: cls__device_choose_many), with what every one of them allows
 * (ctx->info's maximum allocation and memory, max_work_items); the
 * default policy (spread over several devices) unless one was given. */
int cls__place_devices(cls_context *ctx, const char *spec, bool policy_given);
/* CLS_RELOCATE's grammar: "off", "same" or "other", exactly; CLS_ECONFIG. */
int cls__relocate_parse(const char *text, int *out);
/* Automatic relocation: the streams of ctx->lost_mask move to a fresh
 * queue (CLS_RELOCATE same or other).  Called where no driver call is in
 * progress: before a command, and after a sync's polls.  Returns the
 * first error; a stream that could not move stays in the mask. */
int cls__relocate_lost(cls_context *ctx);
/* The same at a safe point only when something is pending: a queue found
 * lost, or kept work marked to run again (recovery).  The one test every
 * API call and command makes. */
static inline void cls__relocate_pending(cls_context *ctx) {
  if (ctx->lost_mask || ctx->keep.nlost)
    cls__relocate_lost(ctx);
}
/* CLS_RECOVER's grammar: "off" (0), "on" (CLS__RECOVER_DEFAULT) or a
 * bound N from 1 to 1000 (how many times one command is run again);
 * CLS_ECONFIG. */
int cls__recover_parse(const char *text, unsigned *out);
/* CLS_PLACEMENT's grammar: "spread" or "first", exactly; CLS_ECONFIG. */
int cls__placement_parse(const char *text, int *out);
/* Moves s to a fresh backend queue on `device`: waits for the retired
 * queue's work (cls__stream_poll with wait: completions proven, failures
 * reported through F8), closes it through the driver, opens the fresh one,
 * and raises s->generation.  `why` is logged with both generations; NULL:
 * a placement before the first command (cls_stream_place), which keeps
 * the generation. */
int cls__stream_relocate(cls_context *ctx, struct cls__stream *s, int device, const char *why);

#endif /* CLS_RELOCATE_H */
