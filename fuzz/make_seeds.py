#!/usr/bin/env python3
"""Writes the seed corpora of fuzz_differential, fuzz_decode_bytes, fuzz_npy, fuzz_qjson and fuzz_c_api into
fuzz/corpus/<target>/ from Burn's golden vectors (tests/data/burn-golden.json) and hand-picked
edge cases, and fuzz_differential's also from the edge-case inputs every engine comparison iterates
(oracle/edge_tensors.hpp, printed by the build's fuzz_edge_seeds). Run once after changing an input
layout or that list, then commit the files:
  python3 fuzz/make_seeds.py [--edge-seeds build/bin/fuzz_edge_seeds]
The input layouts are the ones documented in fuzz/fuzz_tensor.h and fuzz/fuzz_c_api.cpp."""
import json
import os
import re
import shutil
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "..", "tests", "data", "burn-golden.json")
EDGE_SEEDS = os.path.join(HERE, "..", "build", "bin", "fuzz_edge_seeds")

VALUES = ["q8f", "q8s", "q4f", "q4s", "q2f", "q2s", "e4m3", "e5m2", "e2m1", "u8", "u4", "u2", "i16", "u16"]
DTYPES = ["f32", "f16", "bf16", "ue8m0", "ue4m3"]
PRESETS = {  # scheme/text.cpp presets, canonical expansions
    "q8_0": "q8s:block[32]=f16",
    "q4_0": "q4s:packed-u32(0):block[32]=f16",
    "mxfp8": "e4m3:block[32]=ue8m0",
    "mxfp8-e5m2": "e5m2:block[32]=ue8m0",
    "mxfp4": "e2m1:packed-native(0):block[32]=ue8m0",
    "nvfp4": "e2m1:packed-native(0):block[16]=ue4m3:tensor=f32",
}


def scheme_binary(text):
    """The 13-byte tail field: scheme/binary.hpp encoding of a scheme text, zero-padded."""
    text = PRESETS.get(text, text)
    parts = text.split(":")
    value = VALUES.index(parts[0])
    kind, dim, mode, tensor, block, extents, axis_dim = 0, 0, 0, 0, 0, [], None
    for f in parts[1:]:
        if f == "native":
            kind = 0
        elif f == "sym":
            mode = 0
        elif f == "lookup":
            mode = 1
        elif f == "affine":
            mode = 2
        elif m := re.fullmatch(r"axis\((\d+)\)=(\w+)", f):
            axis_dim = int(m[1])
            block = 1 + DTYPES.index(m[2])
        elif m := re.fullmatch(r"packed-native\((\d+)\)", f):
            kind, dim = 1, int(m[1])
        elif m := re.fullmatch(r"packed-u32\((\d+)\)", f):
            kind, dim = 2, int(m[1])
        elif m := re.fullmatch(r"tensor=(\w+)", f):
            tensor = 1 + DTYPES.index(m[1])
        elif m := re.fullmatch(r"block\[([\d,]+)\]=(\w+)", f):
            extents = [int(e) for e in m[1].split(",")]
            while len(extents) > 1 and extents[0] == 1:
                extents.pop(0)
            block = 1 + DTYPES.index(m[2])
        else:
            raise ValueError(f"cannot encode scheme field {f!r}")
    if axis_dim is not None:  # per-axis: the dtype in byte 6, 0x80 + D in byte 7, no extents
        b = bytes([1, value, kind, dim, mode, tensor, block, 0x80 + axis_dim])
        return b + bytes(13 - len(b))
    b = bytes([1, value, kind, dim, mode, tensor, block, len(extents) if block else 0] + (extents if block else []))
    return b + bytes(13 - len(b))


def dim_byte(d):
    assert 0 <= d < 255 or d == 1 << 40, d
    return 255 if d == 1 << 40 else d


def tensor_tail(scheme, shape, flags=0, target=0):
    """fuzz/fuzz_tensor.h tail: scheme(13) rank dims(5) flags target."""
    dims = [dim_byte(d) for d in shape] + [0] * (5 - len(shape))
    return scheme_binary(scheme) + bytes([len(shape)] + dims + [flags, target])


def f32s(xs):
    return b"".join(struct.pack("<f", x) for x in xs)


def f32_bits(bits):
    return b"".join(struct.pack("<I", b) for b in bits)


