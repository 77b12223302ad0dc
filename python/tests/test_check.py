"""check returns the report `qscheme check --json` prints, for every kind of candidate."""

import json

import numpy as np
import pytest

import qscheme
from conftest import DATA


def cli_report(cli, *args):
    status, out, err = cli("check", "--json", *args)
    assert status in (0, 3), err
    return json.loads(out)


def test_codes_and_scales_as_the_command_line_reports_them(rng, cli, tmp_path):
    x = rng.standard_normal((4, 64)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    q = qscheme.quantize(x, "q8_0")
    codes = np.array(q.codes)
    codes[1, 7] += 1
    codes[3, 40] -= 2
    np.save(tmp_path / "codes.npy", codes.astype(np.int32))
    scales = ",".join(repr(float(v)) for v in q.scales.values.reshape(-1))
    want = cli_report(cli, "--scheme", "q8_0", "--input", "x.npy", "--candidate", "codes.npy", "--candidate-scales", scales)
    got = qscheme.check(x, (codes, q.scales.values), "q8_0")
    assert dict(got) == want
    assert not got.identical and got["differing_elements"] == 2
    assert got.text.startswith("DIFFERS")
    bits = qscheme.check(x, codes, "q8_0", candidate_scales=q.scales.bits)
    assert dict(bits) == want


def test_bytes_and_values_as_the_command_line_reports_them(rng, cli, tmp_path):
    x = rng.standard_normal((8, 64)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    burn = qscheme.quantize(x, "nvfp4", profile="burn")
    (tmp_path / "c.bin").write_bytes(burn.to_bytes())
    want = cli_report(cli, "--scheme", "nvfp4", "--input", "x.npy", "--candidate", "c.bin")
    got = qscheme.check(x, burn.to_bytes(), "nvfp4")
    assert dict(got) == want and got["candidate_kind"] == "bytes"
    np.save(tmp_path / "y.npy", burn.dequantize())
    want = cli_report(cli, "--scheme", "nvfp4", "--input", "x.npy", "--candidate", "y.npy", "--candidate-kind", "dequantized",
                      "--all")
    got = qscheme.check(x, burn.dequantize(), "nvfp4", max_shown=None)
    assert dict(got) == want and got["candidate_kind"] == "dequantized"


def test_a_peer_s_output_is_named(cli):
    x = np.load(DATA / "recipes" / "inputs" / "randn.npy")
    blocks = (DATA / "recipes" / "ggml-q8_0" / "randn.blocks").read_bytes()
    assert qscheme.check(x, blocks, recipe="ggml-q8_0").identical
    r = qscheme.check(x, blocks, "q8_0", byte_format="ggml")
    assert not r.identical
    assert {d["recipe"] for d in r["diagnosis"]} == {"ggml-q8_0", "ggml-q8_0-x86"}
    assert str(r) == r.text


def test_identical_candidates(rng):
    x = rng.standard_normal((2, 96)).astype(np.float32)
    for scheme in ("q8_0", "mxfp4", "nvfp4"):
        q = qscheme.quantize(x, scheme)
        for candidate in (q, q.to_bytes(), q.dequantize(), (q.codes, q.scales.values, q.global_scale)):
            assert qscheme.check(x, candidate, scheme).identical


def test_bad_candidates_are_typed_errors(rng):
    x = rng.standard_normal((2, 64)).astype(np.float32)
    with pytest.raises(qscheme.SizeMismatch):
        qscheme.check(x, np.zeros((64, 2), np.int32), "q8_0")
    with pytest.raises(qscheme.InvalidArgument, match="int32"):
        qscheme.check(x, np.full((2, 64), 2**40), "q8_0")
    with pytest.raises(qscheme.InvalidArgument, match="codes candidate"):
        qscheme.check(x, b"\0" * 10, "q8_0", candidate_scales=[1.0])
