#!/bin/sh
# `make check-vendors`: the test suite on every CPU OpenCL implementation
# Debian has, one at a time, the ICD loader restricted to it with
# OCL_ICD_VENDORS:
#
#   pocl      PoCL: the whole suite, as `make check` runs it
#   rusticl   Mesa's rusticl on llvmpipe (RUSTICL_ENABLE=llvmpipe): the
#             suite less the cases listed below
#   oclgrind  the oclgrind simulator (its .icd is written by the build):
#             the suite less the cases below, with CLS_TEST_QUICK=1 (the
#             tests keep their checks and shrink their loads: oclgrind
#             interprets every work-item)
#
# The tests are `make check`'s: each test program, and the demo
# (tests/demo.sh: examples/pipeline verifies, and reports an injected
# failure on every stage downstream), under every driver setting, each
# (program, setting) pair a test of its own (tests/driver-test.sh).  Why
# each case is left out on a vendor is written next to it here and in
# README "Portability".
#
# Environment:
#   CLS_VENDORS            vendors to run (default: "pocl rusticl oclgrind")
#   CLS_VENDORS_REQUIRED   set: a vendor that is not installed fails the run
#                          (default: it is reported as skipped)
#   CLS_TEST_PAIRS         the pairs, PROGRAM@SETTING (from Makefile.am)
#   CLS_SINGLE_TESTS       the programs that run once (from Makefile.am)
#   CLS_OCLGRIND_ICD       the generated oclgrind .icd file
#   CLS_POCL_ICD, CLS_RUSTICL_ICD   other .icd files than Debian's
#   top_builddir           the build directory (from Makefile.am)
#
# Logs: tests/vendors/VENDOR-TEST.log (pocl-test-launch@event.log).  Exit
# 0 when nothing failed.  The last line counts tests over every vendor:
#   check-vendors: N passed, N failed, N skipped

top_builddir=${top_builddir:-.}
srcdir=$(cd "$(dirname "$0")" && pwd)
top_srcdir=$(cd "$srcdir/.." && pwd)
vendors=${CLS_VENDORS:-pocl rusticl oclgrind}
logdir=$top_builddir/tests/vendors
mkdir -p "$logdir" || exit 1
# A guard against a vendor that hangs: no program may take longer.
if command -v timeout >/dev/null 2>&1; then
  guard="timeout 600"
else
  guard=
fi

passed=0
failed=0
skipped=0

