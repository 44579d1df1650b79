#!/bin/sh
# examples/halo on 4 ranks (issue 19's "done when"): it verifies; with a
# fault on rank 3 every rank that came to depend on it reports that root,
# the others still verify, and it exits non-zero; with more iterations
# every rank depends on it.  Run by tests/mpi/run.sh for
# tests/mpi/halo-np4.mpi.
run="$(dirname "$0")/run.sh"
halo="${top_builddir:-.}/examples/halo"
status=0
fail() {
  echo "FAIL: $1"
  status=1
}
expect() { # TEXT PATTERN WHAT
  printf '%s\n' "$1" | grep -q -e "$2" || fail "$3: no line matches '$2'"
}

out=$(CLS_LOG=off sh "$run" 4 "$halo" 2>&1) || fail "the clean run exits non-zero"
printf '%s\n' "$out"
expect "$out" "rank 0: 4 of 4 bands verified" "clean run"

out=$(CLS_LOG=off CLS_FAULT=enqueue:kernel=stencil,nth=5,rank=3 sh "$run" 4 "$halo" 2>&1) &&
  fail "the fault run exits 0"
printf '%s\n' "$out"
expect "$out" "rank 3: FAILED: .*here: CLS_ELAUNCH in launch of 'stencil' on stream 0" "fault run"
expect "$out" "rank 2: FAILED: .*on rank 3: CLS_ELAUNCH in launch of 'stencil' on stream 0" \
  "fault run"
expect "$out" "rank 0: band of rank 0 verified" "fault run"
expect "$out" "rank 0: band of rank 1 verified" "fault run"
expect "$out" "rank 0: band of rank 2 not verified: .*on rank 3: CLS_ELAUNCH" "fault run"
expect "$out" "rank 0: 2 of 4 bands verified" "fault run"

out=$(CLS_LOG=off CLS_FAULT=enqueue:kernel=stencil,nth=5,rank=3 sh "$run" 4 "$halo" 9 2>&1) &&
  fail "the long fault run exits 0"
printf '%s\n' "$out"
for r in 0 1 2; do
  expect "$out" "rank $r: FAILED: .*on rank 3: CLS_ELAUNCH in launch of 'stencil'" "long fault run"
done
expect "$out" "rank 0: 0 of 4 bands verified" "long fault run"
exit $status
