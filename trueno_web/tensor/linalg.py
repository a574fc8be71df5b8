"""Linear algebra on tensors: matmul with NumPy's rules (the `@` operator of the Tensor class mixes in
from here). Other linear algebra on tensors goes here too."""

from __future__ import annotations

from .. import ops
from ..errors import TruenoTypeError, TruenoValueError
from ..resident import DeviceArray

MATMUL = ops.get("matmul")


class Linalg:
    """`a @ b` for Tensor. The class supplies, besides the Views mixin's needs, the hooks `_apply` (see
    reduce.Reductions) and `_tensors(args)` (a static method: the arguments of one op as tensors of one
    device, numbers and host data moved onto it)."""

    __slots__ = ()

    def __matmul__(self, other):
        return matmul(self, other)

    def __rmatmul__(self, other):
        return matmul(other, self)


def matmul(a, b):
    """a @ b with NumPy's rules: 1-D operands are vectors; (..., M, K) @ (..., K, N) broadcasts the batch
    dimensions, one kernel for the whole batch (kinds._matmul_batch): an operand broadcast along a batch
    dimension reads its one matrix there, never copied (an expanded view included), and (..., M, K) @
    (K, N) folds the batch into M. A transposed matrix (`x.T`, `x.mT` of a row-major x) is read in place
    (the kind's options ta, tb); an operand that is otherwise not row-major (a slice) is copied first."""
    t = a if isinstance(a, Linalg) else b
    if not isinstance(t, Linalg):  # no tensor among them: DeviceArrays become tensors of their device
        t = next((x.device.tensor(x) for x in (a, b) if isinstance(x, DeviceArray)), None)
        if t is None:
            raise TruenoTypeError("an op on tensors needs at least one Tensor argument")
    a, b = t._tensors([a, b])
    if a.ndim == 0 or b.ndim == 0:
        raise TruenoValueError(f"matmul needs operands of at least one dimension; got {a.shape} @ {b.shape}")
    va, vb = a.ndim == 1, b.ndim == 1
    a2 = a.unsqueeze(0) if va else a
    b2 = b.unsqueeze(-1) if vb else b
    if a2.shape[-1] != b2.shape[-2]:
        raise TruenoValueError(f"matmul: inner dimensions differ: {a.shape} @ {b.shape}")
    shape, _ = MATMUL.row.shape(MATMUL, [a2.shape, b2.shape], {})  # batch dimensions that do not broadcast raise here
    (ua, ta), (ub, tb) = _operand(a2), _operand(b2)
    out = a._apply(MATMUL, [ua, ub], (), {**({"ta": True} if ta else {}), **({"tb": True} if tb else {})})
    if out.shape != shape:  # both operands broadcast along a dimension: the same products, a view
        out = out.expand(shape)
    if va:
        out = out.squeeze(-2)
    return out.squeeze(-1) if vb else out


def _operand(t):
    """(what the kernel reads of operand t, whether that is t's transpose): t in row-major memory, or where t
    is the transpose of row-major memory (`x.T`), that memory as it is."""
    t = _unbroadcast(t)
    row_major = t.contiguous()
    if row_major is t:
        return t, False
    given = t.mT
    return (given, True) if given.contiguous() is given else (row_major, False)


def _unbroadcast(t):
    """t cut to size 1 along its broadcast (stride 0, wholly valid) batch dimensions: the kind broadcasts
    them again. A padded dimension is partly zeros, so it stays (the copy materialises it)."""
    strides, mask = t.expr.layout()[1], t._mask()
    cut = {d for d in range(t.ndim - 2) if strides[d] == 0 and t.shape[d] > 1 and mask[d] == (0, t.shape[d])}
    return t[tuple(slice(0, 1) if d in cut else slice(None) for d in range(t.ndim))] if cut else t
