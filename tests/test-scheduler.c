/* The driver registry and the scheduler-based driver: selection by name
 * (options and $CLS_SCHEDULER), parameters, batching visible in the stats,
 * streams sharing queues, and deferred enqueue failures reaching the reads.
 * Every context here names its driver, so this program runs once. */
#include "common.h"

#include <stdlib.h>

#include <unistd.h>

static const char *src =
    "kernel void inc(global int *x) { x[get_global_id(0)] += 1; }\n"
    "kernel void cp(global const int *a, global int *b) {\n"
    "  size_t i = get_global_id(0); b[i] = a[i]; }\n"
    "kernel void mixed(global int *o, char c, short sh, long lo, int4 v, local int *t, int k) {\n"
    "  size_t i = get_global_id(0) + get_global_size(0) * get_global_id(1);\n"
    "  t[get_local_id(0)] = c + sh + (int)lo + v.x + v.y + v.z + v.w + k;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  o[i] += t[get_local_id(0)]; }\n";

#define N 64

static cls_context *open_with(const char *scheduler, const char *fault) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .scheduler = scheduler,
                                  .fault = fault};
  return ct_context_opts(&o);
}

static int create_rc(const char *scheduler) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .scheduler = scheduler};
  cls_context *ctx = (cls_context *)1;
  int rc = cls_context_create(&ctx, &o);
  if (rc == CLS_OK)
    cls_context_destroy(ctx);
  else
    ck_assert_ptr_null(ctx);
  return rc;
}

static cls_kernel *kernel(cls_context *ctx, const char *name) {
  cls_program *p;
  cls_kernel *k;
  CT_OK(cls_program_build(ctx, src, NULL, &p));
  CT_OK(cls_kernel_get(ctx, p, name, &k));
  return k;
}

static struct cls_stream_stats stats(cls_context *ctx, int s) {
  struct cls_stream_stats st;
  CT_OK(cls_stream_stats(ctx, s, &st));
  return st;
}

static cls_buffer zeros(cls_context *ctx, int stream) {
  cls_buffer b;
  int zero = 0;
  CT_OK(cls_alloc(ctx, stream, N * sizeof(int), &b));
  CT_OK(cls_fill(ctx, stream, b, 0, N * sizeof(int), &zero, sizeof zero));
  return b;
}

static void expect_all(cls_context *ctx, int stream, cls_buffer b, int v) {
  int host[N];
  cls_report *r = NULL;
  int rc = cls_download(ctx, stream, b, 0, host, sizeof host, &r);
  ck_assert_msg(rc == CLS_OK, "download: %s %s", cls_err_name(rc), r ? cls_report_text(r) : "");
  for (int i = 0; i < N; i++)
    ck_assert_int_eq(host[i], v);
}

START_TEST(registry_lists_both_drivers_and_a_built_default) {
  ck_assert_uint_ge(cls_driver_count(), 2);
  int found_default = 0, found_event = 0, found_sched = 0;
  for (size_t i = 0; i < cls_driver_count(); i++) {
    const char *name, *desc;
    CT_OK(cls_driver_info(i, &name, &desc));
    ck_assert(desc && *desc);
    found_default |= strcmp(name, cls_default_driver()) == 0;
    found_event |= strcmp(name, "event") == 0;
    found_sched |= strcmp(name, "scheduler") == 0;
  }
  ck_assert(found_default && found_event && found_sched);
  CT_ERR(cls_driver_info(cls_driver_count(), NULL, NULL), CLS_ERANGE);
}
END_TEST

START_TEST(selection_by_name_and_parameters) {
  static const struct {
    const char *spec;
    const char *driver;
  } ok[] = {{"event", "event"},
            {"scheduler", "scheduler"},
            {"scheduler:sequential", "scheduler"},
            {"scheduler:interleave", "scheduler"},
            {"scheduler:sequential,max_tasks=4,queues=2", "scheduler"},
            {"scheduler:max_tasks=1", "scheduler"}};
  for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
    cls_context *ctx = open_with(ok[i].spec, NULL);
    ck_assert_str_eq(cls_context_driver(ctx), ok[i].driver);
    cls_context_destroy(ctx);
  }
  static const struct {
    const char *spec;
    int rc;
  } bad[] = {{"nope", CLS_EDRIVER},
             {"Event", CLS_EDRIVER},
             {"scheduler:bogus", CLS_ECONFIG},
             {"scheduler:sequential,max_tasks=0", CLS_ECONFIG},
             {"scheduler:sequential,max_tasks=x", CLS_ECONFIG},
             {"scheduler:sequential,queues=99", CLS_ECONFIG},
             {"scheduler:sequential,turbo=1", CLS_ECONFIG},
             {"scheduler:max_tasks=4,interleave", CLS_ECONFIG},
             {"event:fast", CLS_ECONFIG}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    int rc = create_rc(bad[i].spec);
    ck_assert_msg(rc == bad[i].rc, "'%s': expected %s, got %s", bad[i].spec,
                  cls_err_name(bad[i].rc), cls_err_name(rc));
    ck_assert_msg(strlen(cls_last_error_detail()) > 0, "'%s': no detail", bad[i].spec);
  }
  /* An unknown name lists the drivers that exist. */
  ck_assert_int_eq(create_rc("nope"), CLS_EDRIVER);
  ck_assert(strstr(cls_last_error_detail(), "event") &&
            strstr(cls_last_error_detail(), "scheduler"));
}
END_TEST

