#!/bin/sh
# Automake's test wrapper: runs one test once per driver setting, so one
# build checks every driver.  The settings are $CLS_SCHEDULER when the caller
# set it (one run), else every setting of every driver this build has
# ($CLS_BUILT_DRIVERS, from configure).  Fails when any run fails; skips
# (77) only when every run skipped.
case $* in
  *test-conformance*|*test-scheduler*|*test-config*)
    # Name their driver settings themselves.
    exec "$@" ;;
  *test-quirks*)
    # Probes the device, whatever the driver.
    exec "$@" ;;
esac
if [ -n "${CLS_SCHEDULER:-}" ]; then
  settings=$CLS_SCHEDULER
else
  settings=
  for d in ${CLS_BUILT_DRIVERS:-event}; do
    case $d in
      scheduler) settings="$settings scheduler:sequential scheduler:interleave" ;;
      *) settings="$settings $d" ;;
    esac
  done
fi

status=77
for s in $settings; do
  echo "=== CLS_SCHEDULER=$s $*"
  CLS_SCHEDULER=$s "$@"
  rc=$?
  echo "=== CLS_SCHEDULER=$s: exit $rc"
  case $rc in
    0) [ $status = 77 ] && status=0 ;;
    77) ;;
    *) status=1 ;;
  esac
done
exit $status
