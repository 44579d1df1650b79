#!/bin/sh
# The device check, prepared: what a lent GPU machine runs, in one call.
# The machine starts bare (no autotools, no ICD loader, no Check), and its
# time is short, so everything is built here and carried there.
#
#   sh bench/gpu-check.sh build [DIR]      here: a static build of HEAD in
#                                          DIR (default build-gpu), with the
#                                          shared libraries it needs in
#                                          DIR/lib
#   sh bench/gpu-check.sh run DIR OUT [ICD]  there: clstream-info, the
#                                          benchmark (both attribution
#                                          modes), the replayed rows on
#                                          command buffers, and every test
#                                          program under every driver
#                                          setting; results in OUT
#
# Settings of run: GPU_CHECK_WORKLOADS (the benchmark's --workloads;
# default every workload), GPU_CHECK_JOBS (test programs at once, default
# 6), GPU_CHECK_LIMIT (seconds one test program may take, default 300).
#
# ICD: the OpenCL library to name in the .icd file (default: NVIDIA's
# libnvidia-opencl.so.1, found with ldconfig or under /usr); a file ending
# in .icd is used as it is (a dry run here: /etc/OpenCL/vendors/pocl.icd).
# For the device tool: carry DIR, command
#   sh bench/gpu-check.sh run build-gpu "$OUT"
# with a timeout that leaves room for a rerun (docs/performance.md).
set -eu
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")

build() {
  dir=${1:-build-gpu}
  case $dir in /*) ;; *) dir=$PWD/$dir ;; esac
  top=$(git rev-parse --show-toplevel)
  rm -rf "$dir"
  mkdir -p "$dir/src" "$dir/lib"
  git -C "$top" archive -o "$dir/src.tar" HEAD
  tar -x -C "$dir/src" -f "$dir/src.tar"
  rm -f "$dir/src.tar"
  git -C "$top" log -1 --format='%h %cd' --date=short > "$dir/COMMIT"
  (
    cd "$dir/src"
    autoreconf -fi > /dev/null 2>&1
    ./configure -q --disable-shared
    make -j"$(nproc)" > /dev/null
    # The test programs (not the demo script).
    make -j"$(nproc)" bench/clstream-bench tools/clstream-info $(progs) $(singles) > /dev/null
    # CLBlast's SGEMM and clFFT's transform on a stream, where configure
    # found them.
    make tests/test-clblast > /dev/null 2>&1 || true
    make tests/test-clfft > /dev/null 2>&1 || true
    find . -name '*.o' -delete
    # Only the programs travel: the archives are linked in, the symbols
    # are not needed to run (the lease's tree is limited to 64 MiB).
    rm -rf .libs src/.libs
    find . -type f -perm -u+x \( -path './tests/*' -o -path './bench/*' -o -path './tools/*' \) \
      -exec sh -c 'strip "$1" 2> /dev/null || true' sh {} \;
  )
  # The shared libraries the programs load that a bare machine may lack
  # (the ICD loader, subunit); the C library is the machine's own.
  for f in "$dir/src/bench/clstream-bench" "$dir/src/tests/test-launch" \
    $(ls "$dir/src/tests/test-clblast" "$dir/src/tests/test-clfft" 2> /dev/null); do
    ldd "$f" | awk '/=> \// { print $3 }'
  done | sort -u | while read -r lib; do
    case ${lib##*/} in
      libc.so* | libm.so* | libpthread.so* | libdl.so* | librt.so* | ld-linux*) ;;
      *) cp -L "$lib" "$dir/lib/" ;;
    esac
  done
  du -sh "$dir"
}

# The programs make check runs under every driver setting, and those that
# name their settings themselves (run in the source tree's root).
progs() {
  awk '/^CLS_PAIRED_PROGS = / { on = 1; next } on { print } on && !/\\$/ { exit }' \
    Makefile.am | tr ' \\\t' '\n\n\n' | grep '^tests/'
}
singles() {
  # Not the two that need the shared library: test-driver-api loads a
  # shared object, test-dlopen the library itself.
  sed -n 's/^CLS_SINGLE_TESTS +\{0,1\}= //p' Makefile.am | tr ' ' '\n' | grep '^tests/' |
    grep -v -e '^tests/test-driver-api$' -e '^tests/test-dlopen$'
}

find_icd() {
  if [ -n "${1:-}" ]; then
    echo "$1"
    return
  fi
  lib=$(ldconfig -p 2>/dev/null | awk '/libnvidia-opencl\.so\.1 / { print $NF; exit }')
  [ -n "$lib" ] || lib=$(find /usr /lib -name 'libnvidia-opencl.so.1' 2>/dev/null | head -n 1)
  [ -n "$lib" ] || { echo "gpu-check: no libnvidia-opencl.so.1 on this machine" >&2; exit 1; }
  echo "$lib"
}