/* create_rc(spec) must be CLS_ECONFIG, from the option and from
 * $CLS_SCHEDULER, with `quoted` in the detail. */
static void refused(const char *spec, const char *quoted) {
  int rc = create_rc(spec);
  ck_assert_msg(rc == CLS_ECONFIG, "'%s': expected CLS_ECONFIG, got %s: %s", spec,
                cls_err_name(rc), cls_last_error_detail());
  ck_assert_msg(strstr(cls_last_error_detail(), quoted) != NULL,
                "'%s': the detail should quote '%s': %s", spec, quoted, cls_last_error_detail());
  ck_assert_int_eq(setenv("CLS_SCHEDULER", spec, 1), 0);
  cls_context *c = (cls_context *)&c;
  rc = cls_context_create(&c, NULL);
  unsetenv("CLS_SCHEDULER");
  ck_assert_msg(rc == CLS_ECONFIG, "CLS_SCHEDULER='%s': got %s", spec, cls_err_name(rc));
  ck_assert_ptr_null(c);
}

/* Counts are unsigned decimals: no sign, no space, never empty. */
START_TEST(parameter_numbers_take_digits_only) {
  refused("scheduler:max_tasks=+5", "'+5'");
  refused("scheduler:max_tasks= 5", "whitespace");
  refused("scheduler:max_tasks=5 ", "whitespace");
  refused("scheduler:max_tasks=-1", "'-1'");
  refused("scheduler:max_tasks=0x10", "'0x10'");
  refused("scheduler:queues=+2", "'+2'");
  refused("scheduler:max_tasks=", "max_tasks");
  refused(" scheduler", "whitespace");
  refused("scheduler :interleave", "whitespace");
}
END_TEST

/* The detail of a value out of range quotes the value given, never what
 * it wrapped or saturated to. */
START_TEST(a_count_out_of_range_is_quoted_as_given) {
  refused("scheduler:max_tasks=18446744073709551616", "'18446744073709551616'");
  ck_assert_msg(strstr(cls_last_error_detail(), "18446744073709551615") == NULL, "%s",
                cls_last_error_detail());
  refused("scheduler:max_tasks=99999999999999999999", "'99999999999999999999'");
  ck_assert_msg(strstr(cls_last_error_detail(), "18446744073709551615") == NULL, "%s",
                cls_last_error_detail());
  refused("scheduler:max_tasks=1048577", "'1048577'");
  refused("scheduler:queues=65", "'65'");
  /* The bounds themselves are accepted. */
  ck_assert_int_eq(create_rc("scheduler:max_tasks=1048576,queues=64"), CLS_OK);
  ck_assert_int_eq(create_rc("scheduler:max_tasks=1,queues=1"), CLS_OK);
}
END_TEST

/* No empty parameter list or item: "scheduler:,,," used to be plain
 * "scheduler". */
START_TEST(empty_parameters_are_refused) {
  refused("scheduler:,,,", "empty item");
  refused("scheduler:", "nothing after ':'");
  refused("event:", "nothing after ':'");
  refused("scheduler:interleave,", "empty item");
  refused("scheduler:,interleave", "empty item");
  refused("scheduler:sequential,,max_tasks=4", "empty item");
}
END_TEST

START_TEST(a_parameter_given_twice_is_refused) {
  refused("scheduler:max_tasks=4,max_tasks=5", "max_tasks given twice");
  refused("scheduler:queues=2,max_tasks=4,queues=2", "queues given twice");
  refused("scheduler:sequential,interleave", "strategy comes first");
}
END_TEST

/* interleave puts every stream's tasks onto one queue: a count of queues
 * would be ignored, so it is refused. */
