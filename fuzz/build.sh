#!/bin/bash -eu
# Builds every fuzz target the OSS-Fuzz way: the libraries with the injected $CXX/$CXXFLAGS,
# each fuzz_<what>.cpp linked with $LIB_FUZZING_ENGINE, binaries, seed corpora
# (<target>_seed_corpus.zip) and dictionaries (<target>.dict) into $OUT.
# Works under ClusterFuzzLite ($SRC/qscheme) and directly on a developer machine with those
# variables set by hand (tools/check-cflite does exactly that).
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
: "${CXX:?set CXX}" "${CXXFLAGS:?set CXXFLAGS}" "${LIB_FUZZING_ENGINE:?set LIB_FUZZING_ENGINE}" "${OUT:?set OUT}"
work="${WORK:-$OUT/../qscheme-fuzz-build}"
mkdir -p "$OUT" "$work"

cmake -S "$root" -B "$work" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_CXX_FLAGS="$CXXFLAGS" \
  -DQSCHEME_TESTS=OFF -DQSCHEME_PROPS=OFF -DQSCHEME_BENCH=OFF -DQSCHEME_TOOLS=OFF \
  -DQSCHEME_FUZZERS=ON \
  -DQSCHEME_LIB_FUZZING_ENGINE="$LIB_FUZZING_ENGINE"
cmake --build "$work" -j "$(nproc)"

for src in "$root"/fuzz/fuzz_*.cpp; do
  t="$(basename "$src" .cpp)"
  # fuzz_cli_args needs the command line (CLI11, fmt), which this image does not install.
  [ -f "$work/bin/$t" ] || { echo "fuzz/build.sh: $t not built here (it needs QSCHEME_TOOLS)"; continue; }
  cp "$work/bin/$t" "$OUT/$t"
  if [ -d "$root/fuzz/corpus/$t" ]; then
    rm -f "$OUT/${t}_seed_corpus.zip"
    (cd "$root/fuzz/corpus/$t" && zip -q -r "$OUT/${t}_seed_corpus.zip" .)
  fi
  [ -f "$root/fuzz/$t.dict" ] && cp "$root/fuzz/$t.dict" "$OUT/$t.dict"
done
echo "fuzz/build.sh: built $(ls "$OUT"/fuzz_* | grep -cv "\.\(zip\|dict\)$") targets into $OUT"
