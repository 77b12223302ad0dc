"""qscheme: exact, fast tensor quantization schemes (Burn's scheme model), and an oracle for
your own kernels.

    import qscheme
    q = qscheme.quantize(x, "q8_0")               # codes, scales, to_bytes(), dequantize()
    report = qscheme.check(x, my_kernel(x), "q8_0")  # the report of `qscheme check --json`

Every error is a ``qscheme.Error`` subclass named after its stable code (``qscheme.MalformedScheme``,
``qscheme.NonFiniteInput``, ...). The fast engine runs on every core (``threads=N`` to choose
for one call); the output never depends on it. The GIL is released while the engines run.
"""

import json as _json

from . import _arrays, _qscheme
from ._errors import ERRORS, Error

globals().update({cls.__name__: cls for cls in ERRORS.values()})

Quantized = _qscheme.Quantized
Scales = _qscheme.Scales

__all__ = ["Error", "Quantized", "Scales", "Report", "quantize", "dequantize", "decode", "check", "validate",
           "schemes", "recipes", "hard_cases", "HardCase", "stats", "Stats"] + [cls.__name__ for cls in ERRORS.values()]


def quantize(x, scheme=None, *, recipe=None, profile=None, engine=None, scales=None, global_scale=None,
             calibration="minmax", threads=None):
    """Quantize a float32 array; returns a :class:`Quantized` (codes, scales, global_scale,
    to_bytes(), dequantize()).

    scheme: a preset (q8_0, q4_0, nvfp4, mxfp8, mxfp4, ...) or scheme text (``q8s:block[32]=f16``);
    with ``recipe`` it defaults to the recipe's. recipe: a name from :func:`recipes` (another
    implementation's rules); profile: ``exact`` (default), ``burn`` or ``onnx`` (give one of the
    two). engine: ``fast`` or ``reference`` (bit-identical); by default the fast engine, or the
    reference for a recipe the fast engine does not run. scales/global_scale: given scales
    instead of calibration (one per block, row-major over the block grid). calibration:
    ``minmax`` or ``absmean``. threads: for this call (0: every core).
    """
    given = None if scales is None else _arrays.f32(scales, "scales").reshape(-1)
    return _qscheme.quantize(_arrays.f32(x, "x"), scheme, recipe=recipe, profile=profile, engine=engine or "",
                             scales=given, global_scale=global_scale, calibration=calibration, threads=threads)


def decode(data, scheme=None, shape=None, *, recipe=None, profile=None, byte_format=None, engine=None):
    """Serialized bytes (Burn's layout, or ggml's blocks with ``byte_format="ggml"`` or a ggml
    recipe) of a tensor of ``shape`` back to a :class:`Quantized`."""
    return _qscheme.decode(_arrays.u8(data, "data"), scheme, _arrays.shape(_required(shape, "shape")), recipe=recipe,
                           profile=profile, byte_format=byte_format, engine=engine or "")


def dequantize(q, scheme=None, shape=None, *, recipe=None, profile=None, byte_format=None, engine=None, threads=None):
    """A :class:`Quantized`, or serialized bytes with their scheme and shape, to float32 values."""
    if isinstance(q, Quantized):
        if any(a is not None for a in (scheme, shape, recipe, profile, byte_format, engine)):
            raise ERRORS["invalid-argument"]("a Quantized carries its scheme, shape and rules; give only threads")
        return q.dequantize(threads=threads)
    return _qscheme.dequantize_bytes(_arrays.u8(q, "data"), scheme, _arrays.shape(_required(shape, "shape")),
                                     recipe=recipe, profile=profile, byte_format=byte_format, engine=engine or "",
                                     threads=threads)


def validate(scheme, shape=None):
    """The canonical form of a scheme and, with a shape, its layout (blocks, scales, storage,
    bytes) as a dict; raises the scheme's error when it is not supported."""
    return _qscheme.validate(scheme, None if shape is None else list(_arrays.shape(shape)))


def schemes(*, presets=False):
    """Every tuple of the finite scheme space with its support (``scheme``, ``supported``,
    ``error``, ``message``), or with ``presets=True`` the presets and what they expand to."""
    return _qscheme.schemes(presets)


def recipes():
    """The recipes: other implementations' rules as points of the rule space, with sources."""
    return _qscheme.recipes()


class Report(dict):
    """The report of ``qscheme check --json`` (a dict with the same keys); ``identical``, and
    ``text``: the report as ``qscheme check`` prints it."""

    def __init__(self, data, text):
        super().__init__(data)
        self.text = text

    @property
    def identical(self):
        return self["result"] == "identical"

    def __str__(self):
        return self.text