START_TEST(queues_does_not_apply_to_interleave) {
  refused("scheduler:interleave,queues=7", "queues does not apply to interleave");
  refused("scheduler:interleave,queues=1", "queues does not apply to interleave");
  ck_assert_int_eq(create_rc("scheduler:interleave,max_tasks=3"), CLS_OK);
  ck_assert_int_eq(create_rc("scheduler:sequential,queues=7"), CLS_OK);
  ck_assert_int_eq(create_rc("scheduler:queues=7"), CLS_OK);
}
END_TEST

/* Context creation with stderr in a temporary file: its return code in
 * *rc, what it printed as the result. */
static const char *stderr_of_create(const char *scheduler, int *rc) {
  static char out[8192];
  FILE *tmp = tmpfile();
  ck_assert_ptr_nonnull(tmp);
  fflush(stderr);
  int saved = dup(2);
  ck_assert_int_ge(saved, 0);
  ck_assert_int_ge(dup2(fileno(tmp), 2), 0);
  *rc = create_rc(scheduler);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  rewind(tmp);
  size_t n = fread(out, 1, sizeof out - 1, tmp);
  out[n] = '\0';
  fclose(tmp);
  return out;
}

static int occurrences(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
    n++;
  return n;
}

/* CLS_SCHEDULER=help (or the option) prints every driver with its syntax
 * and parameters once, on stderr; creation fails with CLS_EDRIVER and a
 * detail that says the help was printed, without the list again (a
 * program printing the detail showed it twice). */
