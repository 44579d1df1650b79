/* The public driver interface (<clstream/driver.h>): registration, the
 * context options' driver, the checks every driver passes before it runs,
 * parameters read with the library's rules, CLS_SCHEDULER=help, and
 * drivers loaded from a shared object.  The driver is the example outside
 * one (examples/drivers/priority.c); this program links the shared
 * library, as an application does. */
#include "common.h"

#include <clstream/driver.h>

#include <time.h>

#include "../examples/drivers/priority.h"

#define N 1024

/* A launch chain on two streams under `ctx`, the result checked. */
static void runs_work(cls_context *ctx) {
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC CT_ADD_SRC, "inc_k");
  cls_program *p = ct_build(ctx, CT_ADD_SRC, NULL);
  cls_kernel *add = ct_get_kernel(ctx, p, "add_k");
  cls_buffer a = ct_alloc(ctx, 0, N * sizeof(int)), b = ct_alloc(ctx, 1, N * sizeof(int));
  cls_buffer c = ct_alloc(ctx, 1, N * sizeof(int));
  int v[N];
  for (int i = 0; i < N; i++)
    v[i] = i;
  ct_upload_ints(ctx, 0, a, v, N);
  ct_upload_ints(ctx, 1, b, v, N);
  size_t g = N;
  for (int k = 0; k < 5; k++)
    CT_OK(cls_launch(ctx, 0, inc, 1, &g, NULL, 1, (cls_arg[]){CLS_INOUT(a)}));
  CT_OK(cls_launch(ctx, 1, add, 1, &g, NULL, 3, (cls_arg[]){CLS_IN(a), CLS_IN(b), CLS_OUT(c)}));
  ct_download_ints(ctx, 1, c, v, N);
  for (int i = 0; i < N; i++)
    ck_assert_int_eq(v[i], 2 * i + 5);
}

static cls_context *create_with(const char *scheduler, const struct cls_driver_ops *driver) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .scheduler = scheduler,
                                  .driver = driver};
  return ct_context_opts(&o);
}

static int create_fails(const char *scheduler, const struct cls_driver_ops *driver) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .scheduler = scheduler,
                                  .driver = driver};
  cls_context *ctx = (cls_context *)&o; /* must come back NULL */
  int rc = cls_context_create(&ctx, &o);
  ck_assert_msg(rc < 0, "'%s' was accepted", scheduler ? scheduler : "(NULL)");
  ck_assert_ptr_null(ctx);
  return rc;
}

static void detail_has(const char *what) {
  ck_assert_msg(strstr(cls_last_error_detail(), what), "'%s' not in: %s", what,
                cls_last_error_detail());
}

START_TEST(a_registered_driver_is_listed_and_selected_by_name) {
  size_t before = cls_driver_count();
  CT_OK(cls_driver_register(&priority_driver));
  ck_assert_uint_eq(cls_driver_count(), before + 1);
  const char *name, *desc;
  CT_OK(cls_driver_info(before, &name, &desc));
  ck_assert_str_eq(name, "priority");
  ck_assert_str_eq(desc, priority_driver.description);
  cls_context *ctx = create_with("priority:high=0,batch=2", NULL);
  ck_assert_str_eq(cls_context_driver(ctx), "priority");
  runs_work(ctx);
  struct cls_stream_stats st;
  CT_OK(cls_stream_stats(ctx, 0, &st));
  ck_assert_uint_eq(st.flushes, st.submissions); /* high priority: each command */
  cls_context_destroy(ctx);
  /* And through the environment, as any built-in driver. */
  ck_assert_int_eq(setenv("CLS_SCHEDULER", "priority", 1), 0);
  ctx = ct_context();
  ck_assert_str_eq(cls_context_driver(ctx), "priority");
  cls_context_destroy(ctx);
  unsetenv("CLS_SCHEDULER");
}
END_TEST

START_TEST(registering_again_is_harmless_and_a_taken_name_is_refused) {
  CT_OK(cls_driver_register(&priority_driver));
  size_t n = cls_driver_count();
  CT_OK(cls_driver_register(&priority_driver));
  ck_assert_uint_eq(cls_driver_count(), n);
  struct cls_driver_ops copy = priority_driver;
  CT_ERR(cls_driver_register(&copy), CLS_EDRIVER);
  copy.name = "event";
  CT_ERR(cls_driver_register(&copy), CLS_EDRIVER);
  ck_assert_uint_eq(cls_driver_count(), n);
}
END_TEST