def check(x, candidate, scheme=None, *, recipe=None, profile=None, calibration="minmax", scales=None,
          global_scale=None, candidate_scales=None, candidate_global=None, byte_format=None, max_shown=8,
          threads=None):
    """Compare another implementation's output for input ``x`` with the reference's under a
    profile or a recipe, bit for bit, and diagnose any difference; returns a :class:`Report`.

    candidate is one of: integer codes shaped as x (with ``candidate_scales``: the stored
    scales as values, or as bit patterns when an unsigned integer array, and ``candidate_global``
    for two levels); a tuple ``(codes, scales)`` or ``(codes, scales, global)``; a
    :class:`Quantized`; serialized bytes (``bytes``, ``bytearray``, ``memoryview``: Burn's layout,
    or ggml's blocks under ``byte_format="ggml"`` or a ggml recipe); float32 dequantized values
    shaped as x. max_shown: differing elements and blocks listed (None: all).
    """
    kw = {"codes": None, "candidate_scales": None, "candidate_scale_bits": None, "candidate_global": None,
          "bytes": None, "values": None}
    if isinstance(candidate, tuple):
        if len(candidate) not in (2, 3) or candidate_scales is not None or candidate_global is not None:
            raise ERRORS["invalid-argument"]("a tuple candidate is (codes, scales) or (codes, scales, global)")
        candidate_scales = candidate[1]
        candidate_global = candidate[2] if len(candidate) == 3 else None
        candidate = candidate[0]
    if isinstance(candidate, Quantized):
        kw["codes"] = candidate.codes
        kw["candidate_scale_bits"] = candidate.scales.bits.reshape(-1)
        kw["candidate_global"] = candidate.global_scale
    elif _arrays.is_bytes(candidate):
        kw["bytes"] = _arrays.u8(candidate, "candidate")
    else:
        arr = __import__("numpy").asarray(candidate)
        if arr.dtype.kind == "f":
            kw["values"] = _arrays.f32(arr, "candidate")
        else:
            kw["codes"] = _arrays.i32(arr, "candidate")
    if candidate_scales is not None:
        if kw["codes"] is None:
            raise ERRORS["invalid-argument"]("candidate_scales go with a codes candidate")
        s = __import__("numpy").asarray(candidate_scales)
        if s.dtype.kind == "u":
            kw["candidate_scale_bits"] = _arrays.u32(s, "candidate_scales").reshape(-1)
        else:
            kw["candidate_scales"] = _arrays.f32(s, "candidate_scales").reshape(-1)
    if candidate_global is not None:
        if kw["codes"] is None:
            raise ERRORS["invalid-argument"]("candidate_global goes with a codes candidate")
        kw["candidate_global"] = float(candidate_global)
    given = None if scales is None else _arrays.f32(scales, "scales").reshape(-1)
    text_json, text = _qscheme.check(_arrays.f32(x, "x"), scheme, recipe=recipe, profile=profile,
                                     calibration=calibration, scales=given, global_scale=global_scale,
                                     byte_format=byte_format, max_shown=max_shown, threads=threads, **kw)
    return Report(_json.loads(text_json), text)


def _required(value, name):
    if value is None:
        raise ERRORS["invalid-argument"](f"give {name}")
    return value


class Stats(list):
    """Rows of :func:`stats` (dicts: name, scheme, elements, blocks, bytes, bits_per_element,
    max_abs_error, rmse, sqnr_db (None when infinite), saturated, zero_blocks), sorted by bits per
    element; ``text`` is the table ``qscheme stats`` prints, ``figure`` the plot when one was asked for."""

    def __init__(self, rows, text, figure=None):
        super().__init__(rows)
        self.text = text
        self.figure = figure

    def __str__(self):
        return self.text


def stats(x, schemes="q8_0;q4_0;nvfp4;mxfp8;mxfp4", *, profile="exact", calibration="minmax", plot=False,
          threads=None):
    """Error statistics of each scheme on x (the figures of ``qscheme stats``).

    schemes: a list of presets or scheme texts, or one string separated by ';'. plot: True for a
    matplotlib figure of the error distribution per scheme (``result.figure``), or a file name
    to save it to; matplotlib is imported only then.
    """
    names = _qscheme.split_schemes(schemes) if isinstance(schemes, str) else list(schemes)
    xs = _arrays.f32(x, "x")
    text_json, text, values = _qscheme.stats(xs, names, profile=profile, calibration=calibration,
                                            threads=threads)
    rows = _json.loads(text_json)
    figure = None
    if plot:
        from ._plot import error_figure

        figure = error_figure(xs, rows, values)
        if isinstance(plot, (str, bytes)) or hasattr(plot, "__fspath__"):
            figure.savefig(plot)
    return Stats(rows, text, figure)


class HardCase(tuple):
    """One input of :func:`hard_cases`: ``name``, ``x`` (float32, the given shape), and the given
    ``scales`` (block grid) and ``global_scale`` for the cases that test given scales, else None."""

    __slots__ = ()

    def __new__(cls, name, x, scales, global_scale):
        return super().__new__(cls, (name, x, scales, global_scale))

    name = property(lambda self: self[0])
    x = property(lambda self: self[1])
    scales = property(lambda self: self[2])
    global_scale = property(lambda self: self[3])

    def __repr__(self):
        return f"HardCase({self.name!r}, shape={self.x.shape}, given scales={self.scales is not None})"


def hard_cases(scheme, shape, seed=0):
    """The edge-case inputs the engines are tested on, built for this scheme and any shape: ties
    after scaling for the scheme's grid, scale-rounding boundaries, saturation edges, subnormals,
    +-0, the largest and smallest f32, constant and all-zero blocks, NaN and infinities (which
    quantize rejects), given scales (valid, zero, negative, and ties against the effective scales
    they produce). Random parts are drawn from ``seed``."""
    return [HardCase(*c) for c in _qscheme.hard_cases(scheme, list(_arrays.shape(shape)), int(seed))]
