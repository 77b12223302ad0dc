#!/bin/sh
# Installs qscheme from the build tree into a temporary prefix, builds examples/c_api against the
# installed CMake package (find_package(qscheme CONFIG) + qscheme::fast), runs it and checks its
# output. Usage: install_example_test.sh <cmake> <build dir> <source dir>
set -eu
CMAKE=$1
BUILD=$2
SRC=$3
TMP=$(mktemp -d "${TMPDIR:-/tmp}/qscheme_install_test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
"$CMAKE" --install "$BUILD" --prefix "$TMP/prefix" >"$TMP/install.log"
test -f "$TMP/prefix/include/qscheme/fast/qscheme.h"
# fast/ installs its public headers and nothing else.
FAST_HEADERS=$(cd "$TMP/prefix/include/qscheme/fast" && find . -type f | sort | tr '\n' ' ')
test "$FAST_HEADERS" = "./fast.hpp ./qscheme.h " || { echo "installed fast/ headers: $FAST_HEADERS"; exit 1; }
test -f "$TMP/prefix/lib/cmake/qscheme/qschemeConfig.cmake" || test -f "$TMP/prefix/lib64/cmake/qscheme/qschemeConfig.cmake"
"$CMAKE" -S "$SRC/examples/c_api" -B "$TMP/build" -DCMAKE_PREFIX_PATH="$TMP/prefix" -DCMAKE_BUILD_TYPE=Release >"$TMP/configure.log" 2>&1 ||
  { cat "$TMP/configure.log"; exit 1; }
"$CMAKE" --build "$TMP/build" >"$TMP/build.log" 2>&1 || { cat "$TMP/build.log"; exit 1; }
"$TMP/build/c_api_example" >"$TMP/out.txt"
cat "$TMP/out.txt"
grep -q '^target ' "$TMP/out.txt"
grep -q '^q8_0 bytes 68 (expected 68)$' "$TMP/out.txt"
grep -q '^elements 64 max abs error ' "$TMP/out.txt"
grep -q '^NaN input: non-finite-input at element 5$' "$TMP/out.txt"
grep -q '^message: input element 5 is NaN or infinite$' "$TMP/out.txt"
echo "install example ok"
