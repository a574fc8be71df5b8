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

import array
import math
from numbers import Real

from . import ops
from .calls import install
from .errors import TruenoTypeError, TruenoValueError
from .expr import Expr, realize
from .host import HostData, to_host
from .resident import DeviceArray
from .views import Views, axes_tuple, axis_index


class Tensor(Views):
    """A lazy float32 array on one device (see the module docstring)."""

    __slots__ = ("device", "expr", "shape", "__weakref__")
    __array_priority__ = 1000  # numpy_array + tensor gives a Tensor
    dtype = "float32"

    def __init__(self, device, expr: Expr):
        self.device = device
        self.expr = expr
        self.shape: tuple[int, ...] = expr.shape  # read on every op: an attribute (realize keeps the shape)

    # ------------------------------------------------------------ shape

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
        return f"Tensor(shape={self.shape}, dtype=float32, backend={self.device.backend!r})"

    def contiguous(self) -> Tensor:
        """This tensor in row-major memory of its own (a copy only where it is a strided view)."""
        if self.expr.view is None or (self._layout()[2] == 0 and self._row_major()):
            return self
        return _op("copy", self)

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

    def __matmul__(self, other):
        return matmul(self, other)

    def __rmatmul__(self, other):
        return matmul(other, self)

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
        if _is_scalar(other):
            return _op("scale", self, s=float(other))
        return _op("mul", self, other)

    def __rmul__(self, other):
        return self.__mul__(other)

    def __bool__(self):
        raise TruenoTypeError("the truth value of a lazy tensor is unknown until it runs; use `await t.item()`")

    # ------------------------------------------------------------ reductions and axis ops

    def sum(self, axis=None, keepdims=False):
        return _reduce("sum", self, axis, keepdims)

    def max(self, axis=None, keepdims=False):
        return _reduce("max", self, axis, keepdims)

    def min(self, axis=None, keepdims=False):
        return _reduce("min", self, axis, keepdims)

    def prod(self, axis=None, keepdims=False):
        return _reduce("prod", self, axis, keepdims)

    def norm_l1(self, axis=None, keepdims=False):
        return _reduce("norm_l1", self, axis, keepdims)

    def norm_l2(self, axis=None, keepdims=False):
        return _reduce("norm_l2", self, axis, keepdims)

    def mean(self, axis=None, keepdims=False):
        n = _count(self, axis)
        total = self.sum(axis, keepdims)
        return total * (1.0 / n) if n else total * math.nan

    def var(self, axis=None, keepdims=False, ddof: int = 0):
        centred = self - self.mean(axis, keepdims=True)
        n = _count(self, axis) - ddof
        total = (centred * centred).sum(axis, keepdims)
        return total * (1.0 / n) if n > 0 else total * math.nan

    def std(self, axis=None, keepdims=False, ddof: int = 0):
        return self.var(axis, keepdims, ddof).sqrt()

    def argmax(self, axis=None, keepdims=False):
        """Index of the first largest element along `axis` (None: of the flattened tensor), as float32
        (exact up to 2^24); the first NaN where there is one, as NumPy."""
        return _arg(self, axis, keepdims, "max")

    def argmin(self, axis=None, keepdims=False):
        """Index of the first smallest element along `axis`; see argmax."""
        return _arg(self, axis, keepdims, "min")

    def softmax(self, axis: int = -1):
        return _softmax("softmax", self, axis)

    def log_softmax(self, axis: int = -1):
        return _softmax("log_softmax", self, axis)

    # ------------------------------------------------------------ running

    async def numpy(self):
        """Run what this tensor needs (one batch) and download it: a float32 NumPy array of its shape
        (a flat array.array('f') where NumPy is missing)."""
        await realize(self)
        base, _, _ = self._layout()
        data = await base.leaf.read()
        if base.shape != self.shape and hasattr(data, "reshape"):  # a reshape, or a prefix (x[0] of x)
            data = data.reshape(-1)[: self.size].reshape(self.shape)
        elif math.prod(base.shape) != self.size and hasattr(data, "__len__"):
            data = data[: self.size]
        return data

    read = numpy

    async def item(self) -> float:
        """The value of a one-element tensor, as a Python float."""
        if self.size != 1:
            raise TruenoValueError(f"item() needs a tensor of one element; this one has shape {self.shape}")
        data = await self.numpy()
        return float(data.reshape(-1)[0] if hasattr(data, "reshape") else data[0])

    def numpy_sync(self):
        """numpy() without await, where runtime.sync_available() (desktop; JSPI in the browser)."""
        from .runtime import block_on

        return block_on(self.numpy())

    def __float__(self) -> float:
        from .runtime import block_on

        return block_on(self.item())

    def __array__(self, dtype=None, copy=None):
        out = self.numpy_sync()
        return out if dtype is None else out.astype(dtype)


