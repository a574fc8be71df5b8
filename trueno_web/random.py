"""Counter-based random numbers made on the device, with explicit keys (JAX's model): `tw.random`.

    key = tw.random.key(0)
    k1, k2 = tw.random.split(key)
    x = tw.random.normal(k1, (256, 256), device=dev)            # a lazy Tensor: nothing uploaded
    mask = tw.random.bernoulli(k2, 0.9, (256, 256), device=dev)
    y = x * mask                                                # one fused map kernel with both draws

A `Key` is two uint32 words on the host; `split` and `fold_in` make new keys in pure Python with
Threefry-2x32 (trueno_web/prng.py). A draw is a generator row of the catalog (ops.GENERATORS) computed on
the device where its tensor runs: element i gets the Threefry-2x32 words of the key and counter i (JAX's
partitionable scheme), so the same key and shape give the same bits on every backend (webgpu, numpy,
wasm-simd), and uniform values on [0, 1) are bit-identical across them (a scaled range within one rounding). A key is never consumed: drawing twice with
the same key gives the same values; split it for independent streams. docs/random.md has the details.

There is no default device: every draw takes `device=`, a GpuDevice, or a Tensor whose device it uses
(`device=x` or `device=x.device`), so where the numbers are made is always written at the call.
"""

from __future__ import annotations

import math
from numbers import Real

from . import ops, prng
from .errors import TruenoTypeError, TruenoValueError
from .tensor.creation import generate

__all__ = ["Key", "key", "split", "fold_in", "uniform", "normal", "bernoulli"]

_U32 = 1 << 32


class Key:
    """A Threefry-2x32 key: two uint32 words, immutable and hashable. Make one with `key(seed)`,
    more with `split` and `fold_in`."""

    __slots__ = ("_words",)

    def __init__(self, k0: int, k1: int):
        for w in (k0, k1):
            if isinstance(w, bool) or not isinstance(w, int) or not 0 <= w < _U32:
                raise TruenoValueError(f"a Key holds two uint32 words (0 <= w < 2**32); got {k0!r:.30}, {k1!r:.30}")
        object.__setattr__(self, "_words", (k0, k1))

    @property
    def words(self) -> tuple[int, int]:
        """The two uint32 words (JAX's raw key data: jax.random.key_data)."""
        return self._words

    def __setattr__(self, name, value):
        raise AttributeError("a Key is immutable; make new keys with tw.random.split or fold_in")

    def __eq__(self, other) -> bool:
        return isinstance(other, Key) and other._words == self._words

    def __hash__(self) -> int:
        return hash(("trueno_web.random.Key", self._words))

    def __repr__(self) -> str:
        return f"Key({self._words[0]:#010x}, {self._words[1]:#010x})"

    def __iter__(self):
        return iter(self._words)

    def __reduce__(self):
        return (Key, self._words)


