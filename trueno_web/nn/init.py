"""Parameter initialisers drawn on the device from explicit keys (tw.random): the same key gives the same
weights on every backend. Shapes follow this library's layers: a linear weight is (in_features,
out_features), so fan_in is the product of all dimensions but the last and fan_out the last (a 1-D shape:
both its length)."""

from __future__ import annotations

import math

from .. import random
from ..errors import TruenoValueError

GAINS = {"linear": 1.0, "sigmoid": 1.0, "tanh": 5.0 / 3.0, "relu": math.sqrt(2.0), "selu": 0.75}


def fans(shape) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight of `shape`."""
    shape = tuple(shape)
    if not shape:
        raise TruenoValueError("an initialiser needs a shape of one dimension or more; got ()")
    if len(shape) == 1:
        return shape[0], shape[0]
    return math.prod(shape[:-1]), shape[-1]


def gain(nonlinearity: str) -> float:
    """The recommended gain for a nonlinearity (torch.nn.init.calculate_gain's values)."""
    if nonlinearity not in GAINS:
        raise TruenoValueError(f"nonlinearity is one of {', '.join(GAINS)}; got {nonlinearity!r}")
    return GAINS[nonlinearity]


def normal(key, shape, std: float = 1.0, mean: float = 0.0, *, device):
    """N(mean, std^2) draws."""
    return random.normal(key, shape, device=device) * float(std) + float(mean)


def uniform(key, shape, low: float = 0.0, high: float = 1.0, *, device):
    """U(low, high) draws."""
    return random.uniform(key, shape, low, high, device=device)


def xavier_uniform(key, shape, gain: float = 1.0, *, device):
    """Glorot: U(-b, b) with b = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = fans(shape)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform(key, shape, -bound, bound, device=device)


def xavier_normal(key, shape, gain: float = 1.0, *, device):
    """Glorot: N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = fans(shape)
    return normal(key, shape, gain * math.sqrt(2.0 / (fan_in + fan_out)), device=device)


def _kaiming_std(shape, nonlinearity: str, mode: str) -> float:
    if mode not in ("fan_in", "fan_out"):
        raise TruenoValueError(f"mode is 'fan_in' or 'fan_out'; got {mode!r}")
    fan_in, fan_out = fans(shape)
    return gain(nonlinearity) / math.sqrt(fan_in if mode == "fan_in" else fan_out)


def kaiming_normal(key, shape, nonlinearity: str = "relu", mode: str = "fan_in", *, device):
    """He: N(0, std^2) with std = gain(nonlinearity) / sqrt(fan)."""
    return normal(key, shape, _kaiming_std(shape, nonlinearity, mode), device=device)


def kaiming_uniform(key, shape, nonlinearity: str = "relu", mode: str = "fan_in", *, device):
    """He: U(-b, b) with b = sqrt(3) * gain(nonlinearity) / sqrt(fan)."""
    bound = math.sqrt(3.0) * _kaiming_std(shape, nonlinearity, mode)
    return uniform(key, shape, -bound, bound, device=device)
