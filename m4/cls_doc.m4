# CLS_CHECK_DOXYGEN
# -----------------
# make doc: the API reference (HTML and man(3) pages) from the public
# headers' Doxygen comments, into apidoc/ in the build tree.  Optional:
# without doxygen, `make doc` says so and fails, and nothing else changes
# (make install installs man pages only when make doc made them).
# DOXYGEN_WARN_AS_ERROR: FAIL_ON_WARNINGS (doxygen >= 1.9: every warning
# shown, then failure), else YES (stops at the first).  An undocumented
# public symbol is a warning (WARN_IF_UNDOCUMENTED).
AC_DEFUN([CLS_CHECK_DOXYGEN], [
  AC_ARG_VAR([DOXYGEN], [doxygen, for make doc])
  AC_CHECK_PROG([DOXYGEN], [doxygen], [doxygen])
  DOXYGEN_WARN_AS_ERROR=YES
  AS_IF([test "x$DOXYGEN" != x], [
    cls_doxygen_version=`$DOXYGEN --version 2>/dev/null`
    AS_CASE([$cls_doxygen_version],
      [0.*|1.[[0-8]].*|1.[[0-8]]], [],
      [DOXYGEN_WARN_AS_ERROR=FAIL_ON_WARNINGS])])
  AC_SUBST([DOXYGEN_WARN_AS_ERROR])
  AM_CONDITIONAL([CLS_DOXYGEN], [test "x$DOXYGEN" != x])
  AC_CONFIG_FILES([docs/Doxyfile])
])

# CLS_CMAKE_PACKAGE
# -----------------
# The CMake package files make install puts in $(libdir)/cmake/clstream
# (cmake/*.cmake.in, filled in by make: they need the expanded
# directories).  The OpenCL library the build linked, for consumers where
# CMake's FindOpenCL finds none.
AC_DEFUN([CLS_CMAKE_PACKAGE], [
  AC_ARG_VAR([CMAKE], [cmake, for make check-install])
  AC_CHECK_PROG([CMAKE], [cmake], [cmake])
  AC_CHECK_SIZEOF([void *])
  AC_SUBST([CLS_SIZEOF_VOID_P], [$ac_cv_sizeof_void_p])
])
