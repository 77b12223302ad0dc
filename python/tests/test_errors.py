"""Every error is a typed exception with the stable code, the message and the index."""

import numpy as np
import pytest

import qscheme


def test_every_code_has_its_class():
    codes = qscheme._qscheme.error_codes()
    assert "malformed-scheme" in codes and "internal" in codes and "ok" not in codes
    for code in codes:
        cls = qscheme._errors.ERRORS[code]
        assert issubclass(cls, qscheme.Error) and cls.code == code
        assert getattr(qscheme, cls.__name__) is cls


def test_scheme_errors():
    with pytest.raises(qscheme.MalformedScheme) as e:
        qscheme.validate("q8s:block[")
    assert e.value.code == "malformed-scheme" and e.value.index is not None
    with pytest.raises(qscheme.PackedNativeUnsupported, match="use native or packed-u32"):
        qscheme.quantize(np.zeros((1, 32), np.float32), "q4s:packed-native(0)")
    with pytest.raises(qscheme.RankTooLarge):
        qscheme.validate("q8_0", (1,) * 9)


def test_data_errors_name_the_element():
    x = np.ones((2, 32), np.float32)
    x[1, 5] = np.nan
    with pytest.raises(qscheme.NonFiniteInput) as e:
        qscheme.quantize(x, "q8_0")
    assert e.value.index == 37
    assert str(e.value).startswith("non-finite-input: ")
    with pytest.raises(qscheme.SizeMismatch):
        qscheme.dequantize(b"\0" * 5, "q8_0", (2, 32))
    with pytest.raises(qscheme.InvalidScale):
        qscheme.quantize(np.ones((1, 32), np.float32), "q8_0", scales=[-1.0])


def test_argument_errors():
    x = np.ones((1, 32), np.float32)
    with pytest.raises(qscheme.InvalidArgument, match="profile and recipe"):
        qscheme.quantize(x, "q8_0", recipe="exact", profile="burn")
    with pytest.raises(qscheme.InvalidArgument, match="ggml-q8_0"):
        qscheme.quantize(x, recipe="no-such-recipe")
    with pytest.raises(qscheme.InvalidArgument, match="exact, burn or onnx"):
        qscheme.quantize(x, "q8_0", profile="fastest")
    with pytest.raises(qscheme.InvalidArgument, match="fast"):
        qscheme.quantize(x, "q8_0", engine="gpu")
    with pytest.raises(qscheme.InvalidArgument, match="256"):
        qscheme.quantize(x, "q8_0", threads=100000)
    with pytest.raises(qscheme.InvalidArgument, match="negative"):
        qscheme.quantize(x, "q8_0", threads=-1)
    with pytest.raises(qscheme.InvalidArgument, match="float32 array"):
        qscheme.quantize(np.array(["a"] * 32), "q8_0")
    with pytest.raises(qscheme.UnsupportedProfile):
        qscheme.quantize(x, "q8_0", profile="onnx")


def test_a_call_s_thread_count_ends_with_the_call():
    before = qscheme._qscheme.threads()
    other = 1 if before != 1 else 2
    with pytest.raises(qscheme.NonFiniteInput):
        qscheme.quantize(np.full((1, 32), np.inf, np.float32), "q8_0", threads=other)
    assert qscheme._qscheme.threads() == before
    qscheme.quantize(np.ones((1, 32), np.float32), "q8_0", threads=other)
    assert qscheme._qscheme.threads() == before