START_TEST(help_prints_every_driver_and_its_parameters_once) {
  for (int from_env = 0; from_env < 2; from_env++) {
    int rc;
    if (from_env)
      setenv("CLS_SCHEDULER", "help", 1);
    const char *err = stderr_of_create(from_env ? NULL : "help", &rc);
    if (from_env)
      unsetenv("CLS_SCHEDULER");
    ck_assert_int_eq(rc, CLS_EDRIVER);
    static const char *const want[] = {
        "CLS_SCHEDULER=NAME[:PARAMETERS]",
        "scheduler[:[sequential|interleave][,max_tasks=N][,queues=M]]",
        "sequential ", "interleave ", "max_tasks=N ", "queues=M ", "(default)",
        "no parameters"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
      ck_assert_msg(occurrences(err, want[i]) >= 1, "'%s' missing from:\n%s", want[i], err);
    ck_assert_msg(occurrences(err, "max_tasks=N ") == 1 && occurrences(err, "\n  event") == 1,
                  "printed more than once:\n%s", err);
    const char *d = cls_last_error_detail();
    ck_assert_msg(strstr(d, "help") && strstr(d, "printed"), "detail: %s", d);
    ck_assert_msg(!strstr(d, "unknown") && !strstr(d, "max_tasks") && !strstr(d, "\n"),
                  "detail: %s", d);
  }
  /* An unknown name prints nothing and points at the help. */
  int rc;
  const char *err = stderr_of_create("nope", &rc);
  ck_assert_int_eq(rc, CLS_EDRIVER);
  ck_assert_msg(err[0] == '\0', "printed: %s", err);
  ck_assert_msg(strstr(cls_last_error_detail(), "unknown scheduler driver 'nope'") &&
                    strstr(cls_last_error_detail(), "CLS_SCHEDULER=help"),
                "%s", cls_last_error_detail());
}
END_TEST

START_TEST(environment_overrides_the_default_and_options_override_it) {
  setenv("CLS_SCHEDULER", "scheduler:interleave", 1);
  cls_context *ctx = ct_context();
  ck_assert_str_eq(cls_context_driver(ctx), "scheduler");
  cls_context_destroy(ctx);
  ctx = open_with("event", NULL);
  ck_assert_str_eq(cls_context_driver(ctx), "event");
  cls_context_destroy(ctx);
  setenv("CLS_SCHEDULER", "nope", 1);
  cls_context *none = NULL;
  CT_ERR(cls_context_create(&none, NULL), CLS_EDRIVER);
  ck_assert_ptr_null(none);
  unsetenv("CLS_SCHEDULER");
}
END_TEST

/* k tasks on one stream with max_tasks m: about k/m hand-overs to the
 * backend, not k. */
START_TEST(batching_k_tasks_take_about_k_over_m_flushes) {
  const int k = 96, m = 8;
  cls_context *ctx = open_with("scheduler:sequential,max_tasks=8", NULL);
  cls_kernel *inc = kernel(ctx, "inc");
  cls_buffer b = zeros(ctx, 0);
  CT_OK(cls_sync(ctx, NULL));
  CT_OK(cls_stats_reset(ctx));
  size_t g = N;
  for (int i = 0; i < k; i++)
    CT_OK(cls_launch(ctx, 0, inc, 1, &g, NULL, 1, (cls_arg[]){CLS_INOUT(b)}));
  CT_OK(cls_sync(ctx, NULL));
  struct cls_stream_stats st = stats(ctx, 0);
  ck_assert_uint_eq(st.launches, (uint64_t)k);
  ck_assert_msg(st.flushes >= (uint64_t)(k / m) && st.flushes <= (uint64_t)(k / m + 1),
                "%d tasks, max_tasks %d: %llu flushes", k, m, (unsigned long long)st.flushes);
  ck_assert_uint_eq(st.submissions, st.flushes);
  expect_all(ctx, 0, b, k);
  cls_context_destroy(ctx);

  /* The event driver hands every command over at once. */
  ctx = open_with("event", NULL);
  inc = kernel(ctx, "inc");
  b = zeros(ctx, 0);
  CT_OK(cls_sync(ctx, NULL));
  CT_OK(cls_stats_reset(ctx));
  for (int i = 0; i < k; i++)
    CT_OK(cls_launch(ctx, 0, inc, 1, &g, NULL, 1, (cls_arg[]){CLS_INOUT(b)}));
  CT_OK(cls_sync(ctx, NULL));
  ck_assert_uint_eq(stats(ctx, 0).submissions, (uint64_t)k);
  expect_all(ctx, 0, b, k);
  cls_context_destroy(ctx);
}
END_TEST

/* By default (no max_tasks) a list's limit ramps: after a sync the first
 * task goes when the second is ordered, then lists of 2, 4, 8, 16 and 32,
 * so the device has work while the host issues; and before the host
 * waits on one stream (a blocking download), every stream's list goes,
 * so another stream's tail does not wait for that download to return. */
START_TEST(by_default_batches_ramp_up_and_every_list_goes_before_a_wait) {
  cls_context *ctx = open_with("scheduler:sequential", NULL);
  cls_kernel *inc = kernel(ctx, "inc");
  cls_buffer a = zeros(ctx, 0), b = zeros(ctx, 1);
  CT_OK(cls_sync(ctx, NULL));
  CT_OK(cls_stats_reset(ctx));
  size_t g = N;
  /* Submissions after each launch: a list goes when the next command
   * finds it at its limit (1, 2, 4, 8, 16, 32, 32). */
  uint64_t want = 0;
  int launched = 0;
  for (unsigned limit = 1, batch = 0; launched < 1 + 2 + 4 + 8 + 16 + 32 + 32 + 1; launched++) {
    CT_OK(cls_launch(ctx, 0, inc, 1, &g, NULL, 1, (cls_arg[]){CLS_INOUT(a)}));
    if (batch == limit) { /* this launch found the list full: it went */
      want++;
      batch = 0;
      limit = limit < 32 ? 2 * limit : 32;
    }
    batch++;
    ck_assert_msg(stats(ctx, 0).submissions == want,
                  "after %d launches: %llu submissions, %llu expected", launched + 1,
                  (unsigned long long)stats(ctx, 0).submissions, (unsigned long long)want);
  }
  ck_assert_uint_eq(want, 7);
  /* Stream 1 holds three tasks; a blocking download on stream 0 sends
   * them too. */
  for (int i = 0; i < 3; i++)
    CT_OK(cls_launch(ctx, 1, inc, 1, &g, NULL, 1, (cls_arg[]){CLS_INOUT(b)}));
  ck_assert_uint_eq(stats(ctx, 1).submissions, 1); /* the first; two held */
  expect_all(ctx, 0, a, launched);
  ck_assert_uint_eq(stats(ctx, 1).submissions, 2);
  /* And the ramp starts again: the next launch on stream 1 waits, the
   * one after sends it. */
  CT_OK(cls_launch(ctx, 1, inc, 1, &g, NULL, 1, (cls_arg[]){CLS_INOUT(b)}));
  ck_assert_uint_eq(stats(ctx, 1).submissions, 2);
  CT_OK(cls_launch(ctx, 1, inc, 1, &g, NULL, 1, (cls_arg[]){CLS_INOUT(b)}));
  ck_assert_uint_eq(stats(ctx, 1).submissions, 3);
  expect_all(ctx, 1, b, 5);
  cls_context_destroy(ctx);
}
END_TEST

/* A consumer submits the producer's pending list first, so order holds
 * without any user sync, whatever max_tasks is. */
START_TEST(a_consumer_submits_the_producers_pending_tasks_first) {
  cls_context *ctx = open_with("scheduler:sequential,max_tasks=1000", NULL);
  cls_kernel *inc = kernel(ctx, "inc"), *cp = kernel(ctx, "cp");
  cls_buffer a = zeros(ctx, 0), b = zeros(ctx, 1);
  size_t g = N;
  for (int i = 0; i < 5; i++)
    CT_OK(cls_launch(ctx, 0, inc, 1, &g, NULL, 1, (cls_arg[]){CLS_INOUT(a)}));
  CT_OK(cls_launch(ctx, 1, cp, 1, &g, NULL, 2, (cls_arg[]){CLS_IN(a), CLS_OUT(b)}));
  ck_assert_uint_ge(stats(ctx, 0).flushes, 1);
  expect_all(ctx, 1, b, 5);
  cls_context_destroy(ctx);
}
END_TEST

/* queues=2: streams 0 and 2 share a queue (no event between them); 1 has
 * its own (one event).  Interleave: one queue, no events at all. */
START_TEST(streams_sharing_a_queue_need_no_event) {
  cls_context *ctx = open_with("scheduler:sequential,queues=2", NULL);
  cls_kernel *inc = kernel(ctx, "inc"), *cp = kernel(ctx, "cp");
  cls_buffer a = zeros(ctx, 0), b = zeros(ctx, 2), c = zeros(ctx, 1);
  CT_OK(cls_sync(ctx, NULL));
  CT_OK(cls_stats_reset(ctx));
  size_t g = N;
  CT_OK(cls_launch(ctx, 0, inc, 1, &g, NULL, 1, (cls_arg[]){CLS_INOUT(a)}));
  CT_OK(cls_launch(ctx, 2, cp, 1, &g, NULL, 2, (cls_arg[]){CLS_IN(a), CLS_OUT(b)}));
  ck_assert_uint_eq(stats(ctx, 2).waits, 0);
  CT_OK(cls_launch(ctx, 0, inc, 1, &g, NULL, 1, (cls_arg[]){CLS_INOUT(a)}));
  CT_OK(cls_launch(ctx, 1, cp, 1, &g, NULL, 2, (cls_arg[]){CLS_IN(a), CLS_OUT(c)}));
  ck_assert_uint_le(stats(ctx, 1).waits, 1); /* 0 only if stream 0 had finished */
  expect_all(ctx, 2, b, 1);
  expect_all(ctx, 1, c, 2);
  cls_context_destroy(ctx);

  ctx = open_with("scheduler:interleave", NULL);
  inc = kernel(ctx, "inc");
  cp = kernel(ctx, "cp");
  a = zeros(ctx, 0);
  b = zeros(ctx, 1);
  for (int i = 0; i < 10; i++) {
    CT_OK(cls_launch(ctx, 0, inc, 1, &g, NULL, 1, (cls_arg[]){CLS_INOUT(a)}));
    CT_OK(cls_launch(ctx, 1, cp, 1, &g, NULL, 2, (cls_arg[]){CLS_IN(a), CLS_OUT(b)}));
  }
  for (int s = 0; s < 2; s++) {
    ck_assert_uint_eq(stats(ctx, s).waits, 0);
    ck_assert_uint_eq(stats(ctx, s).markers, 0);
  }
  expect_all(ctx, 1, b, 10);
  cls_context_destroy(ctx);
}
END_TEST

/* Downloads b on `stream`, which must fail with one failure: `kernel` on
 * stream `on`, found after its enqueue (F8).  *r keeps the report. */
static struct cls_failure_info async_failure(cls_context *ctx, int stream, cls_buffer b,
                                             const char *kernel, int on, cls_report **r) {
  int host[N];
  *r = NULL;
  CT_ERR(cls_download(ctx, stream, b, 0, host, sizeof host, r), CLS_ETAINTED);
  ck_assert_uint_eq(cls_report_failures(*r), 1);
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(*r, 0, &fi));
  ck_assert_str_eq(fi.kernel, kernel);
  ck_assert_int_eq(fi.stream, on);
  ck_assert_int_eq(fi.async, 1);
  return fi;
}
static struct cls_failure_info async_inc_failure(cls_context *ctx, int stream, cls_buffer b,
                                                 cls_report **r) {
  return async_failure(ctx, stream, b, "inc", 0, r);
}