def key(seed: int) -> Key:
    """The key of an integer seed, 0 <= seed < 2**64: the words (seed >> 32, seed & 0xFFFFFFFF), as
    JAX's threefry seed (jax.random.key(seed) for seed >= 0)."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TruenoTypeError(f"tw.random.key(seed) needs an int seed, got {type(seed).__name__} {seed!r:.40}")
    if not 0 <= seed < 1 << 64:
        raise TruenoValueError(f"tw.random.key(seed) needs 0 <= seed < 2**64; got {seed}")
    return Key(seed >> 32, seed & 0xFFFFFFFF)


def _check_key(k, where: str) -> Key:
    if not isinstance(k, Key):
        raise TruenoTypeError(
            f"tw.random.{where} needs a Key (from tw.random.key(seed), split or fold_in) as its key; "
            f"got {type(k).__name__} {k!r:.40}"
        )
    return k


def split(key: Key, num: int = 2) -> tuple[Key, ...]:
    """`num` new keys from one: key i is both words of Threefry-2x32(key, (0, i)) (JAX's partitionable
    split). Use each once; the keys and every draw of them are independent streams."""
    _check_key(key, "split")
    if isinstance(num, bool) or not isinstance(num, int) or num < 0:
        raise TruenoValueError(f"tw.random.split needs num a non-negative int; got {num!r:.40}")
    return tuple(Key(*prng.threefry2x32(key.words, (i >> 32, i & 0xFFFFFFFF))) for i in range(num))


def fold_in(key: Key, data: int) -> Key:
    """A new key from a key and an integer 0 <= data < 2**32 (a step or a rank): both words of
    Threefry-2x32(key, (0, data)), as jax.random.fold_in."""
    _check_key(key, "fold_in")
    if isinstance(data, bool) or not isinstance(data, int):
        raise TruenoTypeError(f"tw.random.fold_in needs an int data, got {type(data).__name__} {data!r:.40}")
    if not 0 <= data < _U32:
        raise TruenoValueError(f"tw.random.fold_in needs 0 <= data < 2**32; got {data}")
    return Key(*prng.threefry2x32(key.words, (0, data)))


# ---------------------------------------------------------------- draws: lazy tensors made on the device


def _shape(shape, where: str) -> tuple[int, ...]:
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        dims = tuple(shape)
    except TypeError:
        raise TruenoTypeError(
            f"tw.random.{where}: shape must be an int or a tuple of ints; got {shape!r:.40}"
        ) from None
    if any(isinstance(d, bool) or not isinstance(d, int) for d in dims):
        raise TruenoTypeError(f"tw.random.{where}: shape must be an int or a tuple of ints; got {shape!r:.40}")
    if any(d < 0 for d in dims):
        raise TruenoValueError(f"tw.random.{where}: shape {dims} has a negative dimension")
    if math.prod(dims) >= _U32:
        raise TruenoValueError(f"tw.random.{where}: a draw holds fewer than 2**32 elements; got shape {dims}")
    return dims


def _device(device, where: str):
    if device is None:
        raise TruenoTypeError(
            f"tw.random.{where} needs device= (a GpuDevice, or a Tensor whose device to use): "
            "there is no default device"
        )
    inner = getattr(device, "device", None)  # a Tensor (or DeviceArray): its device
    if inner is not None and hasattr(inner, "executor"):
        device = inner
    if not hasattr(device, "executor") or not hasattr(device, "check_open"):
        raise TruenoTypeError(
            f"tw.random.{where}: device= must be a GpuDevice or a Tensor; got {type(device).__name__}"
        )
    return device


def _number(value, name: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TruenoTypeError(f"tw.random.{where}: {name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if value != value or value in (float("inf"), float("-inf")):
        raise TruenoValueError(f"tw.random.{where}: {name} must be finite; got {value}")
    return value


def _draw(name: str, where: str, key, shape, device, extra=()):
    _check_key(key, where)
    dims, dev = _shape(shape, where), _device(device, where)
    return generate(dev, ops.get(name), dims, prng.key_params(key.words) + tuple(extra))


def uniform(key: Key, shape=(), minval: float = 0.0, maxval: float = 1.0, *, device=None):
    """A lazy float32 Tensor of `shape`, uniform in [minval, maxval): u * (maxval - minval) + minval,
    at least minval, with u = bitcast((bits >> 9) | 0x3F800000) - 1.0 in [0, 1) (23 random bits) and
    bits = the xor of Threefry-2x32(key, counter i)'s two words. `device`: a GpuDevice or a Tensor (its
    device); required. Bit-identical on every backend."""
    lo, hi = _number(minval, "minval", "uniform"), _number(maxval, "maxval", "uniform")
    if hi < lo:
        raise TruenoValueError(f"tw.random.uniform needs minval <= maxval; got minval={lo}, maxval={hi}")
    return _draw("random_uniform", "uniform", key, shape, device, (lo, hi))


def normal(key: Key, shape=(), *, device=None):
    """A lazy float32 Tensor of `shape`, standard normal: Box-Muller on the two words of
    Threefry-2x32(key, counter i), z = sqrt(-2 log(1 - u0)) cos(2 pi u1) (the library's own log and cos;
    |z| <= 5.64). `device`: a GpuDevice or a Tensor (its device); required. The backends agree within a
    few ulps (docs/random.md)."""
    return _draw("random_normal", "normal", key, shape, device)


def bernoulli(key: Key, p: float = 0.5, shape=(), *, device=None):
    """A lazy float32 Tensor of `shape`: 1.0 with probability p, else 0.0 (u < p, u as `uniform`'s),
    0 <= p <= 1. `device`: a GpuDevice or a Tensor (its device); required. Bit-identical on every
    backend. (A bool dtype comes later.)"""
    p = _number(p, "p", "bernoulli")
    if not 0.0 <= p <= 1.0:
        raise TruenoValueError(f"tw.random.bernoulli needs 0 <= p <= 1; got p={p}")
    return _draw("random_bernoulli", "bernoulli", key, shape, device, (p,))
