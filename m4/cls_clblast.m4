# CLS_CHECK_CLBLAST
# ------------------
# CLBlast (Debian's libclblast-dev) is optional: where clblast_c.h and
# libclblast are found, the foreign-command example and test that run an
# SGEMM on a stream (examples/clblast-gemm.c, tests/test-clblast.c) are
# built.  --with-clblast makes it required, --without-clblast skips it.
# Sets CLBLAST_LIBS, AM_CONDITIONAL CLS_CLBLAST and cls_clblast (yes/no)
# for the summary.
AC_DEFUN([CLS_CHECK_CLBLAST], [
AC_ARG_WITH([clblast],
  [AS_HELP_STRING([--without-clblast],
    [do not build the CLBlast example and test (default: where CLBlast is found)])],
  [], [with_clblast=check])
cls_clblast=no
CLBLAST_LIBS=
AS_IF([test "x$with_clblast" != xno], [
  AC_CHECK_HEADER([clblast_c.h], [
    cls_save_LIBS=$LIBS
    AC_SEARCH_LIBS([CLBlastSgemm], [clblast], [cls_clblast=yes], [], [$OPENCL_LIBS])
    AS_IF([test "x$ac_cv_search_CLBlastSgemm" != "xnone required" &&
           test "x$ac_cv_search_CLBlastSgemm" != xno],
          [CLBLAST_LIBS=$ac_cv_search_CLBlastSgemm])
    LIBS=$cls_save_LIBS])
  AS_IF([test "x$with_clblast" = xyes && test $cls_clblast = no],
        [AC_MSG_ERROR([--with-clblast: clblast_c.h or libclblast not found])])])
AC_SUBST([CLBLAST_LIBS])
AM_CONDITIONAL([CLS_CLBLAST], [test $cls_clblast = yes])
])
