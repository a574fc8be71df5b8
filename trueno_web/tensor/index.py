"""Indexing by data: take and take_along_axis (the catalog's `take`, a gather that fuses with the elementwise
ops around it), NumPy's advanced indexing (integer arrays in one or more axes, boolean masks), nonzero,
scatter_add, and item assignment that rebinds the tensor's expression (`x[i] = v`).

Integer indices from the host (lists, NumPy arrays, ints) are checked against the axis here, where they are
written; device indices are not (the kernels wrap a negative one once and clamp one out of range into the
axis). A boolean mask or nonzero() has a shape that depends on the data: it is read to the host first, a
synchronous read (runtime.sync_available(); else UnavailableError)."""

from __future__ import annotations

import math
from numbers import Integral

from .. import ops, runtime
from ..errors import TruenoTypeError, TruenoValueError, UnavailableError
from .views import axis_index, broadcast_shapes

TAKE = ops.get("take")
SCATTER_ADD = ops.get("scatter_add")
INDEX_DTYPES = ("int32", "uint32", "int64")  # int64: where the device holds it (backend='numpy')


class Indexing:
    """The data-dependent indexing methods of Tensor (hooks as in views.Views, plus `_tensors(args)`); its
    `__getitem__` hands basic indices to Views'."""

    __slots__ = ()

    # ------------------------------------------------------------ gathers

    def take(self, indices, axis=None):
        """NumPy's take: x's elements at `indices` (any shape J) along `axis` (None: of x flattened), giving
        x.shape[:axis] + J + x.shape[axis+1:]. One fused gather: nothing is copied."""
        x = self.reshape(-1) if axis is None else self
        if not x.ndim:
            raise TruenoValueError("take needs a tensor of at least one dimension")
        a = axis_index(0 if axis is None else axis, x.ndim, "take")
        ind = self._index(indices, x.shape[a], f"axis {a}")
        shape = x.shape[:a] + ind.shape + x.shape[a + 1 :]
        return gather(x, ind.reshape((1,) * a + ind.shape + (1,) * (x.ndim - a - 1)).expand(shape), a)

    def take_along_axis(self, indices, axis: int):
        """NumPy's take_along_axis: out[..., j, ...] = x[..., indices[..., j, ...], ...] along `axis`, indices
        of x's rank, the other axes broadcast together."""
        ind = self._index(indices, None, "")
        a = axis_index(axis, self.ndim, "take_along_axis")
        if ind.ndim != self.ndim:
            raise TruenoValueError(
                f"take_along_axis needs indices of x's rank {self.ndim}; got shape {ind.shape} for x of {self.shape}"
            )
        if isinstance(indices, (list, tuple)) or _is_host_array(indices):
            self._index(indices, self.shape[a], f"axis {a}")  # host indices: checked against the axis
        x_shape = self.shape[:a] + (1,) + self.shape[a + 1 :]
        ind_shape = ind.shape[:a] + (1,) + ind.shape[a + 1 :]
        common = broadcast_shapes(x_shape, ind_shape)
        x = self.expand(common[:a] + (self.shape[a],) + common[a + 1 :])
        return gather(x, ind.expand(common[:a] + (ind.shape[a],) + common[a + 1 :]), a)

    def scatter_add(self, indices, values, axis: int = 0):
        """x with `values` added at `indices` (any shape J) along `axis`: values of (or broadcast to) shape
        x.shape[:axis] + J + x.shape[axis+1:] (torch's index_add; np.add.at: duplicates all add). The
        gradient of take."""
        if not self.ndim:
            raise TruenoValueError("scatter_add needs a tensor of at least one dimension")
        a = axis_index(axis, self.ndim, "scatter_add")
        ind = self._index(indices, self.shape[a], f"axis {a}")
        shape = self.shape[:a] + ind.shape + self.shape[a + 1 :]
        full = ind.reshape((1,) * a + ind.shape + (1,) * (self.ndim - a - 1)).expand(shape)
        v = self._const_like(values).astype(self.dtype, copy=False)
        v = v if v.shape == shape else v.expand(shape)
        return scatter(self, full, v, a)

    def index_add(self, axis: int, indices, source):
        """torch's index_add(dim, index, source): scatter_add in torch's argument order."""
        return self.scatter_add(indices, source, axis)

    def nonzero(self):
        """The indices of x's nonzero elements, one int32 tensor per axis (NumPy's nonzero; NaN counts). Their
        length depends on the data: x is read first (a synchronous read)."""
        import numpy

        where = numpy.nonzero(_read_now(self, "nonzero()"))
        return tuple(self._const_like(numpy.ascontiguousarray(w, dtype=numpy.int32)) for w in where)

    # ------------------------------------------------------------ x[index]

    def __getitem__(self, index):
        lone = index[0] if isinstance(index, tuple) and len(index) == 1 else index
        if _is_mask(lone, self) and _shape_of(lone) == ():  # x[True]: a new axis of 1 (False: of 0), as NumPy
            mask = lone.reshape((1,)) if _is_tensor(lone) else [bool(lone)]
            return self.reshape((1, *self.shape))[mask]
        entries = _expand(self, index if isinstance(index, tuple) else (index,))
        if entries is None:
            return super().__getitem__(index)
        y = super().__getitem__(tuple(slice(None) if _advanced(e) else e for e in entries))  # y keeps every axis
        dims = [k for k, e in enumerate(entries) if _advanced(e)]
        arrays = [self._index(entries[k], y.shape[k], f"axis {k}") for k in dims]
        common = broadcast_shapes(*(t.shape for t in arrays))
        flat = None
        for t, k in zip(arrays, dims):
            if _is_tensor(entries[k]) and len(dims) > 1:  # one array alone: the gather wraps and clamps it
                t = _wrapped(t, y.shape[k])
            t = t.expand(common)
            flat = t if flat is None else flat * y.shape[k] + t
        at = dims[0] if dims == list(range(dims[0], dims[0] + len(dims))) else 0  # NumPy's placement
        order = [k for k in range(y.ndim) if k not in dims]
        order = order[:at] + dims + order[at:]
        if order != list(range(y.ndim)):
            y = y.permute(order)
        merged = y.shape[:at] + (math.prod(y.shape[at : at + len(dims)]),) + y.shape[at + len(dims) :]
        return (y if merged == y.shape else y.reshape(merged)).take(flat, axis=at)  # (a reshape of a view copies)

    def __setitem__(self, index, value):
        """x[index] = value: the tensor's expression becomes x with those elements replaced (tensors that
        shared the old expression keep their values). A mask of x's shape and one value: a where; a basic
        index of unit-step slices and ints: a where over the padded region; others (integer arrays, strided
        slices, a mask with an array of values): a scatter of the host's positions, the last write winning
        for duplicates as in NumPy."""
        entries = index if isinstance(index, tuple) else (index,)
        v = self._const_like(value)
        if len(entries) == 1 and _is_mask(index, self) and _shape_of(index) == self.shape and v.size == 1:
            (mask,) = self._tensors([index]) if _is_tensor(index) else [self._const(_host_bool(index))]
            new = mask.where(v.reshape(()), self)
        elif not any(_advanced(e) for e in entries) and _unit_steps(entries):
            new = _region_assign(self, index, v)
        else:
            new = _scatter_assign(self, entries, v)
        self.expr = new.astype(self.dtype, copy=False).expr

    # ------------------------------------------------------------ helpers

    def _const_like(self, value):
        """`value` (a number or host data) as a tensor on this device, or a tensor as it is."""
        if _is_tensor(value):
            return value
        if _is_host_array(value):  # a NumPy scalar or array keeps its dtype
            import numpy

            value = numpy.asarray(value)
        return self._const(value)

    def _index(self, indices, n: int | None, where: str):
        """`indices` as an int32/uint32 tensor of this device; host ones are checked in [-n, n) first."""
        if _is_tensor(indices):
            if indices.dtype.name not in INDEX_DTYPES:
                raise TruenoTypeError(
                    f"indices must be int32 or uint32, int64 on backend='numpy' (or bool masks); got {indices.dtype} "
                    "(use .astype(tw.int32))"
                )
            (t,) = self._tensors([indices])
            return t
        import numpy

        host = numpy.asarray(indices)
        if host.dtype == bool:
            raise TruenoTypeError("a boolean mask selects elements by itself: index with it alone, x[mask]")
        if host.size and host.dtype.kind not in "iu":
            raise TruenoTypeError(f"indices must be integers; got {host.dtype} values (use .astype(int))")
        if n is not None and host.size and (host.min() < -n or host.max() >= n):
            bad = host[(host < -n) | (host >= n)].reshape(-1)[0]
            raise TruenoValueError(f"index {bad} is out of range for {where} of size {n}")
        if n is not None:
            host = numpy.where(host < 0, host + n, host)
        return self._const(numpy.ascontiguousarray(host, dtype=numpy.int32))


