# CLS_SANITIZERS
# --------------
# --enable-sanitizers=LIST builds the library, tools and tests with
# -fsanitize=LIST (address,undefined; thread; ...; "yes" means
# address,undefined), frame pointers kept and every report fatal.  The
# tests then run with the suppression files in tests/ (the OpenCL loader
# and PoCL only, never clstream's own code; see Makefile.am).  Mesa's ICDs
# abort AddressSanitizer at load: the tests restrict the loader to the test
# ICD (--with-test-icd).  Substitutes CLS_SANITIZERS; AM_CONDITIONAL
# CLS_SANITIZE.
AC_DEFUN([CLS_SANITIZERS], [
  AC_ARG_ENABLE([sanitizers],
    [AS_HELP_STRING([--enable-sanitizers=LIST],
      [build with -fsanitize=LIST, e.g. address,undefined or thread @<:@no@:>@])],
    [], [enable_sanitizers=no])
  AS_CASE([$enable_sanitizers],
    [yes], [enable_sanitizers=address,undefined],
    [""], [enable_sanitizers=no])
  AS_IF([test "x$enable_sanitizers" != xno], [
    cls_san_flags="-fsanitize=$enable_sanitizers -fno-sanitize-recover=all -fno-omit-frame-pointer -g"
    AC_MSG_CHECKING([whether $CC links with $cls_san_flags])
    cls_save_CFLAGS=$CFLAGS
    cls_save_LDFLAGS=$LDFLAGS
    CFLAGS="$CFLAGS $cls_san_flags"
    LDFLAGS="$LDFLAGS $cls_san_flags"
    AC_LINK_IFELSE([AC_LANG_PROGRAM([], [])], [AC_MSG_RESULT([yes])],
      [AC_MSG_RESULT([no])
       AC_MSG_ERROR([$CC cannot build with -fsanitize=$enable_sanitizers])])
  ])
  AM_CONDITIONAL([CLS_SANITIZE], [test "x$enable_sanitizers" != xno])
  AC_SUBST([CLS_SANITIZERS], [$enable_sanitizers])
])

# CLS_FUZZER
# ----------
# `make fuzz` builds tests/fuzz/fuzz-ops, a libFuzzer target, with clang
# (CLS_FUZZ_CC: $CLS_FUZZ_CC, else clang, clang-14 ... on the path) and
# -fsanitize=fuzzer,address,undefined.  AM_CONDITIONAL CLS_FUZZ is set
# when that compiler links such a target.
AC_DEFUN([CLS_FUZZER], [
  AC_ARG_VAR([CLS_FUZZ_CC], [clang for the libFuzzer target (make fuzz)])
  AC_PATH_PROGS([CLS_FUZZ_CC], [clang clang-16 clang-15 clang-14])
  cls_fuzz=no
  AS_IF([test -n "$CLS_FUZZ_CC"], [
    AC_MSG_CHECKING([whether $CLS_FUZZ_CC links with -fsanitize=fuzzer])
    cat > conftest-fuzz.c <<_CLS_EOF
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return d && n ? 0 : 0; }
_CLS_EOF
    AS_IF([$CLS_FUZZ_CC -fsanitize=fuzzer,address,undefined conftest-fuzz.c \
             -o conftest-fuzz$EXEEXT >&AS_MESSAGE_LOG_FD 2>&1], [cls_fuzz=yes])
    rm -f conftest-fuzz.c conftest-fuzz$EXEEXT
    AC_MSG_RESULT([$cls_fuzz])
  ])
  AM_CONDITIONAL([CLS_FUZZ], [test "x$cls_fuzz" = xyes])
])
