/* priority: a clstream driver written outside the library, the example of
 * docs/drivers.md.  It includes <clstream/driver.h> and nothing of
 * clstream's sources, and is built with include/ as its only clstream
 * include path.
 *
 * The policy: every stream has its own backend queue and each command is
 * enqueued at once (as the built-in event driver does), but streams have a
 * priority that decides when their work is handed to the device:
 *   high     a high-priority stream's queue is flushed after every
 *            command: its work starts as soon as it is issued;
 *   normal   the others are flushed once `batch` commands are waiting on
 *            them (and whenever the core needs it: before another stream
 *            waits on them, and on a sync), so they fill the device's idle
 *            time in batches instead of competing with every launch.
 * Parameters: CLS_SCHEDULER=priority[:high=S+S...][,batch=N]
 *   high=0+2     streams 0 and 2 are high priority (default: none)
 *   batch=N      flush a normal stream every N commands (1..1048576,
 *                default 16)
 *
 * What the core does for it (and it must not): the failure rules (a
 * command with a failed input never reaches submit()), the F8 replay of
 * failures the driver reports, and the ordering between streams, which
 * the driver asks for (cls_driver_order_after) and which waits on the
 * events of other queues.  What it must do: open and close a backend per
 * stream, enqueue each command once, as numbered, and release its waits,
 * report completions and failures from poll(). */
#include "priority.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_BATCH 16
#define MAX_BATCH (1u << 20)

/* The driver's state: struct cls_driver first (the core fills it in),
 * then the driver's own. */
struct prio_driver {
  struct cls_driver base;
  uint64_t high;  /* bit s: stream s is high priority */
  unsigned batch; /* a normal stream is flushed every `batch` commands */
};

static struct prio_driver *pd(struct cls_driver *d) { return (struct prio_driver *)d; }

enum { KEY_HIGH, KEY_BATCH };
static const char *const keys[] = {"high", "batch", NULL};

/* high=S+S...: each S a stream id. */
static int parse_high(struct cls_driver_params *ps, const struct cls_driver_param_item *item,
                      uint64_t *high) {
  const char *p = item->value, *end = item->value + item->nvalue;
  for (;;) {
    const char *plus = memchr(p, '+', (size_t)(end - p));
    struct cls_driver_param_item one = *item;
    one.value = p;
    one.nvalue = (size_t)((plus ? plus : end) - p);
    uint64_t id;
    int rc = cls_driver_params_uint(ps, &one, 0, CLS_MAX_STREAMS - 1, &id);
    if (rc < 0)
      return rc;
    *high |= UINT64_C(1) << id;
    if (!plus)
      return CLS_OK;
    p = plus + 1;
  }
}

/* The parameters, with the rules of every clstream configuration string
 * (cls_driver_params_next refuses empty items, unknown keys, ...). */
static int parse_params(struct prio_driver *d, const char *params) {
  d->high = 0;
  d->batch = DEFAULT_BATCH;
  if (!params)
    return CLS_OK;
  struct cls_driver_params ps = {.driver = "priority", .text = params, .keys = keys};
  struct cls_driver_param_item item;
  int rc;
  while ((rc = cls_driver_params_next(&ps, &item)) > 0) {
    if (item.key < 0)
      return cls_driver_param_error("priority", params,
                                    "'%.*s' is not KEY=VALUE (high=S+S..., batch=N)",
                                    (int)(item.n < 96 ? item.n : 96), item.p);
    if (item.key == KEY_HIGH) {
      if ((rc = parse_high(&ps, &item, &d->high)) < 0)
        return rc;
    } else {
      uint64_t v;
      if ((rc = cls_driver_params_uint(&ps, &item, 1, MAX_BATCH, &v)) < 0)
        return rc;
      d->batch = (unsigned)v;
    }
  }
  return rc;
}

static int pr_create(cls_context *ctx, const char *params, struct cls_driver **out) {
  (void)ctx;
  struct prio_driver *d = calloc(1, sizeof *d);
  if (!d)
    return cls_driver_error(CLS_ENOMEM, 0, "out of host memory");
  int rc = parse_params(d, params);
  if (rc < 0) {
    free(d); /* a failed create leaves nothing behind */
    return rc;
  }
  *out = &d->base;
  return CLS_OK;
}

static void pr_destroy(struct cls_driver *d) { free(pd(d)); }

/* One backend queue per stream, made by the context's stream factory on
 * the device the stream is placed on (a relocated stream comes back here
 * and gets a fresh one). */
static int pr_open(struct cls_driver *d, struct cls_driver_stream *s) {
  return cls_driver_factory_create_on(d, s->id, s->device, &s->backend);
}

static void pr_close(struct cls_driver *d, struct cls_driver_stream *s) {
  d->factory->destroy(s->backend);
  s->backend = NULL;
}

/* The queue is the stream's own, so the factory's command numbers are
 * the stream's: the core's poll helper reports against it, with ranges
 * where attribution is ranged (F8a). */
static int pr_poll(struct cls_driver *d, struct cls_driver_stream *s, bool wait) {
  return cls_driver_factory_poll(d, s, s->backend, wait);
}

/* Another stream's marker comes from its own queue. */
static void *pr_queue_of(struct cls_driver *d, struct cls_driver_stream *s,
                         struct cls_driver_stream *p) {
  (void)d;
  (void)s;
  return p->backend;
}

/* Commands are enqueued right after they are ordered: they may wait on
 * the events the factory lends. */
static const struct cls_driver_orderer pr_orderer = {.queue_of = pr_queue_of,
                                                     .enqueues_now = true};

static int pr_order(struct cls_driver *d, struct cls_driver_cmd *cmd) {
  return cls_driver_order_after(d, cmd, &pr_orderer);
}

/* Enqueued now, as numbered; then the priority decides the flush. */
static cl_int pr_submit(struct cls_driver *base, struct cls_driver_cmd *cmd) {
  struct prio_driver *d = pd(base);
  struct cls_driver_stream *s = cmd->stream;
  cl_int rc = cls_driver_enqueue_cmd(base, s->backend, cmd, cmd->seq);
  if (rc != CL_SUCCESS)
    return rc; /* its waits were dropped; the core reports the failure */
  s->stats.submissions++;
  if (((d->high >> s->id) & 1) || cmd->seq - s->flushed >= d->batch) {
    cl_int frc = base->factory->flush(s->backend);
    if (frc == CL_SUCCESS) {
      s->flushed = cmd->seq;
      s->stats.flushes++;
    } else {
      cls_driver_log_error(base, "priority: flushing stream %d failed: %s", s->id,
                           cls_cl_status_name(frc));
    }
  }
  return CL_SUCCESS;
}

static const struct cls_driver_param params[] = {
    {"high=S+S...", "these streams are flushed after every command (default: none)"},
    {"batch=N", "other streams are flushed every N commands (1 to 1048576, default 16)"},
    {NULL, NULL}};

const struct cls_driver_ops priority_driver = {
    .version = CLS_DRIVER_OPS_VERSION,
    .name = "priority",
    .description = "example outside driver: high-priority streams flushed at once, "
                   "others in batches",
    .usage = "priority[:high=S+S...][,batch=N]",
    .params = params,
    .create = pr_create,
    .destroy = pr_destroy,
    .open = pr_open,
    .close = pr_close,
    .poll = pr_poll,
    .order = pr_order,
    .submit = pr_submit,
};