run() {
  dir=$(cd "$1" && pwd)
  out=$2
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
  icd=$(find_icd "${3:-}")
  case $icd in
    *.icd) OCL_ICD_VENDORS=$icd ;;
    *) echo "$icd" > "$out/gpu.icd"; OCL_ICD_VENDORS=$out/gpu.icd ;;
  esac
  LD_LIBRARY_PATH=$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export OCL_ICD_VENDORS LD_LIBRARY_PATH
  CLS_LOG=off CK_DEFAULT_TIMEOUT=120 CLS_CACHE_DIR=$out/cache
  export CLS_LOG CK_DEFAULT_TIMEOUT CLS_CACHE_DIR
  cd "$dir/src"
  { date -u; echo "commit $(cat "$dir/COMMIT")"; nvidia-smi -L 2>/dev/null || true; } \
    > "$out/machine.txt"
  ./tools/clstream-info > "$out/info.txt" 2>&1 || true
  # GPU_CHECK_WORKLOADS narrows the benchmark (default: every workload).
  ./bench/clstream-bench --reps 9 ${GPU_CHECK_WORKLOADS:+--workloads "$GPU_CHECK_WORKLOADS"} \
    --json "$out/bench.json" > "$out/bench.txt" 2>&1 || true
  # The replayed rows again with the capture forced onto command buffers
  # (the probe's verdict and ratio in probe.txt), paired against raw
  # cl_khr_command_buffer code in the same rounds.
  CLS_CAPTURE=command-buffer ./bench/clstream-bench --reps 9 \
    --workloads tiny-chain-replay,ping-pong-replay,fan-replay,stencil-100 \
    --json "$out/bench-cb.json" > "$out/bench-cb.txt" 2>&1 || true
  # The uncaptured launch-bound rows again with every event kept until a
  # poll (CLS_RELEASE_EARLY=off; auto lets them go early where the device
  # is not a CPU): the comparison behind that choice (docs/design.md, F8a).
  CLS_RELEASE_EARLY=off ./bench/clstream-bench --reps 9 \
    --workloads tiny-chain,ping-pong,fan,ping-pong-args,fan-args \
    --json "$out/bench-keep.json" > "$out/bench-keep.txt" 2>&1 || true
  CLS_LOG=streams ./bench/clstream-bench --reps 5 --drivers event \
    --workloads tiny-chain-replay 2>&1 | grep 'capture:' > "$out/probe.txt" || true
  # Every paired program under every driver setting (the model a second
  # time with exact attribution), and the programs that name their
  # settings themselves, as make check runs them; GPU_CHECK_JOBS at once
  # (the benchmark above ran alone).
  # A program that hangs costs its own GPU_CHECK_LIMIT seconds (default
  # 300), not the machine's lease.
  : > "$out/jobs"
  libs= # the foreign-library tests that were built
  [ -x tests/test-clblast ] && libs=tests/test-clblast
  [ -x tests/test-clfft ] && libs="$libs tests/test-clfft"
  once=" $(singles | tr '\n' ' ') "
  for p in $(progs) $libs exact $(singles); do
    case $once in
      *" $p "*) set -- once ;;
      *) set -- event scheduler:sequential scheduler:interleave ;;
    esac
    # The model registers the example outside driver itself.
    case $p in tests/model/test-model | exact) set -- "$@" priority ;; esac
    # Streams sharing queues in part, as make check runs these three.
    case $p in tests/test-capture | tests/test-capture-random | tests/test-foreign)
      set -- "$@" scheduler:sequential,queues=2 ;;
    esac
    for s do echo "$p $s" >> "$out/jobs"; done
  done
  mkdir -p "$out/t"
  set +e
  xargs -P "${GPU_CHECK_JOBS:-6}" -n 2 sh "$self" one "$out/t" < "$out/jobs"
  pass=0 fail=0
  : > "$out/tests.txt"
  : > "$out/failures.txt"
  while read -r p s; do
    f=$out/t/$(echo "$p-$s" | tr '/:,=' '____')
    rc=$(cat "$f.rc" 2>/dev/null || echo missing)
    if [ "$rc" = 0 ]; then pass=$((pass + 1)); r=PASS; else fail=$((fail + 1)); r="FAIL ($rc)"; fi
    printf '%-28s %-22s %-10s %s\n' "$p" "$s" "$r" "$(cat "$f.time" 2>/dev/null)" >> "$out/tests.txt"
    if [ "$rc" != 0 ]; then
      echo "== $p $s" >> "$out/failures.txt"
      tail -n 40 "$f.log" >> "$out/failures.txt"
    fi
  done < "$out/jobs"
  rm -rf "$out/t" "$out/jobs"
  set -e
  echo "tests: $pass passed, $fail failed" | tee -a "$out/tests.txt"
  cat "$out/bench.txt"
}

# One test program under one setting (run's xargs calls this).
one() {
  set +e # the status is the result, not a reason to stop
  t=$1 p=$2 s=$3
  f=$t/$(echo "$p-$s" | tr '/:,=' '____')
  limit=
  command -v timeout > /dev/null 2>&1 && limit="timeout ${GPU_CHECK_LIMIT:-300}"
  start=$(date +%s)
  case $p:$s in
    *:once) $limit "./$p" > "$f.log" 2>&1 ;;
    exact:*) CLS_SCHEDULER=$s CLS_PRECISE=1 $limit ./tests/model/test-model > "$f.log" 2>&1 ;;
    *) CLS_SCHEDULER=$s $limit "./$p" > "$f.log" 2>&1 ;;
  esac
  echo $? > "$f.rc"
  echo "$(($(date +%s) - start)) s" > "$f.time"
}

case ${1:-} in
  one) shift; one "$@" ;;
  build) shift; build "$@" ;;
  run) shift; [ $# -ge 2 ] || { echo "usage: gpu-check.sh run DIR OUT [ICD]" >&2; exit 2; }; run "$@" ;;
  *) echo "usage: gpu-check.sh build [DIR] | run DIR OUT [ICD]" >&2; exit 2 ;;
esac
