"""check: another implementation's output against the reference, with the report of
`qscheme check --json` (written by the C++ side, parsed here)."""

import json

import numpy as np

from . import _arrays, _qscheme
from ._errors import ERRORS

Quantized = _qscheme.Quantized


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
          global_scale=None, global_amax=None, candidate_scales=None, candidate_global=None, byte_format=None,
          max_shown=8, threads=None):
    """Compare another implementation's output for input ``x`` with the reference's under a
    profile or a recipe, bit for bit, and diagnose any difference; returns a :class:`Report`.

    candidate is one of: integer codes shaped as x (with ``candidate_scales``: the stored
    scales as values, or as bit patterns when an unsigned integer array, and ``candidate_global``
    for two levels); a tuple ``(codes, scales)`` or ``(codes, scales, global)``; a
    :class:`Quantized`; serialized bytes (``bytes``, ``bytearray``, ``memoryview``: Burn's layout,
    or ggml's blocks under ``byte_format="ggml"`` or a ggml recipe); float32 dequantized values
    shaped as x. global_amax: the max |x| a two-level candidate's global came from, when its
    implementation knew it ahead (as for :func:`quantize`). max_shown: differing elements and
    blocks listed (None: all).
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
        arr = np.asarray(candidate)
        if arr.dtype.kind == "f":
            kw["values"] = _arrays.f32(arr, "candidate")
        else:
            kw["codes"] = _arrays.i32(arr, "candidate")
    if candidate_scales is not None:
        if kw["codes"] is None:
            raise ERRORS["invalid-argument"]("candidate_scales go with a codes candidate")
        s = np.asarray(candidate_scales)
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
                                     global_amax=global_amax, byte_format=byte_format, max_shown=max_shown, threads=threads, **kw)
    return Report(json.loads(text_json), text)