class Out:
    def __init__(self, target):
        self.dir = os.path.join(HERE, "corpus", target)
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        self.names = set()

    def put(self, name, data):
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
        assert name not in self.names, name
        self.names.add(name)
        assert len(data) <= 8192, (name, len(data))
        with open(os.path.join(self.dir, name), "wb") as f:
            f.write(data)


def golden():
    with open(GOLDEN) as f:
        return json.load(f)["vectors"]


# Flags of fuzz_differential.
BURN, ABSMEAN, GIVEN, NARROW, GIVEN_OFF, GLOBAL_TOGGLE, NARROW_SCALES, EXTRA = (1 << i for i in range(8))
# Flags of fuzz_decode_bytes: with RECIPE, bits 4-7 pick a recipe's point: ggml's
# (GGML_RECIPES[(flags >> 4) % 4] for 0 to 2) or nvidia-nvfp4's (3).
FIT = 1 << 1
GGML = 1 << 2
RECIPE = 1 << 3
GGML_RECIPES = [("ggml-q8_0", "q8_0"), ("ggml-q8_0-x86", "q8_0"), ("ggml-q4_0", "q4f:packed-u32(0):block[32]=f16")]
RECIPES_DIR = os.path.join(HERE, "..", "tests", "data", "recipes")


# One scheme of each kind of value, store and scale level for the edge-case inputs.
EDGE_INPUT_CASES = [
    ("q8s", [64]), ("q4s:packed-u32(0):block[32]=f16", [2, 32]), ("q2f:packed-u32(1):block[4,4]=f32", [8, 8]),
    ("e4m3:block[32]=ue8m0", [64]), ("e5m2:block[16]=bf16", [4, 16]), ("nvfp4", [64]),
    ("q8s:block[4]=ue4m3:tensor=f32", [8, 8]),
]


def edge_inputs(out, tool):
    """Each edge-case input as it comes from oracle/edge_tensors.hpp, exact and burn by turns."""
    for scheme, shape in EDGE_INPUT_CASES:
        lines = subprocess.run([tool, scheme] + [str(d) for d in shape], check=True, capture_output=True,
                               text=True).stdout.splitlines()
        tag = scheme.replace(":", "_")
        for j, line in enumerate(lines):
            name, given, payload = line.split("\t")
            flags = (GIVEN if given == "1" else 0) | (BURN if j % 2 else 0)
            out.put(f"edge_input_{tag}_{name}", bytes.fromhex(payload) + tensor_tail(scheme, shape, flags, target=j % 4))


# Schemes the recipes take (scheme/recipes.cpp), for the recipe seeds.
RECIPE_SCHEMES = [("mxfp8", [2, 32]), ("mxfp8-e5m2", [64]), ("mxfp4", [2, 32]), ("nvfp4", [2, 16]),
                  ("q8_0", [64]), ("q4s:packed-u32(0):block[32]=f16", [2, 32]), ("q8f:block[32]=f32", [2, 32]),
                  ("q4f:packed-u32(0):block[32]=f16", [2, 32])]


