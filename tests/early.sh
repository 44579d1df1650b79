#!/bin/sh
# Events let go early (F8a, CLS_BACKEND_RELEASE_EARLY) under every driver
# setting: what a GPU's contexts do by default (CLS_RELEASE_EARLY=auto),
# which the CPU devices CI runs on never do unless asked.  Programs whose
# streams wait on each other, read back and replay, with
# CLS_RELEASE_EARLY=on, under the driver setting tests/driver-test.sh
# gives.  Exit 0 pass, else the first failing program's status (77 only
# when there is no OpenCL device at all).
# Each program runs with tests/event-refs.so preloaded, which fails it
# (status 99) on any use of an event after clstream released it: a lent
# event (the event driver's waits, the scheduler's sequential strategy)
# or one let go early must never be.  Not under the sanitizers, whose
# runtime must be loaded first (CLS_SANITIZED).
top_builddir=${top_builddir:-.}
CLS_RELEASE_EARLY=on
export CLS_RELEASE_EARLY
refs=$top_builddir/tests/.libs/event-refs.so
if [ -z "${CLS_SANITIZED:-}" ] && [ -f "$refs" ]; then
  LD_PRELOAD="$refs${LD_PRELOAD:+ $LD_PRELOAD}"
  export LD_PRELOAD
fi
for p in test-streams test-async test-failure test-multi-device test-real test-capture-random \
  test-ranged test-foreign; do
  "$top_builddir/tests/$p" || exit $?
done
# The scheduler's own cases, where it is built (--enable-drivers).
if [ -x "$top_builddir/tests/test-scheduler" ]; then
  "$top_builddir/tests/test-scheduler" || exit $?
fi
