#!/bin/sh
# Events let go early (F8a, CLS_BACKEND_RELEASE_EARLY) under every driver
# setting: what a GPU's contexts do by default (CLS_RELEASE_EARLY=auto),
# which the CPU devices CI runs on never do unless asked.  Programs whose
# streams wait on each other, read back and replay, with
# CLS_RELEASE_EARLY=on, under the driver setting tests/driver-test.sh
# gives.  Exit 0 pass, else the first failing program's status (77 only
# when there is no OpenCL device at all).
top_builddir=${top_builddir:-.}
CLS_RELEASE_EARLY=on
export CLS_RELEASE_EARLY
for p in test-streams test-async test-failure test-multi-device test-real test-capture-random; do
  "$top_builddir/tests/$p" || exit $?
done
