"""qscheme: exact, fast tensor quantization schemes (Burn's scheme model), and an oracle for
your own kernels.

    import qscheme
    q = qscheme.quantize(x, "q8_0")               # codes, scales, to_bytes(), dequantize()
    report = qscheme.check(x, my_kernel(x), "q8_0")  # the report of `qscheme check --json`

Every error is a ``qscheme.Error`` subclass named after its stable code (``qscheme.MalformedScheme``,
``qscheme.NonFiniteInput``, ...). The fast engine runs on every core (``threads=N`` to choose
for one call); the output never depends on it. The GIL is released while the engines run.
"""

from . import _qscheme
from ._check import Report, check
from ._errors import ERRORS, Error
from ._hard_cases import HardCase, hard_cases
from ._stats import Stats, stats
from ._tensors import Quantized, decode, dequantize, quantize, recipes, schemes, validate

globals().update({cls.__name__: cls for cls in ERRORS.values()})

Scales = _qscheme.Scales
warm_up = _qscheme.warm_up

__all__ = ["Error", "Quantized", "Scales", "Report", "quantize", "dequantize", "decode", "check", "validate",
           "schemes", "recipes", "warm_up", "hard_cases", "HardCase", "stats", "Stats"] + [cls.__name__ for cls in ERRORS.values()]
