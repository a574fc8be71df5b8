"""The attention kind (kinds.Kind.ATTENTION): its shape rule, how its references are called, and the
references themselves (NumPy in blocks of query rows; pure Python row by row).

attention(q, k, v[, mask]) = softmax(q @ k^T * scale, the scores masked to -inf where `mask` is 0 or, with
`causal`, where the key j > the query i) @ v over the last two axes: q (..., L, E), k (..., S, E),
v (..., S, Ev), the mask broadcast to (..., L, S), the leading axes broadcast (NumPy's rules). A row with
every score -inf (all masked) is NaN, as the softmax of all -inf is. A NaN or inf in v at a key of weight 0
(masked, or of score -inf) may or may not reach the row: the unfused expression multiplies it by 0, the fused
kernels never read a masked tile.

The batch: as matmul's (matmul_kind.matmul_batch), each operand reads batch element (i0, i1, ...) at offset
i0 * stride0 + i1 * stride1 + ... of its row-major storage, a stride 0 where it broadcasts; the resolved
option `dims` holds (size, q, k, v, mask strides) per batch dimension, outermost first, neighbours merged.
"""

from __future__ import annotations

import math

from .errors import TruenoTypeError, TruenoValueError
from .references import softmax_row, total

BLOCK_ELEMENTS = 1 << 21  # scores the NumPy reference holds at once (a block of query rows, all batches): 8 MiB;
# 2^17 made (4, 16, 1024, 64) blocks of 2 rows, 4.6x slower (docs/benchmarks.md)
MAX_HEAD = 128  # E and Ev the fused op takes (the WebGPU kernel's registers); larger heads run unfused


def _mask_shape(shape):
    return (1,) * (2 - len(shape)) + tuple(shape)


def attention_shape(op, shapes, options):
    """q (..., L, E), k (..., S, E), v (..., S, Ev)[, mask (..., L or 1, S or 1)] -> (..., L, Ev); scale=
    a real number (None: 1/sqrt(E)), causal= a bool."""
    q, k, v = shapes[:3]
    if min(len(q), len(k), len(v)) < 2 or q[-1] != k[-1] or k[-2] != v[-2]:
        raise TruenoValueError(
            f"{op.name} needs q (..., L, E), k (..., S, E), v (..., S, Ev) with the same E and S; "
            f"got q {q}, k {k}, v {v}"
        )
    (n_q, e), n_k, ev = q[-2:], k[-2], v[-1]
    if e == 0 or n_k == 0:
        raise TruenoValueError(f"{op.name} needs at least one key (S) and a head dimension E >= 1; got q {q}, k {k}")
    mask = _mask_shape(shapes[3]) if len(shapes) == 4 else (1, 1)
    if mask[-2] not in (1, n_q) or mask[-1] not in (1, n_k):
        raise TruenoValueError(
            f"{op.name}: a mask of shape {shapes[3]} does not broadcast to the scores' (..., {n_q}, {n_k})"
        )
    scale, causal = options.get("scale"), options.get("causal")
    scale = 1.0 / math.sqrt(e) if scale is None else scale
    if isinstance(scale, bool) or not isinstance(scale, (int, float)):
        raise TruenoTypeError(f"{op.name}(): scale must be a real number or None, got {scale!r:.40}")
    causal = False if causal is None else causal
    if not isinstance(causal, bool):
        raise TruenoTypeError(f"{op.name}(): causal must be True or False, got {causal!r:.40}")
    batch, dims = _batch(
        op.name, [q[:-2], k[:-2], v[:-2], mask[:-2]], [n_q * e, n_k * e, n_k * ev, mask[-2] * mask[-1]]
    )
    resolved = {"scale": float(scale), "causal": causal, "l": n_q, "s": n_k, "e": e, "ev": ev}
    resolved |= {"batch": math.prod(batch), "dims": dims, "mask": (mask[-1] if mask[-2] > 1 else 0, int(mask[-1] > 1))}
    return (*batch, n_q, ev), resolved


def _batch(name, shapes, sizes):
    """The broadcast batch shape of the operands' batch `shapes`, and its dimensions as (size, one stride
    per operand) innermost merged where every operand steps evenly (see the module docstring), for operands
    stored row-major, `sizes` elements a batch element."""
    rank = max(len(s) for s in shapes)
    padded = [(1,) * (rank - len(s)) + tuple(s) for s in shapes]
    batch = []
    for d in range(rank):
        sizes_d = {s[d] for s in padded} - {1}
        if len(sizes_d) > 1:
            got = ", ".join(str(s) for s in shapes)
            raise TruenoValueError(f"{name}: the leading (batch) dimensions do not broadcast (NumPy's rules): {got}")
        batch.append(sizes_d.pop() if sizes_d else 1)
    strides = [[size * math.prod(s[d + 1 :]) for d in range(rank)] for s, size in zip(padded, sizes)]
    return tuple(batch), batch_dims(batch, padded, strides)


def batch_dims(batch, shapes, strides) -> tuple:
    """(size, one stride per operand) per dimension of `batch`, outermost first, innermost merged where every
    operand steps evenly; an operand's stride is 0 where its `shapes` (padded to the batch's rank) has 1,
    else its `strides` there (elements)."""
    dims = []
    for d in range(len(batch) - 1, -1, -1):
        if batch[d] == 1:
            continue
        step = [st[d] if s[d] > 1 else 0 for s, st in zip(shapes, strides)]
        if dims and all(st == dims[-1][0] * prev for st, prev in zip(step, dims[-1][1:])):
            inner = dims.pop()
            dims.append((batch[d] * inner[0], *inner[1:]))
            continue
        dims.append((batch[d], *step))
    return tuple(reversed(dims)) if math.prod(batch) else ()


