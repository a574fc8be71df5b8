"""Sorting and set functions of tensors (the array API's): sort, argsort and topk along an axis, searchsorted,
and unique_values/counts/inverse/all. The Tensor class mixes these in.

sort, argsort, topk and searchsorted are lazy: the catalog's sort and searchsorted rows (sort_kinds.py has
their order: stable, NaN last, -0.0 equal to 0.0). The unique functions have shapes that depend on the
values, so they run at once: they realise the tensor, sort it on the device, read the sorted values and
their argsort, and build the results on the host. They synchronise (runtime.block_on): on the desktop
always; in the browser only with JSPI, else they raise UnavailableError (read the tensor with
`await t.numpy()` instead)."""

from __future__ import annotations

from collections import namedtuple

from .. import ops
from ..dtypes import INDEX
from ..errors import TruenoTypeError, TruenoValueError, UnavailableError
from ..runtime import block_on, sync_available
from .expr import leaf
from .lower import realize
from .views import axis_index

UniqueAll = namedtuple("UniqueAll", "values indices inverse_indices counts")
UniqueCounts = namedtuple("UniqueCounts", "values counts")
UniqueInverse = namedtuple("UniqueInverse", "values inverse_indices")
TopK = namedtuple("TopK", "values indices")


class Sorting:
    """The sorting methods of Tensor. Besides the Views mixin's needs, the class supplies `_apply(op, inputs,
    params, options)`, `_tensors(args)`, `numpy()` and the attributes `device`, `dtype`, `shape`."""

    __slots__ = ()

    def sort(self, axis: int = -1, descending: bool = False, stable: bool = True):
        """The values sorted along `axis`: stable (ties in input order; stable=False gives the same), NaN last
        (first where descending), -0.0 equal to 0.0."""
        return _along(self, "sort", axis, descending, stable)

    def argsort(self, axis: int = -1, descending: bool = False, stable: bool = True):
        """The int32 indices that sort along `axis` (see sort): equal values in input order."""
        return _along(self, "argsort", axis, descending, stable)

    def topk(self, k: int, axis: int = -1, largest: bool = True):
        """(values, int32 indices) of the k largest (smallest where largest=False) along `axis`, in order: the
        first k of full stable sorts (descending where largest; one for the values, one for the indices), so
        NaN counts as the largest."""
        a = axis_index(axis, self.ndim, "topk") if self.ndim else 0
        n = self.shape[a] if self.ndim else 0
        if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= n:
            raise TruenoValueError(f"topk: k must be an int from 0 to {n} (the length of axis {axis}); got {k!r:.40}")
        if not isinstance(largest, bool):
            raise TruenoTypeError(f"topk: largest must be True or False, got {largest!r:.40}")
        first = (slice(None),) * a + (slice(0, k),)
        return TopK(_along(self, "sort", a, largest, True)[first], _along(self, "argsort", a, largest, True)[first])

    def searchsorted(x1, x2, side: str = "left", sorter=None):
        """int32 insertion points of x2's elements in the sorted 1-D x1 (side "left": before equal values,
        "right": after them), a binary search per element; NaN sorts last. `sorter` (int indices that sort
        x1, as NumPy's) is checked, and x1 sorted on the device instead: any sorter that sorts x1 picks the
        same values."""
        tensors = next(t for t in (x1, x2) if hasattr(t, "_tensors"))._tensors
        x1, x2 = tensors([x1, x2])
        if sorter is not None:
            (sorter,) = tensors([sorter])
            if sorter.shape != x1.shape or sorter.dtype.kind not in ("signed", "unsigned"):
                raise TruenoValueError(
                    f"searchsorted: sorter must be integer indices of x1's shape {x1.shape}; "
                    f"got {sorter.dtype} of shape {sorter.shape}"
                )
            x1 = x1.sort() if x1.ndim == 1 else x1
        op = ops.get("searchsorted")
        return x1._apply(op, [x1.contiguous(), x2.contiguous()], (), {"side": side})

    def unique_values(self):
        """The distinct values, sorted (each NaN distinct). Synchronises: see the module docstring."""
        return _unique(self, "unique_values").values

    def unique_counts(self):
        """(values, int32 counts). Synchronises: see the module docstring."""
        u = _unique(self, "unique_counts")
        return UniqueCounts(u.values, u.counts)

    def unique_inverse(self):
        """(values, int32 inverse_indices of x's shape: values[inverse] == x). Synchronises."""
        u = _unique(self, "unique_inverse")
        return UniqueInverse(u.values, u.inverse_indices)

    def unique_all(self):
        """(values, indices of their first occurrences in the flattened x, inverse_indices, counts), int32
        indices. Synchronises: see the module docstring."""
        return _unique(self, "unique_all")


def _along(t, name: str, axis, descending, stable):
    """The catalog's sort or argsort along `axis`: the axis swapped with the last, sorted row-major, swapped back."""
    if t.ndim == 0:
        raise TruenoValueError(f"{name} needs at least one dimension; got a 0-d tensor (reshape it to (1,))")
    if not isinstance(stable, bool):
        raise TruenoTypeError(f"{name}: stable must be True or False, got {stable!r:.40}")
    a, last = axis_index(axis, t.ndim, name), t.ndim - 1
    order = list(range(t.ndim))
    order[a], order[last] = last, a
    moved = t if a == last else t.permute(order)
    out = t._apply(ops.get(name), [moved.contiguous()], (), {"descending": descending})
    return out if a == last else out.permute(order)


def _unique(t, name: str) -> UniqueAll:
    """All four results of unique_all, from the flattened tensor's stable sort and argsort read back."""
    if not sync_available():
        raise UnavailableError(
            f"{name} reads the tensor's values, and synchronous reads need JSPI in the browser (enter through "
            "runPythonAsync); or read it with `await t.numpy()` and find the unique values on the host"
        )
    flat = t.reshape(-1)
    values, order = flat.sort(), flat.argsort()
    block_on(realize(values, order))
    vals, idx = block_on(values.numpy()).tolist(), block_on(order.numpy()).tolist()
    starts = [i for i in range(len(vals)) if i == 0 or not vals[i] == vals[i - 1]]  # NaN != NaN: each distinct
    counts = [b - a for a, b in zip(starts, starts[1:] + [len(vals)])]
    first = set(starts)
    inverse, group = [0] * len(vals), -1
    for i, j in enumerate(idx):
        group += i in first
        inverse[j] = group

    def new(data, dtype, shape=None):
        return t._new(leaf(t.device, data, (len(data),) if shape is None else shape, dtype))  # () for a 0-d x

    return UniqueAll(
        new([vals[s] for s in starts], t.dtype),
        new([idx[s] for s in starts], INDEX),
        new(inverse, INDEX, t.shape),
        new(counts, INDEX),
    )
