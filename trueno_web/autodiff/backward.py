"""Reverse mode on the lazy expression graph: from output tensors and their cotangents, the cotangents
of chosen tensors, as new lazy tensors (nothing runs). Each expression is visited once, outputs first;
the cotangents of an expression read by several others are added. The backward expressions read the
forward ones (the same Expr objects), so realising a loss and its gradients together computes each
forward value once, in one batch."""

from __future__ import annotations

import math

from ..errors import TruenoTypeError, TruenoValueError
from ..kinds import Kind
from ..tensor import Tensor, asarray, matmul
from ..tensor.linalg import attention_weights
from .rules import ELEMENTWISE, INDEXING, REDUCTIONS
from .unview import unview

REDUCE = {"sum": Tensor.sum, "prod": Tensor.prod}  # what the reduction rules total with


def zeros(like: Tensor, shape) -> Tensor:
    """0.0 of `shape` on like's device: one scalar, broadcast (a view)."""
    return asarray(0.0, like.device).expand(tuple(shape))


def backward(outputs: list[Tensor], cotangents: list[Tensor], wrt: list[Tensor]) -> list[Tensor]:
    """d(sum of <output, cotangent>)/d(each of `wrt`); zeros where an input does not reach the outputs."""
    targets = {id(t.expr) for t in wrt}
    order, reach = _reaching(outputs, targets)
    grads: dict[int, Tensor] = {}
    for out, ct in zip(outputs, cotangents):
        _add(grads, out.expr, ct)
    device = outputs[0].device
    for e in reversed(order):
        g = grads.get(id(e))
        if g is None or id(e) in targets or e.leaf is not None:
            continue
        inputs = [Tensor(device, i) for i in e.inputs]
        if e.view is not None:
            _add(grads, e.inputs[0], unview(g, e.view, e.inputs[0].shape, lambda s: zeros(g, s)))
            continue
        for i, gi in zip(e.inputs, _vjp(e, g, inputs, Tensor(device, e))):
            if gi is not None and id(i) in reach:
                _add(grads, i, gi)
    return [grads[id(t.expr)] if id(t.expr) in grads else zeros(t, t.shape) for t in wrt]


def _reaching(outputs: list[Tensor], targets: set[int]) -> tuple[list, set[int]]:
    """The expressions under `outputs` that depend on a target, children before parents (no recursion),
    and their ids."""
    seen, order, stack = set(), [], [o.expr for o in outputs]
    while stack:
        e = stack.pop()
        if e is None:
            order.append(stack.pop())
        elif id(e) not in seen:
            seen.add(id(e))
            stack += (e, None)
            if id(e) not in targets:
                stack += e.inputs
    reach: set[int] = set()
    for e in order:
        if id(e) in targets or any(id(i) in reach for i in e.inputs):
            reach.add(id(e))
    return [e for e in order if id(e) in reach], reach


def _add(grads: dict, e, g: Tensor) -> None:
    if g.shape != e.shape:
        raise TruenoValueError(f"a gradient of shape {g.shape} for a value of shape {e.shape}")
    old = grads.get(id(e))
    grads[id(e)] = g if old is None else old + g


def _vjp(e, g: Tensor, xs: list[Tensor], y: Tensor):
    """The cotangents of e's inputs."""
    op = e.op
    if op.elementwise:
        return ELEMENTWISE[op.name](g, xs, y, e.params)
    if op.kind == Kind.REDUCE:
        return _reduction(e, g, xs, y)
    if op.name in INDEXING:
        return INDEXING[op.name](g, xs, y, e.options)
    if op.kind == Kind.MATMUL:
        return _matmul(e, g, xs)
    if op.kind == Kind.SOFTMAX:
        return _softmax(op.name, g, y)
    if op.kind == Kind.CONV2D:
        return _conv2d(g, xs)
    if op.kind == Kind.SCAN:
        return _scan(op.name, e, g, xs, y)
    if op.kind == Kind.ATTENTION:
        return _attention(e.options, g, xs, y)
    raise TruenoTypeError(f"{op.name} has no gradient rule")


