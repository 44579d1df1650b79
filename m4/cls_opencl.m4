# CLS_CHECK_OPENCL
# ----------------
# Finds the OpenCL headers and the ICD loader.  Order: --with-opencl=DIR
# (DIR/include, DIR/lib or DIR/lib64), then pkg-config "OpenCL", then a plain
# link test of clGetPlatformIDs.  Sets and substitutes OPENCL_CFLAGS and
# OPENCL_LIBS, and what clstream.pc says of OpenCL (CLS_PC_*); stops
# configure when no usable OpenCL is found.
AC_DEFUN([CLS_CHECK_OPENCL], [
  AC_ARG_WITH([opencl],
    [AS_HELP_STRING([--with-opencl=DIR],
      [prefix of an OpenCL installation (DIR/include/CL/cl.h, DIR/lib/libOpenCL)])],
    [], [with_opencl=check])

  cls_opencl_found=no
  AS_CASE([$with_opencl],
    [no], [AC_MSG_ERROR([clstream needs OpenCL; --without-opencl is not supported])],
    [yes|check], [
      PKG_CHECK_MODULES([OPENCL], [OpenCL], [cls_opencl_found=pkg-config], [:])
    ],
    [
      OPENCL_CFLAGS="-I$with_opencl/include"
      OPENCL_LIBS="-L$with_opencl/lib -L$with_opencl/lib64 -lOpenCL"
    ])

  cls_save_CPPFLAGS=$CPPFLAGS
  cls_save_LIBS=$LIBS
  CPPFLAGS="$CPPFLAGS $OPENCL_CFLAGS"
  AS_IF([test "x$OPENCL_LIBS" = x], [OPENCL_LIBS=-lOpenCL])
  LIBS="$OPENCL_LIBS $LIBS"

  AC_CHECK_HEADER([CL/cl.h], [],
    [AC_MSG_ERROR([CL/cl.h not found: install the Khronos headers (Debian: opencl-headers) or pass --with-opencl=DIR])],
    [])

  AC_MSG_CHECKING([for clGetPlatformIDs with $OPENCL_LIBS])
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[
#include <CL/cl.h>
]], [[cl_uint n = 0; return (int) clGetPlatformIDs(0, 0, &n);]])],
    [AC_MSG_RESULT([yes])
     AS_IF([test "x$cls_opencl_found" = xno], [cls_opencl_found="link test"])],
    [AC_MSG_RESULT([no])
     AC_MSG_ERROR([cannot link clGetPlatformIDs: install an ICD loader (Debian: ocl-icd-opencl-dev) or pass --with-opencl=DIR])])

  CPPFLAGS=$cls_save_CPPFLAGS
  LIBS=$cls_save_LIBS
  AC_SUBST([OPENCL_CFLAGS])
  AC_SUBST([OPENCL_LIBS])

  # clstream.pc: <clstream/stream.h> includes <CL/cl.h>, and a static link
  # needs the loader.  Through OpenCL.pc where configure found it there;
  # else with the flags configure used (a Requires on a .pc that does not
  # exist would make pkg-config refuse clstream too).
  AS_IF([test "x$cls_opencl_found" = xpkg-config],
    [CLS_PC_REQUIRES_PRIVATE=OpenCL CLS_PC_OPENCL_CFLAGS= CLS_PC_OPENCL_LIBS=],
    [CLS_PC_REQUIRES_PRIVATE= CLS_PC_OPENCL_CFLAGS=$OPENCL_CFLAGS CLS_PC_OPENCL_LIBS=$OPENCL_LIBS])
  AC_SUBST([CLS_PC_REQUIRES_PRIVATE])
  AC_SUBST([CLS_PC_OPENCL_CFLAGS])
  AC_SUBST([CLS_PC_OPENCL_LIBS])
])
