/* F8a: choosing exact or ranged attribution.  Ranged needs a device that
 * fails every command queued behind a failed one on an in-order queue
 * (quirk queue_poisoned): then the event of a later command shows a
 * failure of any command before it, and a stream needs an event only
 * where something waits or reads, and every event_every commands.  Where
 * a failed command leaves the rest of the queue running (rusticl,
 * oclgrind), only a per-command event sees the failure at all. */
#include "failure/attribution.h"
#include "util/parse.h"

#include <stdlib.h>
#include <string.h>

#define EVERY_DEFAULT 64u
#define EVERY_MAX 65536u

/* $name as an unsigned decimal in lo..hi, with the rules of every
 * configuration string (src/util/parse.h): 1 and *out when set, 0 when
 * unset or "", CLS_ECONFIG (recorded) when malformed. */
static int env_uint(const char *name, uint64_t lo, uint64_t hi, uint64_t *out) {
  const char *text = getenv(name);
  if (!text || !*text)
    return 0;
  struct cls__parser ps = {name, text, NULL};
  int rc = cls__parse_uint(&ps, "value", cls__span_of(text), lo, hi, out);
  return rc < 0 ? rc : 1;
}

int cls__attribution_parse(const struct cls_context_options *opts, int *precise,
                           unsigned *every, int *early) {
  *precise = opts->version >= 5 ? opts->precise : 0;
  *every = opts->version >= 5 ? opts->event_every : 0;
  if (*every > EVERY_MAX)
    return cls__error(CLS_ECONFIG, 0, "event_every %u is not in 1..%u", *every, EVERY_MAX);
  uint64_t v = 0;
  int rc;
  if (!*precise && (rc = env_uint("CLS_PRECISE", 0, 1, &v)) != 0) {
    if (rc < 0)
      return rc;
    *precise = v ? 1 : -1;
  }
  if (!*every && (rc = env_uint("CLS_EVENT_EVERY", 1, EVERY_MAX, &v)) != 0) {
    if (rc < 0)
      return rc;
    *every = (unsigned)v;
  }
  *early = CLS__EARLY_AUTO;
  const char *text = getenv("CLS_RELEASE_EARLY");
  if (text && *text) {
    static const char *const words[] = {"auto", "on", "off"};
    struct cls__parser ps = {"CLS_RELEASE_EARLY", text, NULL};
    if ((rc = cls__parse_word(&ps, words, 3, early, "the value is 'auto', 'on' or 'off'")) < 0)
      return rc;
  }
  return CLS_OK;
}

void cls__attribution_choose(cls_context *ctx, int precise, unsigned every, int early,
                             bool guard) {
  ctx->event_every = every ? every : EVERY_DEFAULT;
  ctx->release_early = early;
  ctx->ranged = false;
  if (precise > 0)
    ctx->attribution_why = "exact: asked for (CLS_PRECISE=1 or the precise option)";
  else if (guard)
    ctx->attribution_why = "exact: guard mode checks every launch on its own event";
  else if (ctx->trace)
    ctx->attribution_why = "exact: the trace times every command on its own event";
  else if (precise == 0 && ctx->relocate && ctx->recover)
    ctx->attribution_why = "exact: recovery runs again what a lost queue did not finish, and "
                           "only an event per command says what finished (CLS_PRECISE=0 "
                           "keeps ranges)";
  else if (ctx->quirks.queue_poisoned != 1)
    ctx->attribution_why = "exact: this device does not fail the rest of a queue behind a "
                           "failed command (quirk queue_poisoned), so only an event per "
                           "command sees a failure";
  else {
    ctx->ranged = true;
    ctx->attribution_why = "ranged: this device fails the rest of a queue behind a failed "
                           "command (quirk queue_poisoned); CLS_PRECISE=1 pins failures";
  }
  cls__log(&ctx->logger, CLS_LOG_STREAMS, "attribution %s (every %u commands at most)",
           ctx->attribution_why, ctx->event_every);
}

CLS_API int cls_context_attribution(cls_context *ctx, int *mode, const char **why,
                                    unsigned *every) {
  cls__error_clear();
  if (!ctx || !mode)
    return cls__error(CLS_EINVAL, 0, "cls_context_attribution: NULL argument");
  CLS__LIVE(ctx, "cls_context_attribution");
  /* Fixed when the context was created: read without the lock. */
  *mode = ctx->ranged ? CLS_ATTRIBUTION_RANGED : CLS_ATTRIBUTION_EXACT;
  if (why)
    *why = ctx->attribution_why;
  if (every)
    *every = ctx->event_every;
  return CLS_OK;
}
