"""qscheme.testing finds a kernel's rounding bug, shrinks it, and passes a correct kernel;
hard_cases builds the edge-case tensors for any shape."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import qscheme
from qscheme.testing import assert_matches, shapes, tensors


def q8_0_kernel(x, rounding=np.rint, block=32):
    """q8_0 as qscheme's exact profile defines it, in numpy, as a user would write it: the scale
    amax / 127 rounded up to f16 (at most 65504), codes round(x / scale) saturated to +-127."""
    blocks = x.reshape(-1, block).astype(np.float64)
    amax = np.abs(blocks).max(axis=1, keepdims=True)
    with np.errstate(over="ignore"):
        d = (amax / 127).astype(np.float16)
        up = np.nextafter(d, np.float16(np.inf))
    d = np.where(d.astype(np.float64) * 127 < amax, up, d)
    d = np.minimum(d.astype(np.float64), 65504.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        codes = np.where(d == 0, 0, rounding(blocks / np.where(d == 0, 1, d)))
    codes = np.clip(codes, -127, 127)
    return codes.astype(np.int32).reshape(x.shape), d.reshape(x.shape[:-1] + (-1,)).astype(np.float32)


def ties_away(v):
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def test_a_correct_kernel_matches():
    assert_matches(q8_0_kernel, "q8_0", examples=25, shape=(3, 64))


def test_a_tie_rounding_bug_is_found_and_shrunk():
    with pytest.raises(AssertionError) as e:
        assert_matches(lambda x: q8_0_kernel(x, ties_away), "q8_0", examples=60, shape=(3, 64))
    text = str(e.value)
    assert "DIFFERS from recipe exact" in text
    assert "ties" in text  # the diagnosis names the rounding rule that reproduces the kernel


def test_a_known_amax_kernel_is_checked_under_the_amax_it_is_given():
    def nvfp4(x, amax):
        return qscheme.quantize(x, "nvfp4", recipe="nvidia-nvfp4", global_amax=amax).to_bytes()

    assert_matches(nvfp4, recipe="nvidia-nvfp4", examples=10, shape=(2, 32), global_amax=True)
    with pytest.raises(AssertionError) as e:  # a kernel that finds the amax itself
        assert_matches(lambda x, amax: nvfp4(x, None), recipe="nvidia-nvfp4", examples=10, shape=(2, 32),
                       global_amax=True)
    assert "global amax" in str(e.value) and "DIFFERS from recipe nvidia-nvfp4" in str(e.value)


def test_the_strategy_shrinks_to_a_small_input():
    failing = []

    @settings(max_examples=300, database=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
    @given(tensors("q8s:block[8]=f16", shape=(1, 8), hard_cases=False))
    def run(x):
        if not qscheme.check(x, q8_0_kernel(x, ties_away, block=8), "q8s:block[8]=f16").identical:
            failing.append(x)
            raise AssertionError("differs")

    with pytest.raises(AssertionError):
        run()
    smallest = failing[-1]  # hypothesis replays the shrunk input last
    # A tie needs two values besides zero: a block maximum that makes the scale a power of two,
    # and a half step under it.
    assert len(np.unique(np.abs(smallest))) <= 3, smallest


@settings(max_examples=40, database=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(shapes("nvfp4", max_rank=3))
def test_shapes_are_supported(shape):
    assert qscheme.validate("nvfp4", shape)["valid"]


@pytest.mark.parametrize("scheme, shape", [("q8_0", (3, 70)), ("nvfp4", (2, 5, 33)), ("mxfp4", (64,)),
                                           ("q8s:block[4,8]=bf16", (9, 17)), ("e4m3:tensor=f32", (7,))])
def test_hard_cases_cover_the_edges_for_any_shape(scheme, shape):
    cases = qscheme.hard_cases(scheme, shape, seed=7)
    names = [c.name for c in cases]
    for wanted in ("ties after scaling", "scale-rounding boundaries", "zero and constant blocks", "subnormals",
                   "signed zeros", "all zero", "constant", "nan", "saturation edges, given scales 1"):
        assert wanted in names
    for c in cases:
        assert c.x.shape == shape and c.x.dtype == np.float32
        if c.scales is not None:
            assert c.scales.shape == tuple(qscheme.validate(scheme, shape)["blocks_per_dim"])
    by_name = {c.name: c for c in cases}
    assert not np.any(by_name["all zero"].x)
    assert np.isnan(by_name["nan"].x).any()
    assert np.signbit(by_name["signed zeros"].x).any() and not np.any(by_name["signed zeros"].x)
    sub = by_name["subnormals"].x
    assert np.any((sub != 0) & (np.abs(sub) < np.finfo(np.float32).tiny))
    again = qscheme.hard_cases(scheme, shape, seed=7)
    assert all(np.array_equal(a.x, b.x, equal_nan=True) for a, b in zip(cases, again))


def test_ties_after_scaling_are_ties_of_the_reference():
    # Every non-anchor element of the ties case lies on, or one ulp beside, a rounding midpoint:
    # ties-away and ties-to-even disagree on some of them.
    (case,) = [c for c in qscheme.hard_cases("q8_0", (4, 64), 3) if c.name == "ties after scaling"]
    even = q8_0_kernel(case.x)[0]
    away = q8_0_kernel(case.x, ties_away)[0]
    assert np.array_equal(even, qscheme.quantize(case.x, "q8_0").codes)
    assert np.count_nonzero(even != away) > 0
