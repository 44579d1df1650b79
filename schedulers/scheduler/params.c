/* Parameters of the scheduler driver, as CLS_SCHEDULER gives them after
 * "scheduler:": [STRATEGY][,max_tasks=N][,queues=M] (scheduler.c says what
 * they mean), read with the library's one parser (src/util/parse.h). */
#include "sched.h"
#include "util/parse.h"

#define DEFAULT_MAX_TASKS 32
#define MAX_MAX_TASKS (1u << 20)

enum { KEY_MAX_TASKS, KEY_QUEUES };
static const char *const key_names[] = {"max_tasks", "queues"};

/* The first item, when it is a word and not KEY=VALUE. */
static int parse_strategy(const struct cls__parser *ps, struct cls__span item,
                          struct sched_driver *d) {
  if (cls__span_is(item, "sequential")) {
    d->strategy = SEQUENTIAL;
    return CLS_OK;
  }
  if (cls__span_is(item, "interleave")) {
    d->strategy = INTERLEAVE;
    return CLS_OK;
  }
  for (size_t i = 0; i < sizeof key_names / sizeof *key_names; i++)
    if (cls__span_is(item, key_names[i]))
      return cls__parse_fail(ps, "%s needs a value (%s=N)", key_names[i], key_names[i]);
  cls__parse_fail(ps, "unknown strategy ");
  cls__parse_append_quoted(item);
  cls__error_append(" (sequential, interleave)");
  return CLS_ECONFIG;
}

#define STR_(x) #x
#define STR(x) STR_(x)

/* What CLS_SCHEDULER=help prints: the parser below is the authority. */
const char cls__sched_usage[] = "scheduler[:[sequential|interleave][,max_tasks=N][,queues=M]]";
const struct cls__driver_param cls__sched_params[] = {
    {"sequential", "each stream's tasks, in order, onto its backend queue (default)"},
    {"interleave", "the pending tasks of every stream, round-robin, onto one queue"},
    {"max_tasks=N", "submit a stream's task list once it holds N tasks (1 to 1048576, "
                    "default " STR(DEFAULT_MAX_TASKS) ")"},
    {"queues=M", "sequential: stream i uses backend queue i mod M (1 to " STR(CLS_MAX_STREAMS)
                 ", default one queue per stream)"},
    {NULL, NULL}};

int cls__sched_parse_params(struct sched_driver *d, const char *params) {
  d->strategy = SEQUENTIAL;
  d->max_tasks = DEFAULT_MAX_TASKS;
  d->nqueues = 0;
  if (!params)
    return CLS_OK;
  struct cls__parser ps = {"CLS_SCHEDULER", params, "scheduler:"};
  struct cls__items it;
  cls__items_init(&it, &ps, cls__span_of(params), ',');
  struct cls__keys keys = {key_names, sizeof key_names / sizeof *key_names, 0};
  struct cls__span item, value;
  int rc;
  for (bool first = true; (rc = cls__items_next(&it, &item)) > 0; first = false) {
    if (!memchr(item.p, '=', item.n)) {
      if (!first) {
        cls__parse_fail(&ps, "the strategy comes first (");
        cls__parse_append_quoted(item);
        cls__error_append(" follows a parameter)");
        return CLS_ECONFIG;
      }
      if ((rc = parse_strategy(&ps, item, d)) < 0)
        return rc;
      continue;
    }
    int key = cls__parse_kv(&ps, item, &keys, &value);
    if (key < 0)
      return key;
    uint64_t v;
    if (key == KEY_MAX_TASKS) {
      if ((rc = cls__parse_uint(&ps, "max_tasks", value, 1, MAX_MAX_TASKS, &v)) < 0)
        return rc;
      d->max_tasks = (unsigned)v;
    } else {
      /* interleave has one queue: a count of queues would be ignored. */
      if (d->strategy == INTERLEAVE)
        return cls__parse_fail(&ps, "queues does not apply to interleave (it puts every "
                                    "stream's tasks onto one queue)");
      if ((rc = cls__parse_uint(&ps, "queues", value, 1, CLS_MAX_STREAMS, &v)) < 0)
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