def gather(x, full, axis: int):
    """The catalog's take on indices of the output's shape (x.shape[:axis] + J + x.shape[axis+1:])."""
    return x._apply(TAKE, [x, full], (), {"axis": axis})


def scatter(x, full, values, axis: int):
    """The catalog's scatter_add on indices and values of take's output shape (its kernel reads row-major data)."""
    return x._apply(SCATTER_ADD, [t.contiguous() for t in (x, full, values)], (), {"axis": axis})


def _is_tensor(x) -> bool:
    return hasattr(x, "expr") and hasattr(x, "device")


def _is_host_array(x) -> bool:
    return hasattr(x, "__array_interface__") or (hasattr(x, "dtype") and hasattr(x, "shape") and not _is_tensor(x))


def _advanced(e) -> bool:
    return _is_tensor(e) or isinstance(e, list) or _is_host_array(e)


def _is_mask(e, x) -> bool:
    if _is_tensor(e):
        return e.dtype.name == "bool"
    if isinstance(e, list) or _is_host_array(e):
        import numpy

        return numpy.asarray(e).dtype == bool
    return False


def _expand(x, index: tuple):
    """The index with its boolean masks as integer arrays (their nonzero) and, where any entry is an array,
    its ints as 0-d arrays (NumPy's rule: they are advanced indices then), one entry per axis of x or new
    axis; None where the index is basic."""
    if not any(_advanced(e) for e in index):
        return None
    if sum(e is Ellipsis for e in index) > 1:
        raise TruenoValueError("an index can only have one ellipsis ('...')")
    named = sum(len(_shape_of(e)) if _is_mask(e, x) else 1 for e in index if e is not None and e is not Ellipsis)
    if named > x.ndim:
        raise TruenoValueError(f"too many indices for a tensor of shape {x.shape}: {named}")
    out, d = [], 0
    for e in index if any(e is Ellipsis for e in index) else (*index, Ellipsis):
        if e is Ellipsis:
            out += [slice(None)] * (x.ndim - named)
            d += x.ndim - named
        elif _is_mask(e, x):
            shape = _shape_of(e)
            if tuple(x.shape[d : d + len(shape)]) != shape:
                raise TruenoValueError(
                    f"a boolean mask of shape {shape} does not fit axes {d}..{d + len(shape) - 1} of shape {x.shape}"
                )
            out += list(_nonzero(e))
            d += len(shape)
        elif isinstance(e, bool):
            raise TruenoTypeError("a Python bool is no index; use a boolean mask array")
        else:
            out.append(e)
            d += e is not None
    return [_zero_d(e) if isinstance(e, Integral) else e for e in out]


