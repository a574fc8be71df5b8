"""Turn a catalog row into a method: argument binding, checks at call time, signature and docstring.

Device methods and batch methods are both made here from `ops.CATALOG`, so they accept the same
arguments and reject bad ones with the same messages.
"""

from __future__ import annotations

import inspect
import math
from numbers import Real

from .errors import TruenoTypeError, TruenoValueError
from .ops import Op

INPUT_NAMES = {"unary": ("x",), "softmax": ("x",), "conv2d": ("image", "kernel"), "matmul": ("a", "b")}


def input_names(op: Op) -> tuple[str, ...]:
    if op.kind in INPUT_NAMES:
        return INPUT_NAMES[op.kind]
    return ("a", "b") if op.arity == 2 else ("x",)


def bind(op: Op, args: tuple, kwargs: dict) -> tuple[tuple, tuple[float, ...], dict]:
    """(inputs, scalar params, options) from a call's arguments, or a clear TypeError."""
    names = input_names(op)
    if len(args) < len(names):
        missing = ", ".join(names[len(args):])
        raise TruenoTypeError(f"{op.name}() needs {len(names)} array argument(s): missing {missing}")
    inputs, rest = args[: len(names)], list(args[len(names):])
    if len(rest) > len(op.params):
        raise TruenoTypeError(f"{op.name}() takes {len(names) + len(op.params)} positional arguments, got {len(args)}")
    params = []
    for i, p in enumerate(op.params):
        if i < len(rest):
            value = rest[i]
            if p.name in kwargs:
                raise TruenoTypeError(f"{op.name}() got {p.name!r} twice")
        elif p.name in kwargs:
            value = kwargs.pop(p.name)
        elif p.default is not None:
            value = p.default
        else:
            raise TruenoTypeError(f"{op.name}() needs the scalar {p.name!r}, e.g. {op.name}(..., {p.name}=1.0)")
        if isinstance(value, bool) or not isinstance(value, Real):
            raise TruenoTypeError(f"{op.name}(): {p.name} must be a real number, got {type(value).__name__} {value!r:.40}")
        try:
            params.append(float(value))
        except OverflowError:
            params.append(math.inf if value > 0 else -math.inf)  # an int past float range: float32 would round it to inf
    options = {}
    for name in op.options:
        if name in kwargs:
            value = kwargs.pop(name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise TruenoTypeError(f"{op.name}(): {name} must be a non-negative int, got {value!r:.40}")
            options[name] = value
    if kwargs:
        raise TruenoTypeError(f"{op.name}() got unexpected argument(s) {', '.join(sorted(kwargs))}")
    return inputs, tuple(params), options


def out_shape(op: Op, shapes: list[tuple[int, ...]], options: dict) -> tuple[tuple[int, ...], dict]:
    """The result's shape (and the resolved options), or a clear ValueError naming the mismatch."""
    sizes = [math.prod(s) for s in shapes]
    name = op.name
    if op.kind in ("unary", "binary", "reduce") and op.arity == 2 and sizes[0] != sizes[1]:
        raise TruenoValueError(f"{name} needs inputs of the same length; got {sizes[0]} and {sizes[1]} elements")
    if op.elementwise:
        return shapes[0], {}
    if op.kind == "reduce":
        if op.name in ("max", "min") and sizes[0] == 0:
            raise TruenoValueError(f"{name} of an empty array has no value; check the input's length first")
        return (), {}
    if op.kind == "softmax":
        if len(shapes[0]) not in (1, 2):
            raise TruenoValueError(f"{name} works along the last axis of a 1-D or 2-D array; got shape {shapes[0]}")
        return shapes[0], {}
    if op.kind == "matmul":
        return _matmul_shape(shapes, sizes, options)
    (ih, iw), (kh, kw) = _rank2(name, shapes, ("image", "kernel"))
    if kh == 0 or kw == 0 or kh > ih or kw > iw:
        raise TruenoValueError(
            f"{name} needs a non-empty kernel no larger than the image; got image {ih}x{iw}, kernel {kh}x{kw}")
    return (ih - kh + 1, iw - kw + 1), {}


def _rank2(name, shapes, what):
    for s, w in zip(shapes, what):
        if len(s) != 2:
            raise TruenoValueError(f"{name} needs a 2-D {w}; got shape {s} (reshape it, or upload with shape=(h, w))")
    return shapes


def _matmul_shape(shapes, sizes, options):
    m, k, n = (options.get(d) for d in "mkn")
    if m is None and k is None and n is None:
        (m, k), (k2, n) = _rank2("matmul", shapes, ("a", "b"))
        if k != k2:
            raise TruenoValueError(f"matmul inner dimensions differ: a is {m}x{k}, b is {k2}x{n}")
    elif None in (m, k, n):
        raise TruenoValueError("matmul with flat inputs needs all of m=, k= and n=")
    elif sizes[0] != m * k or sizes[1] != n * k:
        raise TruenoValueError(f"matmul with m={m}, k={k}, n={n} needs {m * k} and {k * n} elements; "
                               f"got {sizes[0]} and {sizes[1]}")
    return (m, n), {"m": m, "k": k, "n": n}


def signature(op: Op, first: str = "self") -> inspect.Signature:
    """The signature shown by help(): inputs, scalar params, options."""
    P = inspect.Parameter
    params = [P(first, P.POSITIONAL_ONLY)] + [P(n, P.POSITIONAL_OR_KEYWORD) for n in input_names(op)]
    params += [P(p.name, P.POSITIONAL_OR_KEYWORD, **({} if p.default is None else {"default": p.default}))
               for p in op.params]
    params += [P(o, P.KEYWORD_ONLY, default=None) for o in op.options]
    return inspect.Signature(params)


def make_method(op: Op, impl, doc_suffix: str):
    """A method named after the op that binds its arguments and hands them to `impl(self, op, ...)`."""

    def method(self, *args, **kwargs):
        inputs, params, options = bind(op, args, dict(kwargs))
        return impl(self, op, inputs, params, options)

    method.__name__ = method.__qualname__ = op.name
    method.__signature__ = signature(op)
    method.__doc__ = f"{op.doc}. {doc_suffix}"
    return method
