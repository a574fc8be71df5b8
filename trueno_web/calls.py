"""Turn a catalog row into a method: argument binding, checks at call time, signature and docstring.

Device methods and batch methods are both made here from `ops.CATALOG`, so they accept the same
arguments and reject bad ones with the same messages.
"""

from __future__ import annotations

import inspect
import math
from numbers import Real

from .errors import TruenoTypeError
from .ops import CATALOG, Op

def bind(op: Op, args: tuple, kwargs: dict) -> tuple[tuple, tuple[float, ...], dict]:
    """(inputs, scalar params, options) from a call's arguments, or a clear TypeError."""
    names = op.inputs
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


def signature(op: Op, first: str = "self") -> inspect.Signature:
    """The signature shown by help(): inputs, scalar params, options."""
    P = inspect.Parameter
    params = [P(first, P.POSITIONAL_ONLY)] + [P(n, P.POSITIONAL_OR_KEYWORD) for n in op.inputs]
    params += [P(p.name, P.POSITIONAL_OR_KEYWORD, **({} if p.default is None else {"default": p.default}))
               for p in op.params]
    params += [P(o, P.KEYWORD_ONLY, default=None) for o in op.options]
    return inspect.Signature(params)


def make_method(op: Op, impl, doc_suffix: str, self_is_input: bool = False):
    """A method named after the op that binds its arguments and hands them to `impl(self, op, ...)`;
    `self_is_input`: the object is the op's first input (a Tensor), not a device or batch."""

    def method(self, *args, **kwargs):
        inputs, params, options = bind(op, (self, *args) if self_is_input else args, dict(kwargs))
        return impl(self, op, inputs, params, options)

    method.__name__ = method.__qualname__ = op.name
    sig = signature(op)
    if self_is_input:
        sig = sig.replace(parameters=list(sig.parameters.values())[1:])
    method.__signature__ = sig
    method.__doc__ = f"{op.doc}. {doc_suffix}"
    return method


def install(cls, impl, doc_suffix: str, self_is_input: bool = False) -> None:
    """Give `cls` one method per catalog op and alias, each handing its bound call to `impl`; a method
    the class writes itself (Tensor.sum with its axis) stays."""
    for op in CATALOG:
        for name in (op.name, *op.aliases):
            if name not in cls.__dict__:
                setattr(cls, name, make_method(op, impl, doc_suffix, self_is_input))
