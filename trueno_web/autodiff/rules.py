"""Gradient rules, one per catalog op (tests check that every row of ops.CATALOG has one).

Each rule is written with tensor ops, so the backward pass is an expression like the forward one and
fuses the same way. Subgradients follow JAX (docs/autodiff.md): relu'(0) = 0, |x|'(0) = 0, ties of
maximum/minimum and of max/min reductions share the gradient equally, comparisons and floor have none.

ELEMENTWISE[name](g, xs, y, params) -> one cotangent per input (None: no gradient), where `g` is the
cotangent of the output `y` and `xs` the inputs (all of y's shape: broadcasting is a view before the op).
INDEXING[name](g, xs, y, options) -> the same for take, scatter_add and sort (options: the node's: its axis,
sort's descending).
REDUCTIONS[name](g, xs, y, total) -> the same, where g and y are already broadcast back to the input's
shape and `total(t, name)` reduces t as the op did (broadcast back too): what max/min/prod need.
"""

from __future__ import annotations

import math

from ..references import SELU_ALPHA, SELU_SCALE
from ..tensor.index import gather, scatter

GELU_C = math.sqrt(2.0 / math.pi)

# ops on bools and integers, and float classes: no gradient
INTEGRAL = (
    *("logical_and", "logical_or", "logical_xor", "logical_not"),
    *("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_invert", "bitwise_left_shift", "bitwise_right_shift"),
    *("isnan", "isinf", "isfinite", "signbit"),
)


def _sign(x):
    return (x > 0) - (x < 0)


def _tie_share(a, b, wins):
    """1 where `a` wins against `b`, 0.5 where they are equal, else 0 (JAX's maximum/minimum)."""
    return wins + (a == b) * 0.5


def _gelu(g, x, y):
    u = (x + x * x * x * 0.044715) * GELU_C
    t = u.tanh()
    return g * ((t + 1.0) * 0.5 + x * (1.0 - t * t) * (x * x * (3 * 0.044715) + 1.0) * (0.5 * GELU_C))


def _mish(g, x, y):
    softplus = (x > 20.0).where(x, (x.exp() + 1.0).log())
    t = softplus.tanh()
    return g * (t + x * (1.0 - t * t) * x.sigmoid())


def _clip(g, x, y, lo, hi):
    low = x.maximum(lo)
    return g * _tie_share(x, lo, x > lo) * _tie_share(low, hi, low < hi)


def _pow(g, xs, y, params):
    a, b = xs
    da = (b == 0).where(0.0, b * a.pow(b - 1.0))
    db = (a == 0).where(1.0, a).log() * y
    return g * da, g * db


def _sign_bit(x):
    """-1 where x's sign bit is set (-0 and -NaN too), else 1."""
    return (_sign(x) * 0.0 + 1.0).copysign(x)


def _atan2(g, xs, y, params):
    a, b = xs
    r2 = a * a + b * b
    return g * b / r2, -g * a / r2


LN10 = math.log(10.0)
ZERO = lambda g, xs, y, p: (None,)  # noqa: E731 - piecewise constant (round, ceil, trunc, sign)

# the array API's functions (ops.py's rows after floor and after div), JAX's conventions: round, ceil, trunc, sign,
# floor_divide and nextafter have no gradient; copysign's is d|a|/da times b's sign (none for b); remainder's
# a - floor(a / b) b: g and -g floor(a / b)
ARRAY_API = {
    "round": ZERO,
    "ceil": ZERO,
    "trunc": ZERO,
    "sign": ZERO,
    "log1p": lambda g, xs, y, p: (g / (xs[0] + 1.0),),
    "expm1": lambda g, xs, y, p: (g * (y + 1.0),),
    "log2": lambda g, xs, y, p: (g / (xs[0] * math.log(2.0)),),
    "log10": lambda g, xs, y, p: (g / (xs[0] * LN10),),
    "sinh": lambda g, xs, y, p: (g * xs[0].cosh(),),
    "cosh": lambda g, xs, y, p: (g * xs[0].sinh(),),
    "tan": lambda g, xs, y, p: (g * (y * y + 1.0),),
    "asin": lambda g, xs, y, p: (g * (1.0 - xs[0] * xs[0]).rsqrt(),),
    "acos": lambda g, xs, y, p: (-g * (1.0 - xs[0] * xs[0]).rsqrt(),),
    "atan": lambda g, xs, y, p: (g / (xs[0] * xs[0] + 1.0),),
    "asinh": lambda g, xs, y, p: (g * (xs[0] * xs[0] + 1.0).rsqrt(),),
    "acosh": lambda g, xs, y, p: (g * (xs[0] * xs[0] - 1.0).rsqrt(),),
    "atanh": lambda g, xs, y, p: (g / (1.0 - xs[0] * xs[0]),),
    "reciprocal": lambda g, xs, y, p: (-g * y * y,),
    "positive": lambda g, xs, y, p: (g,),
    "real": lambda g, xs, y, p: (g,),  # of real inputs (the gradients are real: complex ones are not traced)
    "conj": lambda g, xs, y, p: (g,),
    "imag": lambda g, xs, y, p: (None,),  # 0 everywhere
    "atan2": _atan2,
    "hypot": lambda g, xs, y, p: (g * xs[0] / y, g * xs[1] / y),
    "logaddexp": lambda g, xs, y, p: (g * (xs[0] - y).exp(), g * (xs[1] - y).exp()),
    "copysign": lambda g, xs, y, p: (g * _sign(xs[0]) * _sign_bit(xs[1]), None),
    "nextafter": lambda g, xs, y, p: (None, None),
    "remainder": lambda g, xs, y, p: (g, -g * xs[0].floor_divide(xs[1])),
    "floor_divide": lambda g, xs, y, p: (None, None),
}