/* The scheduler enqueues later than cls_launch returns: an enqueue that
 * fails then is a failure found after the launch (F8), and reaches the
 * reads exactly like one found at completion. */
START_TEST(deferred_enqueue_failure_reaches_the_read) {
  cls_context *ctx = open_with("scheduler:sequential", "enqueue:kernel=inc");
  cls_kernel *inc = kernel(ctx, "inc"), *cp = kernel(ctx, "cp");
  cls_buffer a = zeros(ctx, 0), b = zeros(ctx, 1);
  size_t g = N;
  CT_OK(cls_launch(ctx, 0, inc, 1, &g, NULL, 1, (cls_arg[]){CLS_INOUT(a)}));
  int rc = cls_launch(ctx, 1, cp, 1, &g, NULL, 2, (cls_arg[]){CLS_IN(a), CLS_OUT(b)});
  /* Ordering submitted stream 0's list first: the failure is known now. */
  CT_ERR(rc, CLS_ESKIPPED);
  cls_report *r;
  struct cls_failure_info fi = async_inc_failure(ctx, 1, b, &r);
  ck_assert_str_eq(fi.cl_name, "CL_OUT_OF_RESOURCES");
  struct cls_skip_info si;
  CT_OK(cls_report_skip(r, 0, 0, &si));
  ck_assert_str_eq(si.kernel, "cp");
  ck_assert_int_eq(si.stream, 1);
  cls_report_free(r);
  cls_context_destroy(ctx);
}
END_TEST

