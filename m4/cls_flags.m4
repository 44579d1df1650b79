# CLS_COMPILER_FLAGS
# ------------------
# Warnings, and the library's own flags (symbol visibility, TLS dialect).  Substitutes
# CLS_WARN_CFLAGS and CLS_LIB_CFLAGS.
AC_DEFUN([CLS_COMPILER_FLAGS], [
  CLS_WARN_CFLAGS=
  for cls_flag in -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter; do
    AX_CHECK_COMPILE_FLAG([$cls_flag], [CLS_WARN_CFLAGS="$CLS_WARN_CFLAGS $cls_flag"], [], [-Werror])
  done
  AC_ARG_ENABLE([werror],
    [AS_HELP_STRING([--enable-werror], [treat compiler warnings as errors])],
    [AS_IF([test "x$enableval" = xyes], [CLS_WARN_CFLAGS="$CLS_WARN_CFLAGS -Werror"])])
  CLS_LIB_CFLAGS=
  AX_CHECK_COMPILE_FLAG([-fvisibility=hidden], [CLS_LIB_CFLAGS=-fvisibility=hidden], [], [-Werror])
  # The thread's last error is thread-local and set by every failing call
  # (a skipped launch too); TLS descriptors make that access a few
  # instructions instead of a __tls_get_addr call, and stay correct when
  # the library is dlopen()ed.  Only where the target has them (x86).
  AX_CHECK_COMPILE_FLAG([-mtls-dialect=gnu2],
    [AX_CHECK_LINK_FLAG([-mtls-dialect=gnu2],
      [CLS_LIB_CFLAGS="$CLS_LIB_CFLAGS -mtls-dialect=gnu2"], [], [-Werror])],
    [], [-Werror])
  AC_SUBST([CLS_WARN_CFLAGS])
  AC_SUBST([CLS_LIB_CFLAGS])
])
