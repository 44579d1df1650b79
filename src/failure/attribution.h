/* Internal: F8a, how failures found after the enqueue are attributed --
 * exact (an event per command) or ranged (events only where needed; a
 * failure is known to lie in a range of commands).  Chosen once per
 * context, before any stream exists. */
#ifndef CLS_ATTRIBUTION_H
#define CLS_ATTRIBUTION_H

#include "base/context.h"

/* The option and $CLS_PRECISE / $CLS_EVENT_EVERY / $CLS_RELEASE_EARLY:
 * *precise 1 exact, -1 ranged where allowed, 0 not said; *every 0 not
 * said; *early CLS__EARLY_*.  CLS_ECONFIG (recorded) for malformed text
 * or an out-of-range option. */
int cls__attribution_parse(const struct cls_context_options *opts, int *precise,
                           unsigned *every, int *early);
/* Sets ctx->ranged, event_every, release_early and attribution_why from
 * what was asked and what the device allows (quirk queue_poisoned);
 * guard mode checks every launch, so it keeps exact attribution. */
void cls__attribution_choose(cls_context *ctx, int precise, unsigned every, int early,
                             bool guard);

#endif /* CLS_ATTRIBUTION_H */