def _shape_of(e) -> tuple:
    if hasattr(e, "shape"):
        return tuple(e.shape)
    import numpy

    return numpy.asarray(e).shape


def _zero_d(i):
    import numpy

    return numpy.asarray(i, dtype=numpy.int64)


def _nonzero(mask):
    """A mask's nonzero as host int32 arrays (a device mask read synchronously)."""
    import numpy

    host = _read_now(mask, "indexing with a boolean mask") if _is_tensor(mask) else numpy.asarray(mask)
    return tuple(numpy.ascontiguousarray(w, dtype=numpy.int32) for w in numpy.nonzero(host))


def _read_now(t, what: str):
    if not runtime.sync_available():
        raise UnavailableError(
            f"{what} has a shape that depends on the data: it reads it synchronously, which this runtime cannot "
            "(no JSPI here); read it first with `await t.numpy()` and index with that NumPy array"
        )
    return t.numpy_sync()


def _wrapped(t, n: int):
    """Device indices wrapped once if negative and clamped into [0, n) (each axis's own, before they combine)."""
    if t.dtype.name == "uint32":
        return t.minimum(max(n - 1, 0)).astype("int32")
    return (t < 0).where(t + n, t).maximum(0).minimum(max(n - 1, 0))


def _unit_steps(index) -> bool:
    """A basic index whose slices step by 1 (its region is a padded box)."""
    entries = index if isinstance(index, tuple) else (index,)
    return all(not isinstance(e, slice) or e.step in (None, 1) for e in entries)


