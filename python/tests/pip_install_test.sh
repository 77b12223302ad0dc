#!/usr/bin/env bash
# `pip install .` into a new virtual environment with the system site packages, offline, from the
# build folder given (the backend's build-dir setting: no second build of the engines); then
# `import qscheme` there must be the installed copy, and it must quantize.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$1
venv=$(mktemp -d)
trap 'rm -rf "$venv"' EXIT
/usr/bin/python3 -m venv --system-site-packages "$venv"
"$venv/bin/pip" install --no-index --quiet --config-settings "build-dir=$build" "$root"
cd "$venv"
"$venv/bin/python" - "$venv" <<'PY'
import sys

import numpy as np
import qscheme

assert qscheme.__file__.startswith(sys.argv[1]), qscheme.__file__
q = qscheme.quantize(np.arange(64, dtype=np.float32).reshape(2, 32), "q8_0")
assert len(q.to_bytes()) == 68 and q.dequantize().shape == (2, 32)
from qscheme.testing import assert_matches  # noqa: F401  (the whole package was installed)
print("installed", qscheme.__file__)
PY
