#!/bin/sh
# `qscheme conformance DIR` over a directory of ONNX node tests that a Debian package installs
# (libonnx-testdata: tools/setup installs it). Absent, the test reports SKIP through ctest's
# SKIP_RETURN_CODE (77), never a pass. Present, the command must exit 0 and its summary must
# name the expected counts, so that no case can fail or drop out of the run silently.
# Usage: conformance_dir_test.sh QSCHEME DIR EXPECTED_SUMMARY
set -u
qscheme=$1
dir=$2
expected=$3
if [ ! -d "$dir" ]; then
  echo "SKIP: $dir is absent (Debian's libonnx-testdata; tools/setup installs it)"
  exit 77
fi
out=$("$qscheme" conformance "$dir")
status=$?
printf '%s\n' "$out" | grep -v '  skip  '
if [ "$status" -ne 0 ]; then
  echo "qscheme conformance $dir exited $status" >&2
  exit 1
fi
case "$out" in
  *"$expected"*) exit 0 ;;
esac
echo "the summary is not: $expected" >&2
exit 1
