# CLS_CHECK_MPI
# -------------
# --with-mpi[=auto|yes|no]: builds libclstream-mpi and
# <clstream/mpi.h> when an MPI is found; `make check` then runs the MPI
# suite under $MPIRUN.  MPI's flags come from pkg-config (ompi-c, then
# mpich), else from the compiler wrapper (mpicc --showme:compile/link, Open
# MPI; mpicc -compile-info/-link-info, MPICH), else from MPI_CFLAGS and
# MPI_LIBS as given.  Substitutes MPI_CFLAGS, MPI_LIBS, MPIRUN,
# CLS_MPIRUN_FLAGS (Open MPI: --oversubscribe, and --allow-run-as-root
# when configure runs as root), and for clstream-mpi.pc
# CLS_PC_MPI_REQUIRES (", ompi-c"), or CLS_PC_MPI_LIBS and
# CLS_PC_MPI_CFLAGS where no MPI module was found; AM_CONDITIONAL CLS_MPI.
AC_DEFUN([CLS_CHECK_MPI], [
  AC_ARG_WITH([mpi],
    [AS_HELP_STRING([--with-mpi@<:@=auto|yes|no@:>@],
      [build libclstream-mpi, buffers and their failure records across MPI ranks @<:@auto@:>@])],
    [], [with_mpi=auto])
  AC_ARG_VAR([MPICC], [the MPI compiler wrapper, asked for MPI's flags])
  AC_ARG_VAR([MPIRUN], [the MPI launcher the MPI suite runs under])
  cls_mpi=no
  cls_mpi_found=
  CLS_PC_MPI_REQUIRES=
  AS_IF([test "x$with_mpi" != xno], [
    AC_PATH_PROGS([MPICC], [mpicc])
    AC_PATH_PROGS([MPIRUN], [mpirun mpiexec])
    AS_IF([test -n "$MPI_CFLAGS$MPI_LIBS"], [cls_mpi_found="MPI_CFLAGS/MPI_LIBS"],
      [PKG_CHECK_EXISTS([ompi-c],
         [MPI_CFLAGS=`$PKG_CONFIG --cflags ompi-c`; MPI_LIBS=`$PKG_CONFIG --libs ompi-c`
          CLS_PC_MPI_REQUIRES=ompi-c; cls_mpi_found="pkg-config ompi-c"],
         [PKG_CHECK_EXISTS([mpich],
            [MPI_CFLAGS=`$PKG_CONFIG --cflags mpich`; MPI_LIBS=`$PKG_CONFIG --libs mpich`
             CLS_PC_MPI_REQUIRES=mpich; cls_mpi_found="pkg-config mpich"],
            [AS_IF([test -n "$MPICC"],
               [AS_IF([MPI_CFLAGS=`$MPICC --showme:compile 2>/dev/null` &&
                       MPI_LIBS=`$MPICC --showme:link 2>/dev/null`],
                  [cls_mpi_found="$MPICC --showme"],
                  [AS_IF([MPI_CFLAGS=`$MPICC -compile-info 2>/dev/null | cut -d' ' -f2-` &&
                          MPI_LIBS=`$MPICC -link-info 2>/dev/null | cut -d' ' -f2-`],
                     [cls_mpi_found="$MPICC -link-info"], [MPI_CFLAGS=; MPI_LIBS=])])])])])])
    cls_save_CPPFLAGS=$CPPFLAGS
    cls_save_LIBS=$LIBS
    CPPFLAGS="$CPPFLAGS $MPI_CFLAGS"
    LIBS="$MPI_LIBS $LIBS"
    AC_MSG_CHECKING([for an MPI that compiles and links])
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>]],
        [[int r; MPI_Comm c; MPI_Initialized(&r); MPI_Comm_dup(MPI_COMM_WORLD, &c);]])],
      [cls_mpi=yes], [cls_mpi=no])
    AC_MSG_RESULT([$cls_mpi${cls_mpi_found:+ ($cls_mpi_found)}])
    CPPFLAGS=$cls_save_CPPFLAGS
    LIBS=$cls_save_LIBS
    AS_IF([test "x$cls_mpi" = xno && test "x$with_mpi" = xyes],
      [AC_MSG_ERROR([--with-mpi: no MPI found (Debian: libopenmpi-dev openmpi-bin); set MPICC, or MPI_CFLAGS and MPI_LIBS])])
    AS_IF([test "x$cls_mpi" = xyes && test -z "$MPIRUN"],
      [AC_MSG_WARN([MPI found but no mpirun: make check cannot run the MPI suite])])
  ])
  AS_IF([test "x$cls_mpi" != xyes], [MPI_CFLAGS=; MPI_LIBS=; CLS_PC_MPI_REQUIRES=])
  # clstream-mpi.pc: a program using <clstream/mpi.h> calls MPI itself
  # (MPI_Init, MPI_COMM_WORLD), so MPI is a public dependency: its module
  # in Requires, else its flags in Libs and Cflags, so that
  # `cc app.c $(pkg-config --cflags --libs clstream-mpi)` links.
  CLS_PC_MPI_LIBS=$MPI_LIBS
  CLS_PC_MPI_CFLAGS=$MPI_CFLAGS
  AS_IF([test -n "$CLS_PC_MPI_REQUIRES"],
    [CLS_PC_MPI_REQUIRES=", $CLS_PC_MPI_REQUIRES"; CLS_PC_MPI_LIBS=; CLS_PC_MPI_CFLAGS=])
  AC_SUBST([MPI_CFLAGS])
  AC_SUBST([MPI_LIBS])
  AC_SUBST([MPIRUN])
  AC_SUBST([CLS_PC_MPI_REQUIRES])
  AC_SUBST([CLS_PC_MPI_LIBS])
  AC_SUBST([CLS_PC_MPI_CFLAGS])
  AM_CONDITIONAL([CLS_MPI], [test "x$cls_mpi" = xyes])
  AM_CONDITIONAL([CLS_MPIRUN], [test "x$cls_mpi" = xyes && test -n "$MPIRUN"])
])
