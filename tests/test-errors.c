/* The error table: codes, names and messages from CLS_ERRNO_MAP. */
#include "common.h"

#include <limits.h>

struct entry {
  int code;
  const char *name;
  const char *msg;
};

static const struct entry table[] = {
#define ENTRY(name, val, msg) {CLS_##name, "CLS_" #name, msg},
    CLS_ERRNO_MAP(ENTRY)
#undef ENTRY
};
#define NTABLE (sizeof table / sizeof table[0])

START_TEST(every_code_has_its_table_name_and_message) {
  for (size_t i = 0; i < NTABLE; i++) {
    const char *name = cls_err_name(table[i].code);
    const char *msg = cls_strerror(table[i].code);
    ck_assert_ptr_nonnull(name);
    ck_assert_ptr_nonnull(msg);
    ck_assert_str_eq(name, table[i].name);
    ck_assert_str_eq(msg, table[i].msg);
    ck_assert_msg(strncmp(name, "CLS_", 4) == 0, "%d: name %s", table[i].code, name);
    ck_assert_str_ne(msg, "unknown error");
    ck_assert_str_ne(name, "UNKNOWN");
    ck_assert_msg(msg[0] != '\0', "%s has an empty message", name);
  }
}
END_TEST

START_TEST(codes_are_negative_and_distinct) {
  for (size_t i = 0; i < NTABLE; i++) {
    ck_assert_int_lt(table[i].code, 0);
    ck_assert_int_gt(table[i].code, CLS__ERR_LAST);
    for (size_t j = i + 1; j < NTABLE; j++) {
      ck_assert_int_ne(table[i].code, table[j].code);
      ck_assert_str_ne(cls_strerror(table[i].code), cls_strerror(table[j].code));
      ck_assert_str_ne(cls_err_name(table[i].code), cls_err_name(table[j].code));
    }
  }
}
END_TEST

START_TEST(unknown_codes_are_unknown_error) {
  const int unknown[] = {1, 77, CLS__ERR_LAST, CLS__ERR_LAST - 1, -1000, INT_MIN, INT_MAX};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
    ck_assert_str_eq(cls_strerror(unknown[i]), "unknown error");
    ck_assert_str_eq(cls_err_name(unknown[i]), "UNKNOWN");
  }
}
END_TEST

START_TEST(success_is_not_an_error_name) {
  ck_assert_ptr_nonnull(cls_strerror(0));
  ck_assert_ptr_nonnull(cls_err_name(0));
  ck_assert_str_ne(cls_err_name(0), "UNKNOWN");
  ck_assert_str_ne(cls_strerror(0), "unknown error");
}
END_TEST

START_TEST(cl_status_names_are_symbolic) {
  ck_assert_str_eq(cls_cl_status_name(-5), "CL_OUT_OF_RESOURCES");
  ck_assert_str_eq(cls_cl_status_name(0), "CL_SUCCESS");
  ck_assert_str_eq(cls_cl_status_name(-11), "CL_BUILD_PROGRAM_FAILURE");
  ck_assert_str_eq(cls_cl_status_name(-54), "CL_INVALID_WORK_GROUP_SIZE");
  ck_assert_ptr_nonnull(cls_cl_status_name(-123456));
  ck_assert_ptr_nonnull(cls_cl_status_name(123456));
  ck_assert_str_ne(cls_cl_status_name(-123456), "CL_OUT_OF_RESOURCES");
}
END_TEST

START_TEST(version_string_is_not_empty) {
  const char *v = cls_version_string();
  ck_assert_ptr_nonnull(v);
  ck_assert_int_gt(strlen(v), 0);
}
END_TEST

START_TEST(last_error_detail_is_never_null) {
  ck_assert_ptr_nonnull(cls_last_error_detail());
}
END_TEST

int main(void) {
  Suite *s = suite_create("errors");
  CT_ADD(s, every_code_has_its_table_name_and_message);
  CT_ADD(s, codes_are_negative_and_distinct);
  CT_ADD(s, unknown_codes_are_unknown_error);
  CT_ADD(s, success_is_not_an_error_name);
  CT_ADD(s, cl_status_names_are_symbolic);
  CT_ADD(s, version_string_is_not_empty);
  CT_ADD(s, last_error_detail_is_never_null);
  return ct_run(s);
}
