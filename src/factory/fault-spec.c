/* Deterministic fault injection's spec: CLS_FAULT's grammar, parsed into
 * a list of faults, and the matching of commands and allocations against
 * it (which fault fires, when, with what status).  The stream factory
 * that injects them: fault.c.
 *
 * Grammar (CLS_FAULT, or cls_context_options.fault):
 *   spec  := fault { ';' fault }
 *   fault := when ':' key '=' value { ',' key '=' value }
 *   when  := enqueue | complete | alloc | lost
 *   key   := kernel=NAME      launches of that kernel (foreign commands of
 *                             that label) only
 *          | op=OP            launch, upload, download, copy, fill or
 *                             foreign
 *          | stream=N         commands (allocations) on stream N only
 *          | nth=N            the N-th matching event (from 1) fires
 *          | times=N          fire N times in all (default: once with nth,
 *                             else every time)
 *          | status=CODE      OpenCL status to fail with, by name
 *                             (CL_OUT_OF_RESOURCES) or number (-5)
 *          | hold=N           complete only: the failure is found only after
 *                             0..N more polls that do not wait (drawn per
 *                             command from a fixed sequence), at once
 *                             after a poll of its stream that waits, or any
 *                             blocking download: several held failures are
 *                             found in shuffled order, not in the order
 *                             their commands finished (F8's tests)
 *          | at=enqueue|complete  lost only: where the loss is met (below)
 *          | rank=R           in the process of MPI rank R only (the rank
 *                             cls_wire_set_rank() gave, else the launcher's
 *                             OMPI_COMM_WORLD_RANK, PMI_RANK or PMIX_RANK;
 *                             a process of no known rank never fires it)
 * A fault needs at least one key, each key at most once; no whitespace and
 * no empty fault or key anywhere (src/util/parse.h: the rules every
 * configuration string follows).  "complete" faults enqueue the command
 * for real (so no real command ever waits on a failed event) and report it
 * failed when poll() sees it finish.  "lost" (any key but times; status
 * default CL_DEVICE_NOT_AVAILABLE) is an expired lease: from the nth
 * matching command on (default the first), the backend queue the command
 * went to fails every command with that status; a queue created later
 * (a relocation, docs/devices.md) is a fresh lease.  With at=complete
 * the queue accepts the commands but runs none of them: each non-blocking
 * one is enqueued for real behind a user event that a poll of the stream
 * (or a blocking transfer on it, or its end) sets to `status`, so it writes nothing, ends with that status (found at
 * completion, F8), and the commands of other queues that wait on it fail
 * without running, as behind a real lost lease; a blocking transfer is
 * refused at its enqueue (it would wait for nothing else).  Default
 * at=enqueue: every command is refused at its enqueue. */
#include "factory/call.h"
#include "factory/fault.h"
#include "factory/fault-spec.h"
#include "util/parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The rank the launcher gave this process (rank=R faults), -1 if none. */
static int rank_from_env(void) {
  static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"};
  for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
    const char *v = getenv(vars[i]);
    char *end;
    long r = v && *v ? strtol(v, &end, 10) : -1;
    if (v && *v && !*end && r >= 0 && r <= INT32_MAX)
      return (int)r;
  }
  return -1;
}

void cls__fault_set_rank(struct cls__fault_config *cfg, int rank) {
  if (cfg)
    cfg->rank = rank;
}

bool cls__fault_loses(const struct cls__fault_config *cfg) {
  for (size_t i = 0; cfg && i < cfg->n; i++)
    if (cfg->faults[i].when == W_LOST || cfg->faults[i].when == W_GONE)
      return true;
  return false;
}

bool cls__fault_gates(const struct cls__fault_config *cfg) {
  for (size_t i = 0; cfg && i < cfg->n; i++)
    if (cfg->faults[i].when == W_GONE)
      return true;
  return false;
}

void cls__fault_config_free(struct cls__fault_config *cfg) {
  if (!cfg)
    return;
  for (size_t i = 0; i < cfg->n; i++) {
    free(cfg->faults[i].kernel);
    free(cfg->faults[i].op);
  }
  free(cfg->faults);
  free(cfg);
}

