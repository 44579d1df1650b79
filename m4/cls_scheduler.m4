# CLS_SELECT_SCHEDULER
# --------------------
# --with-scheduler=NAME picks the driver a context uses when neither the
# context options nor $CLS_SCHEDULER name one.  Every driver listed in
# cls_all_drivers is built; the default must be one of them.
AC_DEFUN([CLS_SELECT_SCHEDULER], [
  cls_all_drivers="event"
  AC_ARG_WITH([scheduler],
    [AS_HELP_STRING([--with-scheduler=NAME],
      [default scheduler driver: event @<:@event@:>@])],
    [], [with_scheduler=event])
  cls_default_driver=
  for cls_d in $cls_all_drivers; do
    AS_IF([test "x$with_scheduler" = "x$cls_d"], [cls_default_driver=$cls_d])
  done
  AS_IF([test "x$cls_default_driver" = x],
    [AC_MSG_ERROR([unknown scheduler driver '$with_scheduler' in --with-scheduler; known drivers: $cls_all_drivers])])
  AC_DEFINE_UNQUOTED([CLS_DEFAULT_DRIVER], ["$cls_default_driver"],
    [Driver a context uses when none is named])
  AC_SUBST([CLS_DEFAULT_DRIVER], [$cls_default_driver])
])
