import os
import pathlib
import subprocess

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"


@pytest.fixture
def rng():
    return np.random.default_rng(20261205)


@pytest.fixture
def cli(tmp_path):
    """Runs the qscheme command line (QSCHEME_BIN, else build/bin/qscheme): (exit status, stdout, stderr)."""
    binary = str(pathlib.Path(os.environ.get("QSCHEME_BIN", ROOT / "build" / "bin" / "qscheme")).resolve())

    def run(*args):
        p = subprocess.run([binary, *map(str, args)], capture_output=True, text=True, cwd=tmp_path)
        return p.returncode, p.stdout, p.stderr

    return run