# ---------------------------------------------------------------- building expressions


def _count(t: Tensor, axis) -> int:
    return math.prod(t.shape[a] for a in axes_tuple(axis, t.ndim, "mean"))


def _is_scalar(x) -> bool:
    return isinstance(x, Real) and not isinstance(x, bool)


def asarray(data, device=None, shape=None) -> Tensor:
    """A Tensor on `device` from host data (converted to float32), a DeviceArray or a Tensor."""
    if isinstance(data, Tensor):
        if device is not None and data.device is not device:
            raise TruenoValueError("this tensor is on another device; read it and make a new one there")
        return data
    if isinstance(data, DeviceArray):
        if device is not None and data.device is not device:
            raise TruenoValueError("this DeviceArray is on another device; upload the data to this device")
        data.check_alive()
        return Tensor(data.device, Expr(data.shape, leaf=data))
    if device is None:
        raise TruenoTypeError("asarray needs device= for host data (e.g. tw.asarray(x, device=dev))")
    device.check_open()
    if _is_scalar(data):
        host = to_host([float(data)])
        host = HostData(host.data, ())
    else:
        host = to_host(data, shape)
    device.executor.check_size(host.size * 4, "this input")
    return Tensor(device, Expr(host.shape, leaf=host))


def broadcast_shapes(*shapes) -> tuple[int, ...]:
    """NumPy's broadcast of shapes, or a TruenoValueError naming them."""
    if all(s == shapes[0] for s in shapes):
        return tuple(shapes[0]) if shapes else ()
    ndim = max(map(len, shapes), default=0)
    out = []
    for d in range(ndim):
        sizes = {s[d - ndim + len(s)] for s in shapes if d - ndim + len(s) >= 0} - {1}
        if len(sizes) > 1:
            raise TruenoValueError(f"shapes {' and '.join(map(str, shapes))} do not broadcast (NumPy's rules)")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def _tensors(args) -> list[Tensor]:
    """Tensors of the arguments of one op: one device, Python scalars and host data moved onto it."""
    device = args[0].device if args and type(args[0]) is Tensor else None
    if device is not None and all([type(a) is Tensor and a.device is device for a in args]):
        return list(args)  # the common case, checked first: tensors of one device
    devices = {id(a.device): a.device for a in args if isinstance(a, (Tensor, DeviceArray))}
    if len(devices) > 1:
        raise TruenoValueError("these tensors are on different devices; read one and make it a tensor of the other's")
    if not devices:
        raise TruenoTypeError("an op on tensors needs at least one Tensor argument")
    device = next(iter(devices.values()))
    return [asarray(a, device) for a in args]


def _op(name: str, *args, **params) -> Tensor:
    """One catalog op on tensors: elementwise inputs broadcast to one shape (views, never copies)."""
    op = ops.get(name)
    return _method(None, op, args, tuple([float(params.get(p.name, p.default)) for p in op.params]), {})


def _record(op, inputs: list[Tensor], params=(), options=None) -> Tensor:
    shape, options = op.row.shape(op, [t.shape for t in inputs], options or {})
    return Tensor(
        inputs[0].device, Expr(shape, op=op, inputs=tuple([t.expr for t in inputs]), params=params, options=options)
    )


ONE_ROW_MAX = 1 << 16  # a single row longer than this reduces as a full reduction (many workgroups, no loop limit)


def _reduce(name: str, t: Tensor, axis, keepdims: bool) -> Tensor:
    """A reduction over `axis` (None: all): rows of the reduced axes, one per element of the kept ones."""
    op = ops.get(name)
    axes = axes_tuple(axis, t.ndim, name)
    kept = [d for d in range(t.ndim) if d not in axes]
    out_shape = (
        tuple(1 if d in axes else t.shape[d] for d in range(t.ndim)) if keepdims else tuple(t.shape[d] for d in kept)
    )
    if not axes:
        return t.contiguous().reshape(out_shape)
    rows = math.prod(t.shape[d] for d in kept)
    if not kept or (rows == 1 and t.size > ONE_ROW_MAX):  # all of it: the full reduction reads row-major memory
        out = _record(op, [t.contiguous()])
    else:  # rows of the reduced axes: the row kernel reads any view, and the chain feeding it
        order = kept + list(axes)
        out = _record(op, [t if order == sorted(order) else t.permute(order)], (), {"rows": rows})
    return out if out.shape == out_shape else out.reshape(out_shape)