START_TEST(a_driver_of_another_version_or_malformed_is_refused) {
  struct cls_driver_ops d = priority_driver;
  d.name = "other";
  d.version = CLS_DRIVER_OPS_VERSION + 1;
  CT_ERR(cls_driver_register(&d), CLS_EVERSION);
  detail_has("ops version");
  ck_assert_int_eq(create_fails(NULL, &d), CLS_EVERSION); /* the options' driver too */
  d.version = 2; /* internal before the interface was public */
  CT_ERR(cls_driver_register(&d), CLS_EVERSION);
  d.version = 3; /* struct cls_driver_cmd of another layout (images) */
  CT_ERR(cls_driver_register(&d), CLS_EVERSION);
  d.version = 4; /* struct cls_driver_stream of another layout (stats' replays) */
  CT_ERR(cls_driver_register(&d), CLS_EVERSION);
  d.version = 5; /* struct cls_driver_cmd of another layout (kcmd.offset) */
  CT_ERR(cls_driver_register(&d), CLS_EVERSION);
  d.version = CLS_DRIVER_OPS_VERSION;
  d.submit = NULL;
  CT_ERR(cls_driver_register(&d), CLS_EINVAL);
  detail_has("submit");
  ck_assert_int_eq(create_fails(NULL, &d), CLS_EINVAL);
  d.submit = priority_driver.submit;
  const char *bad_names[] = {"", "Other", "has space", "a:b", "help"};
  for (size_t i = 0; i < sizeof bad_names / sizeof *bad_names; i++) {
    d.name = bad_names[i];
    CT_ERR(cls_driver_register(&d), CLS_EINVAL);
  }
  d.name = NULL;
  CT_ERR(cls_driver_register(&d), CLS_EINVAL);
  d.name = "other";
  d.description = NULL;
  CT_ERR(cls_driver_register(&d), CLS_EINVAL);
  CT_ERR(cls_driver_register(NULL), CLS_EINVAL);
}
END_TEST

START_TEST(the_options_driver_runs_unregistered_and_takes_only_its_parameters) {
  struct cls_driver_ops mine = priority_driver;
  mine.name = "mine";
  ck_assert_int_eq(setenv("CLS_SCHEDULER", "event", 1), 0); /* not read */
  cls_context *ctx = create_with(NULL, &mine);
  ck_assert_str_eq(cls_context_driver(ctx), "mine");
  runs_work(ctx);
  cls_context_destroy(ctx);
  ctx = create_with("mine:high=1", &mine);
  runs_work(ctx);
  struct cls_stream_stats st;
  CT_OK(cls_stream_stats(ctx, 1, &st));
  ck_assert_uint_eq(st.flushes, st.submissions);
  cls_context_destroy(ctx);
  ck_assert_int_eq(create_fails("event", &mine), CLS_ECONFIG);
  detail_has("the options' driver 'mine'");
  unsetenv("CLS_SCHEDULER");
  /* Unregistered: not selectable by name. */
  ck_assert_int_eq(create_fails("mine", NULL), CLS_EDRIVER);
}
END_TEST

/* F8a through the public interface: the outside driver polls with
 * cls_driver_factory_poll(), so a completion failure reaches the core as
 * the range the factory reports (ranged where the device allows it), or
 * as its command (exact). */
START_TEST(an_outside_driver_reports_ranges_through_the_poll_helper) {
  for (int precise = -1; precise <= 1; precise += 2) {
    struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                    .driver = &priority_driver,
                                    .fault = "complete:kernel=inc_k,nth=3",
                                    .precise = precise};
    cls_context *ctx = ct_context_opts(&o);
    int mode = -1;
    CT_OK(cls_context_attribution(ctx, &mode, NULL, NULL));
    cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
    cls_buffer x[4];
    for (int i = 0; i < 4; i++)
      x[i] = ct_written(ctx, 0, 16, i);
    CT_OK(cls_sync(ctx, NULL));
    size_t g = 16;
    for (int i = 0; i < 4; i++)
      CT_OK(cls_launch(ctx, 0, inc, 1, &g, NULL, 1, (cls_arg[]){CLS_INOUT(x[i])}));
    cls_sync(ctx, NULL);
    cls_report *r = NULL;
    CT_ERR(cls_check(ctx, 1, &x[2], &r), CLS_ETAINTED);
    struct cls_failure_info f;
    CT_OK(cls_report_failure(r, 0, &f));
    if (mode == CLS_ATTRIBUTION_RANGED) {
      ck_assert_msg(strstr(f.message, "one of 4 launches"), "record: %s", f.message);
      cls_report_free(r);
      r = NULL;
      CT_ERR(cls_check(ctx, 4, x, &r), CLS_ETAINTED); /* the whole range */
      ck_assert_uint_eq(cls_report_failures(r), 1);
    } else {
      ck_assert_str_eq(f.kernel, "inc_k");
      ct_expect_ints(ctx, 0, x[3], 16, 4);
    }
    cls_report_free(r);
    cls_context_destroy(ctx);
  }
}
END_TEST

