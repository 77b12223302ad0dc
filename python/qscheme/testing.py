"""Test your own quantization kernel against qscheme's reference, in pytest.

    from qscheme.testing import assert_matches
    assert_matches(my_q8_0_kernel, "q8_0")

``kernel(x)`` takes a float32 array and returns what :func:`qscheme.check` takes as a candidate:
integer codes with their scales as a tuple ``(codes, scales)`` or ``(codes, scales, global)``,
serialized bytes (``bytes``), a :class:`qscheme.Quantized`, or float32 dequantized values.

:func:`tensors` is a hypothesis strategy of inputs for a scheme (qscheme's edge-case tensors for
the drawn shape, and arbitrary finite float32 arrays); hypothesis shrinks a failing input to a
small one. Inputs quantize rejects (NaN, infinities) and the edge cases with given scales are
left out: ``kernel(x)`` calibrates its own scales.
"""

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import qscheme

__all__ = ["assert_matches", "shapes", "tensors"]


def _block(scheme, rank):
    """The scheme's block extents expanded to `rank` (1s where it has none)."""
    probe = qscheme.validate(scheme, (64,) * rank)
    return tuple(b if b < 64 else 1 for b in probe["block"])


def shapes(scheme, *, min_rank=1, max_rank=2, max_blocks=3):
    """Shapes the scheme supports: each extent up to `max_blocks` blocks, partial blocks included."""
    canonical = qscheme.validate(scheme)["scheme"]

    @st.composite
    def shape(draw):
        rank = draw(st.integers(min_rank, max_rank))
        extents = tuple(draw(st.integers(1, max(2, b * max_blocks))) for b in _block(canonical, rank))
        try:
            qscheme.validate(canonical, extents)
        except qscheme.Error:
            assume(False)
        return extents

    return shape()


def _finite(x):
    return bool(np.isfinite(x).all())


@st.composite
def _hard_case(draw, scheme, shape):
    seed = draw(st.integers(0, 2**32 - 1))
    cases = [c for c in qscheme.hard_cases(scheme, shape, seed) if c.scales is None and _finite(c.x)]
    return draw(st.sampled_from(cases)).x


# The largest values of the kinds (q8, q4, e4m3, e2m1, e5m2): a block maximum there makes the
# scale 1 (or a power of two), and quarter steps under it then fall on rounding ties.
_TOPS = [127.0, 7.0, 448.0, 6.0, 57344.0]


@st.composite
def _on_grid(draw, shape):
    top = draw(st.sampled_from(_TOPS))
    step = draw(st.integers(-8, 8))
    elements = st.one_of(st.integers(-4 * int(top), 4 * int(top)).map(lambda k: k / 4), st.sampled_from([top, -top]))
    return draw(hnp.arrays(np.float32, shape, elements=elements)) * np.float32(2.0**step)


def tensors(scheme, shape=None, *, hard_cases=True, **shape_options):
    """Float32 inputs for the scheme: finite arrays (quarter steps up to one of the kinds'
    largest values, times a power of two; or any float), which hypothesis shrinks element by
    element, or with
    `hard_cases` one of qscheme's edge-case tensors (which it cannot shrink), of `shape` or of a
    drawn one (:func:`shapes`)."""
    canonical = qscheme.validate(scheme)["scheme"]
    shape_strategy = st.just(tuple(shape)) if shape is not None else shapes(canonical, **shape_options)
    anything = st.floats(allow_nan=False, allow_infinity=False, width=32)

    def for_shape(s):
        plain = st.one_of(_on_grid(s), hnp.arrays(np.float32, s, elements=anything))
        return st.one_of(plain, _hard_case(canonical, s)) if hard_cases else plain

    return shape_strategy.flatmap(for_shape)


def _recipe_scheme(recipe):
    """The recipe's default scheme (a profile has none: it takes any)."""
    for r in qscheme.recipes():
        if r["name"] == recipe:
            first = r["schemes"].split("; ")[0]
            if first != "any":
                return first
    raise qscheme.InvalidArgument(f"give a scheme: recipe {recipe!r} does not name one")


# A known global amax as a share of the input's own max |x|: itself (the calibrated tensor), below
# it (blocks above it saturate), 0 (every non-zero block saturates) and above it.
_AMAX_SHARES = (1.0, 0.5, 1.0 / 3.0, 1.0 / 64.0, 0.0, 2.0)


def _amax(x, share):
    """share times x's max |x|, an f32 (twice the largest f32 is the largest f32)."""
    return float(np.float32(min(float(np.abs(x).max(initial=0.0)) * share, float(np.finfo(np.float32).max))))


def _check(kernel, x, scheme, recipe, profile, max_shown, amax=None):
    candidate = kernel(x) if amax is None else kernel(x, amax)
    return qscheme.check(x, candidate, scheme, recipe=recipe, profile=profile, global_amax=amax, max_shown=max_shown)


def assert_matches(kernel, scheme=None, *, recipe=None, profile=None, examples=200, shape=None, seed=0,
                   max_shown=8, global_amax=False):
    """Fails (AssertionError with check's report) unless ``kernel(x)`` equals the reference's
    output under the profile or recipe, bit for bit: first on every edge-case tensor for a few
    shapes (or `shape`), then on `examples` inputs from :func:`tensors`, shrunk to a small one
    by hypothesis when one fails (the edge cases were run before, whole).

    global_amax=True: a two-level kernel (nvfp4) that takes the tensor's max |x| known ahead,
    called as ``kernel(x, amax)`` and checked under the same amax (docs/SEMANTICS.md section 4.1):
    each edge case under its own max |x|, a half, a third and 1/64 of it, 0 and twice it; the
    drawn inputs under one of these."""
    canonical = qscheme.validate(scheme if scheme is not None else _recipe_scheme(recipe))["scheme"]
    if shape is not None:
        fixed = [tuple(shape)]
    else:
        rows, cols = _block(canonical, 2)
        fixed = [(2 * rows, 4 * cols), (2 * rows + 1, 2 * cols + 3)]  # whole blocks; partial ones
    for s in fixed:
        for case in qscheme.hard_cases(canonical, s, seed):
            if case.scales is not None or not _finite(case.x):
                continue
            for amax in [_amax(case.x, share) for share in _AMAX_SHARES] if global_amax else [None]:
                report = _check(kernel, case.x, canonical, recipe, profile, max_shown, amax)
                if not report.identical:
                    under = "" if amax is None else f", global amax {amax!r}"
                    raise AssertionError(f"{canonical}, edge case '{case.name}', shape {s}{under}:\n{report.text}")

    @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
    @given(tensors(canonical, shape, hard_cases=False), st.sampled_from(_AMAX_SHARES) if global_amax else st.just(1.0))
    def matches(x, share):
        amax = _amax(x, share) if global_amax else None
        report = _check(kernel, x, canonical, recipe, profile, max_shown, amax)
        under = "" if amax is None else f", global amax {amax!r}"
        assert report.identical, f"{canonical}, shape {x.shape}{under}:\n{report.text}"

    matches()
