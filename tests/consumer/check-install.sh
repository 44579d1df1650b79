#!/bin/sh
# make check-install: builds tests/consumer/main.c against the clstream
# make installed under ROOT/dest (DESTDIR), once with CMake and once with
# pkg-config, and runs both; then the example outside driver
# (examples/drivers: priority.c and its demo) with pkg-config's flags
# alone, the installed <clstream/driver.h> its only clstream header.
#   check-install.sh ROOT PREFIX LIBDIR CONSUMER_SRCDIR
# Environment: CMAKE, PKG_CONFIG, CC (from configure; an empty CMAKE or
# PKG_CONFIG is an error: configure found none).
set -eu
root=$1 prefix=$2 libdir=$3 src=$4
dest=$root/dest
failed=0

[ -f "$dest$libdir/cmake/clstream/clstreamConfig.cmake" ] ||
  { echo "check-install: no $dest$libdir/cmake/clstream/clstreamConfig.cmake"; exit 1; }

echo "== CMake: find_package(clstream 0.1) with CMAKE_PREFIX_PATH=$dest$prefix"
if [ -z "${CMAKE:-}" ]; then
  echo "check-install: configure found no cmake (Debian: apt-get install cmake)"; failed=1
elif "$CMAKE" -S "$src/cmake" -B "$root/cmake-build" -DCMAKE_C_COMPILER="${CC%% *}" \
       -DCMAKE_PREFIX_PATH="$dest$prefix" -DCMAKE_BUILD_TYPE=Release &&
     "$CMAKE" --build "$root/cmake-build" &&
     LD_LIBRARY_PATH="$dest$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$root/cmake-build/consumer"; then
  echo "== CMake consumer: pass"
else
  echo "== CMake consumer: FAIL"; failed=1
fi

echo "== pkg-config: clstream.pc from $dest$libdir/pkgconfig"
if [ -z "${PKG_CONFIG:-}" ]; then
  echo "check-install: configure found no pkg-config"; failed=1
else
  pc="$PKG_CONFIG --define-variable=prefix=$dest$prefix"
  export PKG_CONFIG_PATH="$dest$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  if cflags=$($pc --cflags clstream) && libs=$($pc --libs clstream) &&
     echo "$CC $cflags main.c $libs" &&
     $CC -std=c11 -Wall -Wextra -Werror $cflags "$src/main.c" -o "$root/pc-consumer" $libs &&
     LD_LIBRARY_PATH="$dest$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$root/pc-consumer"; then
    echo "== pkg-config consumer: pass"
  else
    echo "== pkg-config consumer: FAIL"; failed=1
  fi
  drv=$src/../../examples/drivers
  if cflags=$($pc --cflags clstream) && libs=$($pc --libs clstream) &&
     $CC -std=c11 -Wall -Wextra -Werror $cflags "$drv/priority.c" "$drv/priority-demo.c" \
       -o "$root/pc-priority" $libs &&
     LD_LIBRARY_PATH="$dest$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$root/pc-priority"; then
    echo "== pkg-config outside driver (examples/drivers/priority.c): pass"
  else
    echo "== pkg-config outside driver (examples/drivers/priority.c): FAIL"; failed=1
  fi
fi
exit $failed
