/* The one parser of configuration strings (src/util/parse.h) and the rules
 * it gives every grammar alike: CLS_DEVICE, CLS_SCHEDULER, CLS_FAULT, from
 * the context options and from the environment.  The grammars' own cases
 * are in test-device-select.c, test-scheduler.c and test-fault.c.  Every context
 * here names its driver, so this program runs once. */
#include "common.h"

#include "util/parse.h"

static const struct cls__parser ps = {"TEST", "the whole text", NULL};

static int number(const char *s, uint64_t lo, uint64_t hi, uint64_t *v) {
  return cls__parse_uint(&ps, "n", cls__span_of(s), lo, hi, v);
}

START_TEST(numbers_are_digits_only_and_never_wrap) {
  uint64_t v = 7;
  CT_OK(number("0", 0, 10, &v));
  ck_assert_uint_eq(v, 0);
  CT_OK(number("007", 0, 10, &v));
  ck_assert_uint_eq(v, 7);
  CT_OK(number("18446744073709551615", 0, UINT64_MAX, &v));
  ck_assert_uint_eq(v, UINT64_MAX);
  static const char *const bad[] = {"",   "+1", "-1", " 1",  "1 ", "1x", "0x10",
                                    "1e3", "١",  "18446744073709551616",
                                    "99999999999999999999999999"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    v = 42;
    CT_ERR(number(bad[i], 0, UINT64_MAX, &v), CLS_ECONFIG);
    ck_assert_msg(v == 42, "'%s': the output was written", bad[i]);
    char quoted[64];
    snprintf(quoted, sizeof quoted, "'%s'", bad[i]);
    ck_assert_msg(strstr(cls_last_error_detail(), quoted), "'%s': %s", bad[i],
                  cls_last_error_detail());
    ck_assert_msg(strstr(cls_last_error_detail(), "'the whole text'"), "%s",
                  cls_last_error_detail());
  }
  CT_ERR(number("11", 0, 10, &v), CLS_ECONFIG);
  ck_assert_msg(strstr(cls_last_error_detail(), "'11' is out of range (0..10)"), "%s",
                cls_last_error_detail());
  CT_ERR(number("0", 1, 10, &v), CLS_ECONFIG);
}
END_TEST

START_TEST(items_refuse_empty_ones_and_keys_twice) {
  static const char *const names[] = {"a", "b"};
  struct cls__parser p = {"TEST", "a=1,b=2", NULL};
  struct cls__items it;
  cls__items_init(&it, &p, cls__span_of(p.text), ',');
  struct cls__keys keys = {names, 2, 0};
  struct cls__span item, value;
  int seen = 0;
  while (cls__items_next(&it, &item) > 0) {
    int k = cls__parse_kv(&p, item, &keys, &value);
    ck_assert_int_eq(k, seen);
    ck_assert_uint_eq(value.n, 1);
    seen++;
  }
  ck_assert_int_eq(seen, 2);

  static const struct {
    const char *text, *says;
  } bad[] = {{"a=1,a=2", "a given twice"},    {"a=1,,b=2", "empty item at offset 4"},
             {",a=1", "empty item at offset 0"}, {"a=1,", "empty item at offset 4"},
             {"c=1", "unknown key 'c' (a, b)"},  {"a", "'a' is not KEY=VALUE"},
             {"=1", "'=1' has no key"},          {"a=", "'a=' has no value"}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    p.text = bad[i].text;
    cls__items_init(&it, &p, cls__span_of(p.text), ',');
    keys.seen = 0;
    int rc;
    while ((rc = cls__items_next(&it, &item)) > 0 &&
           (rc = cls__parse_kv(&p, item, &keys, &value)) >= 0)
      ;
    ck_assert_msg(rc == CLS_ECONFIG, "'%s': %s", bad[i].text, cls_err_name(rc));
    ck_assert_msg(strstr(cls_last_error_detail(), bad[i].says), "'%s': %s", bad[i].text,
                  cls_last_error_detail());
  }
}
END_TEST