# Cases left out, by vendor: test names, which every test case carries as
# its tag (tests/common.h), for Check's CK_EXCLUDE_TAGS.
#
# rusticl 22.3 holds an event's lock while its command runs, so asking a
# running command's status waits until it has finished: the poll clstream
# makes before a cross-stream wait finds the producer done, and no wait is
# needed.  The results stay right; only these exact wait counts differ.
# It also aborts the process (a Rust panic, "unknown version") on a
# program binary it did not write: test-cache forges one to see the
# refusal path.  clstream hands it only binaries whose key (driver
# version included) and checksum match, i.e. ones it wrote itself.
#
# The model's losses after the enqueue (CLS_MODEL_LATE=1, whose contexts
# late_losses_on_shared_queues_agree_with_the_model and
# late_losses_with_recovery_under_ranged_attribution_agree_with_the_model
# run) follow what
# PoCL does behind a lost queue, and were checked there only: rusticl,
# with its one device, gives a command that waited on the lost queue the
# loss's own status (CL_DEVICE_NOT_AVAILABLE), so clstream also moves
# the waiting stream's healthy queue, one generation more than the model
# allows (the replay's bytes are still right).  The same holds for
# a_command_failed_behind_one_failed_behind_a_loss_names_the_loss, which
# checks what PoCL's -1 behind a lost queue's command is counted as: on
# rusticl the commands behind it carry the loss's status instead.
rusticl_exclude="cross_stream_read_adds_one_wait_and_flushes_producer
new_producer_write_needs_a_new_wait
binary_the_vendor_refuses_is_dropped_and_rebuilt
late_losses_on_shared_queues_agree_with_the_model
late_losses_with_recovery_under_ranged_attribution_agree_with_the_model
a_command_failed_behind_one_failed_behind_a_loss_names_the_loss"
# oclgrind runs a whole queue inside clFlush.  The first seven cases hold a
# producer behind a user event while a consumer on another stream is
# ordered after it (or, F7_failed_..., while the scheduler hands the
# producer's list to its queue), which flushes the producer's queue: on
# oclgrind that flush waits for the user event forever.  In the last two,
# the flush for the first consumer's wait has run the producer to its end,
# so a second consumer needs no wait: the counts differ, the results are
# right (the trace's flow-arrow case counts those waits too).  The two
# timeout cases run a kernel for seconds of device time:
# oclgrind simulates it inside the caller's clFlush, for hours, and no
# deadline can apply to a call that does not return; the same holds for a
# foreign command whose event (a user event) never completes.  The same
# holds for the four recovery cases where a stream's command waits on
# one that a queue accepted and lost (fault injection's
# lost:...,at=complete gates it behind a user event): the waiting
# stream's flush runs it behind the gate, forever.  So do the three cases
# where a foreign command's user event fails later, set by another thread
# once the consumers are enqueued: the first consumer on another stream
# flushes the foreign command's queue, which waits for the event before
# the thread can set it.  The same for the loss behind a foreign event
# set later: fault injection flushes the lost queue before its gate
# (src/factory/fault.c), which waits for the event before the test sets
# it.  The model's contexts of losses after the enqueue
# (late_losses_on_shared_queues_agree_with_the_model,
# late_losses_with_recovery_under_ranged_attribution_agree_with_the_model,
# a_command_failed_behind_one_failed_behind_a_loss_names_the_loss,
# a_command_failed_behind_a_loss_and_a_failure_runs_again_after_the_loss
# and a_blocking_upload_after_a_reader_failed_behind_a_loss_lets_it_run_again)
# wait on a gated command the same way.
oclgrind_exclude="timeout_sync_names_a_foreign_command_that_never_finishes
loss_after_enqueue_behind_a_foreign_event_set_later_does_not_block_the_launch
F8_foreign_event_failing_later_under_ranged_attribution_taints_a_chain
F2_replay_behind_a_foreign_event_that_fails_later
F2_replay_behind_a_foreign_event_that_fails_later_cb
plan_run_over_streams_behind_a_foreign_event_that_fails_later
loss_after_enqueue_with_a_reader_on_another_stream_gives_exact_bytes
loss_after_enqueue_with_an_async_download_on_another_stream_gives_exact_bytes
loss_after_enqueue_with_a_reader_on_an_earlier_stream_gives_exact_bytes
loss_after_enqueue_then_a_blocking_transfer_on_another_stream_is_recovered
F8_consumer_on_other_stream_ran_on_untrusted_input
F8_replay_over_a_grown_wrapped_log
F8_argument_order_decides_when_the_later_argument_fails_first
F7_running_producer_is_waited_on_without_a_poll
F7_failed_last_event_is_polled_not_waited_on
F7_deferred_wait_on_a_failed_event_is_dropped
guard_failure_reaches_what_read_the_buffer_F8
cross_stream_read_adds_one_wait_and_flushes_producer
new_producer_write_needs_a_new_wait
timeout_sync_returns_etimedout_naming_the_running_kernel
timeout_blocking_read_behind_a_running_kernel
cross_stream_waits_are_flow_arrows_from_producer_to_consumer
late_losses_on_shared_queues_agree_with_the_model
late_losses_with_recovery_under_ranged_attribution_agree_with_the_model
a_command_failed_behind_one_failed_behind_a_loss_names_the_loss
a_command_failed_behind_a_loss_and_a_failure_runs_again_after_the_loss
a_blocking_upload_after_a_reader_failed_behind_a_loss_lets_it_run_again"

now() { date +%s; }