START_TEST(driver_parameters_follow_the_rules_of_every_configuration_string) {
  CT_OK(cls_driver_register(&priority_driver));
  const struct {
    const char *spec, *says;
  } bad[] = {
      {"priority:bogus", "CLS_SCHEDULER 'priority:bogus': 'bogus' is not KEY=VALUE"},
      {"priority:batch=0", "out of range"},
      {"priority:batch=x", "not a number"},
      {"priority:high=64", "out of range"},
      {"priority:high=0++1", "not a number"},
      {"priority:speed=1", "(high, batch)"},
      {"priority:batch=2,batch=3", "batch given twice"},
      {"priority:batch=2,", "empty item"},
      {"priority:batch=", "has no value"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    ck_assert_int_eq(create_fails(bad[i].spec, NULL), CLS_ECONFIG);
    detail_has(bad[i].says);
  }
}
END_TEST

START_TEST(help_and_unknown_names_list_registered_drivers) {
  CT_OK(cls_driver_register(&priority_driver));
  ck_assert_int_eq(create_fails("nope", NULL), CLS_EDRIVER);
  detail_has("priority");
  char path[] = "/tmp/cls-help-XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  fflush(stderr);
  int saved = dup(2);
  dup2(fd, 2);
  int rc = create_fails("help", NULL);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  ck_assert_int_eq(rc, CLS_EDRIVER);
  char text[8192] = {0};
  ck_assert_int_ge(pread(fd, text, sizeof text - 1, 0), 1);
  close(fd);
  unlink(path);
  ck_assert_msg(strstr(text, "priority[:high=S+S...][,batch=N]") && strstr(text, "batch=N") &&
                    strstr(text, "\n  event"),
                "%s", text);
}
END_TEST

START_TEST(a_driver_loads_from_a_shared_object) {
  char spec[4200];
  snprintf(spec, sizeof spec, "%s:high=0", PRIORITY_SO);
  cls_context *ctx = create_with(spec, NULL);
  ck_assert_str_eq(cls_context_driver(ctx), "priority");
  runs_work(ctx);
  cls_context_destroy(ctx);
  ck_assert_int_eq(setenv("CLS_SCHEDULER", PRIORITY_SO, 1), 0);
  ctx = ct_context();
  ck_assert_str_eq(cls_context_driver(ctx), "priority");
  cls_context_destroy(ctx);
  unsetenv("CLS_SCHEDULER");
  snprintf(spec, sizeof spec, "%s:batch=0", PRIORITY_SO);
  ck_assert_int_eq(create_fails(spec, NULL), CLS_ECONFIG);
}
END_TEST

START_TEST(a_shared_object_that_is_not_a_driver_is_refused) {
  ck_assert_int_eq(create_fails("/nonexistent/driver.so", NULL), CLS_EDRIVER);
  detail_has("loading driver '/nonexistent/driver.so' failed");
  /* A real shared object without the entry point: the library itself. */
  ck_assert_int_eq(create_fails(CLSTREAM_SO, NULL), CLS_EDRIVER);
  detail_has("cls_driver_entry() is not exported");
}
END_TEST

/* ------------------------------------------------------------------ */
/* A driver that breaks the contract gets CLS_EDRIVER naming it: never a */
/* crash, a hang, or a deadlock of the core.                           */
/* ------------------------------------------------------------------ */

/* The priority driver with one member replaced: `base` names it "rogue". */
static struct cls_driver_ops rogue(void) {
  struct cls_driver_ops d = priority_driver;
  d.name = "rogue";
  return d;
}

static int create_leaves_null(cls_context *ctx, const char *params, struct cls_driver **out) {
  (void)ctx;
  (void)params;
  *out = NULL;
  return CLS_OK;
}
static int create_returns_7(cls_context *ctx, const char *params, struct cls_driver **out) {
  int rc = priority_driver.create(ctx, params, out);
  return rc < 0 ? rc : 7; /* a real state, and a status that is not one */
}
static int create_returns_foreign(cls_context *ctx, const char *params,
                                  struct cls_driver **out) {
  (void)ctx;
  (void)params;
  (void)out;
  return -1000;
}

START_TEST(a_create_that_breaks_the_contract_is_edriver) {
  int (*creates[])(cls_context *, const char *, struct cls_driver **) = {
      create_leaves_null, create_returns_7, create_returns_foreign};
  const char *says[] = {"create() returned CLS_OK and no driver", "create() returned 7",
                        "create() returned -1000"};
  for (size_t i = 0; i < 3; i++) {
    struct cls_driver_ops d = rogue();
    d.create = creates[i];
    ck_assert_int_eq(create_fails(NULL, &d), CLS_EDRIVER);
    detail_has("driver 'rogue'");
    detail_has(says[i]);
  }
}
END_TEST

static int open_leaves_no_backend(struct cls_driver *d, struct cls_driver_stream *s) {
  (void)d;
  (void)s;
  return CLS_OK;
}
static int opens_close_calls;
static void close_counted(struct cls_driver *d, struct cls_driver_stream *s) {
  opens_close_calls++;
  priority_driver.close(d, s);
}
static int open_returns_3(struct cls_driver *d, struct cls_driver_stream *s) {
  int rc = priority_driver.open(d, s);
  return rc < 0 ? rc : 3; /* a backend, and a status that is not one */
}

START_TEST(an_open_that_breaks_the_contract_is_edriver) {
  int (*opens[])(struct cls_driver *, struct cls_driver_stream *) = {open_leaves_no_backend,
                                                                     open_returns_3};
  const char *says[] = {"open() of stream 0 returned CLS_OK and no backend",
                        "open() returned 3"};
  for (size_t i = 0; i < 2; i++) {
    struct cls_driver_ops d = rogue();
    d.open = opens[i];
    d.close = close_counted;
    opens_close_calls = 0;
    cls_context *ctx = create_with(NULL, &d);
    cls_buffer b = CLS_BUFFER_NULL;
    for (int round = 0; round < 2; round++) { /* and again: no stream was left half made */
      CT_ERR(cls_alloc(ctx, 0, 64, &b), CLS_EDRIVER);
      detail_has("driver 'rogue'");
      detail_has(says[i]);
    }
    CT_ERR(cls_sync(ctx, NULL), CLS_OK);
    cls_context_destroy(ctx);
    /* What the open made is closed by the core, once per open: */
    ck_assert_int_eq(opens_close_calls, i == 1 ? 2 : 0);
  }
}
END_TEST

static int order_calls;
static int order_retries_forever(struct cls_driver *d, struct cls_driver_cmd *cmd) {
  (void)d;
  (void)cmd;
  order_calls++;
  return CLS_DRIVER_RETRY;
}
static int order_returns_foreign(struct cls_driver *d, struct cls_driver_cmd *cmd) {
  (void)d;
  (void)cmd;
  return -12345;
}

START_TEST(an_order_that_retries_forever_or_returns_a_foreign_code_is_edriver) {
  struct cls_driver_ops d = rogue();
  d.order = order_retries_forever;
  /* No deadline: a fixed number of retries without a failure found. */
  cls_context *ctx = create_with(NULL, &d);
  cls_buffer b = ct_alloc(ctx, 0, 64);
  int v[16] = {0};
  order_calls = 0;
  CT_ERR(cls_upload(ctx, 0, b, 0, v, sizeof v), CLS_EDRIVER);
  detail_has("driver 'rogue': order() asked for a retry 1000 times in a row");
  ck_assert_int_eq(order_calls, 1000);
  cls_context_destroy(ctx);
  /* A deadline bounds them instead. */
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .driver = &d,
                                  .sync_timeout = 0.2};
  ctx = ct_context_opts(&o);
  b = ct_alloc(ctx, 0, 64);
  order_calls = 0;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  CT_ERR(cls_upload(ctx, 0, b, 0, v, sizeof v), CLS_EDRIVER);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  detail_has("longer than the sync deadline");
  double took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
  ck_assert_msg(took >= 0.2 && took < 10, "retried for %.3f s", took);
  ck_assert_int_gt(order_calls, 1000);
  cls_context_destroy(ctx);
  /* A code that is no clstream status is CLS_EDRIVER, never "UNKNOWN". */
  d.order = order_returns_foreign;
  ctx = create_with(NULL, &d);
  b = ct_alloc(ctx, 0, 64);
  CT_ERR(cls_upload(ctx, 0, b, 0, v, sizeof v), CLS_EDRIVER);
  detail_has("driver 'rogue': order() returned -12345, which is not a clstream status");
  cls_context_destroy(ctx);
}
END_TEST