def _host_bool(mask):
    import numpy

    return numpy.asarray(mask, dtype=bool)


def _region_assign(x, index, value):  # value: a tensor
    """x[basic index] = value: value broadcast to the region, shaped as its box in x (ints: 1), padded out
    to x (a masked view), and a where on the box's ones padded the same way: nothing of x is copied."""
    if not x.ndim:  # x[()] = v, x[...] = v: all of it
        return value.astype(x.dtype, copy=False).reshape(())
    region = x[index].shape
    entries = index if isinstance(index, tuple) else (index,)
    if Ellipsis not in entries:
        entries = (*entries, Ellipsis)
    named = sum(e is not None and e is not Ellipsis for e in entries)
    axes = [e for f in entries if f is not None for e in ([slice(None)] * (x.ndim - named) if f is Ellipsis else [f])]
    widths, box = [], []
    for e, n in zip(axes, x.shape):
        start, stop = (e % n, e % n + 1) if isinstance(e, Integral) else e.indices(n)[:2]
        stop = max(stop, start)
        widths.append((start, n - stop))
        box.append(stop - start)
    v = value.astype(x.dtype, copy=False).expand(region).reshape(tuple(box))
    inside = x._const(True).expand(tuple(box)).pad(widths)
    return inside.where(v.pad(widths), x)


def _scatter_assign(x, entries, value):  # value: a tensor
    """x[index] = value for integer arrays, masks or strided slices: the flat positions from the host (device
    indices read first), the last write of each kept (NumPy's rule), then a where on a scatter of the values
    and one of the hits."""
    import numpy

    host = tuple(_read_now(e, "assigning through device indices") if _is_tensor(e) else e for e in entries)
    if any(isinstance(e, float) or getattr(getattr(e, "dtype", None), "kind", "i") == "f" for e in host):
        raise TruenoTypeError("indices must be integers (or bool masks); got floats")
    try:
        chosen = numpy.arange(x.size, dtype=numpy.int64).reshape(x.shape)[host]
    except IndexError as e:
        raise TruenoValueError(f"this index does not fit a tensor of shape {x.shape}: {e}") from None
    flat = chosen.reshape(-1)
    last = numpy.sort(len(flat) - 1 - numpy.unique(flat[::-1], return_index=True)[1])  # each position's last write
    v = value.astype(x.dtype, copy=False).expand(chosen.shape).reshape(-1)
    if len(last) != len(flat):
        v = v.take(numpy.ascontiguousarray(last, dtype=numpy.int32))
    at = numpy.ascontiguousarray(flat[last], dtype=numpy.int32)
    word = "int32" if x.dtype.name == "bool" else x.dtype.name  # scatter_add adds numbers
    zeros = x._const(-0.0 if x.dtype.kind == "float" else 0).astype(word).expand((x.size,))  # -0 + v is v, -0 too
    hits = x._const(0).astype("int32").expand((x.size,)).scatter_add(at, 1)
    values = zeros.scatter_add(at, v.astype(word, copy=False))
    return (hits != 0).reshape(x.shape).where(values.reshape(x.shape), x)
