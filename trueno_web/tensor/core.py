"""Lazy tensors: NumPy-style expressions recorded as a graph, run as one batch when a result is needed.

A Tensor is (device, expression). Nothing runs until `await t.numpy()`, `await t.item()` or
`await tw.realize(a, b, ...)`: then the expressions become one GpuCommandBatch (elementwise chains
fused, each shared subexpression computed once), one execute, and the realised tensors keep their
results on the device as DeviceArrays; their expressions are dropped.

Movement ops (reshape, transpose/permute, expand, squeeze/unsqueeze, slicing with steps, broadcasting)
change the view, not the data: an elementwise kernel reads a view through index arithmetic. A copy
(the `copy` op) runs only where a kernel needs row-major memory: the input of a full reduction or a
matmul that is not already row-major, a reshape of a strided view, and a strided result that is read.
Shape, axis and device mistakes raise TruenoValueError where the expression is written.
"""

from __future__ import annotations

import math
from numbers import Number, Real

from .. import ops
from ..calls import Pending, install
from ..dtypes import (
    DType,
    check_held,
    dtype_of,
    float32,
    input_dtypes,
    result_type,
    signature,
    weak_dtype,
    written,
)
from ..errors import TruenoTypeError, TruenoValueError
from ..resident import DeviceArray
from ..runtime import block_on
from .api import ArrayApi
from .expr import Expr, constant, leaf
from .index import Indexing
from .linalg import Linalg
from .lower import realize
from .reduce import Reductions
from .scans import Scans
from .sorting import Sorting
from .views import Views, broadcast_shapes

ASTYPE = ops.get("astype")
POW, SQUARE, MUL = ops.get("pow"), ops.get("square"), ops.get("mul")


