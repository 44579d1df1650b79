/* Parameters of the scheduler driver, as CLS_SCHEDULER gives them after
 * "scheduler:": [STRATEGY][,max_tasks=N][,queues=M] (scheduler.c says what
 * they mean), read with the library's rules for configuration strings
 * (cls_driver_params_next, <clstream/driver.h>). */
#include "sched.h"

#include <stdio.h>

#define DEFAULT_MAX_TASKS 32
#define MAX_MAX_TASKS (1u << 20)

enum { KEY_MAX_TASKS, KEY_QUEUES };
static const char *const key_names[] = {"max_tasks", "queues", NULL};

/* Items are quoted in refusals, long ones cut short. */
#define QUOTE_MAX 96
#define QUOTED(item) (int)((item).n <= QUOTE_MAX ? (item).n : QUOTE_MAX), (item).p, \
                     (item).n <= QUOTE_MAX ? "" : "..."

static bool is(const struct cls_driver_param_item *item, const char *word) {
  return strlen(word) == item->n && memcmp(item->p, word, item->n) == 0;
}

/* The first item, when it is a word and not KEY=VALUE. */
static int parse_strategy(const char *params, const struct cls_driver_param_item *item,
                          struct sched_driver *d) {
  if (is(item, "sequential")) {
    d->strategy = SEQUENTIAL;
    return CLS_OK;
  }
  if (is(item, "interleave")) {
    d->strategy = INTERLEAVE;
    return CLS_OK;
  }
  for (size_t i = 0; key_names[i]; i++)
    if (is(item, key_names[i]))
      return cls_driver_param_error("scheduler", params, "%s needs a value (%s=N)", key_names[i],
                                    key_names[i]);
  return cls_driver_param_error("scheduler", params,
                                "unknown strategy '%.*s%s' (sequential, interleave)",
                                QUOTED(*item));
}

#define STR_(x) #x
#define STR(x) STR_(x)

/* What CLS_SCHEDULER=help prints: the parser below is the authority. */
const char cls__sched_usage[] = "scheduler[:[sequential|interleave][,max_tasks=N][,queues=M]]";
const struct cls_driver_param cls__sched_params[] = {
    {"sequential", "each stream's tasks, in order, onto its backend queue (default)"},
    {"interleave", "the pending tasks of every stream, round-robin, onto one queue"},
    {"max_tasks=N", "submit a stream's task list once it holds N tasks (1 to 1048576; "
                    "default: 1 after the stream opens or waits, doubling at each full "
                    "list up to " STR(DEFAULT_MAX_TASKS) ")"},
    {"queues=M", "sequential: stream i uses backend queue i mod M (1 to " STR(CLS_MAX_STREAMS)
                 ", default one queue per stream)"},
    {NULL, NULL}};

int cls__sched_parse_params(struct sched_driver *d, const char *params) {
  d->strategy = SEQUENTIAL;
  d->max_tasks = DEFAULT_MAX_TASKS;
  d->ramp = true;
  d->nqueues = 0;
  if (!params)
    return CLS_OK;
  struct cls_driver_params ps = {.driver = "scheduler", .text = params, .keys = key_names};
  struct cls_driver_param_item item;
  int rc;
  for (bool first = true; (rc = cls_driver_params_next(&ps, &item)) > 0; first = false) {
    if (item.key < 0) {
      if (!first)
        return cls_driver_param_error("scheduler", params,
                                      "the strategy comes first ('%.*s%s' follows a parameter)",
                                      QUOTED(item));
      if ((rc = parse_strategy(params, &item, d)) < 0)
        return rc;
      continue;
    }
    uint64_t v;
    if (item.key == KEY_MAX_TASKS) {
      if ((rc = cls_driver_params_uint(&ps, &item, 1, MAX_MAX_TASKS, &v)) < 0)
        return rc;
      d->max_tasks = (unsigned)v;
      d->ramp = false; /* as given: a list goes once it holds N tasks */
    } else {
      /* interleave has one queue: a count of queues would be ignored. */
      if (d->strategy == INTERLEAVE)
        return cls_driver_param_error("scheduler", params,
                                      "queues does not apply to interleave (it puts every "
                                      "stream's tasks onto one queue)");
      if ((rc = cls_driver_params_uint(&ps, &item, 1, CLS_MAX_STREAMS, &v)) < 0)
        return rc;
      d->nqueues = (int)v;
    }
  }
  if (rc < 0)
    return rc;
  if (d->strategy == INTERLEAVE)
    d->nqueues = 1; /* one queue takes every stream's tasks */
  return CLS_OK;
}
