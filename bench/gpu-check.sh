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
#                                          modes) and every test program
#                                          under every driver setting;
#                                          results in OUT
#
# ICD: the OpenCL library to name in the .icd file (default: NVIDIA's
# libnvidia-opencl.so.1, found with ldconfig or under /usr); a file ending
# in .icd is used as it is (a dry run here: /etc/OpenCL/vendors/pocl.icd).
# For the device tool: carry DIR, command
#   sh bench/gpu-check.sh run build-gpu "$OUT"
# with a timeout that leaves room for a rerun (docs/performance.md).
set -eu

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
    find . -name '*.o' -delete
  )
  # The shared libraries the programs load that a bare machine may lack
  # (the ICD loader, subunit); the C library is the machine's own.
  for f in "$dir/src/bench/clstream-bench" "$dir/src/tests/test-launch"; do
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
  ./bench/clstream-bench --reps 9 --json "$out/bench.json" > "$out/bench.txt" 2>&1 || true
  # Every paired program under every driver setting (the model a second
  # time with exact attribution), and the programs that name their
  # settings themselves, as make check runs them.
  # A program that hangs costs its own 5 minutes, not the machine's lease.
  limit=
  command -v timeout > /dev/null 2>&1 && limit="timeout 300"
  pass=0 fail=0
  : > "$out/tests.txt"
  : > "$out/failures.txt"
  set +e
  for p in $(progs) exact $(singles); do
    case " $(singles) " in
      *" $p "*) set -- once ;;
      *) set -- event scheduler:sequential scheduler:interleave ;;
    esac
    # The model registers the example outside driver itself.
    case $p in tests/model/test-model | exact) set -- "$@" priority ;; esac
    for s do
      case $p:$s in
        *:once) $limit "./$p" > "$out/log" 2>&1 ;;
        exact:*) CLS_SCHEDULER=$s CLS_PRECISE=1 $limit ./tests/model/test-model > "$out/log" 2>&1 ;;
        *) CLS_SCHEDULER=$s $limit "./$p" > "$out/log" 2>&1 ;;
      esac
      rc=$?
      if [ $rc -eq 0 ]; then pass=$((pass + 1)); r=PASS; else fail=$((fail + 1)); r="FAIL ($rc)"; fi
      printf '%-28s %-22s %s\n' "$p" "$s" "$r" >> "$out/tests.txt"
      if [ $rc -ne 0 ]; then
        echo "== $p $s" >> "$out/failures.txt"
        tail -n 40 "$out/log" >> "$out/failures.txt"
      fi
    done
  done
  set -e
  rm -f "$out/log"
  echo "tests: $pass passed, $fail failed" | tee -a "$out/tests.txt"
  cat "$out/bench.txt"
}

case ${1:-} in
  build) shift; build "$@" ;;
  run) shift; [ $# -ge 2 ] || { echo "usage: gpu-check.sh run DIR OUT [ICD]" >&2; exit 2; }; run "$@" ;;
  *) echo "usage: gpu-check.sh build [DIR] | run DIR OUT [ICD]" >&2; exit 2 ;;
esac