/* An OpenCL status: its name, or a negative number (-5). */
static int parse_status(const struct cls__parser *ps, struct cls__span v, cl_int *out) {
  uint64_t u;
  if (v.n > 1 && v.p[0] == '-' &&
      cls__parse_uint(ps, "status", (struct cls__span){v.p + 1, v.n - 1}, 1, 10000, &u) == 0) {
    *out = -(cl_int)u;
    return CLS_OK;
  }
  for (int c = -1; c > -80 && v.p[0] != '-'; c--)
    if (cls__span_is(v, cls_cl_status_name(c))) {
      *out = c;
      return CLS_OK;
    }
  cls__parse_fail(ps, "status ");
  cls__parse_append_quoted(v);
  cls__error_append(" is neither an OpenCL error name (CL_OUT_OF_RESOURCES) nor a number in "
                    "-10000..-1");
  return CLS_ECONFIG;
}

static const char *const ops[] = {"launch", "upload", "download", "copy", "fill", "foreign"};

enum { K_KERNEL, K_OP, K_STREAM, K_NTH, K_TIMES, K_STATUS, K_HOLD, K_RANK, K_AT };
static const char *const key_names[] = {"kernel", "op",     "stream", "nth", "times",
                                        "status", "hold",   "rank",   "at"};

/* Duplicates a value (a kernel or op name) into *out. */
static int keep(struct cls__span v, char **out) {
  if (!(*out = malloc(v.n + 1)))
    return cls__error(CLS_ENOMEM, 0, "out of host memory");
  memcpy(*out, v.p, v.n);
  (*out)[v.n] = '\0';
  return CLS_OK;
}

static int parse_key(const struct cls__parser *ps, int key, struct cls__span v,
                     struct cls__fault *f) {
  uint64_t u;
  int rc;
  if ((key == K_KERNEL || key == K_OP) && f->when == W_ALLOC)
    return cls__parse_fail(ps, "%s does not apply to alloc", key_names[key]);
  if (key == K_HOLD && f->when != W_COMPLETE)
    return cls__parse_fail(ps, "hold applies to complete faults only");
  if (key == K_AT && f->when != W_LOST)
    return cls__parse_fail(ps, "at applies to lost faults only");
  if (key == K_TIMES && f->when >= W_LOST)
    return cls__parse_fail(ps, "times does not apply to lost (a queue is lost once, then "
                               "for every command)");
  switch (key) {
  case K_KERNEL:
    return keep(v, &f->kernel);
  case K_OP:
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
      if (cls__span_is(v, ops[i]))
        return keep(v, &f->op);
    cls__parse_fail(ps, "op ");
    cls__parse_append_quoted(v);
    cls__error_append(" is not one of launch, upload, download, copy, fill, foreign");
    return CLS_ECONFIG;
  case K_STREAM:
    if ((rc = cls__parse_uint(ps, "stream", v, 0, CLS_MAX_STREAMS - 1, &u)) == CLS_OK)
      f->stream = (int)u;
    return rc;
  case K_NTH:
    return cls__parse_uint(ps, "nth", v, 1, UINT64_MAX, &f->nth);
  case K_TIMES:
    return cls__parse_uint(ps, "times", v, 1, UINT64_MAX, &f->times);
  case K_HOLD:
    return cls__parse_uint(ps, "hold", v, 1, 1000000, &f->hold);
  case K_AT:
    if (cls__span_is(v, "complete"))
      f->when = W_GONE; /* counted apart from the enqueue-time losses */
    else if (!cls__span_is(v, "enqueue")) {
      cls__parse_fail(ps, "at ");
      cls__parse_append_quoted(v);
      cls__error_append(" is not one of enqueue, complete");
      return CLS_ECONFIG;
    }
    return CLS_OK;
  case K_RANK:
    if ((rc = cls__parse_uint(ps, "rank", v, 0, INT32_MAX, &u)) == CLS_OK)
      f->rank = (int)u;
    return rc;
  default:
    return parse_status(ps, v, &f->status);
  }
}

