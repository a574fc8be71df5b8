"""The matmul kind (kinds.Kind.MATMUL): its shape rule (NumPy's stacks of matrices, the batch as strides per
operand, 0 where one broadcasts), the walk over the batch's products and how its references are called.
"""

from __future__ import annotations

import itertools
import math

from .errors import TruenoValueError

Shape = tuple[int, ...]


# ---------------------------------------------------------------- output shape (checked at call time)


def matmul_shape(op, shapes, options):
    """(M, K) @ (K, N); stacks of matrices with NumPy's rules, (*batch_a, M, K) @ (*batch_b, K, N) ->
    (*batch, M, N); or flat inputs read as (m, k) @ (k, n) where m=, k= and n= are given.
    Resolved options: m, k, n, and the batch (see `matmul_batch`): `batch`, the count of products, and
    `dims`, the batch dimensions as (size, a stride, b stride), outermost first; `flat` where m, k, n
    were given. Options `ta` / `tb` (True): that operand is given as its transpose, row-major (*batch, K, M)
    or (*batch, N, K), and the kernels read it in place (`x.T @ y`: no copy of x)."""
    m, k, n = (options.get(d) for d in "mkn")
    sizes = [math.prod(s) for s in shapes]
    if (m is None and k is None and n is None) or ("dims" in options and not options.get("flat")):
        # (options resolved here before come back when a tensor is recorded)
        return matmul_batch(*shapes, ta=bool(options.get("ta")), tb=bool(options.get("tb")))
    if None in (m, k, n):
        raise TruenoValueError("matmul with flat inputs needs all of m=, k= and n=")
    if sizes[0] != m * k or sizes[1] != n * k:
        raise TruenoValueError(
            f"matmul with m={m}, k={k}, n={n} needs {m * k} and {k * n} elements; got {sizes[0]} and {sizes[1]}"
        )
    return (m, n), {"m": m, "k": k, "n": n, "batch": 1, "dims": (), "flat": True}


def matmul_batch(a: Shape, b: Shape, ta: bool = False, tb: bool = False):
    """Output shape and options of a (*batch_a, M, K) @ (*batch_b, K, N) of row-major operands (`ta`: a is
    given as (*batch_a, K, M), its transpose; `tb`: b as (*batch_b, N, K)).

    The batch dimensions broadcast (NumPy's rules). Each operand reads matrix i0, i1, ... of the batch
    at element offset i0 * stride0 + i1 * stride1 + ... of its storage: its row-major strides, 0 along a
    dimension it broadcasts (so a broadcast operand is never copied, in any pattern). Dimensions of size 1
    go, and neighbours merge where both operands step through them evenly: (B, H) of two full operands
    is one dimension of B * H. Where b is one matrix for the whole batch, a's batch folds into M: one
    (B * M, K) @ (K, N) product, the fastest case."""
    for s, name, dims in ((a, "a", "M, K"), (b, "b", "K, N")):
        if len(s) < 2:
            raise TruenoValueError(
                f"matmul needs a 2-D {name} or a stack of them (..., {dims}); "
                f"got shape {s} (reshape it, or upload with shape=(h, w))"
            )
    (m, k), (k2, n) = a[-2:][:: -1 if ta else 1], b[-2:][:: -1 if tb else 1]
    if k != k2:
        if len(a) == len(b) == 2:
            raise TruenoValueError(f"matmul inner dimensions differ: a is {m}x{k}, b is {k2}x{n}")
        raise TruenoValueError(f"matmul inner dimensions differ: {a} @ {b} (a has {k} columns, b {k2} rows)")
    rank = max(len(a), len(b)) - 2
    ba, bb = (1,) * (rank - len(a) + 2) + a[:-2], (1,) * (rank - len(b) + 2) + b[:-2]
    batch = []
    for x, y in zip(ba, bb):
        if x != y and 1 not in (x, y):
            raise TruenoValueError(
                f"matmul batch dimensions do not broadcast: {a} @ {b} (batch {a[:-2]} vs {b[:-2]}, NumPy's rules)"
            )
        batch.append(y if x == 1 else x)
    count = math.prod(batch)
    shape = (*batch, m, n)
    dims: list[tuple[int, int, int]] = []
    step_a, step_b = m * k, k * n
    for d in range(rank - 1, -1, -1):  # innermost first: row-major strides of each operand's own batch
        size, sa, sb = batch[d], step_a if ba[d] > 1 else 0, step_b if bb[d] > 1 else 0
        step_a, step_b = step_a * ba[d], step_b * bb[d]
        if size == 1:
            continue
        if dims and sa == dims[-1][1] * dims[-1][0] and sb == dims[-1][2] * dims[-1][0]:
            inner = dims.pop()
            size, sa, sb = size * inner[0], inner[1], inner[2]
        dims.append((size, sa, sb))
    dims.reverse()
    given = {**({"ta": True} if ta else {}), **({"tb": True} if tb else {})}
    if count == 0:
        dims = []
    elif len(dims) == 1 and dims[0][1:] == (m * k, 0) and not ta:  # one b for all: fold the batch into M
        return shape, {"m": count * m, "k": k, "n": n, "batch": 1, "dims": (), **given}
    return shape, {"m": m, "k": k, "n": n, "batch": count, "dims": tuple(dims), **given}


def matmul_batches(options: dict):
    """(a offset, b offset) in elements of each product of a matmul's batch, in output order (options as
    `matmul_shape` resolves them; the i-th product's C starts at i * m * n)."""
    if not options["batch"]:
        return
    dims = options["dims"]
    for index in itertools.product(*(range(size) for size, _, _ in dims)):
        yield (sum(i * sa for i, (_, sa, _) in zip(index, dims)), sum(i * sb for i, (_, _, sb) in zip(index, dims)))


# ---------------------------------------------------------------- how the references are called


def matmul_numpy(op, arrays, params, options):
    """np.matmul on the batch as strided views of the flat operands (the strides of `dims`, 0 where an
    operand broadcasts: nothing is copied)."""
    import numpy

    m, k, n, dims = options["m"], options["k"], options["n"], options["dims"]
    if not options["batch"]:
        return numpy.zeros((0, m, n), arrays[0].dtype)
    a, b = (numpy.ascontiguousarray(x).reshape(-1) for x in arrays)
    sizes = tuple(size for size, _, _ in dims)
    ka, kb = ((1, m) if options.get("ta") else (k, 1)), ((1, k) if options.get("tb") else (n, 1))
    view_a = numpy.lib.stride_tricks.as_strided(
        a, (*sizes, m, k), tuple(a.itemsize * s for s in [*(sa for _, sa, _ in dims), *ka]), writeable=False
    )
    view_b = numpy.lib.stride_tricks.as_strided(
        b, (*sizes, k, n), tuple(b.itemsize * s for s in [*(sb for _, _, sb in dims), *kb]), writeable=False
    )
    return op.numpy(view_a, view_b)


def matmul_python(op, lists, shapes, params, options):
    """op.ref once per product of the batch (a transposed operand read as its transpose)."""
    m, k, n = options["m"], options["k"], options["n"]
    out = []
    for x, y in matmul_batches(options):
        a, b = lists[0][x : x + m * k], lists[1][y : y + k * n]
        a = [a[j * m + i] for i in range(m) for j in range(k)] if options.get("ta") else a
        b = [b[j * k + i] for i in range(k) for j in range(n)] if options.get("tb") else b
        out += op.ref(a, b, m, k, n)
    return out
