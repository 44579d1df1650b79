#!/bin/sh
# Runs a program on N MPI ranks (the MPI suite, make bench-mpi).
#
#   run.sh tests/mpi/test-mpi-npN.mpi   the MPI suite on N ranks (make check)
#   run.sh tests/mpi/halo-np4.mpi       examples/halo's runs (tests/mpi/halo.sh)
#   run.sh N COMMAND...                 COMMAND on N ranks
#
# $MPIRUN (default mpirun) launches it.  Open MPI is given --oversubscribe
# (more ranks than cores: CI's machines have two) and, when run as root
# (containers, CI), --allow-run-as-root.  The whole run is bounded by
# $CLS_MPI_TIMEOUT seconds (default 300): a rank that waits for a message
# that never comes fails the test instead of hanging make check.
case $1 in
  */halo-np*.mpi)
    exec sh "$(dirname "$0")/halo.sh"
    ;;
  *.mpi)
    np=${1##*-np}
    np=${np%.mpi}
    set -- "${top_builddir:-.}/tests/mpi/test-mpi"
    ;;
  *)
    np=$1
    shift
    ;;
esac
# Under AddressSanitizer (configure --enable-sanitizers), leaks are not
# checked on MPI ranks: Open MPI's components, unloaded at MPI_Finalize,
# leave allocations LeakSanitizer can neither attribute nor suppress.
# tests/test-wire checks the record's code for leaks without MPI.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export ASAN_OPTIONS
MPIRUN=${MPIRUN:-mpirun}
flags=
if "$MPIRUN" --version 2>&1 | grep -q 'Open MPI'; then
  flags=--oversubscribe
  if [ "$(id -u)" = 0 ]; then flags="$flags --allow-run-as-root"; fi
fi
echo "$MPIRUN $flags -np $np $*"
if command -v timeout >/dev/null 2>&1; then
  exec timeout "${CLS_MPI_TIMEOUT:-300}" "$MPIRUN" $flags -np "$np" "$@"
fi
exec "$MPIRUN" $flags -np "$np" "$@"
