"""Tensors in and out of the engines: quantize, decode, dequantize, and the scheme space."""

from . import _arrays, _qscheme
from ._errors import ERRORS

Quantized = _qscheme.Quantized


def quantize(x, scheme=None, *, recipe=None, profile=None, engine=None, scales=None, global_scale=None,
             global_amax=None, calibration="minmax", threads=None):
    """Quantize a float32 array; returns a :class:`Quantized` (codes, scales, global_scale,
    to_bytes(), dequantize()).

    scheme: a preset (q8_0, q4_0, nvfp4, mxfp8, mxfp4, ...) or scheme text (``q8s:block[32]=f16``);
    with ``recipe`` it defaults to the recipe's. recipe: a name from :func:`recipes` (another
    implementation's rules); profile: ``exact`` (default), ``burn`` or ``onnx`` (give one of the
    two). engine: ``fast`` or ``reference`` (bit-identical); by default the fast engine, and the
    reference for a call the fast engine refuses (unsupported-profile: an option it does not run
    under that recipe, such as absmean calibration). scales/global_scale: given scales
    instead of calibration (one per block, row-major over the block grid). global_amax: for a
    two-level scheme (nvfp4), the max |x| its global scale follows from, known ahead (static
    calibration, delayed scaling); the block scales still follow the data, in one pass, and blocks
    above it saturate. calibration: ``minmax`` or ``absmean``. threads: for this call (0: every
    core).
    """
    given = None if scales is None else _arrays.f32(scales, "scales").reshape(-1)
    return _qscheme.quantize(_arrays.f32(x, "x"), scheme, recipe=recipe, profile=profile, engine=engine or "",
                             scales=given, global_scale=global_scale, global_amax=global_amax,
                             calibration=calibration, threads=threads)


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
    """Every tuple of the finite scheme space with its support (``scheme``, ``space``: ``"burn"``
    for Burn's tuples or ``"extension"`` for qscheme's extension beyond Burn, ``supported``,
    ``error``, ``message``), or with ``presets=True`` the presets and what they expand to."""
    return _qscheme.schemes(presets)


def recipes():
    """The recipes: other implementations' rules as points of the rule space, with sources."""
    return _qscheme.recipes()


def _required(value, name):
    if value is None:
        raise ERRORS["invalid-argument"](f"give {name}")
    return value
