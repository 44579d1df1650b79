#!/bin/sh
# Automake's LOG_COMPILER: runs one test of `make check`.
#
#   driver-test.sh [COMMAND...] TEST
#
# A TEST named PROGRAM@SETTING (tests/test-launch@event,
# tests/test-launch@scheduler-sequential) is one program under one driver
# setting: PROGRAM runs with CLS_SCHEDULER=SETTING, the first '-' of
# SETTING read as ':' (make targets cannot hold a ':'), and a trailing
# -qN as ",queues=N" (tests/test-capture@scheduler-sequential-q2 runs with
# scheduler:sequential,queues=2; nor can they hold a '=').  The file TEST
# itself is an empty stamp the build makes so the harness has a file to
# name.  A PROGRAM ending in .sh (tests/demo.sh) runs with $SHELL, from
# $srcdir when it is not in the build directory, and without COMMAND.  Any
# other TEST (the programs that name their driver settings themselves)
# runs as it is.  COMMAND goes in front of the program (make
# check-valgrind puts valgrind there).
#
# CLS_SCHEDULER set by the caller narrows `make check` to one setting: of
# each program's pairs only the one that stands for it runs (the pair of
# that exact setting, else of the setting it extends, as
# scheduler:interleave for scheduler:interleave,max_tasks=1, else of its
# driver, else the first), with the caller's value; the others skip (77).

n=$#
if [ "$n" -lt 1 ]; then
  echo "usage: driver-test.sh [COMMAND...] TEST" >&2
  exit 99
fi
i=0
for a do
  i=$((i + 1))
  [ $i -eq 1 ] && set --
  if [ $i -lt "$n" ]; then set -- "$@" "$a"; else test=$a; fi
done

case ${test##*/} in
  *@*) ;;
  *) exec "$@" "$test" ;;
esac

prog=${test%@*}
setting=$(echo "${test##*@}" | sed 's/-/:/; s/-q\([0-9][0-9]*\)$/,queues=\1/')

# The driver settings this build has, in the order the pairs list them.
settings=
for d in ${CLS_BUILT_DRIVERS:-event}; do
  case $d in
    scheduler) settings="$settings scheduler:sequential scheduler:interleave" ;;
    *) settings="$settings $d" ;;
  esac
done
# The example outside driver, which the programs that have its pair
# register (examples/drivers/priority.c).
settings="$settings priority"

# stands_for VALUE: the built setting whose pair runs CLS_SCHEDULER=VALUE.
stands_for() {
  best=
  best_score=-1
  want_driver=${1%%[:,]*}
  for s in $settings; do
    if [ "$1" = "$s" ]; then
      score=3
    else
      case $1 in
        "$s",*) score=2 ;;
        *) if [ "$want_driver" = "${s%%:*}" ]; then score=1; else score=0; fi ;;
      esac
    fi
    if [ $score -gt $best_score ]; then
      best=$s
      best_score=$score
    fi
  done
  echo "$best"
}

# A pair of a setting outside that list (a -qN pair) stands for none: the
# caller's setting runs under the pair that stands_for picks.
case " $settings " in
  *" $setting "*) ;;
  *)
    if [ -n "${CLS_SCHEDULER:-}" ]; then
      echo "skipped: CLS_SCHEDULER=$CLS_SCHEDULER runs under ${prog}@$(stands_for "$CLS_SCHEDULER" | sed 's/:/-/') only"
      exit 77
    fi
    ;;
esac
if [ -n "${CLS_SCHEDULER:-}" ] && [ "$CLS_SCHEDULER" != "$setting" ]; then
  pick=$(stands_for "$CLS_SCHEDULER")
  if [ "$pick" != "$setting" ]; then
    echo "skipped: CLS_SCHEDULER=$CLS_SCHEDULER runs under ${prog}@$(echo "$pick" | sed 's/:/-/') only"
    exit 77
  fi
  setting=$CLS_SCHEDULER
fi

case $prog in
  *.sh)
    if [ ! -f "$prog" ] && [ -n "${srcdir:-}" ] && [ -f "$srcdir/$prog" ]; then
      prog=$srcdir/$prog
    fi
    set -- "${SHELL:-/bin/sh}"
    ;;
esac

echo "=== CLS_SCHEDULER=$setting${*:+ $*} $prog"
CLS_SCHEDULER=$setting
export CLS_SCHEDULER
exec "$@" "$prog"
