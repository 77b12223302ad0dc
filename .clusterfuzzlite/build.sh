#!/bin/bash -eu
# ClusterFuzzLite build: a thin shim over the project's own fuzz/build.sh.
"$SRC/qscheme/fuzz/build.sh"
