#!/bin/sh
# The demo as a test: examples/pipeline must verify all three stages, and
# with an injected launch failure must report it on every stage downstream
# (F2, F6) while the stages upstream still verify; in guard mode it must
# verify with no guard or canary record; --trace writes a timeline.
#
# Run by `make check` from the build directory with $top_builddir exported.
# Exit 0 pass, 1 fail, 77 skip (only when there is no OpenCL device at all).

top_builddir=${top_builddir:-.}
info=$top_builddir/tools/clstream-info
pipeline=$top_builddir/examples/pipeline
out=${TMPDIR:-/tmp}/clstream-demo.$$
trap 'rm -f "$out"' 0
unset CLS_FAULT CLS_GUARD

if command -v timeout >/dev/null 2>&1; then
  limit="timeout 120"
else
  limit=
fi

failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# run WHAT COMMAND...: runs the command, output into $out (and the log); $rc
# holds its exit status.
run() {
  what=$1
  shift
  echo "=== $what: $*"
  $limit "$@" >"$out" 2>&1
  rc=$?
  cat "$out"
  echo "=== exit status $rc"
  if test $rc -eq 124; then
    fail "$what: timed out after 120 s"
  fi
}

# expect WHAT ERE: a line of the last run's output matches the extended
# regular expression.
expect() {
  grep -E -q -e "$2" "$out" || fail "$1: no line matching '$2'"
}

# How a stage's own failed launch is described: the event driver finds an
# enqueue failure at cls_launch ("launch failed"); the scheduler driver
# enqueues batches later and finds it then ("failed after launch").
own='(launch failed|failed after launch)'
cause="root cause: CLS_E[A-Z]+ in launch of"

# Skip only when there is no device at all (whatever $CLS_DEVICE says).
(unset CLS_DEVICE; $limit "$info") >"$out" 2>&1
if grep -q '^No OpenCL device found' "$out"; then
  cat "$out"
  echo "SKIP: no OpenCL device"
  exit 77
fi
# clstream-info names each platform the loader offers, its devices below.
expect "clstream-info" '^platform 0: .+'
expect "clstream-info" '^  \[[0-9]+:0\] '

# 1. Everything verifies.
run "clean run" "$pipeline" --size 256 --quiet
test $rc -eq 0 || fail "clean run: exit status $rc, expected 0"
expect "clean run" '^blur: OK$'
expect "clean run" '^sobel: OK$'
expect "clean run" '^histogram: OK$'
expect "clean run" '^pipeline: all 3 stages verified$'

# 2. The first stage fails: sobel and histogram are skipped and their
#    downloads name the same root cause, on stream 0.  "skipped" means the
#    report's skip chain lists that kernel on its own stream (1, 2).
CLS_FAULT=enqueue:kernel=blur
export CLS_FAULT
run "blur fails" "$pipeline" --size 256
unset CLS_FAULT
test $rc -eq 1 || fail "blur fails: exit status $rc, expected 1"
expect "blur fails" "^blur: FAILED \\($own; $cause 'blur' on stream 0\\)$"
expect "blur fails" "^sobel: FAILED \\(skipped; $cause 'blur' on stream 0\\)$"
expect "blur fails" "^histogram: FAILED \\(skipped; $cause 'blur' on stream 0\\)$"
expect "blur fails" "^pipeline: 3 of 3 stages failed \\($cause 'blur' on stream 0\\)$"

# 3. The last stage fails: blur and sobel still verify.
CLS_FAULT=enqueue:kernel=histogram
export CLS_FAULT
run "histogram fails" "$pipeline" --size 256 --quiet
unset CLS_FAULT
test $rc -eq 1 || fail "histogram fails: exit status $rc, expected 1"
expect "histogram fails" '^blur: OK$'
expect "histogram fails" '^sobel: OK$'
expect "histogram fails" "^histogram: FAILED \\($own; $cause 'histogram' on stream 2\\)$"
expect "histogram fails" "^pipeline: 1 of 3 stages failed \\($cause 'histogram' on stream 2\\)$"

# 4. Guard mode finds nothing to say about a correct program.
CLS_GUARD=1
export CLS_GUARD
run "guard mode" "$pipeline" --size 256 --quiet
unset CLS_GUARD
test $rc -eq 0 || fail "guard mode: exit status $rc, expected 0"
expect "guard mode" '^pipeline: all 3 stages verified$'

# 4b. The image variant (--images, issue 33): blur and sobel on image2d_t
#     objects verify against the same host computation; a failed blur
#     fails every stage downstream with the same root cause; guard mode
#     has nothing to say.
run "images" "$pipeline" --size 256 --images --quiet
test $rc -eq 0 || fail "images: exit status $rc, expected 0"
expect "images" '^blur: OK$'
expect "images" '^sobel: OK$'
expect "images" '^histogram: OK$'
expect "images" '^pipeline: all 3 stages verified$'
CLS_FAULT=enqueue:kernel=blur
export CLS_FAULT
run "images, blur fails" "$pipeline" --size 256 --images
unset CLS_FAULT
test $rc -eq 1 || fail "images, blur fails: exit status $rc, expected 1"
expect "images, blur fails" "^blur: FAILED \\($own; $cause 'blur' on stream 0\\)$"
expect "images, blur fails" "^sobel: FAILED \\(skipped; $cause 'blur' on stream 0\\)$"
expect "images, blur fails" "^histogram: FAILED \\(skipped; $cause 'blur' on stream 0\\)$"
CLS_GUARD=1
export CLS_GUARD
run "images, guard mode" "$pipeline" --size 256 --images --quiet
unset CLS_GUARD
test $rc -eq 0 || fail "images, guard mode: exit status $rc, expected 0"
expect "images, guard mode" '^pipeline: all 3 stages verified$'