class Tensor(ArrayApi, Indexing, Views, Reductions, Scans, Linalg, Sorting):
    """A lazy array of one dtype on one device (see the module docstring). The mixins' hooks are at the end
    of the class: `_new`, `_const`, `_apply`, `_tensors`."""

    __slots__ = ("device", "expr", "shape", "__weakref__")
    __array_priority__ = 1000  # numpy_array + tensor gives a Tensor

    def __init__(self, device, expr: Expr):
        if expr.dtype.wide:  # float64, int64, complex: where the device's backend holds them (dtypes.check_held)
            check_held(expr.dtype, device.executor.backend, device.executor.dtypes)
        self.device = device
        self.expr = expr
        self.shape: tuple[int, ...] = expr.shape  # read on every op: an attribute (realize keeps the shape)

    # ------------------------------------------------------------ shape

    @property
    def dtype(self) -> DType:
        return self.expr.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __len__(self) -> int:
        if not self.shape:
            raise TruenoTypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"Tensor(shape={self.shape}, dtype={self.dtype}, backend={self.device.backend!r})"

    def astype(self, dtype, copy: bool = True) -> Tensor:
        """This tensor converted to `dtype` (a trueno_web dtype or its name): float to integer truncates toward
        zero (saturating; NaN: 0), to bool is x != 0, integer to integer wraps. The same dtype: this tensor's
        values (a tensor of its own with copy=True). Complex to a real dtype is refused (the standard's rule:
        say which component, real() or imag())."""
        target = dtype_of(dtype)
        if self.dtype.kind == "complex" and target.kind not in ("complex", "bool"):
            raise TruenoTypeError(
                f"astype({target.name}) of a {self.dtype.name} tensor would drop a component; convert "
                f"tw.real(x) or tw.imag(x) instead"
            )
        if target is self.dtype:
            return Tensor(self.device, self.expr) if copy else self
        return Tensor(self.device, Expr(self.shape, op=ASTYPE, inputs=(self.expr,), dtype=target))

    # ------------------------------------------------------------ operators

    def __add__(self, other):
        return _op("add", self, other)

    def __radd__(self, other):
        return _op("add", other, self)

    def __sub__(self, other):
        return _op("sub", self, other)

    def __rsub__(self, other):
        return _op("sub", other, self)

    def __truediv__(self, other):
        return _op("div", self, other)

    def __rtruediv__(self, other):
        return _op("div", other, self)

    def __pow__(self, other):
        return _op("pow", self, other)

    def __rpow__(self, other):
        return _op("pow", other, self)

    def __neg__(self):
        return _op("neg", self)

    def __abs__(self):
        return _op("abs", self)

    def __lt__(self, other):
        return _op("lt", self, other)

    def __le__(self, other):
        return _op("le", self, other)

    def __gt__(self, other):
        return _op("gt", self, other)

    def __ge__(self, other):
        return _op("ge", self, other)

    def __eq__(self, other):
        return _op("eq", self, other)

    def __ne__(self, other):
        return _op("ne", self, other)

    __hash__ = object.__hash__

    def __mul__(self, other):
        if _is_scalar(other) and self.dtype is float32:
            return _op("scale", self, s=float(other))
        return _op("mul", self, other)

    def __rmul__(self, other):
        return self.__mul__(other)

    def __and__(self, other):
        return _op("bitwise_and", self, other)

    def __rand__(self, other):
        return _op("bitwise_and", other, self)

    def __or__(self, other):
        return _op("bitwise_or", self, other)

    def __ror__(self, other):
        return _op("bitwise_or", other, self)

    def __xor__(self, other):
        return _op("bitwise_xor", self, other)

    def __rxor__(self, other):
        return _op("bitwise_xor", other, self)

    def __invert__(self):
        return _op("bitwise_invert", self)

    def __lshift__(self, other):
        return _op("bitwise_left_shift", self, other)

    def __rlshift__(self, other):
        return _op("bitwise_left_shift", other, self)

    def __rshift__(self, other):
        return _op("bitwise_right_shift", self, other)

    def __rrshift__(self, other):
        return _op("bitwise_right_shift", other, self)

    def __pos__(self):
        return Tensor(self.device, self.expr)

    # ------------------------------------------------------------ running

    def numpy(self) -> Pending:
        """Run what this tensor needs (one batch) and download it: a NumPy array of its dtype and shape
        (an NDResult where NumPy is missing). Await it: `await t.numpy()`."""
        return Pending("numpy", self._numpy(), "t.numpy()")

    async def _numpy(self):
        await realize(self)
        base = self.expr.layout()[0]
        data = await base.leaf.read()
        if base.shape != self.shape and hasattr(data, "reshape"):  # a reshape, or a prefix (x[0] of x)
            data = data.reshape(-1)[: self.size].reshape(self.shape)
        elif math.prod(base.shape) != self.size and hasattr(data, "__len__"):
            data = data[: self.size]
        return data

    read = numpy

    def item(self) -> Pending:
        """The value of a one-element tensor, as a Python scalar (float, int or bool). Await it:
        `await t.item()`."""
        if self.size != 1:
            raise TruenoValueError(f"item() needs a tensor of one element; this one has shape {self.shape}")
        return Pending("item", self._item(), "t.item()")

    async def _item(self):
        data = await self._numpy()
        value = (data.reshape(-1) if hasattr(data, "reshape") else data)[0]
        return value.item() if hasattr(value, "item") else value  # a NumPy scalar, or an NDResult's Python one

    def numpy_sync(self):
        """numpy() without await, where runtime.sync_available() (desktop; JSPI in the browser)."""
        return block_on(self.numpy())

    def __array__(self, dtype=None, copy=None):
        out = self.numpy_sync()
        return out if dtype is None else out.astype(dtype)

    # ------------------------------------------------------------ the mixins' hooks

    def _new(self, expr: Expr) -> Tensor:
        """A tensor of `expr` on this tensor's device."""
        return Tensor(self.device, expr)

    def _const(self, value) -> Tensor:
        """A number (0-d) or host data as a tensor on this tensor's device."""
        return Tensor(self.device, leaf(self.device, value))

    def _apply(self, op, inputs: list[Tensor], params=(), options=None) -> Tensor:
        """A catalog op on tensors of this device, converted to the dtype it computes in; its shape from the
        op's kind (which checks it)."""
        inputs, dtype = _typed(op, inputs)
        shape, options = op.row.shape(op, [t.shape for t in inputs], options or {})
        ins = tuple([t.expr for t in inputs])
        expr = Expr(shape, op=op, inputs=ins, params=params, options=options, dtype=written(op, dtype))
        return _rounded(Tensor(self.device, expr), dtype)

    @staticmethod
    def _tensors(args) -> list[Tensor]:
        return as_tensors(args)


# ---------------------------------------------------------------- building expressions


def _is_scalar(x) -> bool:
    return isinstance(x, Real) and not isinstance(x, bool)


def _is_number(x) -> bool:
    return type(x) in (float, int, bool) or isinstance(x, Number)