/* A context under `scheduler` (fault: `fault`) whose stream 0 launched inc
 * on a and then holds its queue (ct_hold, let go after `ms`); b is stream
 * 1's. */
static cls_context *held_producer(const char *scheduler, const char *fault, cls_kernel **inc,
                                  cls_kernel **cp, cls_buffer *a, cls_buffer *b,
                                  struct ct_hold *h, int ms) {
  cls_context *ctx = open_with(scheduler, fault);
  *inc = kernel(ctx, "inc");
  *cp = kernel(ctx, "cp");
  *a = zeros(ctx, 0);
  *b = zeros(ctx, 1);
  size_t g = N;
  CT_OK(cls_sync(ctx, NULL));
  CT_OK(cls_launch(ctx, 0, *inc, 1, &g, NULL, 1, (cls_arg[]){CLS_INOUT(*a)}));
  ct_hold(ctx, 0, *a, h, ms);
  return ctx;
}

/* A logger that lets a hold go once stream 1 is logged waiting on
 * stream 0 (the wait is made by then). */
static void release_at_wait(void *user, int level, const char *message) {
  (void)level;
  if (strstr(message, "stream 1 waits for stream 0"))
    atomic_store(&((struct ct_hold *)user)->end, true);
}

/* Sequential with a queue per stream: a command that waits on another
 * queue goes to its own at the call (it waits on the event the producer's
 * queue lends, valid only until that queue is next asked anything), the
 * tasks before it first; with shared queues (queues=M) it waits in its
 * list.  An enqueue that fails then is still reported after the call, as
 * a deferred task's is, so what the call returns does not depend on
 * whether the wait was made (the producer had not finished). */
START_TEST(a_command_waiting_on_another_queue_goes_at_the_call_and_fails_after_it) {
  bool held = true; /* the hold outlasted the calls (not on oclgrind: see ct_hold) */
  size_t g = N;
  cls_kernel *inc, *cp;
  cls_buffer a, b;
  struct ct_hold h;
  for (int shared = 0; shared < 2; shared++) {
    cls_context *ctx =
        held_producer(shared ? "scheduler:sequential,queues=3,max_tasks=32" : "scheduler", NULL,
                      &inc, &cp, &a, &b, &h, 2000);
    CT_OK(cls_launch(ctx, 1, inc, 1, &g, NULL, 1, (cls_arg[]){CLS_INOUT(b)}));
    CT_OK(cls_stats_reset(ctx));
    CT_OK(cls_launch(ctx, 1, cp, 1, &g, NULL, 2, (cls_arg[]){CLS_IN(a), CLS_OUT(b)}));
    struct cls_stream_stats st = stats(ctx, 1);
    held = held && !atomic_load(&h.released);
    if (held) {
      ck_assert_uint_eq(st.waits, 1);
      /* Both launches of stream 1 are in its queue now (one submission
       * of its list, one of the command), or both wait in the list (a
       * fixed batch: by default the first would have gone when the
       * second was ordered). */
      ck_assert_uint_eq(st.submissions, (shared ? 0 : 2));
    }
    ct_hold_end(&h);
    expect_all(ctx, 1, b, 1);
    cls_context_destroy(ctx);
    ct_hold_free(&h);
  }
  if (!held)
    fprintf(stderr, "this platform ran the held queue inside clFlush: no wait was made\n");
  /* The failed enqueue's wait happens on the host, inside the call: the
   * hold is let go when the call logs that wait (made, so counted), not
   * after a time the host may overrun (a stall past it left the producer
   * finished at the call: no wait).  Where the queue ran inside clFlush,
   * after 50 ms. */
  cls_context *ctx = held_producer("scheduler:sequential", "enqueue:kernel=cp", &inc, &cp, &a, &b,
                                   &h, held ? 10000 : 50);
  CT_OK(cls_set_logger(ctx, CLS_LOG_STREAMS, release_at_wait, &h));
  CT_OK(cls_launch(ctx, 1, cp, 1, &g, NULL, 2, (cls_arg[]){CLS_IN(a), CLS_OUT(b)}));
  ct_hold_end(&h);
  if (held)
    ck_assert_uint_eq(stats(ctx, 1).waits, 1);
  cls_report *r;
  async_failure(ctx, 1, b, "cp", 1, &r);
  cls_report_free(r);
  cls_context_destroy(ctx);
  ct_hold_free(&h);
}
END_TEST