# 4c. A launch-bound loop captured once and replayed (examples/timestep,
#     issue 34): it verifies; with its 7th launch failing, the later
#     replays are skipped as a whole and the read names the root and the
#     skipped replays.
timestep=$top_builddir/examples/timestep
run "timestep" "$timestep" --steps 50
test $rc -eq 0 || fail "timestep: exit status $rc, expected 0"
expect "timestep" '^timestep: 50 iterations \(100 launches\) replayed from one capture \((plan|command-buffer)\), verified$'
CLS_FAULT=enqueue:kernel=heat_step,nth=7
export CLS_FAULT
run "timestep, 7th launch fails" "$timestep" --steps 50
unset CLS_FAULT
test $rc -eq 1 || fail "timestep, 7th launch fails: exit status $rc, expected 1"
# The iteration's two launches are one plan run (ranged attribution): the
# root cause names the run; command by command, the launch.
expect "timestep, 7th launch fails" "^failure 1: CLS_ELAUNCH .*in (launch of kernel 'heat_step'|run of kernel 'capture #1 commands 0-1 \\(heat_step\\.\\.\\.\\)') on stream 0"
# The event driver knows the failure at the enqueue, so the later replays
# are skipped as a whole; a driver that defers its enqueues finds it after
# the call, and until a sync F8 may still move it: those replays are
# skipped command by command (docs/design.md, "Capture and replay").
if test "${CLS_SCHEDULER:-}" = event; then
  expect "timestep, 7th launch fails" 'skipped as a whole: replay of capture #1 \(2 commands\)'
else
  expect "timestep, 7th launch fails" "skipped( as a whole: replay of capture #1 \\(2 commands\\)|: 'heat_step' on stream 0)"
fi

# 5. --trace writes a timeline (docs/trace.md; tests/test-trace.c checks
#    its contents): the file names the three kernels and ends closed.
trace=${TMPDIR:-/tmp}/clstream-demo-trace.$$.json
run "trace" "$pipeline" --size 256 --quiet --trace "$trace"
test $rc -eq 0 || fail "trace: exit status $rc, expected 0"
for k in blur sobel histogram; do
  grep -q "\"name\":\"$k\"" "$trace" || fail "trace: no event of '$k' in $trace"
done
tail -n 1 "$trace" | grep -q '^]$' || fail "trace: $trace is not closed"
rm -f "$trace"

# 6. --devices 2 (docs/devices.md): where the platform offers two devices
#    (PoCL with POCL_DEVICES="pthread pthread"), the streams spread over
#    them and verify; a lost queue with CLS_RELOCATE=other moves its stream
#    and clstream runs the lost download again there (recovery), or, with
#    CLS_RECOVER=off, the pipeline runs the stage again; with CLS_RELOCATE=off the loss
#    is reported (exit 1).  Vendors with one device skip this part.
POCL_DEVICES=${POCL_DEVICES:-"pthread pthread"}
export POCL_DEVICES
(CLS_DEVICE=all; export CLS_DEVICE; $limit "$info") >"$out" 2>&1
if grep -q '^context device 1:' "$out"; then
  run "two devices" "$pipeline" --size 256 --devices 2
  test $rc -eq 0 || fail "two devices: exit status $rc, expected 0"
  expect "two devices" '^stream 1 on device 1$'
  expect "two devices" '^pipeline: all 3 stages verified$'
  CLS_FAULT=lost:stream=1,nth=2 CLS_RELOCATE=other
  export CLS_FAULT CLS_RELOCATE
  # Recovery on (the default with relocation): the lost download runs
  # again on the fresh queue, and the pipeline never sees the loss.
  run "lost, recovered" "$pipeline" --size 256 --devices 2
  test $rc -eq 0 || fail "lost, recovered: exit status $rc, expected 0"
  # Stream 1's row of the table: one relocation, one replay (the last two
  # columns; the log may be off).
  expect "lost, recovered" '^ +1( +[0-9]+)+ +1 +1$'
  grep -q 'running .* again' "$out" && fail "lost, recovered: the pipeline re-ran a stage"
  expect "lost, recovered" '^pipeline: all 3 stages verified$'
  # Recovery off: the pipeline's own recovery code runs the stage again.
  CLS_RECOVER=off
  export CLS_RECOVER
  run "lost, relocated" "$pipeline" --size 256 --devices 2
  test $rc -eq 0 || fail "lost, relocated: exit status $rc, expected 0"
  expect "lost, relocated" 'the stream.s queue is lost'
  expect "lost, relocated" '^stream 1 was relocated: now generation 1 on device 0$'
  expect "lost, relocated" '^running sobel again on stream 1$'
  expect "lost, relocated" '^pipeline: all 3 stages verified$'
  CLS_RELOCATE=off
  run "lost, not relocated" "$pipeline" --size 256 --devices 2
  unset CLS_FAULT CLS_RELOCATE CLS_RECOVER
  test $rc -eq 1 || fail "lost, not relocated: exit status $rc, expected 1"
  expect "lost, not relocated" '^sobel: FAILED \(queue lost at its download: .*CL_DEVICE_NOT_AVAILABLE\)$'
  expect "lost, not relocated" '^pipeline: 1 of 3 stages failed \(root cause: CLS_ECL in download on stream 1\)$'
else
  echo "=== one device with CLS_DEVICE=all: --devices 2 not run"
fi

if test $failures -ne 0; then
  echo "demo: $failures check(s) failed"
  exit 1
fi
echo "demo: pass"
exit 0
