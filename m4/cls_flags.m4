# CLS_COMPILER_FLAGS
# ------------------
# Warnings and symbol visibility for the library.  Substitutes
# CLS_WARN_CFLAGS and CLS_VISIBILITY_CFLAGS.
AC_DEFUN([CLS_COMPILER_FLAGS], [
  CLS_WARN_CFLAGS=
  for cls_flag in -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter; do
    AX_CHECK_COMPILE_FLAG([$cls_flag], [CLS_WARN_CFLAGS="$CLS_WARN_CFLAGS $cls_flag"], [], [-Werror])
  done
  AC_ARG_ENABLE([werror],
    [AS_HELP_STRING([--enable-werror], [treat compiler warnings as errors])],
    [AS_IF([test "x$enableval" = xyes], [CLS_WARN_CFLAGS="$CLS_WARN_CFLAGS -Werror"])])
  CLS_VISIBILITY_CFLAGS=
  AX_CHECK_COMPILE_FLAG([-fvisibility=hidden], [CLS_VISIBILITY_CFLAGS=-fvisibility=hidden], [], [-Werror])
  AC_SUBST([CLS_WARN_CFLAGS])
  AC_SUBST([CLS_VISIBILITY_CFLAGS])
])
