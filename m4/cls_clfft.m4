# CLS_CHECK_CLFFT
# ----------------
# clFFT (Debian's libclfft-dev) is optional: where clFFT.h and libclFFT
# are found, the foreign-command test that runs an FFT on a stream
# (tests/test-clfft.c: a library that takes memory objects without
# offsets) is built.  --with-clfft makes it required, --without-clfft
# skips it.
# Sets CLFFT_LIBS, AM_CONDITIONAL CLS_CLFFT and cls_clfft (yes/no)
# for the summary.
AC_DEFUN([CLS_CHECK_CLFFT], [
AC_ARG_WITH([clfft],
  [AS_HELP_STRING([--without-clfft],
    [do not build the clFFT test (default: where clFFT is found)])],
  [], [with_clfft=check])
cls_clfft=no
CLFFT_LIBS=
AS_IF([test "x$with_clfft" != xno], [
  AC_CHECK_HEADER([clFFT.h], [
    cls_save_LIBS=$LIBS
    AC_SEARCH_LIBS([clfftEnqueueTransform], [clFFT], [cls_clfft=yes], [], [$OPENCL_LIBS])
    AS_IF([test "x$ac_cv_search_clfftEnqueueTransform" != "xnone required" &&
           test "x$ac_cv_search_clfftEnqueueTransform" != xno],
          [CLFFT_LIBS=$ac_cv_search_clfftEnqueueTransform])
    LIBS=$cls_save_LIBS])
  AS_IF([test "x$with_clfft" = xyes && test $cls_clfft = no],
        [AC_MSG_ERROR([--with-clfft: clFFT.h or libclFFT not found])])])
AC_SUBST([CLFFT_LIBS])
AM_CONDITIONAL([CLS_CLFFT], [test $cls_clfft = yes])
])
