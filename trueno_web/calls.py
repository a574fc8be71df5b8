"""Turn a catalog row into a method: argument binding, checks at call time, signature and docstring.

Device methods and batch methods are both made here from `ops.CATALOG`, so they accept the same
arguments and reject bad ones with the same messages.
"""

from __future__ import annotations

import collections.abc
import inspect
import math
import os
from numbers import Real
from types import CoroutineType

from .dtypes import dtype_of
from .errors import TruenoError, TruenoTypeError
from .op_row import Op
from .ops import CATALOG

# TRUENO_WEB_TRACEBACK=full keeps the library's own frames in the tracebacks of its errors.
FULL_TRACEBACKS = os.environ.get("TRUENO_WEB_TRACEBACK", "").lower() == "full"


def _at_the_call(error: TruenoError) -> TruenoError:
    """The error with the library's frames dropped: raised again from a public entry point, its
    traceback ends at the caller's line and that entry point (pytest hides the entry point too)."""
    return error if FULL_TRACEBACKS else error.with_traceback(None)


class Pending(collections.abc.Coroutine):
    """What a one-shot device call (and `t.numpy()`, `t.item()`) returns: the call, not run yet; `await` it.

    A coroutine (asyncio.run, create_task, gather and block_on take it) whose repr says what it is,
    `<pending relu(...): await it>`, and whose trueno_web errors end at the line that awaited it. Using it
    as the result (indexing, arithmetic, comparisons, float(), a format spec) raises TruenoTypeError that
    says to await it."""

    __slots__ = ("_coro", "name", "call")

    def __init__(self, name: str, coro, call: str | None = None):
        self.name = name
        self._coro = coro
        self.call = call or f"{name}(...)"  # how the call reads: "relu(...)", "t.numpy()"

    def __repr__(self) -> str:
        return f"<pending {self.call}: await it>"

    def _not_awaited(self, *args):
        raise TruenoTypeError(
            f"{self.call} has not run yet: it is a pending call, not its result; write `await` before it "
            f"(`await {self.call if self.call.startswith('t.') else 'dev.' + self.call}`)"
        )

    __getitem__ = __float__ = __int__ = __lt__ = __le__ = __gt__ = __ge__ = _not_awaited
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _not_awaited

    def __format__(self, spec: str) -> str:
        if spec:
            self._not_awaited()
        return repr(self)

    def __await__(self):
        __tracebackhide__ = True
        try:
            return (yield from self._coro.__await__())
        except TruenoError as e:
            raise _at_the_call(e)  # trueno_web's frames left out: the error is in the awaited call

    def send(self, value):
        __tracebackhide__ = True
        try:
            return self._coro.send(value)
        except TruenoError as e:
            raise _at_the_call(e)  # trueno_web's frames left out: the error is in the awaited call

    def throw(self, *exc):
        return self._coro.throw(*exc)

    def close(self) -> None:
        self._coro.close()


def bind(op: Op, args: tuple, kwargs: dict) -> tuple[tuple, tuple[float, ...], dict]:
    """(inputs, scalar params, options) from a call's arguments, or a clear TypeError."""
    names = op.inputs
    if not kwargs and len(args) == len(names) and not op.params and not op.options:
        return args, (), {}  # the common call, on a fast path: its inputs and nothing else
    if len(args) < len(names):
        missing = ", ".join(names[len(args) :])
        raise TruenoTypeError(f"{op.name}() needs {len(names)} array argument(s): missing {missing}")
    inputs, rest = args[: len(names)], list(args[len(names) :])
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
            raise TruenoTypeError(
                f"{op.name}(): {p.name} must be a real number, got {type(value).__name__} {value!r:.40}"
            )
        try:
            params.append(float(value))
        except OverflowError:
            params.append(
                math.inf if value > 0 else -math.inf
            )  # an int past float range: float32 would round it to inf
    options = {}
    for name in op.options:
        if name in kwargs:
            value = kwargs.pop(name)
            if name == "dtype":  # astype's target
                options[name] = dtype_of(value)
                continue
            if name in ("descending", "side", "scale", "causal"):  # the kind's shape rule checks these
                options[name] = value
                continue
            negative = value is not None and name != "axis" and value < 0  # an axis counts from the end
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or negative):
                raise TruenoTypeError(f"{op.name}(): {name} must be a non-negative int, got {value!r:.40}")
            options[name] = value
    if kwargs:
        raise TruenoTypeError(f"{op.name}() got unexpected argument(s) {', '.join(sorted(kwargs))}")
    return inputs, tuple(params), options


def signature(op: Op, first: str = "self") -> inspect.Signature:
    """The signature shown by help(): inputs, scalar params, options."""
    P = inspect.Parameter
    params = [P(first, P.POSITIONAL_ONLY)] + [P(n, P.POSITIONAL_OR_KEYWORD) for n in op.inputs]
    params += [
        P(p.name, P.POSITIONAL_OR_KEYWORD, **({} if p.default is None else {"default": p.default})) for p in op.params
    ]
    params += [P(o, P.KEYWORD_ONLY, default=None) for o in op.options]
    return inspect.Signature(params)


def make_method(op: Op, impl, doc_suffix: str, self_is_input: bool = False):
    """A method named after the op that binds its arguments and hands them to `impl(self, op, ...)`;
    `self_is_input`: the object is the op's first input (a Tensor), not a device or batch."""

    def method(self, *args, **kwargs):
        __tracebackhide__ = True
        try:
            inputs, params, options = bind(op, (self, *args) if self_is_input else args, dict(kwargs))
            result = impl(self, op, inputs, params, options)
        except TruenoError as e:
            raise _at_the_call(e)  # trueno_web's frames left out: the error is in the call above
        if isinstance(result, CoroutineType):
            result.__name__ = result.__qualname__ = f"{type(self).__name__}.{op.name}"  # in 'never awaited'
            return Pending(op.name, result)
        return result

    method.__name__ = method.__qualname__ = op.name
    sig = signature(op)
    if self_is_input:
        sig = sig.replace(parameters=list(sig.parameters.values())[1:])
    method.__signature__ = sig
    method.__doc__ = f"{op.doc}. {doc_suffix}"
    return method


def install(cls, impl, doc_suffix: str, self_is_input: bool = False) -> None:
    """Give `cls` one method per catalog op and alias, each handing its bound call to `impl`; a method
    the class or a mixin of it writes itself (Tensor.sum with its axis) stays."""
    own = {name for c in cls.__mro__[:-1] for name in c.__dict__}  # [:-1]: not object's
    for op in CATALOG:
        for name in (op.name, *op.aliases):
            if name not in own:
                setattr(cls, name, make_method(op, impl, doc_suffix, self_is_input))