def as_tensors(args, shape: tuple[int, ...] | None = None) -> list[Tensor]:
    """Tensors of the arguments of one op: one device, Python scalars (weakly typed: dtypes.weak_dtype)
    and host data moved onto it. `shape`: an elementwise op's, where its arguments hold numbers: they come
    broadcast to it, as constants kept by the device (expr.constant)."""
    device = args[0].device if args and type(args[0]) is Tensor else None
    if device is not None and all([type(a) is Tensor and a.device is device for a in args]):
        return list(args)  # the common case, checked first: tensors of one device
    arrays = [a for a in args if isinstance(a, (Tensor, DeviceArray))]
    devices = {id(a.device): a.device for a in arrays}
    if len(devices) > 1:
        raise TruenoValueError("these tensors are on different devices; read one and make it a tensor of the other's")
    if not devices:
        raise TruenoTypeError("an op on tensors needs at least one Tensor argument")
    device = arrays[0].device
    if len(arrays) == len(args):
        return [a if type(a) is Tensor else Tensor(device, leaf(device, a)) for a in args]
    strong = result_type(*[a.dtype for a in arrays])
    if shape is not None:
        shape = broadcast_shapes(*[a.shape for a in arrays])
    return [
        a
        if type(a) is Tensor
        else Tensor(device, leaf(device, a))
        if isinstance(a, DeviceArray)
        else Tensor(device, constant(device, a, weak_dtype(a, strong), shape or ()))
        if _is_number(a)
        else Tensor(device, leaf(device, a))
        for a in args
    ]


_TYPED: dict[tuple, tuple] = {}  # (op name, *input dtype names) -> (the dtypes its inputs take, the dtype it returns,
# the dtype it computes in)


def _typed(op, ts: list[Tensor]) -> tuple[list[Tensor], DType]:
    """The inputs converted to the dtypes `op` computes in (a where's condition to bool), and the dtype it
    returns (dtypes.signature)."""
    key = (op.name, *[t.expr.dtype.name for t in ts])  # names: a DType hashes in Python
    typed = _TYPED.get(key)
    if typed is None:
        have = [t.expr.dtype for t in ts]
        compute, out = signature(op, have)
        typed = _TYPED[key] = input_dtypes(op, have, compute), out, compute
    wanted, out, compute = typed
    if compute.wide:  # int32 with uint32 is int64: say so where the device has none
        names = " and ".join(dict.fromkeys(key[1:]))
        check_held(compute, ts[0].device.executor.backend, ts[0].device.executor.dtypes, f"{op.name} of {names}: ")
    return [t if t.expr.dtype is d else t.astype(d, copy=False) for t, d in zip(ts, wanted)], out


def _op(name: str, *args, **params) -> Tensor:
    """One catalog op on tensors: elementwise inputs broadcast to one shape (views, never copies)."""
    op = ops.get(name)
    return _method(None, op, args, tuple([float(params.get(p.name, p.default)) for p in op.params]), {})


# ---------------------------------------------------------------- catalog ops as methods and functions


def _method(self, op, inputs, params, options):
    if op is POW and _small_power(*inputs):  # one or two multiplies, not pow's logarithm and exponential
        return _product_power(inputs[0], inputs[1])
    ts = as_tensors(inputs, () if op.elementwise else None)
    if not op.elementwise:
        return ts[0]._apply(op, ts, params, options)
    ts, dtype = _typed(op, ts)
    shape = ts[0].shape
    if len(ts) > 1 and any([t.shape != shape for t in ts]):
        shape = broadcast_shapes(*(t.shape for t in ts))
        ts = [t if t.shape == shape else t.expand(shape) for t in ts]
    # the map kinds' shape rule (equal shapes in, that shape out) holds by construction: no _apply
    expr = Expr(shape, op=op, inputs=tuple([t.expr for t in ts]), params=params, dtype=written(op, dtype))
    return _rounded(Tensor(ts[0].device, expr), dtype)


def _small_power(base, exponent) -> bool:
    """Is pow(base, exponent) computed as products (`_product_power`) with the same dtype: a tensor (not bool) to the
    Python number 2, 3 or 4 (a float one only where the tensor's kind is float or complex: an integer tensor's
    result would be float)?"""
    if type(base) is not Tensor or type(exponent) not in (int, float) or exponent not in (2, 3, 4):
        return False
    kind = base.dtype.kind
    return kind in ("float", "complex") or (type(exponent) is int and kind != "bool")


def _product_power(t: Tensor, n) -> Tensor:
    """t ** n for n in (2, 3, 4) as products, as JAX's integer_pow (NumPy's fast path for 2): square(t), the
    correctly rounded square pow's definition gives; square(t) * t and square(square(t)), two roundings (within 1
    and 1.5 ulp; pow's kernels are within 3). Integers wrap as pow's do."""
    square = _method(None, SQUARE, (t,), (), {})
    if n == 2:
        return square
    return _method(None, MUL, (square, t), (), {}) if n == 3 else _method(None, SQUARE, (square,), (), {})


def _rounded(t: Tensor, out: DType) -> Tensor:
    """`t` as the dtype its op returns: an op of float16 inputs computed in float32, rounded (dtypes.written)."""
    return t if t.expr.dtype is out else t.astype(out, copy=False)


install(Tensor, _method, "Lazy: returns a Tensor; NumPy broadcasting.", self_is_input=True)