ELEMENTWISE = {
    "relu": lambda g, xs, y, p: (g * (xs[0] > 0),),
    "leaky_relu": lambda g, xs, y, p: ((xs[0] > 0).where(g, g * p[0]),),
    "elu": lambda g, xs, y, p: ((xs[0] > 0).where(g, g * (y + p[0])),),
    "sigmoid": lambda g, xs, y, p: (g * y * (1.0 - y),),
    "tanh": lambda g, xs, y, p: (g * (1.0 - y * y),),
    "swish": lambda g, xs, y, p: (g * (xs[0].sigmoid() * (1.0 - y) + y),),
    "gelu": lambda g, xs, y, p: (_gelu(g, xs[0], y),),
    "mish": lambda g, xs, y, p: (_mish(g, xs[0], y),),
    "selu": lambda g, xs, y, p: ((xs[0] > 0).where(g * SELU_SCALE, g * (y + SELU_SCALE * SELU_ALPHA)),),
    "hardswish": lambda g, xs, y, p: (
        (xs[0] <= -3.0).where(0.0, (xs[0] >= 3.0).where(g, g * (xs[0] * 2.0 + 3.0) * (1.0 / 6.0))),
    ),
    "clip": lambda g, xs, y, p: (_clip(g, xs[0], y, *p),),
    "scale": lambda g, xs, y, p: (g * p[0],),
    "neg": lambda g, xs, y, p: (-g,),
    "abs": lambda g, xs, y, p: (g * _sign(xs[0]),),
    "exp": lambda g, xs, y, p: (g * y,),
    "log": lambda g, xs, y, p: (g / xs[0],),
    "sqrt": lambda g, xs, y, p: (g / y * 0.5,),
    "rsqrt": lambda g, xs, y, p: (g * y / xs[0] * -0.5,),
    "square": lambda g, xs, y, p: (g * xs[0] * 2.0,),
    "sin": lambda g, xs, y, p: (g * xs[0].cos(),),
    "cos": lambda g, xs, y, p: (-g * xs[0].sin(),),
    "floor": lambda g, xs, y, p: (None,),
    "copy": lambda g, xs, y, p: (g,),
    "add": lambda g, xs, y, p: (g, g),
    "sub": lambda g, xs, y, p: (g, -g),
    "mul": lambda g, xs, y, p: (g * xs[1], g * xs[0]),
    "div": lambda g, xs, y, p: (g / xs[1], -g * y / xs[1]),
    "pow": _pow,
    "maximum": lambda g, xs, y, p: (
        g * _tie_share(xs[0], xs[1], xs[0] > xs[1]),
        g * _tie_share(xs[1], xs[0], xs[1] > xs[0]),
    ),
    "minimum": lambda g, xs, y, p: (
        g * _tie_share(xs[0], xs[1], xs[0] < xs[1]),
        g * _tie_share(xs[1], xs[0], xs[1] < xs[0]),
    ),
    **{name: (lambda g, xs, y, p: (None, None)) for name in ("lt", "le", "gt", "ge", "eq", "ne")},
    # a conversion between floats passes the gradient on in the input's dtype (float16's rounded); to or from
    # integers and bool there is none (JAX)
    "astype": lambda g, xs, y, p: (
        g.astype(xs[0].dtype, copy=False) if xs[0].dtype.kind == y.dtype.kind == "float" else None,
    ),
    **{name: (lambda g, xs, y, p: (None,) * len(xs)) for name in INTEGRAL},
    "where": lambda g, xs, y, p: (None, xs[0].where(g, 0.0), xs[0].where(0.0, g)),
    **ARRAY_API,
}


def _extreme(g, xs, y, total):
    """max/min: the gradient split equally between the elements equal to the result."""
    hit = xs[0] == y
    return (g * hit / total(hit, "sum"),)


def _prod(g, xs, y, total):
    """The product of the other elements: y / x where no element is 0; where one is, only that element
    has a gradient (the product of the rest); where several are, none has."""
    x = xs[0]
    is_zero = x == 0
    zeros = total(is_zero, "sum")
    rest = total(is_zero.where(1.0, x), "prod")
    lone_zero = (zeros == 1) * is_zero
    return (g * (zeros == 0).where(rest / x, lone_zero.where(rest, 0.0)),)


REDUCTIONS = {
    "sum": lambda g, xs, y, total: (g,),
    "max": _extreme,
    "min": _extreme,
    "prod": _prod,
    "norm_l1": lambda g, xs, y, total: (g * _sign(xs[0]),),
    "norm_l2": lambda g, xs, y, total: (g * xs[0] / y,),
    "dot": lambda g, xs, y, total: (g * xs[1], g * xs[0]),
}


def _zeros(x, dtype):
    return x._const(0).astype(dtype).expand(x.shape)


INDEXING = {
    # take's gradient adds g back where each element came from (duplicates add); scatter_add's passes g to x
    # and gathers it for the values
    "take": lambda g, xs, y, o: (scatter(_zeros(xs[0], g.dtype), xs[1], g, o["axis"]), None),
    "scatter_add": lambda g, xs, y, o: (g, None, gather(g, xs[1], o["axis"])),
    # sort (along the last axis): g goes back to where each sorted value came from (its stable argsort)
    "sort": lambda g, xs, y, o: (
        scatter(_zeros(xs[0], g.dtype), xs[0].argsort(axis=-1, descending=bool(o.get("descending"))), g, -1),
    ),
}