/* One fault: WHEN:KEY=VALUE{,KEY=VALUE}. */
static int parse_one(const struct cls__parser *ps, struct cls__span text, struct cls__fault *f) {
  struct cls__span when, rest;
  if (!cls__span_split(text, ':', &when, &rest)) {
    cls__parse_fail(ps, "fault ");
    cls__parse_append_quoted(text);
    cls__error_append(": expected WHEN:KEY=VALUE");
    return CLS_ECONFIG;
  }
  if (cls__span_is(when, "enqueue"))
    f->when = W_ENQUEUE;
  else if (cls__span_is(when, "complete"))
    f->when = W_COMPLETE;
  else if (cls__span_is(when, "alloc"))
    f->when = W_ALLOC;
  else if (cls__span_is(when, "lost"))
    f->when = W_LOST;
  else {
    cls__parse_fail(ps, "unknown WHEN ");
    cls__parse_append_quoted(when);
    cls__error_append(" (enqueue, complete, alloc, lost)");
    return CLS_ECONFIG;
  }
  f->stream = -1;
  f->rank = -1;
  f->status = f->when == W_ALLOC  ? CL_MEM_OBJECT_ALLOCATION_FAILURE
              : f->when == W_LOST ? CL_DEVICE_NOT_AVAILABLE
                                  : CL_OUT_OF_RESOURCES;
  if (rest.n == 0) {
    cls__parse_fail(ps, "fault ");
    cls__parse_append_quoted(text);
    cls__error_append(" needs at least one KEY=VALUE");
    return CLS_ECONFIG;
  }
  struct cls__items it;
  cls__items_init(&it, ps, rest, ',');
  struct cls__keys keys = {key_names, sizeof key_names / sizeof *key_names, 0};
  struct cls__span item, v;
  int rc;
  while ((rc = cls__items_next(&it, &item)) > 0) {
    int key = cls__parse_kv(ps, item, &keys, &v);
    if (key < 0)
      return key;
    if ((rc = parse_key(ps, key, v, f)) < 0)
      return rc;
  }
  if (rc < 0)
    return rc;
  if ((f->nth || f->when == W_LOST || f->when == W_GONE) && !f->times)
    f->times = 1;
  return CLS_OK;
}

int cls__fault_parse(const char *spec, struct cls__fault_config **out) {
  *out = NULL;
  if (!*spec)
    return CLS_OK; /* empty: no faults, as when unset */
  struct cls__parser ps = {"CLS_FAULT", spec, NULL};
  int rc = cls__parse_text(&ps);
  if (rc < 0)
    return rc;
  struct cls__fault_config *cfg = calloc(1, sizeof *cfg);
  if (!cfg)
    return cls__error(CLS_ENOMEM, 0, "out of host memory");
  cfg->rank = rank_from_env();
  size_t cap = 0;
  struct cls__items it;
  cls__items_init(&it, &ps, cls__span_of(spec), ';');
  struct cls__span one;
  while ((rc = cls__items_next(&it, &one)) > 0) {
    if (!cls__grow((void **)&cfg->faults, &cap, cfg->n + 1, sizeof *cfg->faults, 4)) {
      rc = cls__error(CLS_ENOMEM, 0, "out of host memory");
      break;
    }
    memset(&cfg->faults[cfg->n], 0, sizeof *cfg->faults);
    rc = parse_one(&ps, one, &cfg->faults[cfg->n]);
    cfg->n++; /* counted even on failure so its strings are freed */
    if (rc < 0)
      break;
  }
  if (rc < 0) {
    cls__fault_config_free(cfg);
    return rc;
  }
  *out = cfg;
  return CLS_OK;
}

/* Does a fault fire for this event?  Counts the event either way.  *hold:
 * how many polls that do not wait its discovery is held for. */
cl_int cls__fault_fires(struct cls__fault_config *cfg, int when, const char *op,
                        const char *kernel, int stream, uint64_t *hold) {
  for (size_t i = 0; i < cfg->n; i++) {
    struct cls__fault *f = &cfg->faults[i];
    if (f->when != when || (f->stream >= 0 && f->stream != stream) ||
        (f->rank >= 0 && f->rank != cfg->rank) ||
        (f->op && strcmp(f->op, op) != 0) ||
        (f->kernel && (!kernel || strcmp(f->kernel, kernel) != 0)))
      continue;
    f->seen++;
    if (f->nth && f->seen < f->nth)
      continue;
    if (f->times && f->fired >= f->times)
      continue;
    f->fired++;
    if (hold && f->hold) { /* splitmix64: a fixed sequence of draws in 0..hold */
      uint64_t z = (cfg->draws += 0x9e3779b97f4a7c15ull);
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      *hold = (z ^ (z >> 31)) % (f->hold + 1);
    }
    return f->status;
  }
  return CL_SUCCESS;
}

cl_int cls__fault_alloc(struct cls__fault_config *cfg, int stream) {
  return cls__fault_fires(cfg, W_ALLOC, "alloc", NULL, stream, NULL);
}