static int poll_foreign;
static int poll_returns_foreign(struct cls_driver *d, struct cls_driver_stream *s, bool wait) {
  int rc = priority_driver.poll(d, s, wait);
  return poll_foreign && rc == CLS_OK ? 42 : rc;
}

START_TEST(a_poll_that_returns_a_foreign_code_is_edriver) {
  struct cls_driver_ops d = rogue();
  d.poll = poll_returns_foreign;
  poll_foreign = 0;
  cls_context *ctx = create_with(NULL, &d);
  cls_buffer b = ct_written(ctx, 0, 16, 3);
  poll_foreign = 1;
  CT_ERR(cls_sync(ctx, NULL), CLS_EDRIVER);
  detail_has("driver 'rogue': poll() returned 42");
  poll_foreign = 0;
  ct_expect_ints(ctx, 0, b, 16, 3);
  cls_context_destroy(ctx);
}
END_TEST

/* A driver member that calls the public API on its own context, on the
 * thread that holds the context's lock: refused, never a deadlock. */
static cls_context *reentered;
static int reentry_rc[3];
static char reentry_detail[1024];
static cl_int submit_reenters(struct cls_driver *d, struct cls_driver_cmd *cmd) {
  struct cls_stream_stats st;
  uint64_t events;
  reentry_rc[0] = cls_stream_stats(reentered, cmd->stream->id, &st);
  snprintf(reentry_detail, sizeof reentry_detail, "%s", cls_last_error_detail());
  reentry_rc[1] = cls_stream_events(reentered, cmd->stream->id, &events);
  return priority_driver.submit(d, cmd);
}
static int poll_reenters(struct cls_driver *d, struct cls_driver_stream *s, bool wait) {
  if (reentered)
    reentry_rc[2] = cls_sync(reentered, NULL);
  return priority_driver.poll(d, s, wait);
}

