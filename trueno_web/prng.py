"""Threefry-2x32 (20 rounds) and the generator ops' references: the bits every backend draws.

One counter-based generator, JAX's: `threefry2x32(key, counter)` maps a key of two uint32 words and a
counter of two to two uint32 words (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011;
the Random123 library's threefry2x32_20, JAX's rotation constants and key schedule). Element i of a draw
(flat, row-major) uses the counter (n >> 32, n & 0xFFFFFFFF) of n = offset + i (JAX's partitionable
scheme, `jax_threefry_partitionable`); docs/random.md says what each distribution makes of the two words.

Here: the scalar function in pure Python (keys, split, fold_in; the pure-Python references), the same on
NumPy uint32 arrays (the NumPy backend; no NumPy import at module level), and the catalog rows' reference
functions. The WGSL twin is in shaders/functions.wgsl (tw_threefry), the C one in wasm/kernels.c.
"""

from __future__ import annotations

import math
import struct

from .references import numpy_module

MASK = 0xFFFFFFFF
PARITY = 0x1BD11BDA  # Threefish's key-schedule parity constant (32-bit)
ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
TWO_PI_F32 = struct.unpack("<f", struct.pack("<f", 2 * math.pi))[0]  # 6.2831855: 2 pi rounded to float32
KEY_PARAMS = ("k0_hi", "k0_lo", "k1_hi", "k1_lo", "offset_hi", "offset_lo")  # 16-bit halves: exact as f32


def threefry2x32(key: tuple[int, int], counter: tuple[int, int]) -> tuple[int, int]:
    """Threefry-2x32, 20 rounds, of one counter (pure Python)."""
    k0, k1 = key[0] & MASK, key[1] & MASK
    ks = (k0, k1, k0 ^ k1 ^ PARITY)
    x0, x1 = (counter[0] + ks[0]) & MASK, (counter[1] + ks[1]) & MASK
    for block in range(5):
        for r in ROTATIONS[block % 2]:
            x0 = (x0 + x1) & MASK
            x1 = (((x1 << r) | (x1 >> (32 - r))) & MASK) ^ x0
        x0 = (x0 + ks[(block + 1) % 3]) & MASK
        x1 = (x1 + ks[(block + 2) % 3] + block + 1) & MASK
    return x0, x1


def key_params(key: tuple[int, int], offset: int = 0) -> tuple[float, ...]:
    """A key's two words and a counter offset (< 2^32) as the six 16-bit halves a generator row takes as
    its first parameters (integers below 2^24 are exact as float32: the kernels rebuild the words)."""
    k0, k1 = key
    return tuple(float(h) for w in (k0, k1, offset) for h in (w >> 16, w & 0xFFFF))


def _words(params) -> tuple[int, int, int]:
    """(k0, k1, offset) from the six halves."""
    h = [int(p) for p in params[:6]]
    return (h[0] << 16) | h[1], (h[2] << 16) | h[3], (h[4] << 16) | h[5]


def unit(bits: int) -> float:
    """The float32 in [0, 1) of a word's top 23 bits: bitcast((bits >> 9) | 0x3F800000) - 1.0 (exact)."""
    return (bits >> 9) * 2.0**-23


# ---------------------------------------------------------------- NumPy (the NumPy backend's rows)


def np_threefry2x32(k0: int, k1: int, c0, c1):
    """threefry2x32 of uint32 counter arrays c0, c1 (one key): two uint32 arrays."""
    np = numpy_module()
    ks = (np.uint32(k0), np.uint32(k1), np.uint32(k0 ^ k1 ^ PARITY))
    with np.errstate(over="ignore"):
        x0, x1 = c0 + ks[0], c1 + ks[1]
        for block in range(5):
            for r in ROTATIONS[block % 2]:
                x0 += x1
                x1 = (x1 << np.uint32(r)) | (x1 >> np.uint32(32 - r))
                x1 ^= x0
            x0 += ks[(block + 1) % 3]
            x1 += ks[(block + 2) % 3] + np.uint32(block + 1)
    return x0, x1


def np_bits(shape, params):
    """The two words of every element of a draw of `shape` (uint32 arrays, flat)."""
    np = numpy_module()
    k0, k1, offset = _words(params)
    n = np.arange(offset, offset + math.prod(shape), dtype=np.uint64)
    return np_threefry2x32(k0, k1, (n >> np.uint64(32)).astype(np.uint32), n.astype(np.uint32))


def np_unit(bits):
    np = numpy_module()
    return ((bits >> np.uint32(9)) | np.uint32(0x3F800000)).view(np.float32) - np.float32(1.0)


def np_uniform(shape, *params):
    np = numpy_module()
    x0, x1 = np_bits(shape, params)
    lo, hi = np.float32(params[6]), np.float32(params[7])
    u = np_unit(x0 ^ x1)
    with np.errstate(all="ignore"):
        return np.maximum(lo, u * (hi - lo) + lo).reshape(shape)


def np_normal(shape, *params):
    """Box-Muller on the two words, in float64 from the float32 uniforms (the angle 2 pi u2 a float32
    product, as the kernels compute it), rounded once to float32."""
    np = numpy_module()
    x0, x1 = np_bits(shape, params)
    u1 = np.float32(1.0) - np_unit(x0)  # (0, 1]: 2^-23 at least
    angle = (np.float32(TWO_PI_F32) * np_unit(x1)).astype(np.float64)
    z = np.sqrt(-2.0 * np.log(u1.astype(np.float64))) * np.cos(angle)
    return z.astype(np.float32).reshape(shape)


def np_bernoulli(shape, *params):
    np = numpy_module()
    x0, x1 = np_bits(shape, params)
    return (np_unit(x0 ^ x1) < np.float32(params[6])).astype(np.float32).reshape(shape)


def np_index(shape, strides):
    """The `index` generator: element k = (k0, k1, ...) of `shape` is sum(k_d * strides_d), int32 (its flat
    index for row-major strides; stride 0 along an axis: an iota broadcast along it, no view needed)."""
    np = numpy_module()
    out = np.zeros(shape, dtype="int32")
    for d, (n, s) in enumerate(zip(shape, strides)):
        out += (np.arange(n, dtype="int32") * np.int32(s)).reshape([n if e == d else 1 for e in range(len(shape))])
    return out


# ---------------------------------------------------------------- pure Python (op.ref: a flat list)


def _f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _py_bits(size: int, params):
    k0, k1, offset = _words(params)
    for i in range(size):
        n = offset + i
        yield threefry2x32((k0, k1), (n >> 32, n & MASK))


def py_uniform(size: int, *params) -> list[float]:
    lo, hi = _f32(params[6]), _f32(params[7])
    return [max(lo, _f32(_f32(unit(a ^ b) * _f32(hi - lo)) + lo)) for a, b in _py_bits(size, params)]


def py_normal(size: int, *params) -> list[float]:
    out = []
    for a, b in _py_bits(size, params):
        u1, angle = 1.0 - unit(a), _f32(TWO_PI_F32 * unit(b))
        out.append(_f32(math.sqrt(-2.0 * math.log(u1)) * math.cos(angle)))
    return out


def py_bernoulli(size: int, *params) -> list[float]:
    p = _f32(params[6])
    return [1.0 if unit(a ^ b) < p else 0.0 for a, b in _py_bits(size, params)]


def py_index(size: int, shape, strides) -> list[int]:
    out = []
    for i in range(size):
        at, rem = 0, i
        for n, s in zip(reversed(shape), reversed(strides)):
            at, rem = at + (rem % n) * s, rem // n
        out.append(at)
    return out
