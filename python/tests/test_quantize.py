"""quantize, to_bytes, decode and dequantize against the command line and peers' golden bytes."""

import numpy as np
import pytest

import qscheme
from conftest import DATA

PRESETS = ["q8_0", "q4_0", "nvfp4", "mxfp8", "mxfp4"]


@pytest.mark.parametrize("scheme", PRESETS + ["q8s:block[4,8]=bf16", "e5m2:tensor=f32", "q4f:packed-u32(1):block[2,16]=f16"])
def test_bytes_and_values_are_the_command_line_s(scheme, rng, cli, tmp_path):
    x = (rng.standard_normal((6, 64)) * 3).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    status, _, err = cli("quantize", "--scheme", scheme, "--input", "x.npy", "--output", "q.bin")
    assert status == 0, err
    status, _, err = cli("dequantize", "--input", "q.bin", "--scheme", scheme, "--shape", "6,64", "--output", "y.npy")
    assert status == 0, err
    q = qscheme.quantize(x, scheme)
    assert q.to_bytes() == (tmp_path / "q.bin").read_bytes()
    y = q.dequantize()
    assert y.dtype == np.float32 and y.shape == x.shape
    assert y.view(np.uint32).tobytes() == np.load(tmp_path / "y.npy").view(np.uint32).tobytes()
    assert qscheme.dequantize(q.to_bytes(), scheme, x.shape).tobytes() == y.tobytes()
    back = qscheme.decode(q.to_bytes(), scheme, x.shape)
    assert np.array_equal(back.codes, q.codes) and np.array_equal(back.scales.bits, q.scales.bits)
    assert back.global_bits == q.global_bits


@pytest.mark.parametrize("scheme", PRESETS)
def test_engines_and_thread_counts_give_the_same_tensor(scheme, rng):
    x = rng.standard_normal((32, 256)).astype(np.float32)
    fast = qscheme.quantize(x, scheme, threads=1)
    for q in (qscheme.quantize(x, scheme, engine="reference"), qscheme.quantize(x, scheme, threads=0)):
        assert q.to_bytes() == fast.to_bytes()
        assert np.array_equal(q.codes, fast.codes)


def test_warm_up_changes_no_output_and_no_thread_count(rng):
    x = rng.standard_normal((16, 4096)).astype(np.float32)
    before = qscheme.quantize(x, "q8_0", threads=1).to_bytes()
    threads = qscheme._qscheme.threads()
    assert qscheme.warm_up() is None
    assert qscheme._qscheme.threads() == threads
    assert qscheme.quantize(x, "q8_0", threads=1).to_bytes() == before


@pytest.mark.parametrize("recipe", [r["name"] for r in qscheme.recipes()])
def test_recipes_run_on_the_fast_engine_where_it_runs_them_and_give_the_reference_s_tensor(recipe, rng):
    x = rng.standard_normal((8, 256)).astype(np.float32)
    scheme = _scheme_of(recipe)
    scales = None
    if recipe in ("onnx", "torch-qint8", "torch-quint8"):  # given scales only
        scales = qscheme.quantize(x, scheme).scales.values
    q = qscheme.quantize(x, scheme, recipe=recipe, scales=scales)
    reference = qscheme.quantize(x, scheme, recipe=recipe, scales=scales, engine="reference")
    assert q.engine == "fast"
    assert q.to_bytes() == reference.to_bytes()
    assert q.dequantize().tobytes() == reference.dequantize().tobytes()
    assert qscheme.dequantize(q.to_bytes(), scheme, x.shape, recipe=recipe).tobytes() == reference.dequantize().tobytes()


def test_a_call_the_fast_engine_refuses_runs_on_the_reference_unless_the_engine_was_named(rng):
    x = rng.standard_normal((8, 256)).astype(np.float32)
    q = qscheme.quantize(x, "q8_0", recipe="ggml-q8_0", calibration="absmean")  # fast: unsupported-profile
    assert q.engine == "reference"
    reference = qscheme.quantize(x, "q8_0", recipe="ggml-q8_0", calibration="absmean", engine="reference")
    assert q.to_bytes() == reference.to_bytes()
    with pytest.raises(qscheme.UnsupportedProfile):
        qscheme.quantize(x, "q8_0", recipe="ggml-q8_0", calibration="absmean", engine="fast")


def _scheme_of(recipe):
    schemes = next(r["schemes"] for r in qscheme.recipes() if r["name"] == recipe)
    first = schemes.split("; ")[0]
    return "q8s:block[32]=f32" if first == "any" else first.replace("[...]", "[32]")


@pytest.mark.parametrize("recipe, scheme", [("ggml-q8_0", "q8_0"), ("ggml-q4_0", "q4f:packed-u32(0):block[32]=f16")])
def test_ggml_recipes_reproduce_ggml_s_own_blocks(recipe, scheme):
    x = np.load(DATA / "recipes" / "inputs" / "randn.npy")
    golden = (DATA / "recipes" / recipe / "randn.blocks").read_bytes()
    q = qscheme.quantize(x, recipe=recipe)
    assert q.scheme == qscheme.validate(scheme)["scheme"]
    assert q.engine == "fast"
    assert q.to_bytes() == golden
    assert q.to_bytes(format="burn") != golden
    deq = np.fromfile(DATA / "recipes" / recipe / "randn.deq.f32", dtype="<f4").reshape(x.shape)
    assert qscheme.dequantize(golden, shape=x.shape, recipe=recipe).tobytes() == deq.tobytes()


