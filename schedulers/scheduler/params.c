/* Parameters of the scheduler driver, as CLS_SCHEDULER gives them after
 * "scheduler:": [STRATEGY][,max_tasks=N][,queues=M] (scheduler.c says what
 * they mean). */
#include "sched.h"

#include <stdlib.h>

#define DEFAULT_MAX_TASKS 32

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
  if (!params || !*params)
    return CLS_OK;
  char buf[256];
  if (strlen(params) >= sizeof buf)
    return cls__error(CLS_ECONFIG, 0, "scheduler parameters too long");
  strcpy(buf, params);
  char *save = NULL;
  bool first = true;
  for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), first = false) {
    char *eq = strchr(tok, '=');
    if (!eq) {
      if (!first)
        return cls__error(CLS_ECONFIG, 0, "scheduler: '%s': the strategy comes first", tok);
      if (strcmp(tok, "sequential") == 0)
        d->strategy = SEQUENTIAL;
      else if (strcmp(tok, "interleave") == 0)
        d->strategy = INTERLEAVE;
      else
        return cls__error(CLS_ECONFIG, 0,
                          "scheduler: unknown strategy '%s' (sequential, interleave)", tok);
      continue;
    }
    *eq = '\0';
    char *end;
    unsigned long v = strtoul(eq + 1, &end, 10);
    if (!eq[1] || *end || eq[1] == '-')
      return cls__error(CLS_ECONFIG, 0, "scheduler: %s=%s is not a count", tok, eq + 1);
    if (strcmp(tok, "max_tasks") == 0) {
      if (v < 1 || v > 1u << 20)
        return cls__error(CLS_ECONFIG, 0, "scheduler: max_tasks=%lu (1..%u)", v, 1u << 20);
      d->max_tasks = (unsigned)v;
    } else if (strcmp(tok, "queues") == 0) {
      if (v < 1 || v > CLS_MAX_STREAMS)
        return cls__error(CLS_ECONFIG, 0, "scheduler: queues=%lu (1..%d)", v, CLS_MAX_STREAMS);
      d->nqueues = (int)v;
    } else {
      return cls__error(CLS_ECONFIG, 0, "scheduler: unknown parameter '%s' (max_tasks, queues)",
                        tok);
    }
  }
  if (d->strategy == INTERLEAVE)
    d->nqueues = 1; /* one queue takes every stream's tasks */
  return CLS_OK;
}
