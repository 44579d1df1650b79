# CLS_CHECK_BENCH_PEERS
# ---------------------
# bench/clstream-bench's peer rows: the launch-bound workloads written with
# another OpenCL wrapper, timed in the same run.  Boost.Compute is
# header-only (Debian: libboost-dev) and C++: bench/peer-boost.cpp is built
# where CLS_CHECK_TESTS found a working C++ compiler and the header is
# there (AM_CONDITIONAL CLS_BOOST_COMPUTE, HAVE_BOOST_COMPUTE); otherwise
# the bench is built without it and says "peer boost: not built".
AC_DEFUN([CLS_CHECK_BENCH_PEERS], [
  AC_REQUIRE([CLS_CHECK_TESTS])
  cls_boost_compute=no
  AS_IF([test "x$cls_have_cxx" = xyes], [
    AC_LANG_PUSH([C++])
    AC_CHECK_HEADER([boost/compute/core.hpp], [cls_boost_compute=yes], [],
      [[#define CL_TARGET_OPENCL_VERSION 120]])
    AC_LANG_POP([C++])])
  AS_IF([test "x$cls_boost_compute" = xyes],
    [AC_DEFINE([HAVE_BOOST_COMPUTE], [1], [bench/clstream-bench has its Boost.Compute peer])])
  AM_CONDITIONAL([CLS_BOOST_COMPUTE], [test "x$cls_boost_compute" = xyes])
])
