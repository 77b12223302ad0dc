"""Arrays handed to the engines: float32 in C order, integer codes as int32, bytes as uint8.

A value is never changed on the way in: a float64 array is taken only when float32 holds every
value exactly, integer codes only when int32 does; anything else is an InvalidArgument naming
the argument and what to do.
"""

import numpy as np

from ._errors import ERRORS

_InvalidArgument = ERRORS["invalid-argument"]


def f32(a, name):
    """a as a C-ordered float32 array (a view when it is one already)."""
    arr = np.asarray(a)
    if arr.dtype == np.float32:
        return np.ascontiguousarray(arr)
    if arr.dtype.kind not in "fiub":
        raise _InvalidArgument(f"{name} must be a float32 array, got dtype {arr.dtype}")
    out = np.ascontiguousarray(arr, dtype=np.float32)
    back = out.astype(arr.dtype) if arr.dtype.kind != "b" else out.astype(bool)
    same = np.array_equal(back, arr, equal_nan=arr.dtype.kind == "f")
    if not same:
        raise _InvalidArgument(
            f"{name} is {arr.dtype} and float32 does not hold all its values; quantization works on float32: "
            f"convert it yourself (np.asarray({name}, dtype=np.float32)) if rounding to float32 is what you mean")
    return out


def i32(a, name):
    """Integer codes as a C-ordered int32 array."""
    arr = np.asarray(a)
    if arr.dtype.kind not in "iu":
        raise _InvalidArgument(f"{name} must be an integer array, got dtype {arr.dtype}")
    if arr.dtype == np.int32:
        return np.ascontiguousarray(arr)
    info = np.iinfo(np.int32)
    if arr.size and (arr.min() < info.min or arr.max() > info.max):
        raise _InvalidArgument(f"{name} holds values beyond int32; codes are int32 (float kinds: the bit pattern)")
    return np.ascontiguousarray(arr, dtype=np.int32)


def u32(a, name):
    """Scale bit patterns as a C-ordered uint32 array."""
    arr = np.asarray(a)
    if arr.dtype.kind not in "iu":
        raise _InvalidArgument(f"{name} must be an integer array of bit patterns, got dtype {arr.dtype}")
    if arr.size and (arr.min() < 0 or arr.max() > 0xFFFFFFFF):
        raise _InvalidArgument(f"{name} holds values beyond 32 bits")
    return np.ascontiguousarray(arr, dtype=np.uint32)


def is_bytes(a):
    return isinstance(a, (bytes, bytearray, memoryview))


def u8(a, name):
    """Serialized bytes (bytes, bytearray, memoryview) as a uint8 array, without a copy."""
    if is_bytes(a):
        return np.frombuffer(a, dtype=np.uint8)
    arr = np.asarray(a)
    if arr.dtype != np.uint8:
        raise _InvalidArgument(f"{name} must be bytes or a uint8 array, got {type(a).__name__}")
    return np.ascontiguousarray(arr).reshape(-1)


def shape(s, name="shape"):
    try:
        dims = tuple(int(d) for d in s)
    except TypeError:
        raise _InvalidArgument(f"{name} must be a sequence of extents, e.g. (4, 32)") from None
    if any(d < 0 for d in dims):
        raise _InvalidArgument(f"{name} {dims} has a negative extent")
    return dims
