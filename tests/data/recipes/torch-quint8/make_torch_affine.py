"""Golden data of torch-quint8 and of torch-qint8 with non-zero zero points: PyTorch 1.13 (Debian
python3-torch 1.13.1, no FBGEMM: quantize_val of AffineQuantizerBase.cpp) quantize_per_tensor and
quantize_per_channel, int_repr() codes and dequantize() values. Run from the repository root:

    /usr/bin/python3 tests/data/recipes/torch-quint8/make_torch_affine.py

It writes tests/data/recipes/inputs/affine-crafted.npy, the files of tests/data/recipes/torch-quint8/ and
the affine-* files of tests/data/recipes/torch-qint8/, and adds their cases to both cases.json. Scales
are float64 values that are exactly float32 values, so torch's (float)scale narrowing changes nothing.
"""
import json
import os

import numpy as np
import torch

D = "tests/data/recipes"
f32 = np.float32


def crafted():
    # Row 0: ties of x * f32(1 / 0.1) around zero points (k * 0.05); row 1: saturation at both ends and
    # past them; row 2: signed zeros and tiny values; rows 3-7: steps across the whole u8 and i8 range.
    r0 = np.array([k * 0.05 for k in range(-16, 16)], dtype=np.float32)
    r1 = np.array([21.7, 21.8, 21.84, 21.85, 21.9, 25.5, 1e3, 1e30, 3e38, -3.65, -3.7, -3.75, -12.8, -12.85,
                   -12.9, -1e3, -1e30, -3e38, 12.7, 12.75, 12.8, 12.85, 9.0, -9.0, 0.0, 25.6, 25.55, 25.45,
                   -25.6, 2.0 ** 40, -(2.0 ** 40), 2.0 ** 63], dtype=np.float32)
    r2 = np.array([0.0, -0.0, 1e-45, -1e-45, 1e-38, -1e-38, 0.04999, 0.05, 0.05001, -0.05, -0.04999,
                   -0.05001] + [0.0, -0.0] * 10, dtype=np.float32)
    steps = np.linspace(-30.0, 30.0, 5 * 32, dtype=np.float32).reshape(5, 32)
    return np.vstack([r0, r1, r2, steps]).astype(np.float32)


def quantize(x, scales, zps, axis, dtype):
    if axis is None:
        q = torch.quantize_per_tensor(torch.from_numpy(x), float(scales[0]), int(zps[0]), dtype)
    else:
        s = torch.from_numpy(np.asarray(scales, dtype=np.float32).astype(np.float64))
        z = torch.from_numpy(np.asarray(zps, dtype=np.int64))
        q = torch.quantize_per_channel(torch.from_numpy(x), s, z, axis, dtype)
    return q.int_repr().numpy(), q.dequantize().numpy().astype("<f4")


def main():
    randn = np.load(f"{D}/inputs/randn.npy")
    aff = crafted()
    np.save(f"{D}/inputs/affine-crafted.npy", aff)
    rng = np.random.default_rng(2930)
    rows_r = rng.uniform(0.005, 0.05, size=randn.shape[0]).astype(np.float32)
    cols_r = rng.uniform(0.005, 0.05, size=randn.shape[1]).astype(np.float32)
    rows_c = np.array([0.1, 0.1, 0.1, 0.25, 0.5, 0.125, 0.0, 2.0 ** -149], dtype=np.float32)
    for dtype, recipe, kind, lo, hi in [(torch.quint8, "torch-quint8", "u8", 0, 255),
                                        (torch.qint8, "torch-qint8", "q8f", -128, 127)]:
        mid = (lo + hi + 1) // 2
        cases = [
            ("randn-per-tensor", "randn.npy", randn, [f32(0.025)], [mid], None),
            ("crafted-per-tensor", "affine-crafted.npy", aff, [f32(0.1)], [lo + 37], None),
            ("crafted-per-tensor-high-zp", "affine-crafted.npy", aff, [f32(0.1)], [hi - 3], None),
            ("randn-per-channel-axis0", "randn.npy", randn, rows_r, rng.integers(lo, hi + 1, size=randn.shape[0]), 0),
            ("crafted-per-channel-axis0", "affine-crafted.npy", aff, rows_c,
             [lo, hi, mid, lo + 1, hi - 1, mid - 7, lo + 100, hi - 100], 0),
            ("randn-per-channel-axis1", "randn.npy", randn, cols_r, rng.integers(lo, hi + 1, size=randn.shape[1]), 1),
        ]
        folder = f"{D}/{recipe}"
        path = f"{folder}/cases.json"
        doc = json.load(open(path)) if os.path.exists(path) else {"recipe": recipe, "cases": []}
        doc["cases"] = [c for c in doc["cases"] if "given_zero_points" not in c]
        prefix = "" if recipe == "torch-quint8" else "affine-"
        for name, input_name, x, scales, zps, axis in cases:
            codes, deq = quantize(x, scales, zps, axis, dtype)
            rows, cols = x.shape
            block = "" if axis is None else (f":block[1,{cols}]=f32" if axis == 0 else f":block[{rows},1]=f32")
            stem = prefix + name
            codes_key = "codes_u8" if kind == "u8" else "codes_i8"
            codes_file = f"{stem}.codes.{'u8' if kind == 'u8' else 'i8'}"
            codes.astype(np.uint8 if kind == "u8" else np.int8).tofile(f"{folder}/{codes_file}")
            deq.tofile(f"{folder}/{stem}.deq.f32")
            doc["cases"].append({
                "name": stem, "input": input_name, "scheme": f"{kind}:affine{block}", "shape": [rows, cols],
                "given_scales": [float(s) for s in np.asarray(scales, dtype=np.float32)],
                "given_zero_points": [int(z) for z in zps],
                "expect": {codes_key: codes_file, "dequantized_f32": f"{stem}.deq.f32"},
            })
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