def test_scales_are_values_and_patterns_on_the_block_grid(rng):
    x = rng.standard_normal((4, 33)).astype(np.float32)
    q = qscheme.quantize(x, "nvfp4")
    layout = qscheme.validate("nvfp4", x.shape)
    assert q.scales.bits.shape == tuple(layout["blocks_per_dim"]) == (4, 3)
    assert q.scales.bits.dtype == np.uint32 and q.scales.values.dtype == np.float32
    # ue4m3: 4 exponent bits biased by 7, 3 mantissa bits.
    b = q.scales.bits.astype(np.int64)
    e, m = b >> 3, b & 7
    want = np.where(e == 0, m / 8 * 2.0 ** -6, (1 + m / 8) * 2.0 ** (e - 7))
    assert np.array_equal(q.scales.values.astype(np.float64), want)
    assert q.global_bits == np.float32(q.global_scale).view(np.uint32)
    assert qscheme.quantize(x, "q8_0").global_scale is None


def test_given_scales_are_used_as_given(rng):
    x = rng.standard_normal((2, 64)).astype(np.float32)
    q = qscheme.quantize(x, "q8_0", scales=np.full((2, 2), 0.5, np.float32))
    assert np.all(q.scales.values == 0.5)
    assert np.array_equal(q.codes, np.clip(np.rint(x / 0.5), -127, 127))


def test_a_known_global_amax_sets_the_global_and_blocks_above_it_saturate(rng):
    x = rng.standard_normal((4, 64)).astype(np.float32)
    top = float(np.abs(x).max())
    for recipe in ("exact", "nvidia-nvfp4"):
        calibrated = qscheme.quantize(x, "nvfp4", recipe=recipe)
        same = qscheme.quantize(x, "nvfp4", recipe=recipe, global_amax=top)
        assert same.global_bits == calibrated.global_bits
        assert np.array_equal(same.codes, calibrated.codes)
        assert np.array_equal(same.scales.bits, calibrated.scales.bits)
        low = qscheme.quantize(x, "nvfp4", recipe=recipe, global_amax=top / 8)
        assert low.global_scale < calibrated.global_scale
        assert low.scales.bits.max() == 0x7E  # 448: the blocks above the amax saturate
        ref = qscheme.quantize(x, "nvfp4", recipe=recipe, global_amax=top / 8, engine="reference")
        assert np.array_equal(low.to_bytes(), ref.to_bytes())
        # check compares against the same request, and without the amax finds the global differs.
        assert qscheme.check(x, low, "nvfp4", recipe=recipe, global_amax=top / 8).identical
        assert not qscheme.check(x, low, "nvfp4", recipe=recipe).identical
    with pytest.raises(qscheme.InvalidArgument):
        qscheme.quantize(x, "q8_0", global_amax=top)
    with pytest.raises(qscheme.InvalidScale):
        qscheme.quantize(x, "nvfp4", global_amax=float("nan"))
    with pytest.raises(qscheme.UnsupportedProfile):
        qscheme.quantize(x, "nvfp4", profile="burn", global_amax=top)


def test_views_keep_their_tensor_and_are_read_only(rng):
    import gc

    x = rng.standard_normal((64, 256)).astype(np.float32)
    q = qscheme.quantize(x, "q8_0")
    want = np.array(q.codes)
    codes, bits = q.codes, q.scales.bits
    del q
    gc.collect()
    clobber = [qscheme.quantize(-x, "q8_0").to_bytes() for _ in range(4)]  # reuse freed memory, if any
    assert clobber and np.array_equal(codes, want)
    assert isinstance(codes.base, qscheme.Quantized) and isinstance(bits.base, qscheme.Quantized)
    assert not codes.flags.writeable and not bits.flags.writeable
    with pytest.raises(ValueError):
        codes[0, 0] = 1


def test_inputs_are_never_rounded_on_the_way_in():
    exact64 = np.array([[0.5, -1.25, 3.0, 0.0] * 8], dtype=np.float64)
    q = qscheme.quantize(exact64, "q8_0")
    assert q.to_bytes() == qscheme.quantize(exact64.astype(np.float32), "q8_0").to_bytes()
    with pytest.raises(qscheme.InvalidArgument, match="float32 does not hold"):
        qscheme.quantize(np.full((1, 32), 0.1, dtype=np.float64), "q8_0")
    strided = np.arange(128, dtype=np.float32).reshape(2, 64)[:, ::2]
    assert qscheme.quantize(strided, "q8_0").to_bytes() == qscheme.quantize(strided.copy(), "q8_0").to_bytes()


def test_other_python_threads_run_while_the_engine_works(rng):
    import threading
    import time

    x = rng.standard_normal((2048, 2048)).astype(np.float32)
    span = {}

    def work():
        span["start"] = time.perf_counter()
        qscheme.quantize(x, "q8_0", engine="reference", threads=1)
        span["end"] = time.perf_counter()

    worker = threading.Thread(target=work)
    ticks = []
    worker.start()
    while worker.is_alive():
        ticks.append(time.perf_counter())
    worker.join()
    quarter = (span["end"] - span["start"]) / 4
    assert quarter > 0.005
    # Holding the GIL, the call would stop this thread for its whole length.
    assert sum(span["start"] + quarter < t < span["end"] - quarter for t in ticks) > 100


def test_schemes_report_burns_space_and_the_extension_apart():
    rows = qscheme.schemes()
    burn = [r for r in rows if r["space"] == "burn"]
    extension = [r for r in rows if r["space"] == "extension"]
    assert len(burn) == 19656 and len(extension) == 1028 and len(rows) == len(burn) + len(extension)
    assert not any(r["scheme"].startswith(("u8", "u4", "u2", "i16", "u16")) or ":affine" in r["scheme"] for r in burn)
    affine = {r["scheme"]: r for r in extension}["u8:affine"]
    assert affine["supported"] and affine["error"] is None