/* Sequential, a queue per stream: it stays so after a relocation took a
 * stream's slot (stream 0's fresh queue takes the top one, 63; stream 63
 * then another, and stream 62 must not share it), since a command waiting
 * on two producers borrows their queues' last events.  Stream 1 reads
 * what 62 and 63 wrote while 62's queue is held: exact bytes. */
START_TEST(a_queue_per_stream_holds_after_a_relocation_takes_a_slot) {
  cls_context *ctx = open_with("scheduler:sequential", NULL);
  cls_kernel *inc = kernel(ctx, "inc");
  cls_program *p = ct_build(ctx,
                            "kernel void add(global const int *a, global const int *b,"
                            " global int *c) { size_t i = get_global_id(0); c[i] = a[i] + b[i]; }",
                            NULL);
  cls_kernel *add = ct_get_kernel(ctx, p, "add");
  cls_buffer z = zeros(ctx, 0);
  CT_OK(cls_sync(ctx, NULL));
  CT_OK(cls_stream_relocate(ctx, 0, 0, 0));
  cls_buffer b = zeros(ctx, 63), a = zeros(ctx, 62), c = zeros(ctx, 1);
  CT_OK(cls_sync(ctx, NULL));
  uint64_t e62, e63, f62, f63;
  CT_OK(cls_stream_events(ctx, 62, &e62));
  CT_OK(cls_stream_events(ctx, 63, &e63));
  size_t g = N;
  CT_OK(cls_launch(ctx, 63, inc, 1, &g, NULL, 1, (cls_arg[]){CLS_INOUT(b)}));
  CT_OK(cls_sync(ctx, NULL));
  CT_OK(cls_stream_events(ctx, 62, &f62));
  CT_OK(cls_stream_events(ctx, 63, &f63));
  ck_assert_uint_gt(f63, e63);
  ck_assert_uint_eq(f62, e62); /* stream 63's queue is not stream 62's */
  struct ct_hold h;
  ct_hold(ctx, 62, a, &h, 2000);
  CT_OK(cls_launch(ctx, 62, inc, 1, &g, NULL, 1, (cls_arg[]){CLS_INOUT(a)}));
  CT_OK(cls_launch(ctx, 63, inc, 1, &g, NULL, 1, (cls_arg[]){CLS_INOUT(b)}));
  CT_OK(cls_launch(ctx, 1, add, 1, &g, NULL, 3,
                   (cls_arg[]){CLS_IN(a), CLS_IN(b), CLS_OUT(c)}));
  ct_hold_end(&h);
  expect_all(ctx, 1, c, 3);
  (void)z;
  cls_context_destroy(ctx);
  ct_hold_free(&h);
}
END_TEST

/* The scheduler records a stream's consecutive commands on a queue as one
 * run: a command failing at completion in the middle of a run is still
 * reported as itself (its stream, kernel and position), and the stream
 * sharing the queue is untouched.  Sequential (long runs) and interleave
 * (runs of one command, alternating streams). */