def _kept(out_shape, in_shape) -> int:
    """How many leading input dimensions a reduction kept: it reads its input as rows of the trailing ones
    (the tensor layer puts the kept axes first), one result per row; 0 for a full reduction."""
    rows = math.prod(out_shape)
    return next((k for k in range(len(in_shape) + 1) if math.prod(in_shape[:k]) == rows), 0)


def _reduction(e, g: Tensor, xs: list[Tensor], y: Tensor):
    shape = xs[0].shape
    k = _kept(e.shape, shape) if e.options.get("rows") is not None else 0
    axes = tuple(range(k, len(shape)))

    def back(t: Tensor) -> Tensor:
        return t.reshape(shape[:k] + (1,) * len(axes)).expand(shape)

    def total(t: Tensor, name: str) -> Tensor:
        return back(REDUCE[name](t, axes))

    return REDUCTIONS[e.op.name](back(g), xs, back(y), total)


def _scan(name: str, e, g: Tensor, xs: list[Tensor], y: Tensor):
    """A running sum's cotangent is the running sum of g from the end of each row; a running product's that of
    g * y, over x (exact where x has no zeros, as the quotient rule)."""
    x = xs[0]
    rows = e.options.get("rows") or 1
    if not x.size:
        return (g,)
    t = (g if name == "cumulative_sum" else g * y).reshape(rows, x.size // rows)[:, ::-1]
    back = t.cumulative_sum(axis=1)[:, ::-1].reshape(x.shape)
    return (back if name == "cumulative_sum" else back / x,)


def _sum_to(t: Tensor, shape) -> Tensor:
    """t summed over the dimensions it was broadcast along to get from `shape` (NumPy's rules)."""
    lead = t.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + d for d, n in enumerate(shape) if n == 1 and t.shape[lead + d] != 1)
    return (t.sum(axes, keepdims=True) if axes else t).reshape(shape)


def _matmul(e, g: Tensor, xs: list[Tensor]):
    if e.options.get("flat"):
        raise TruenoTypeError("matmul of flat inputs (m=, k=, n=) has no gradient; give the operands their shapes")
    a, b = xs  # as the kernel reads them: an operand given transposed (options ta, tb) is its transpose
    ta, tb = e.options.get("ta"), e.options.get("tb")
    a, b = (a.mT if ta else a), (b.mT if tb else b)
    da, db = _sum_to(matmul(g, b.mT), a.shape), _sum_to(matmul(a.mT, g), b.shape)
    return (da.mT if ta else da), (db.mT if tb else db)


def _softmax(name: str, g: Tensor, y: Tensor):
    if name == "softmax":
        return (y * (g - (g * y).sum(-1, keepdims=True)),)
    return (g - y.exp() * g.sum(-1, keepdims=True),)


def _conv2d(g: Tensor, xs: list[Tensor]):
    """Valid correlation: the image's cotangent is g padded by the kernel's size - 1 correlated with the
    flipped kernel; the kernel's is the image correlated with g."""
    img, k = xs
    kh, kw = k.shape
    flipped = k[::-1, ::-1]
    return g.pad([(kh - 1, kh - 1), (kw - 1, kw - 1)]).convolve2d(flipped), img.convolve2d(g)


def _attention(o: dict, g: Tensor, xs: list[Tensor], y: Tensor):
    """The forward keeps only its output y: P = softmax(the masked scores) is recomputed from q and k (L x S,
    tensor ops), then dV = P^T g, dS = P (g V^T - rowsum(g y)) scale, dQ = dS K, dK = dS^T Q; the mask has
    none."""
    q, k, v = xs[:3]
    p = attention_weights(q, k, o["scale"], o["causal"], xs[3] if len(xs) == 4 else None)
    ds = p * (matmul(g, v.mT) - (g * y).sum(-1, keepdims=True)) * o["scale"]
    grads = (matmul(ds, k), matmul(ds.mT, q), matmul(p.mT, g))
    return (*(_sum_to(t, x.shape) for t, x in zip(grads, xs)), *([None] * (len(xs) - 3)))
