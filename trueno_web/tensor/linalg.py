"""Linear algebra on tensors: matmul with NumPy's rules (the `@` operator of the Tensor class mixes in
from here) and fused attention (the catalog's attention rows). Other linear algebra on tensors goes here too."""

from __future__ import annotations

import array
import math

from .. import ops
from ..attention_kind import MAX_HEAD
from ..dtypes import bool_
from ..errors import TruenoTypeError, TruenoValueError
from ..resident import DeviceArray

MATMUL = ops.get("matmul")
ATTENTION, ATTENTION_MASKED = ops.get("attention"), ops.get("attention_masked")


class Linalg:
    """`a @ b` for Tensor. The class supplies, besides the Views mixin's needs, the hooks `_apply` (see
    reduce.Reductions) and `_tensors(args)` (a static method: the arguments of one op as tensors of one
    device, numbers and host data moved onto it)."""

    __slots__ = ()

    def __matmul__(self, other):
        return matmul(self, other)

    def __rmatmul__(self, other):
        return matmul(other, self)

    def attention(self, k, v, scale=None, causal=None):
        """The catalog's attention with this tensor as q (see `attention`)."""
        return attention(self, k, v, None, scale, causal)

    def attention_masked(self, k, v, mask, scale=None, causal=None):
        """The catalog's attention_masked with this tensor as q (see `attention`)."""
        return attention(self, k, v, mask, scale, causal)


def matmul(a, b):
    """a @ b with NumPy's rules: 1-D operands are vectors; (..., M, K) @ (..., K, N) broadcasts the batch
    dimensions, one kernel for the whole batch (matmul_kind.matmul_batch): an operand broadcast along a batch
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


def attention(q, k, v, mask=None, scale=None, causal=None):
    """softmax(q @ k^T * scale, masked) @ v as one op (the attention rows, attention_kind.py): q (..., L, E),
    k (..., S, E), v (..., S, Ev), mask None or broadcast to (..., L, S) (0: not attended, read as bool).
    Operands broadcast along a dimension are read in place (their one slice), as matmul's, and so are q, k
    and v where their rows are rows of memory at any offset and stride (slices of one qkv product, heads
    apart); an operand otherwise not row-major is copied first; a mask that is not bool or of q's dtype is
    made bool. Head dimensions past attention_kind.MAX_HEAD (the kernels' registers) run unfused:
    attention_weights @ v."""
    ts = q._tensors([q, k, v] + ([] if mask is None else [mask])) if isinstance(q, Linalg) else None
    if ts is None:
        raise TruenoTypeError("attention needs q as a Tensor")
    if mask is not None and ts[3].dtype not in (ts[0].dtype, bool_):
        ts[3] = ts[3].astype(bool_)
    if max(ts[0].shape[-1:] + ts[2].shape[-1:]) > MAX_HEAD and min(t.ndim for t in ts[:3]) >= 2:
        scale = 1.0 / math.sqrt(ts[0].shape[-1]) if scale is None else scale
        return matmul(attention_weights(ts[0], ts[1], scale, bool(causal), ts[3] if mask is not None else None), ts[2])
    keep = [2, 2, 2, 0]  # the trailing dimensions each operand keeps whole (a mask broadcasts along L and S too)
    ts = [_unbroadcast(t, t.ndim - n) for t, n in zip(ts, keep)]
    ts = [t if j < ATTENTION.row.views and _in_place(t) else t.contiguous() for j, t in enumerate(ts)]
    op = ATTENTION if mask is None else ATTENTION_MASKED
    return ts[0]._apply(op, ts, (), {"scale": scale, "causal": causal})


def _in_place(t) -> bool:
    """Can a kind that reads views (kinds.KindRow.views) take t as it is?"""
    view = t.expr.view
    return view is None or view.rows_in_place


def attention_weights(q, k, scale: float, causal: bool, mask=None):
    """softmax(q @ k^T * scale, masked) with tensor ops, all L x S of it: the gradient's P (autodiff) and the
    unfused attention of big heads."""
    scores = matmul(q, k.mT) * scale
    if causal:
        n_q, n_k = q.shape[-2], k.shape[-2]
        keep = q._const(array.array("f", range(n_k))) <= q._const(array.array("f", range(n_q))).reshape(n_q, 1)
        scores = keep.where(scores, -math.inf)
    if mask is not None:
        scores = mask.where(scores, -math.inf)
    return scores.softmax(axis=-1)


def _unbroadcast(t, upto: int | None = None):
    """t cut to size 1 along its broadcast (stride 0, wholly valid) dimensions before `upto` (default: the
    batch dimensions, all but the last two): the kind broadcasts them again. A padded dimension is partly
    zeros, so it stays (the copy materialises it)."""
    strides, mask = t.expr.layout()[1], t._mask()
    upto = t.ndim - 2 if upto is None else upto
    cut = {d for d in range(upto) if strides[d] == 0 and t.shape[d] > 1 and mask[d] == (0, t.shape[d])}
    return t[tuple(slice(0, 1) if d in cut else slice(None) for d in range(t.ndim))] if cut else t
