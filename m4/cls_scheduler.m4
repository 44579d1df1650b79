# CLS_SELECT_SCHEDULER
# --------------------
# --enable-drivers=LIST chooses the drivers built into the library (the
# registry in src/driver/registry.c lists those configure enabled); --with-scheduler=NAME
# picks the one a context uses when neither its options nor $CLS_SCHEDULER
# name one.  The default must be built.
AC_DEFUN([CLS_SELECT_SCHEDULER], [
  cls_known_drivers="event scheduler"
  AC_ARG_ENABLE([drivers],
    [AS_HELP_STRING([--enable-drivers=LIST],
      [comma-separated drivers to build @<:@event,scheduler@:>@])],
    [], [enable_drivers="event,scheduler"])
  cls_all_drivers=
  for cls_d in `echo "$enable_drivers" | tr ',' ' '`; do
    AS_CASE([" $cls_known_drivers "],
      [*" $cls_d "*], [cls_all_drivers="$cls_all_drivers $cls_d"],
      [AC_MSG_ERROR([unknown driver '$cls_d' in --enable-drivers; known drivers: $cls_known_drivers])])
  done
  cls_all_drivers=`echo $cls_all_drivers`
  AS_IF([test "x$cls_all_drivers" = x], [AC_MSG_ERROR([--enable-drivers: at least one driver is needed])])

  AC_ARG_WITH([scheduler],
    [AS_HELP_STRING([--with-scheduler=NAME],
      [default scheduler driver: event or scheduler @<:@event@:>@])],
    [], [with_scheduler=event])
  cls_default_driver=
  for cls_d in $cls_all_drivers; do
    AS_IF([test "x$with_scheduler" = "x$cls_d"], [cls_default_driver=$cls_d])
  done
  AS_IF([test "x$cls_default_driver" = x],
    [AC_MSG_ERROR([unknown or disabled scheduler driver '$with_scheduler' in --with-scheduler; built drivers: $cls_all_drivers])])

  AS_CASE([" $cls_all_drivers "], [*" event "*], [cls_have_event=yes], [cls_have_event=no])
  AS_CASE([" $cls_all_drivers "], [*" scheduler "*], [cls_have_scheduler=yes], [cls_have_scheduler=no])
  AS_IF([test $cls_have_event = yes], [AC_DEFINE([CLS_HAVE_DRIVER_EVENT], [1], [event driver built])])
  AS_IF([test $cls_have_scheduler = yes], [AC_DEFINE([CLS_HAVE_DRIVER_SCHEDULER], [1], [scheduler driver built])])
  AM_CONDITIONAL([CLS_DRIVER_EVENT], [test $cls_have_event = yes])
  AM_CONDITIONAL([CLS_DRIVER_SCHEDULER], [test $cls_have_scheduler = yes])

  AC_DEFINE_UNQUOTED([CLS_DEFAULT_DRIVER], ["$cls_default_driver"],
    [Driver a context uses when none is named])
  AC_SUBST([CLS_DEFAULT_DRIVER], [$cls_default_driver])
  AC_SUBST([CLS_ALL_DRIVERS], [$cls_all_drivers])
])