# installed ICD: the .icd file exists and, when it names a file by its
# path, that file exists.
installed() {
  lib=
  test -f "$1" || return 1
  lib=$(head -n 1 "$1")
  case $lib in
    /*) test -f "$lib" ;;
    *) return 0 ;;
  esac
}

# run_one VENDOR NAME COMMAND...: one test, with the vendor's environment;
# counts the result.
run_one() {
  v=$1
  name=$2
  shift 2
  log=$logdir/$v-$name.log
  t0=$(now)
  $guard "$@" >"$log" 2>&1
  rc=$?
  t=$(($(now) - t0))
  case $rc in
    0) res=PASS; passed=$((passed + 1)) ;;
    77) res=SKIP; skipped=$((skipped + 1)) ;;
    124) res="FAIL (timed out)"; failed=$((failed + 1)) ;;
    *) res="FAIL (exit $rc)"; failed=$((failed + 1)) ;;
  esac
  printf '%-10s %-44s %4ds  %s\n' "$v" "$name" "$t" "$res"
  case $res in
    FAIL*)
      grep -E ':[EF]:|^FAIL' "$log" | head -n 20 | sed 's/^/    /'
      ;;
  esac
}

for v in $vendors; do
  quick=
  exclude=
  enable=
  case $v in
    pocl) icd=${CLS_POCL_ICD:-/etc/OpenCL/vendors/pocl.icd} ;;
    rusticl)
      icd=${CLS_RUSTICL_ICD:-/etc/OpenCL/vendors/rusticl.icd}
      enable=llvmpipe
      exclude=$rusticl_exclude
      ;;
    oclgrind)
      icd=${CLS_OCLGRIND_ICD:-$logdir/oclgrind.icd}
      quick=1
      exclude=$oclgrind_exclude
      ;;
    *)
      echo "check-vendors: unknown vendor '$v' (pocl, rusticl, oclgrind)"
      failed=$((failed + 1))
      continue
      ;;
  esac
  if ! installed "$icd"; then
    if [ -n "${CLS_VENDORS_REQUIRED:-}" ]; then
      echo "$v: FAIL: not installed ($icd${lib:+, which names $lib}), and CLS_VENDORS_REQUIRED is set"
      failed=$((failed + 1))
    else
      echo "$v: SKIP: not installed ($icd${lib:+, which names $lib})"
      skipped=$((skipped + 1))
    fi
    continue
  fi
  echo "=== $v: OCL_ICD_VENDORS=$icd${enable:+ RUSTICL_ENABLE=$enable}${quick:+ CLS_TEST_QUICK=1}"
  vstart=$(now)
  (
    OCL_ICD_VENDORS=$icd
    export OCL_ICD_VENDORS
    unset CLS_DEVICE CLS_FAULT
    if [ -n "$enable" ]; then RUSTICL_ENABLE=$enable; export RUSTICL_ENABLE; fi
    if [ -n "$quick" ]; then CLS_TEST_QUICK=1; export CLS_TEST_QUICK; fi
    if [ -n "$exclude" ]; then CK_EXCLUDE_TAGS=$(echo $exclude); export CK_EXCLUDE_TAGS; fi
    # The device the loader gives, as a check that it gives one at all.
    "$top_builddir/tools/clstream-info" >"$logdir/$v-clstream-info.log" 2>&1
    grep -E '^context device:' "$logdir/$v-clstream-info.log" ||
      echo "$v: clstream-info found no device (see $logdir/$v-clstream-info.log)"
    # rusticl offers no device until RUSTICL_ENABLE names a driver:
    # clstream-info lists the platform anyway, and says so.
    if [ -n "$enable" ]; then
      run_one "$v" clstream-info-without-RUSTICL_ENABLE ${SHELL:-/bin/sh} -c '
        out=$(unset RUSTICL_ENABLE; "$1" 2>&1)
        rc=$?
        printf "%s\n=== exit status %s (expected 1)\n" "$out" $rc
        test $rc -eq 1 &&
          printf "%s\n" "$out" | grep -q "^platform 0: rusticl" &&
          printf "%s\n" "$out" | grep -q "no device: Mesa.s rusticl offers no device until RUSTICL_ENABLE"' \
        sh "$top_builddir/tools/clstream-info"
    fi
    for t in ${CLS_TEST_PAIRS:-} ${CLS_SINGLE_TESTS:-}; do
      case $t in
        *.sh@*) path=$top_srcdir/$t ;; # a script: the runner takes it from the sources
        *) path=$top_builddir/$t ;;
      esac
      run_one "$v" "$(basename "$t")" ${SHELL:-/bin/sh} "$srcdir/driver-test.sh" "$path"
    done
    echo "$passed $failed $skipped" >"$logdir/$v.counts"
  )
  read -r p f s <"$logdir/$v.counts"
  rm -f "$logdir/$v.counts"
  passed=$p
  failed=$f
  skipped=$s
  echo "=== $v: $(($(now) - vstart)) s"
done

echo "check-vendors: $passed passed, $failed failed, $skipped skipped"
test "$failed" -eq 0
