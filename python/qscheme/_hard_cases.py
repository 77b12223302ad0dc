"""hard_cases: oracle/edge_tensors' inputs for a scheme and any shape."""

from . import _arrays, _qscheme


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