def batch_offsets(options):
    """(q, k, v, mask offsets) in elements of each batch element, in output order."""
    dims = options["dims"]
    for b in range(options["batch"]):
        offsets, rest = [0, 0, 0, 0], b
        for size, *strides in reversed(dims):
            i, rest = rest % size, rest // size
            offsets = [o + i * s for o, s in zip(offsets, strides)]
        yield offsets


def attention_work(out, ins, options) -> int:
    o = options
    pairs = o["l"] * o["s"] - (o["l"] * (o["l"] - 1) // 2 if o["causal"] and o["l"] <= o["s"] else 0)
    return o["batch"] * max(pairs, 0) * (o["e"] + o["ev"])


# ---------------------------------------------------------------- how the references are called


def attention_numpy(op, arrays, params, options):
    """op.numpy on the operands as broadcast views of their storage (strides 0 where one broadcasts)."""
    import numpy

    o = options
    shapes = [(o["l"], o["e"]), (o["s"], o["e"]), (o["s"], o["ev"])]
    if len(arrays) == 4:
        ml, ms = o["mask"]
        shapes.append((o["l"] if ml else 1, o["s"] if ms else 1))
    sizes = tuple(size for size, *_ in o["dims"])
    views = []
    for j, (x, (rows, cols)) in enumerate(zip(arrays, shapes)):
        flat = numpy.ascontiguousarray(x).reshape(-1)
        strides = [x.itemsize * dim[1 + j] for dim in o["dims"]] + [x.itemsize * cols, x.itemsize]
        views.append(numpy.lib.stride_tricks.as_strided(flat, (*sizes, rows, cols), strides, writeable=False))
    if not o["batch"]:
        return numpy.zeros((0, o["l"], o["ev"]), arrays[0].dtype)
    mask = views[3] if len(views) == 4 else None
    return op.numpy(*views[:3], mask, o["scale"], o["causal"])


def attention_python(op, lists, shapes, params, options):
    """op.ref once per batch element."""
    o = options
    out = []
    for oq, ok, ov, om in batch_offsets(o):
        q = lists[0][oq : oq + o["l"] * o["e"]]
        k = lists[1][ok : ok + o["s"] * o["e"]]
        v = lists[2][ov : ov + o["s"] * o["ev"]]
        mask = None
        if len(lists) == 4:
            mask = (lists[3], om, *o["mask"])
        out += op.ref(q, k, v, mask, o["l"], o["s"], o["e"], o["ev"], o["scale"], o["causal"])
    return out


# ---------------------------------------------------------------- the references


def np_attention(q, k, v, mask=None, scale=1.0, causal=False):
    """Blocks of query rows of all batches at once: the scores of a block (only the keys it may see where
    causal), masked, their softmax, @ v. The exact softmax of each row, never all L x S scores at once."""
    import numpy as np

    n_q, n_k = q.shape[-2], k.shape[-2]
    shapes = [q.shape[:-2], k.shape[:-2], v.shape[:-2]] + ([mask.shape[:-2]] if mask is not None else [])
    batch = np.broadcast_shapes(*shapes)
    out = np.empty((*batch, n_q, v.shape[-1]), dtype=np.result_type(q, k, v))
    k_t = np.swapaxes(k, -1, -2)
    block = max(1, BLOCK_ELEMENTS // max(1, math.prod(batch) * n_k))
    with np.errstate(all="ignore"):
        for r0 in range(0, n_q, block):
            r1 = min(n_q, r0 + block)
            cols = min(n_k, r1) if causal else n_k
            s = np.matmul(q[..., r0:r1, :], k_t[..., :cols])
            s *= scale
            if causal and cols > r0 + 1:
                s = np.where(np.arange(cols) <= np.arange(r0, r1)[:, None], s, -np.inf)
            if mask is not None:
                rows = mask[..., r0:r1, :] if mask.shape[-2] > 1 else mask
                s = np.where(rows[..., :cols] != 0 if rows.shape[-1] > 1 else rows != 0, s, -np.inf)
            m = s.max(axis=-1, keepdims=True)
            s -= m
            np.exp(s, out=s)
            total = s.sum(axis=-1, keepdims=True)
            out[..., r0:r1, :] = np.matmul(s, v[..., :cols, :]) / total
    return out


def py_attention(q, k, v, mask, n_q, n_k, e, ev, scale, causal):
    """One batch element's rows, each the softmax of its masked scores @ v (float64). `mask`: None or
    (flat list, offset, row stride, key stride)."""
    out = []
    for i in range(n_q):
        scores = []
        for j in range(n_k):
            s = total(q[i * e + d] * k[j * e + d] for d in range(e)) * scale
            if (causal and j > i) or (mask is not None and mask[0][mask[1] + i * mask[2] + j * mask[3]] == 0):
                s = -math.inf
            scores.append(s)
        w = softmax_row(scores)
        out += [total(w[j] * v[j * ev + c] for j in range(n_k)) for c in range(ev)]
    return out
