# CLS_CHECK_TESTS
# ---------------
# Check (unit tests) and the OpenCL implementation the tests run on.
# --without-check builds no tests.  --with-test-icd=FILE names the ICD file
# the test harness restricts the loader to (default: PoCL's, when installed);
# the tests never see another vendor unless $OCL_ICD_VENDORS says so.
# AM_CONDITIONAL CLS_CXX: configure.ac's AC_PROG_CXX found a C++ compiler
# that compiles, so make check builds a C++ user of the public headers.
AC_DEFUN([CLS_CHECK_TESTS], [
  AC_ARG_WITH([check],
    [AS_HELP_STRING([--without-check], [do not build the test suite])],
    [], [with_check=yes])
  AS_IF([test "x$with_check" != xno],
    [PKG_CHECK_MODULES([CHECK], [check >= 0.11], [],
      [AC_MSG_ERROR([Check not found (Debian: check); pass --without-check to build without tests])])])
  AM_CONDITIONAL([CLS_TESTS], [test "x$with_check" != xno])

  AC_ARG_WITH([test-icd],
    [AS_HELP_STRING([--with-test-icd=FILE],
      [ICD file the tests restrict the loader to @<:@/etc/OpenCL/vendors/pocl.icd when present@:>@])],
    [], [with_test_icd=check])
  AS_IF([test "x$with_test_icd" = xcheck],
    [AS_IF([test -f /etc/OpenCL/vendors/pocl.icd],
       [with_test_icd=/etc/OpenCL/vendors/pocl.icd], [with_test_icd=])])
  AS_IF([test "x$with_test_icd" = xno], [with_test_icd=])
  AC_SUBST([CLS_TEST_ICD], [$with_test_icd])

  # AC_PROG_CXX names g++ even where there is none: try it.
  AC_LANG_PUSH([C++])
  AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <cstdio>]], [[std::puts("");]])],
    [cls_have_cxx=yes], [cls_have_cxx=no])
  AC_LANG_POP([C++])
  AM_CONDITIONAL([CLS_CXX], [test "x$cls_have_cxx" = xyes])

  # tests/info-json.sh validates clstream-info --json with python3's
  # json.tool when there is one (it skips otherwise).
  AC_ARG_VAR([PYTHON3], [python3, for the test of clstream-info --json])
  AC_CHECK_PROGS([PYTHON3], [python3])
])
