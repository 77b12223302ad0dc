"""stats: the figures recomputed with numpy from each scheme's dequantized values, the command
line's JSON, the order and the plot."""

import json

import numpy as np
import pytest

import qscheme

SCHEMES = "q8_0;q4_0;nvfp4;mxfp8;mxfp4"


def independent(x, name, calibration):
    q = qscheme.quantize(x, name, calibration=calibration)
    y = q.dequantize().astype(np.float64)
    x64 = x.astype(np.float64)
    err = y - x64
    layout = qscheme.validate(name, x.shape)
    blocks = y.reshape(x.shape[0], -1, layout["block"][-1])
    codes = q.codes.astype(np.int64)
    if name == "q8_0":
        extreme = np.abs(codes) == 127
    elif name == "q4_0":
        extreme = np.abs(codes) == 7  # q4s is -7..7
    elif name == "mxfp8":
        extreme = (codes & 0x7F) == 0x7E  # e4m3's 448
    else:
        extreme = (codes & 0x7) == 0x7  # e2m1's 6
    return {
        "bits_per_element": layout["bytes"] * 8 / x.size,
        "max_abs_error": np.abs(err).max(),
        "rmse": np.sqrt(np.mean(err**2)),
        "sqnr_db": 10 * np.log10(np.sum(x64**2) / np.sum(err**2)),
        "saturated": np.mean(extreme & (np.abs(x64) > np.abs(y))),
        "zero_blocks": np.mean(np.all(blocks == 0, axis=-1)),
    }


@pytest.mark.parametrize("calibration", ["minmax", "absmean"])
def test_figures_are_what_numpy_computes_from_the_values(rng, calibration):
    x = (rng.standard_normal((64, 256)) * np.exp(rng.standard_normal((64, 1)))).astype(np.float32)
    x[3] = 0
    x[5, :64] = 0
    rows = qscheme.stats(x, SCHEMES, calibration=calibration)
    assert [r["name"] for r in rows] == ["mxfp4", "q4_0", "nvfp4", "mxfp8", "q8_0"]
    assert [r["bits_per_element"] for r in rows] == sorted(r["bits_per_element"] for r in rows)
    for r in rows:
        want = independent(x, r["name"], calibration)
        assert r["bits_per_element"] == want["bits_per_element"]
        assert r["max_abs_error"] == want["max_abs_error"]
        for key in ("rmse", "sqnr_db"):
            assert r[key] == pytest.approx(want[key], rel=1e-12)
        assert r["saturated"] == want["saturated"]
        assert r["zero_blocks"] == want["zero_blocks"]
    # Rows 3 and the first 64 elements of row 5 are zero; mxfp8 and mxfp4 have 32-blocks, 8 per row.
    assert {r["name"]: r["zero_blocks"] for r in rows}["mxfp8"] == 10 / (64 * 8)
    if calibration == "absmean":
        assert all(r["saturated"] > 0.05 for r in rows)
    else:
        assert all(r["saturated"] == 0 for r in rows)


def test_the_command_line_prints_the_same_rows(rng, cli, tmp_path):
    x = rng.standard_normal((16, 128)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    status, out, err = cli("stats", "--input", "x.npy", "--schemes", SCHEMES, "--json")
    assert status == 0, err
    assert json.loads(out) == list(qscheme.stats(x, SCHEMES.split(";")))
    status, text, _ = cli("stats", "--input", "x.npy", "--schemes", SCHEMES)
    assert status == 0 and text == qscheme.stats(x).text
    status, _, err = cli("stats", "--input", "x.npy", "--schemes", "q8_0;bogus")
    assert status == 2 and "malformed-scheme: scheme 'bogus'" in err


def test_an_exact_tensor_has_no_finite_sqnr():
    x = np.zeros((2, 32), np.float32)
    x[0, 0] = 127.0
    (row,) = qscheme.stats(x, ["q8_0"])
    assert row["rmse"] == 0 and row["sqnr_db"] is None and row["zero_blocks"] == 0.5


def test_errors_name_the_scheme():
    with pytest.raises(qscheme.NonFiniteInput, match="scheme 'q4_0'"):
        qscheme.stats(np.full((1, 32), np.nan, np.float32), "q4_0")


def test_the_plot_is_drawn_only_when_asked(rng, tmp_path):
    import subprocess
    import sys

    probe = "import sys, numpy as np, qscheme; qscheme.stats(np.ones((2, 64), np.float32)); print('matplotlib' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip() == "False"
    x = rng.standard_normal((8, 64)).astype(np.float32)
    rows = qscheme.stats(x, "q8_0;mxfp4", plot=tmp_path / "errors.png")
    assert (tmp_path / "errors.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    labels = [t.get_text() for t in rows.figure.axes[0].get_legend().get_texts()]
    assert [label.split()[0] for label in labels] == ["mxfp4", "q8_0"]
