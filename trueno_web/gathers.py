"""The kinds `gather` (take) and `scatter_add`'s `scatter`: their indices (of the output's shape, one axis),
the geometry every backend computes positions from, their output-shape rules and how their references are
called (kinds.KINDS' rows for them)."""

from __future__ import annotations

import math

from .errors import TruenoValueError

Shape = tuple[int, ...]


def axis_geometry(op, x: Shape, ind: Shape, options):
    """take/scatter_add's indices have the output's shape x.shape[:axis] + J + x.shape[axis+1:] (J any
    shape; Tensor.take broadcasts NumPy's indices to it): the axis, and output element i reads x at
    (i // outer) * n * inner + index * inner + i % inner (outer = J's size * inner, n = x.shape[axis])."""
    axis = options.get("axis", 0)
    if not x or isinstance(axis, bool) or not isinstance(axis, int) or not -len(x) <= axis < len(x):
        raise TruenoValueError(f"{op.name} needs axis= an int axis of x; got {axis!r:.40} for x of shape {x}")
    axis %= len(x)
    k = len(ind) - len(x) + 1
    if k < 0 or ind[:axis] != x[:axis] or ind[axis + k :] != x[axis + 1 :]:
        raise TruenoValueError(
            f"{op.name}'s indices need the shape x.shape[:axis] + J + x.shape[axis+1:] (axis={axis}); got {ind} "
            f"for x of shape {x} (Tensor.take broadcasts NumPy-style indices to it)"
        )
    inner = math.prod(x[axis + 1 :])
    if x[axis] == 0 and math.prod(ind):
        raise TruenoValueError(f"{op.name} along an empty axis {axis} of x {x} has nothing to index")
    return {"axis": axis, "outer": math.prod(ind[axis:]), "n": x[axis], "inner": inner}


def take_shape(op, shapes, options):
    return shapes[1], axis_geometry(op, shapes[0], shapes[1], options)


def scatter_shape(op, shapes, options):
    if shapes[1] != shapes[2]:
        raise TruenoValueError(f"{op.name} needs indices and values of one shape; got {shapes[1]} and {shapes[2]}")
    return shapes[0], axis_geometry(op, shapes[0], shapes[1], options)


def take_positions(index, count: int, o: dict, np=None):
    """The flat positions in x that output elements 0..count-1 read (or scatter_add writes), indices `index`
    (flat) wrapped once if negative and clamped into the axis (the kernels' rule; NumPy's for in-range
    ones): a NumPy array where `np` is given, else a list."""
    outer, n, inner = o["outer"], o["n"], o["inner"]
    if np is None:
        wrapped = (min(max(int(j) + n if j < 0 else int(j), 0), n - 1) for j in index)
        return [(i // outer) * n * inner + j * inner + i % inner for i, j in zip(range(count), wrapped)]
    i = np.arange(count, dtype=np.int64)
    j = np.asarray(index, dtype=np.int64)
    return (i // outer) * n * inner + np.clip(np.where(j < 0, j + n, j), 0, n - 1) * inner + i % inner


def take_numpy(op, arrays, params, o, out=None):
    import numpy

    x, ind = arrays
    return op.numpy(x.reshape(-1), take_positions(ind.reshape(-1), ind.size, o, numpy)).reshape(ind.shape)


def scatter_numpy(op, arrays, params, o):
    import numpy

    x, ind, values = arrays
    result = numpy.array(x, copy=True).reshape(-1)
    op.numpy(result, take_positions(ind.reshape(-1), ind.size, o, numpy), values.reshape(-1))
    return result.reshape(x.shape)


def take_python(op, lists, shapes, params, o):
    return [op.ref(lists[0], at) for at in take_positions(lists[1], len(lists[1]), o)]


def scatter_python(op, lists, shapes, params, o):
    out = list(lists[0])
    for at, v in zip(take_positions(lists[1], len(lists[1]), o), lists[2]):
        out[at] = op.ref(out[at], v)
    return out