START_TEST(a_failure_inside_a_run_names_its_command) {
  const char *drivers[] = {"scheduler:sequential,queues=1,max_tasks=1000",
                           "scheduler:interleave,max_tasks=1000"};
  for (int d = 0; d < 2; d++) {
    cls_context *ctx = open_with(drivers[d], "complete:kernel=inc,stream=0,nth=3");
    cls_kernel *inc = kernel(ctx, "inc");
    cls_buffer a = zeros(ctx, 0), c = zeros(ctx, 1);
    size_t g = N;
    for (int i = 0; i < 5; i++) {
      CT_OK(cls_launch(ctx, 0, inc, 1, &g, NULL, 1, (cls_arg[]){CLS_INOUT(a)}));
      if (i < 2)
        CT_OK(cls_launch(ctx, 1, inc, 1, &g, NULL, 1, (cls_arg[]){CLS_INOUT(c)}));
    }
    CT_OK(cls_sync(ctx, NULL));
    expect_all(ctx, 1, c, 2);
    cls_report *r;
    struct cls_failure_info fi = async_inc_failure(ctx, 0, a, &r);
    ck_assert_uint_eq(fi.position, 4); /* the fill, then the third inc */
    cls_report_free(r);
    cls_context_destroy(ctx);
  }
}
END_TEST

/* A task keeps copies of its arguments until its list is submitted: every
 * scalar size (1, 2, 8 and 16 bytes here), local memory, local sizes and
 * two dimensions, over 40 launches pending at once (the list's arrays grow
 * and move while they wait). */
START_TEST(pending_launches_keep_every_kind_of_argument) {
  const char *drivers[] = {"scheduler:sequential,max_tasks=1000",
                           "scheduler:interleave,max_tasks=1000"};
  for (int d = 0; d < 2; d++) {
    cls_context *ctx = open_with(drivers[d], NULL);
    cls_kernel *mixed = kernel(ctx, "mixed");
    cls_buffer o = zeros(ctx, 0);
    size_t g[2] = {8, N / 8}, lsz[2] = {8, 1};
    int expect = 0;
    for (int j = 0; j < 40; j++) {
      int8_t c = (int8_t)j;
      int16_t sh = (int16_t)(100 * j);
      int64_t lo = 10000 * j;
      struct {
        int32_t x, y, z, w;
      } v = {1, 2, 3, j}; /* int4 */
      int32_t k = j;
      cls_arg args[] = {CLS_INOUT(o),     CLS_SCALAR(c), CLS_SCALAR(sh), CLS_SCALAR(lo),
                        CLS_SCALAR(v),    CLS_LOCAL(8 * sizeof(int32_t)),  CLS_SCALAR(k)};
      CT_OK(cls_launch(ctx, 0, mixed, 2, g, lsz, 7, args));
      expect += j + 100 * j + 10000 * j + 6 + j + j;
    }
    expect_all(ctx, 0, o, expect);
    cls_context_destroy(ctx);
  }
}
END_TEST

int main(void) {
  /* These cases pin each failure found after the enqueue on its command
   * (F8, exact attribution); ranged attribution (F8a), the default where
   * the device allows it, has its own suite: tests/test-ranged.c. */
  setenv("CLS_PRECISE", "1", 0);
  ct_require_device();
  Suite *s = suite_create("scheduler");
  TCase *tc = tcase_create("drivers");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, registry_lists_both_drivers_and_a_built_default);
  tcase_add_test(tc, selection_by_name_and_parameters);
  tcase_add_test(tc, parameter_numbers_take_digits_only);
  tcase_add_test(tc, a_count_out_of_range_is_quoted_as_given);
  tcase_add_test(tc, empty_parameters_are_refused);
  tcase_add_test(tc, a_parameter_given_twice_is_refused);
  tcase_add_test(tc, queues_does_not_apply_to_interleave);
  tcase_add_test(tc, help_prints_every_driver_and_its_parameters_once);
  tcase_add_test(tc, environment_overrides_the_default_and_options_override_it);
  tcase_add_test(tc, batching_k_tasks_take_about_k_over_m_flushes);
  tcase_add_test(tc, by_default_batches_ramp_up_and_every_list_goes_before_a_wait);
  tcase_add_test(tc, a_consumer_submits_the_producers_pending_tasks_first);
  tcase_add_test(tc, streams_sharing_a_queue_need_no_event);
  tcase_add_test(tc, deferred_enqueue_failure_reaches_the_read);
  tcase_add_test(tc, a_command_waiting_on_another_queue_goes_at_the_call_and_fails_after_it);
  tcase_add_test(tc, a_queue_per_stream_holds_after_a_relocation_takes_a_slot);
  tcase_add_test(tc, a_failure_inside_a_run_names_its_command);
  tcase_add_test(tc, pending_launches_keep_every_kind_of_argument);
  suite_add_tcase(s, tc);
  return ct_run(s);
}