START_TEST(a_driver_calling_the_api_on_its_context_from_a_member_is_refused) {
  struct cls_driver_ops d = rogue();
  d.submit = submit_reenters;
  d.poll = poll_reenters;
  reentered = NULL;
  cls_context *ctx = create_with(NULL, &d);
  reentered = ctx;
  for (int i = 0; i < 3; i++)
    reentry_rc[i] = 1;
  cls_buffer b = ct_written(ctx, 0, 16, 9); /* the fill's submit calls in */
  ct_expect_ints(ctx, 0, b, 16, 9);        /* the download's poll calls in */
  CT_OK(cls_sync(ctx, NULL));
  for (int i = 0; i < 3; i++)
    ck_assert_msg(reentry_rc[i] == CLS_EDRIVER, "re-entering call %d: %s", i,
                  cls_err_name(reentry_rc[i]));
  ck_assert_msg(strstr(reentry_detail, "from inside one of its own callbacks") &&
                    strstr(reentry_detail, "driver 'rogue'"),
                "%s", reentry_detail);
  reentered = NULL;
  cls_context_destroy(ctx);
}
END_TEST

int main(void) {
  ct_require_device();
  Suite *s = suite_create("driver-api");
  CT_ADD(s, a_registered_driver_is_listed_and_selected_by_name);
  CT_ADD(s, registering_again_is_harmless_and_a_taken_name_is_refused);
  CT_ADD(s, a_driver_of_another_version_or_malformed_is_refused);
  CT_ADD(s, the_options_driver_runs_unregistered_and_takes_only_its_parameters);
  CT_ADD(s, an_outside_driver_reports_ranges_through_the_poll_helper);
  CT_ADD(s, driver_parameters_follow_the_rules_of_every_configuration_string);
  CT_ADD(s, help_and_unknown_names_list_registered_drivers);
  CT_ADD(s, a_driver_loads_from_a_shared_object);
  CT_ADD(s, a_shared_object_that_is_not_a_driver_is_refused);
  CT_ADD(s, a_create_that_breaks_the_contract_is_edriver);
  CT_ADD(s, an_open_that_breaks_the_contract_is_edriver);
  CT_ADD(s, an_order_that_retries_forever_or_returns_a_foreign_code_is_edriver);
  CT_ADD(s, a_poll_that_returns_a_foreign_code_is_edriver);
  CT_ADD(s, a_driver_calling_the_api_on_its_context_from_a_member_is_refused);
  return ct_run(s);
}