def _arg(t: Tensor, axis, keepdims: bool, extreme: str) -> Tensor:
    """min over `axis` of where(t is the extreme or NaN, its index, n): two reductions, one row kernel."""
    if axis is None:
        out = _arg(t.reshape(-1), 0, False, extreme)
        return out.reshape((1,) * t.ndim) if keepdims else out
    a = axis_index(axis, t.ndim, f"arg{extreme}")
    n = t.shape[a]
    if n == 0:
        raise TruenoValueError(f"arg{extreme} along an empty axis (axis {axis} of {t.shape}) has no value")
    index = asarray(array.array("f", range(n)), t.device).reshape([n if d == a else 1 for d in range(t.ndim)])
    hit = (t == _reduce(extreme, t, a, True)).maximum(t != t)
    return Tensor.where(hit, index, float(n)).min(a, keepdims=keepdims)


def _softmax(name: str, t: Tensor, axis: int) -> Tensor:
    """Written with tensor ops, so it is one row kernel with what feeds it and what uses it (the catalog's
    softmax kernel serves one-shot calls and batches): exp(x - max) / sum, or x - max - log(sum(exp))."""
    if t.ndim == 0:
        raise TruenoValueError(f"{name} needs at least one dimension; got a 0-d tensor")
    a = axis_index(axis, t.ndim, name)
    if t.shape[a] == 0:
        return t
    shifted = t - t.max(a, keepdims=True)
    if name == "softmax":
        e = shifted.exp()
        return e / e.sum(a, keepdims=True)
    return shifted - shifted.exp().sum(a, keepdims=True).log()


def matmul(a, b) -> Tensor:
    """a @ b with NumPy's rules: 1-D operands are vectors; (..., M, K) @ (..., K, N) broadcasts the batch
    dimensions, one kernel for the whole batch (kinds._matmul_batch): an operand broadcast along a batch
    dimension reads its one matrix there, never copied (an expanded view included), and (..., M, K) @
    (K, N) folds the batch into M. An operand that is otherwise not row-major (a transposed matrix, a
    slice) is copied first."""
    a, b = _tensors([a, b])
    if a.ndim == 0 or b.ndim == 0:
        raise TruenoValueError(f"matmul needs operands of at least one dimension; got {a.shape} @ {b.shape}")
    va, vb = a.ndim == 1, b.ndim == 1
    a2 = a.unsqueeze(0) if va else a
    b2 = b.unsqueeze(-1) if vb else b
    if a2.shape[-1] != b2.shape[-2]:
        raise TruenoValueError(f"matmul: inner dimensions differ: {a.shape} @ {b.shape}")
    op = ops.get("matmul")
    shape, _ = op.row.shape(op, [a2.shape, b2.shape], {})  # batch dimensions that do not broadcast raise here

    def unbroadcast(t: Tensor) -> Tensor:
        """t cut to size 1 along its broadcast (stride 0, wholly valid) batch dimensions: the kind broadcasts
        them again. A padded dimension is partly zeros, so it stays (the copy materialises it)."""
        strides, mask = t._layout()[1], t._mask()
        cut = {d for d in range(t.ndim - 2) if strides[d] == 0 and t.shape[d] > 1 and mask[d] == (0, t.shape[d])}
        return t[tuple(slice(0, 1) if d in cut else slice(None) for d in range(t.ndim))] if cut else t

    out = _record(op, [unbroadcast(a2).contiguous(), unbroadcast(b2).contiguous()])
    if out.shape != shape:  # both operands broadcast along a dimension: the same products, a view
        out = out.expand(shape)
    if va:
        out = out.squeeze(-2)
    return out.squeeze(-1) if vb else out


# ---------------------------------------------------------------- catalog ops as methods and functions


def _method(self, op, inputs, params, options):
    tensors = _tensors(inputs)
    if not op.elementwise:
        return _record(op, tensors, params, options)
    shape = tensors[0].shape
    if len(tensors) > 1 and any([t.shape != shape for t in tensors]):
        shape = broadcast_shapes(*(t.shape for t in tensors))
        tensors = [t if t.shape == shape else t.expand(shape) for t in tensors]
    # the map kinds' shape rule (equal shapes in, that shape out) holds by construction: no _record
    return Tensor(tensors[0].device, Expr(shape, op=op, inputs=tuple([t.expr for t in tensors]), params=params))


install(Tensor, _method, "Lazy: returns a Tensor; NumPy broadcasting.", self_is_input=True)