START_TEST(long_text_is_quoted_cut_short) {
  char text[4096];
  memset(text, 'x', sizeof text - 1);
  text[sizeof text - 1] = '\0';
  text[2000] = ' ';
  struct cls__parser p = {"TEST", text, NULL};
  CT_ERR(cls__parse_text(&p), CLS_ECONFIG);
  const char *d = cls_last_error_detail();
  ck_assert_msg(strlen(d) < 400, "%zu characters: %s", strlen(d), d);
  ck_assert_msg(strstr(d, "(4095 characters)") && strstr(d, "whitespace at offset 2000"), "%s",
                d);
}
END_TEST

/* Creation with one configuration string, from the option or from the
 * environment variable. */
static int create(int which, const char *text, bool env) {
  static const char *const vars[] = {"CLS_DEVICE", "CLS_SCHEDULER", "CLS_FAULT"};
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION};
  if (env)
    ck_assert_int_eq(setenv(vars[which], text, 1), 0);
  else if (which == 0)
    o.device = text;
  else if (which == 1)
    o.scheduler = text;
  else
    o.fault = text;
  cls_context *c = NULL;
  int rc = cls_context_create(&c, &o);
  if (env)
    unsetenv(vars[which]);
  if (rc == CLS_OK)
    cls_context_destroy(c);
  else
    ck_assert_ptr_null(c);
  return rc;
}

static bool scheduler_built(void) {
  for (size_t i = 0; i < cls_driver_count(); i++) {
    const char *name = NULL;
    CT_OK(cls_driver_info(i, &name, NULL));
    if (strcmp(name, "scheduler") == 0)
      return true;
  }
  return false;
}

/* The same mistake gets the same answer in every grammar, from the option
 * and from the environment: whitespace anywhere, a signed number, an empty
 * item. */
START_TEST(every_grammar_refuses_the_same_mistakes) {
  static const char *const bad[3][6] = {
      {" 0:0", "0:0 ", "0: 0", "+0:0", "0:0:0", ":"},
      {" event", "event ", "scheduler: interleave", "scheduler:max_tasks=+5", "scheduler:,",
       "scheduler:"},
      {" enqueue:nth=1", "enqueue:nth=1 ", "enqueue:nth= 1", "enqueue:nth=+1", "enqueue:nth=1;",
       ";"}};
  for (int g = 0; g < 3; g++)
    for (size_t i = 0; i < 6; i++)
      for (int env = 0; env < 2; env++) {
        if (strncmp(bad[g][i], "scheduler", 9) == 0 && !scheduler_built())
          continue; /* CLS_EDRIVER: configured without it */
        int rc = create(g, bad[g][i], env);
        ck_assert_msg(rc == CLS_ECONFIG, "'%s' (%s): expected CLS_ECONFIG, got %s: %s",
                      bad[g][i], env ? "environment" : "option", cls_err_name(rc),
                      cls_last_error_detail());
        ck_assert_msg(strstr(cls_last_error_detail(), bad[g][i]), "'%s': not quoted: %s",
                      bad[g][i], cls_last_error_detail());
      }
}
END_TEST

/* An empty string is the same as no string: the default device, the
 * default driver, no faults. */
START_TEST(an_empty_string_is_the_default_in_every_grammar) {
  for (int g = 0; g < 3; g++)
    for (int env = 0; env < 2; env++)
      CT_OK(create(g, "", env));
}
END_TEST

int main(void) {
  ct_require_device();
  unsetenv("CLS_DEVICE");
  unsetenv("CLS_FAULT");
  Suite *s = suite_create("config");
  CT_ADD(s, numbers_are_digits_only_and_never_wrap);
  CT_ADD(s, items_refuse_empty_ones_and_keys_twice);
  CT_ADD(s, long_text_is_quoted_cut_short);
  CT_ADD(s, every_grammar_refuses_the_same_mistakes);
  CT_ADD(s, an_empty_string_is_the_default_in_every_grammar);
  return ct_run(s);
}
