"""The README's Python snippets, run as written, in order, in one namespace."""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_the_readme_s_python_runs(tmp_path, monkeypatch, capsys):
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert len(blocks) == 3
    monkeypatch.chdir(tmp_path)
    namespace = {}
    exec(compile(blocks[0], "README.md", "exec"), namespace)
    # The quick start's assert is the point: it fails on the planted bug, with check's report.
    with pytest.raises(AssertionError) as failed:
        exec(compile(blocks[1], "README.md", "exec"), namespace)
    assert str(failed.value).startswith("DIFFERS from recipe exact")
    assert namespace["report"]["differing_elements"] == 24
    exec(compile(blocks[2], "README.md", "exec"), namespace)
    out = capsys.readouterr().out
    assert [line.split()[0] for line in out.splitlines()] == ["mxfp4", "q4_0", "nvfp4", "mxfp8", "q8_0"]