def recipe_seeds(out):
    """Each recipe (the target byte's high nibble k picks recipes()[(k - 1) % count]) over the
    schemes recipes take; the target skips a recipe that does not take the scheme. Block maxima at
    powers of two, an ulp below, the half-up points of torchao's EVEN scale and f32's largest."""
    tops = [0x3F800000, 0x3F7FFFFF, 0x40400000, 0x3FF00000, 0x3FEFFFFF, 0x7F7FFFFF, 0x00400000, 0x42E00000]
    for scheme, shape in RECIPE_SCHEMES:
        n = 1
        for d in shape:
            n *= d
        bits = []
        for i in range(n):
            top = tops[(i // 16) % len(tops)]
            bits.append((top if i % 5 == 0 else top >> 1 if top > 0x00800000 else top // 3) | (0x80000000 if i % 2 else 0))
        tag = scheme.replace(":", "_")
        for k in range(1, 16):
            out.put(f"recipe_{k:02d}_{tag}", f32_bits(bits) + tensor_tail(scheme, shape, 0, (k << 4) | (k % 4)))


def te_nvfp4_given_seeds(out):
    """nvidia-nvfp4 (recipes()[9], nibble 10) over given scales: TE's own for a block of 6 (448 and
    f32(1 / 448)), a scale on a midpoint of e4m3's grid, and a global of f32 max, whose product
    with 448 overflows f32."""
    x = [6.0, 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, -0.25, -0.75, -1.25, -1.75, -2.5, -3.5, -5.0, -0.0]
    k = 10 << 4
    for tag, scales, glob in [("te", [448.0, 448.0], 0x3B124925), ("midpoint", [12.5, 0.0], 0x3B124925),
                              ("product_overflow", [1.0, 448.0], 0x7F7FFFFF)]:
        out.put(f"recipe_10_nvfp4_given_{tag}", f32s(x + x) + f32s(scales) + f32_bits([glob]) +
                tensor_tail("nvfp4", [2, 16], GIVEN, k | 1))


def global_amax_seeds(out):
    """A known global amax (GIVEN_OFF without GIVEN): the data's own max |x| (GLOBAL_TOGGLE), a
    quarter of it as a raw f32 after the data (blocks saturate), and 0 as a narrow scale byte; under
    the exact profile and nvidia-nvfp4 (nibble 10)."""
    ramp = [(i % 23 - 11) * 0.61 for i in range(128)]
    quarter = max(abs(v) for v in ramp) / 4
    for scheme, shape in [("nvfp4", [2, 64]), ("q8s:block[4]=ue4m3:tensor=f32", [8, 16]),
                          ("e4m3:block[32]=ue4m3:tensor=f32", [4, 32])]:
        tag = scheme.replace(":", "_")
        for k in (0, 10):
            target = (k << 4) | 1
            out.put(f"global_amax_{k:02d}_{tag}_own", f32s(ramp) + tensor_tail(scheme, shape, GIVEN_OFF | GLOBAL_TOGGLE, target))
            out.put(f"global_amax_{k:02d}_{tag}_quarter", f32s(ramp) + f32s([quarter]) + tensor_tail(scheme, shape, GIVEN_OFF, target))
            out.put(f"global_amax_{k:02d}_{tag}_zero", f32s(ramp) + bytes([0]) + tensor_tail(scheme, shape, GIVEN_OFF | NARROW_SCALES, target))


def differential(vectors, edge_tool):
    out = Out("fuzz_differential")
    edge_inputs(out, edge_tool)
    recipe_seeds(out)
    te_nvfp4_given_seeds(out)
    global_amax_seeds(out)
    for v in vectors:
        if v["op"] not in ("quantize", "quantize_given"):
            continue
        for pi, prof in enumerate(v["profiles"]):
            flags = BURN if prof == "burn" else 0
            payload = f32s(v["input"])
            if v["op"] == "quantize_given":
                flags |= GIVEN
                payload += f32s(v["given_scales"])
                if v.get("given_global") is not None:
                    payload += f32s([v["given_global"]])
            out.put(f"golden_{v['name']}_{prof}", payload + tensor_tail(v["scheme"], v["shape"], flags, target=pi))
    ramp = [(i % 17 - 8) * 0.37 for i in range(64)]
    narrow = bytes((i * 37 + 11) & 0xFF for i in range(64))
    cases = [
        ("q8s", [64]), ("q8f", [8, 8]), ("q4s:packed-u32(0):block[32]=f16", [2, 32]),
        ("q4f:packed-u32(0):block[8]=bf16", [64]), ("q2s:packed-u32(0):block[4]=f32", [4, 16]),
        ("q2f:packed-u32(1):block[4,4]=f32", [8, 8]), ("e4m3:block[32]=ue8m0", [64]),
        ("e5m2:block[16]=f16", [4, 16]), ("e2m1:packed-native(0):block[16]=ue4m3", [64]),
        ("nvfp4", [64]), ("mxfp4", [2, 32]), ("q8_0", [64]), ("q8s:block[4]=ue4m3:tensor=f32", [8, 8]),
        ("q4s:block[2,2,2]=f16", [4, 4, 4]), ("q8s:block[3]=f32", [2, 2, 2, 2, 4]),
    ]
    for scheme, shape in cases:
        tag = scheme.replace(":", "_")
        out.put(f"edge_{tag}_raw", f32s(ramp) + tensor_tail(scheme, shape, 0, 0))
        out.put(f"edge_{tag}_narrow_burn", narrow + tensor_tail(scheme, shape, NARROW | BURN, 1))
        out.put(f"edge_{tag}_absmean", narrow + tensor_tail(scheme, shape, NARROW | ABSMEAN, 2))
        out.put(f"edge_{tag}_given", narrow + bytes(range(0x60, 0xA0)) + tensor_tail(scheme, shape, NARROW | GIVEN | NARROW_SCALES, 3))
    out.put("edge_rank0", f32s([2.5]) + tensor_tail("q8s", [], 0))
    out.put("edge_empty_dim", tensor_tail("q8s:block[4]=f32", [0, 4], 0))
    out.put("edge_nan", f32_bits([0x3F800000, 0x7FC00000, 0, 0]) + tensor_tail("q8s", [4], 0))
    out.put("edge_inf", f32_bits([0x7F800000, 0, 0, 0]) + tensor_tail("e4m3:block[4]=f32", [4], 0))
    out.put("edge_subnormal", f32_bits([1, 0x80000001, 0x00800000, 0]) + tensor_tail("q8s:block[2]=f32", [4], 0))
    out.put("edge_max_float", f32_bits([0x7F7FFFFF, 0xFF7FFFFF, 1, 0]) + tensor_tail("q8s", [4], BURN))
    out.put("edge_all_zero", bytes(32) + tensor_tail("e2m1:packed-u32(0):block[8]=ue8m0", [8], 0))
    out.put("edge_zero_scale", f32s([1, 0, 0, 0]) + f32s([0.0]) + tensor_tail("q8s", [4], GIVEN))
    out.put("edge_negative_scale", f32s([1, 0, 0, 0]) + f32s([-1.0]) + tensor_tail("q8s", [4], GIVEN))
    out.put("edge_given_count_off", f32s([1, 2, 3, 4]) + f32s([0.5, 0.5]) + tensor_tail("q8s", [4], GIVEN | GIVEN_OFF))
    out.put("edge_global_missing", narrow + tensor_tail("nvfp4", [16], NARROW | GIVEN | NARROW_SCALES | GLOBAL_TOGGLE))
    out.put("edge_extra_element", narrow + tensor_tail("q8s", [8], NARROW | EXTRA))
    out.put("edge_huge_dim", narrow + tensor_tail("q8s", [1 << 40, 1 << 40], NARROW))
    out.put("edge_packing_dim_out_of_range", narrow + tensor_tail("q4s:packed-u32(3)", [4, 4], NARROW))
    out.put("edge_block_rank_exceeds", narrow + tensor_tail("q8s:block[2,2]=f32", [4], NARROW))
    out.put("edge_lookup", narrow + tensor_tail("q8s:lookup", [4], NARROW))
    out.put("edge_two_level_bad", narrow + tensor_tail("q8s:block[4]=f32:tensor=f32", [8], NARROW))
    out.put("edge_burn_absmean_two_level", narrow + tensor_tail("nvfp4", [32], NARROW | BURN | ABSMEAN))
    return out


def decode_bytes(vectors):
    out = Out("fuzz_decode_bytes")
    for v in vectors:
        if v["op"] == "pack":
            # words, then one f32 tensor scale of 1.0
            payload = struct.pack(f"<{len(v['words'])}I", *v["words"]) + f32s([1.0])
            out.put(f"golden_{v['name']}", payload + tensor_tail(v["scheme"], v["shape"], 0))
            out.put(f"golden_{v['name']}_burn_target", payload + tensor_tail(v["scheme"], v["shape"], 1, 1))
        elif v["op"] in ("quantize", "quantize_given", "dequantize") and v["scheme"] == "q8s":
            codes = bytes(c & 0xFF for c in v["codes"])
            out.put(f"golden_{v['name']}", codes + f32s(v["block_scales"]) + tensor_tail("q8s", v["shape"], 0))
        elif v["op"] == "quantize_given" and v["scheme"].startswith(("e4m3", "e5m2")) and v["block_scales"]:
            codes = bytes(c & 0xFF for c in v["codes"])
            out.put(f"golden_{v['name']}", codes + f32s(v["block_scales"]) + tensor_tail(v["scheme"], v["shape"], 0))
    pattern = bytes((i * 53 + 7) & 0xFF for i in range(96))
    schemes = [
        ("q8s:block[4]=f32", [16]), ("q8f:block[4]=f16", [4, 4]), ("q4s:packed-u32(0):block[8]=f16", [2, 8]),
        ("q4f:packed-u32(1):block[4,4]=bf16", [8, 4]), ("q2s:packed-u32(0)", [5]), ("e4m3:block[8]=ue8m0", [16]),
        ("e5m2:block[8]=ue4m3", [16]), ("e2m1:packed-native(0):block[4]=ue4m3", [16]), ("nvfp4", [32]),
        ("mxfp4", [32]), ("q8s:block[4]=ue4m3:tensor=f32", [8]), ("q4s:packed-native(0)", [4]),
        # qscheme's extension: its kinds, affine mode's zero points after the scales, per-axis scales.
        ("u8:affine", [8]), ("q8s:affine:block[4]=f32", [8]), ("u4:affine:packed-u32(0):block[8]=f16", [16]),
        ("i16:affine:block[2]=f32", [4]), ("u16:affine", [4]), ("u8:affine:axis(0)=f32", [3, 2]),
        ("q4f:axis(1)=f16", [2, 4]), ("u2:affine:axis(1)=bf16", [3, 4]),
    ]
    for scheme, shape in schemes:
        tag = scheme.replace(":", "_")
        out.put(f"fit_{tag}_zeros", tensor_tail(scheme, shape, FIT))
        out.put(f"fit_{tag}_pattern", pattern + tensor_tail(scheme, shape, FIT, 2))
        out.put(f"fit_{tag}_ff", b"\xff" * 64 + tensor_tail(scheme, shape, FIT | 1, 3))
    out.put("short", b"\x01\x02" + tensor_tail("q8s", [4], 0))
    out.put("long", bytes(64) + tensor_tail("q8s", [4], 0))
    out.put("huge_dim", bytes(8) + tensor_tail("q8s", [1 << 40, 1 << 40], FIT))
    out.put("empty_shape", f32s([1.0]) + tensor_tail("q8s:block[4]=f32", [0, 4], 0))
    out.put("rank0", b"\x7f" + f32s([0.5]) + tensor_tail("q8s", [], 0))
    out.put("nan_scale", bytes(4) + f32_bits([0x7FC00000]) + tensor_tail("q8s", [4], 0))
    out.put("neg_scale", bytes(4) + f32s([-1.0]) + tensor_tail("q8s", [4], 0))
    out.put("code_minus128", b"\x80\x00\x00\x00" + f32s([1.0]) + tensor_tail("q8s", [4], 0))
    # Zero points outside the kind's range: q8s's -128 (0x80), u4's 16, a native u4 code of 16.
    out.put("zero_point_q8s_minus128", b"\x01\x02\x03\x04" + f32s([1.0]) + b"\x80" + tensor_tail("q8s:affine", [4], 0))
    out.put("zero_point_u4_16", b"\x01\x02\x03\x04" + f32s([1.0]) + b"\x10" + tensor_tail("u4:affine", [4], 0))
    out.put("code_u4_16", b"\x10\x02\x03\x04" + f32s([1.0]) + b"\x03" + tensor_tail("u4:affine", [4], 0))
    out.put("zero_point_missing", b"\x01\x02\x03\x04" + f32s([1.0]) + tensor_tail("u8:affine", [4], 0))
    out.put("axis_scales", bytes(range(6)) + f32s([0.5, 1.0, 2.0]) + tensor_tail("u8:axis(1)=f32", [3, 2], 0))
    out.put("axis_nan_scale", bytes(6) + f32s([0.5]) + f32_bits([0x7FC00000]) + tensor_tail("q8f:axis(0)=f32", [3, 2], 0))
    ggml_block_seeds(out)
    return out


def ggml_block_seeds(out):
    """ggml's blocks ggml wrote (tests/data/recipes), read under their recipe's point, under the
    exact and burn profiles (q8s's -128 and an inf scale are corrupt under exact), with a NaN and a
    negative scale, cut short, and the same bytes as Burn's layout under the recipe's point."""
    for k, (recipe, scheme) in enumerate(GGML_RECIPES, start=1):
        with open(os.path.join(RECIPES_DIR, recipe, "crafted.blocks"), "rb") as f:
            blocks = f.read()
        shape = [30, 32]
        size = 18 if "q4" in scheme else 34
        out.put(f"ggml_{recipe}", blocks + tensor_tail(scheme, shape, GGML | RECIPE | ((k - 1) << 4), k % 4))
        out.put(f"ggml_{recipe}_exact", blocks + tensor_tail(scheme, shape, GGML, 0))
        out.put(f"ggml_{recipe}_burn", blocks + tensor_tail(scheme, shape, GGML | 1, 1))
        nan = bytearray(blocks)
        nan[3 * size + 1] = 0x7E
        out.put(f"ggml_{recipe}_nan_scale", bytes(nan) + tensor_tail(scheme, shape, GGML | RECIPE | ((k - 1) << 4), 2))
        neg = bytearray(blocks)
        neg[2 * size + 1] |= 0x80
        out.put(f"ggml_{recipe}_negative_scale", bytes(neg) + tensor_tail(scheme, shape, GGML | RECIPE | ((k - 1) << 4), 3))
        out.put(f"ggml_{recipe}_short", blocks[:-1] + tensor_tail(scheme, shape, GGML | RECIPE | ((k - 1) << 4), 0))
        out.put(f"ggml_{recipe}_burn_layout", blocks + tensor_tail(scheme, shape, FIT | RECIPE | ((k - 1) << 4), 1))
    te_nvfp4_byte_seeds(out)
    out.put("ggml_q4s_nibble_zero", bytes([0x00, 0x3C, 0x08] + [0x88] * 15) + tensor_tail("q4_0", [32], GGML, 0))
    out.put("ggml_partial_row", bytes(34) + tensor_tail("q8_0", [40], GGML | FIT | RECIPE, 0))


def te_nvfp4_bytes(name):
    """TE's NVFP4 output of a golden case (tests/data/recipes/nvidia-nvfp4) in Burn's layout: its
    codes two a byte (the even element low), block scales, decode global."""
    d = os.path.join(RECIPES_DIR, "nvidia-nvfp4")
    with open(os.path.join(d, name + ".codes.u8"), "rb") as f:
        codes = f.read()
    with open(os.path.join(d, name + ".scales.u8"), "rb") as f:
        scales = f.read()
    with open(os.path.join(d, name + ".global.f32"), "rb") as f:
        glob = f.read()
    return bytes(codes[i] | codes[i + 1] << 4 for i in range(0, len(codes), 2)) + scales + glob


def te_nvfp4_byte_seeds(out):
    """TE's bytes under nvidia-nvfp4's point (its product f32(s g)), under the exact profile, and
    with the global replaced: f32 max (448 g overflows f32), a subnormal, zero, a NaN."""
    te = RECIPE | (3 << 4)
    b = te_nvfp4_bytes("crafted")
    shape = [30, 32]
    out.put("te_nvfp4_crafted", b + tensor_tail("nvfp4", shape, te, 1))
    out.put("te_nvfp4_crafted_exact", b + tensor_tail("nvfp4", shape, 0, 2))
    for tag, g in [("max", 0x7F7FFFFF), ("subnormal", 0x00000123), ("zero", 0), ("nan", 0x7FC00000)]:
        out.put(f"te_nvfp4_crafted_global_{tag}", b[:-4] + f32_bits([g]) + tensor_tail("nvfp4", shape, te, 3))


def npy(shape, descr="<f4", data=b"", version=(1, 0), fortran=False, header=None):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    h = header if header is not None else f"{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': ({dims}), }}"
    pre = 10 if version[0] == 1 else 12
    pad = (64 - (pre + len(h) + 1) % 64) % 64
    h = h + " " * pad + "\n"
    hl = struct.pack("<H", len(h)) if version[0] == 1 else struct.pack("<I", len(h))
    return b"\x93NUMPY" + bytes(version) + hl + h.encode() + data


def npy_corpus():
    out = Out("fuzz_npy")
    out.put("f32_1d", npy([4], data=f32s([1, -2.5, 0, 3e38])))
    out.put("f32_2d", npy([2, 3], data=f32s(range(6))))
    out.put("f32_rank0", npy([], data=f32s([7.0])))
    out.put("f32_empty", npy([0, 3]))
    out.put("f32_nan_bits", npy([2], data=f32_bits([0x7FC00001, 0x80000000])))
    out.put("f32_rank8", npy([1] * 8, data=f32s([1.0])))
    out.put("f32_v2", npy([3], data=f32s([1, 2, 3]), version=(2, 0)))
    out.put("f32_v3", npy([1], data=f32s([1]), version=(3, 0)))
    out.put("i4", npy([2], "<i4", struct.pack("<2i", -1, 5)))
    out.put("u4", npy([2], "<u4", struct.pack("<2I", 1, 0xFFFFFFFF)))
    out.put("i1", npy([3], "|i1", b"\x80\x00\x7f"))
    out.put("u1", npy([3], "|u1", b"\x00\x80\xff"))
    out.put("reject_big_endian", npy([1], ">f4", b"\x3f\x80\x00\x00"))
    out.put("reject_f8", npy([1], "<f8", bytes(8)))
    out.put("reject_fortran", npy([2, 2], data=f32s(range(4)), fortran=True))
    out.put("reject_truncated_data", npy([4], data=f32s([1, 2])))
    out.put("reject_trailing", npy([1], data=f32s([1, 2])))
    out.put("reject_rank9", npy([1] * 9, data=f32s([1])))
    out.put("reject_overflow", npy([1 << 40, 1 << 40], data=b""))
    out.put("reject_version", npy([1], data=f32s([1]), version=(4, 0)))
    out.put("reject_not_tuple", npy([], header="{'descr': '<f4', 'fortran_order': False, 'shape': (3), }", data=f32s([1, 2, 3])))
    out.put("reject_missing_key", npy([], header="{'descr': '<f4', 'shape': (1,), }", data=f32s([1])))
    out.put("reject_header_len", b"\x93NUMPY\x01\x00\xff\xff{'descr'")
    out.put("reject_magic", b"\x93NUMPX\x01\x00\x00\x00")
    return out


def qjson_doc(scheme, shape, codes, scales, glob="null", profile="exact", bytes_hex=None, order=None,
              zero_points=None):
    fields = [("scheme", f'"{scheme}"'), ("profile", f'"{profile}"'), ("shape", json.dumps(shape).replace(" ", "")),
              ("codes", json.dumps(codes).replace(" ", "")), ("block_scales", "[" + ",".join(scales) + "]"),
              ("global_scale", glob)]
    if zero_points is not None:
        fields.append(("zero_points", json.dumps(zero_points).replace(" ", "")))
    if bytes_hex is not None:
        fields.append(("bytes", f'"{bytes_hex}"'))
    if order:
        fields = [fields[i] for i in order]
    return ("{\n" + ",\n".join(f' "{k}": {v}' for k, v in fields) + "\n}\n").encode()


def qjson_corpus():
    out = Out("fuzz_qjson")
    out.put("q8s_two_level", qjson_doc("q8f:block[4]=ue4m3:tensor=f32", [8], [0, 25, 51, 76, 102, 127, -128, -1],
                                       ["0.5", "0.125"], "3.0", bytes_hex="0019334c667f80ff302000004040"))
    out.put("q8s_per_tensor", qjson_doc("q8s", [2, 2], [1, -2, 3, 127], ["0.1"], bytes_hex="01fe037fcdcccc3d"))
    out.put("q4_0_packed", qjson_doc("q4_0", [1, 9], [1, -2, 3, -4, 5, -6, 7, 0, 1], ["1.0"]))
    out.put("e2m1_outer_axis", qjson_doc("e2m1:packed-native(1)", [3, 2], [1, 2, 3, 4, 5, 15], ["2.0"], profile="burn"))
    out.put("nvfp4", qjson_doc("nvfp4", [16], list(range(16)), ["448.0"], "1e-45"))
    out.put("mxfp8_order", qjson_doc("mxfp8", [2], [0, 126], ["1.0"], order=[5, 4, 3, 2, 1, 0]))
    out.put("rank0", qjson_doc("q8s:tensor=f16", [], [5], ["0.25"]))
    out.put("affine_q4f", qjson_doc("q4f:affine:block[2]=f32", [3], [-8, 7, 0], ["1.0", "0.5"], zero_points=[-3, 7],
                                    bytes_hex="f807000000803f0000003ffd07"))
    out.put("reject_zero_point", qjson_doc("u8:affine", [1], [1], ["1.0"], zero_points=[256]))
    out.put("empty", qjson_doc("q8s:block[32]=f16", [0, 5], [], []))
    out.put("reject_duplicate", qjson_doc("q8s", [1], [1], ["1.0"]).replace(b'"profile"', b'"scheme"'))
    out.put("reject_shape_overflow", qjson_doc("q8s", [0, 18446744073709551615], [], ["1.0"]))
    out.put("reject_code", qjson_doc("q8s", [1], [-128], ["1.0"]))
    out.put("reject_scale", qjson_doc("q8s:block[1]=f16", [1], [1], ["0.3"]))
    out.put("reject_bytes", qjson_doc("q8s", [1], [1], ["1.0"], bytes_hex="020000803f"))
    out.put("reject_json", b'{"scheme": "q8s", "shape": [1,], }')
    out.put("escapes", b'{"scheme": "q\\u0038s", "shape": [1], "codes": [1], "block_scales": [1e0], '
                       b'"global_scale": null, "bytes": "01\\u0030000803f"}')
    return out


def c_api_tail(op, scheme_len, shape=(), nulls=0, n_delta=0, cap_delta=0, profile=0, calibration=0, opt=0):
    dims = [dim_byte(d) for d in shape] + [0] * (9 - len(shape))
    return bytes([op, nulls, len(shape)] + dims + [n_delta & 0xFF, cap_delta & 0xFF, profile & 0xFF,
                                                   calibration & 0xFF, opt, scheme_len])


def c_api():
    out = Out("fuzz_c_api")
    OPT_GIVEN, OPT_GLOBAL, OPT_PRESENT, OPT_NARROW = 1, 2, 16, 32
    data = f32s([(i % 13 - 6) * 0.41 for i in range(64)])
    narrow = bytes((i * 29 + 3) & 0xFF for i in range(64))
    for i, (scheme, shape) in enumerate([("q8s", [4]), ("q4s:packed-u32(0):block[8]=f16", [3, 10]),
                                         ("nvfp4", [32]), ("mxfp8", [2, 32]), ("q8s:block[4]=ue4m3:tensor=f32", [8]),
                                         ("e2m1:packed-native(0):block[4]=f32", [8])]):
        s = scheme.encode()
        tag = f"{i}_{scheme}".replace(":", "_")
        out.put(f"size_{tag}", s + c_api_tail(0, len(s), shape))
        out.put(f"quantize_{tag}", s + data + c_api_tail(1, len(s), shape, opt=OPT_PRESENT))
        out.put(f"quantize_{tag}_burn_narrow", s + narrow + c_api_tail(1, len(s), shape, profile=1, opt=OPT_PRESENT | OPT_NARROW))
        out.put(f"quantize_{tag}_given", s + narrow + bytes(range(0x60, 0x80)) + c_api_tail(1, len(s), shape, opt=OPT_PRESENT | OPT_NARROW | OPT_GIVEN | (OPT_GLOBAL if "tensor" in scheme or scheme == "nvfp4" else 0)))
        out.put(f"quantize_{tag}_short_out", s + data + c_api_tail(1, len(s), shape, cap_delta=-1))
        out.put(f"quantize_{tag}_short_x", s + data + c_api_tail(1, len(s), shape, n_delta=-1))
        out.put(f"dequantize_{tag}", s + narrow + c_api_tail(2, len(s), shape))
        out.put(f"dequantize_{tag}_short_out", s + narrow + c_api_tail(2, len(s), shape, cap_delta=-1))
    s = b"q8s:block[4]=f32"
    out.put("null_scheme", s + data + c_api_tail(1, len(s), [8], nulls=1))
    out.put("null_shape", s + data + c_api_tail(1, len(s), [8], nulls=2))
    out.put("null_x", s + data + c_api_tail(1, len(s), [8], nulls=4))
    out.put("null_given", s + data + c_api_tail(1, len(s), [8], nulls=8, opt=OPT_PRESENT | OPT_GIVEN))
    out.put("null_out", s + data + c_api_tail(1, len(s), [8], nulls=16))
    out.put("null_out_len", s + data + c_api_tail(2, len(s), [8], nulls=32))
    out.put("null_err_index", s + data + c_api_tail(2, len(s), [8], nulls=64))
    out.put("null_size", s + c_api_tail(0, len(s), [8], nulls=128))
    out.put("bad_profile", s + data + c_api_tail(1, len(s), [8], profile=2, opt=OPT_PRESENT))
    out.put("bad_calibration", s + data + c_api_tail(1, len(s), [8], calibration=-1, opt=OPT_PRESENT))
    out.put("bad_text", b"q8s:block[4=f32" + data + c_api_tail(1, 15, [8]))
    out.put("embedded_nul", b"q8s\x00junk" + data + c_api_tail(1, 8, [4]))
    out.put("rank9", s + c_api_tail(0, len(s), [1] * 9))
    out.put("huge_shape", s + data + c_api_tail(1, len(s), [1 << 40, 1 << 40]))
    out.put("target_avx2", b"AVX2" + c_api_tail(3, 4))
    out.put("target_bogus", b"NOPE" + c_api_tail(3, 4, n_delta=-1, cap_delta=7))
    return out


if __name__ == "__main__":
    args = sys.argv[1:]
    edge_tool = args[args.index("--edge-seeds") + 1] if "--edge-seeds" in args else EDGE_SEEDS
    if not os.path.exists(edge_tool):
        sys.exit(f"make_seeds: {edge_tool} is missing: build it first (cmake --build --preset release --target fuzz_edge_seeds)")
    vectors = golden()
    for o in (differential(vectors, edge_tool), decode_bytes(vectors), npy_corpus(), qjson_corpus(), c_api()):
        print(f"make_seeds: {len(o.names)} seeds in {os.path.relpath(o.dir)}")
