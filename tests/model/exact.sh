#!/bin/sh
# The model test with exact attribution (F8a: CLS_PRECISE=1), beside the
# default run (ranged where the device allows it), under the driver setting
# tests/driver-test.sh gives it.
CLS_PRECISE=1
export CLS_PRECISE
exec "${top_builddir:-.}/tests/model/test-model" "$@"
