"""The sort and search kinds (kinds.Kind.SORT, Kind.SEARCH): their shape rules, how their references are
called, and the references themselves (NumPy's stable sort and searchsorted; pure Python on the same order).

The order, every dtype and backend: ascending by value, NaN after everything, -0.0 equal to 0.0, ties in
input order (stable). Descending reverses the order of the values and keeps ties in input order, so NaN
comes first: NumPy's stable sort of the flipped row, flipped back (as the array API's NumPy-based reference
does). The kernels sort unsigned 32-bit keys in that order (`key_kind` says how a dtype's words map to them).
"""

from __future__ import annotations

import bisect
import math

from .errors import TruenoTypeError, TruenoValueError


def key_kind(dtype) -> int:
    """How the kernels turn a stored 32-bit word into its sort key: 0 as is (bool, uint32), 1 the sign bit
    flipped (int32), 2 float32's order (-0.0 as 0.0, every NaN the largest key)."""
    return {"bool": 0, "unsigned": 0, "signed": 1, "float": 2}[dtype.kind]


# ---------------------------------------------------------------- output shapes (checked at call time)


def sort_shape(op, shapes, options):
    """Along the last axis of a 1-D or larger array; descending= a bool."""
    (shape,) = shapes
    if not shape:
        raise TruenoValueError(f"{op.name} needs at least one dimension; got a 0-d array (reshape it to (1,))")
    descending = options.get("descending")
    descending = False if descending is None else descending  # None: the methods' default
    if not isinstance(descending, bool):
        raise TruenoTypeError(f"{op.name}(): descending must be True or False, got {descending!r:.40}")
    return shape, {"descending": descending}


def search_shape(op, shapes, options):
    """A 1-D sorted x1, any x2: an index per element of x2; side= "left" or "right"."""
    if len(shapes[0]) != 1:
        raise TruenoValueError(f"{op.name} needs a 1-D sorted x1; got shape {shapes[0]} (flatten or sort it first)")
    side = options.get("side")
    side = "left" if side is None else side
    if side not in ("left", "right"):
        raise TruenoValueError(f'{op.name}(): side must be "left" or "right", got {side!r:.40}')
    return shapes[1], {"side": side}


# ---------------------------------------------------------------- how the references are called


def sort_numpy(op, arrays, params, options):
    return op.numpy(arrays[0], options["descending"])


def sort_python(op, lists, shapes, params, options):
    n, flat = shapes[0][-1], lists[0]
    return [v for at in range(0, len(flat), n or 1) for v in op.ref(flat[at : at + n], options["descending"])]


def sort_work(out, ins, options) -> int:
    return math.prod(out) * max(1, out[-1].bit_length())


def search_numpy(op, arrays, params, options):
    return op.numpy(arrays[0], arrays[1], options["side"])


def search_python(op, lists, shapes, params, options):
    return op.ref(lists[0], lists[1], options["side"])


def search_work(out, ins, options) -> int:
    return math.prod(out) * max(1, ins[0][0].bit_length())


# ---------------------------------------------------------------- the references


def np_sort(x, descending: bool = False):
    """NumPy's stable sort along the last axis; descending: of the flipped rows, flipped back."""
    import numpy as np

    if descending:
        return np.flip(np.sort(np.flip(x, -1), -1, kind="stable"), -1)
    return np.sort(x, -1, kind="stable")


def np_argsort(x, descending: bool = False):
    """NumPy's stable argsort along the last axis, as int32; descending as np_sort."""
    import numpy as np

    if descending:
        return (x.shape[-1] - 1 - np.flip(np.argsort(np.flip(x, -1), -1, kind="stable"), -1)).astype(np.int32)
    return np.argsort(x, -1, kind="stable").astype(np.int32)


def np_searchsorted(x1, x2, side: str = "left"):
    import numpy as np

    return np.searchsorted(x1, x2, side).astype(np.int32)


def _key(v):
    """A value's place in the order: NaN after every number; -0.0 == 0.0 as Python compares them."""
    return (1, 0.0) if v != v else (0, v)


def py_argsort(row, descending: bool = False) -> list[int]:
    """Python's sort is stable, reverse= too (equal keys keep their order)."""
    return sorted(range(len(row)), key=lambda i: _key(row[i]), reverse=descending)


def py_sort(row, descending: bool = False) -> list:
    return [row[i] for i in py_argsort(row, descending)]


def py_searchsorted(x1, x2, side: str = "left") -> list[int]:
    keys = [_key(v) for v in x1]
    find = bisect.bisect_left if side == "left" else bisect.bisect_right
    return [find(keys, _key(v)) for v in x2]
