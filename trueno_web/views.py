"""Movement ops as views: reshape, permute/transpose, expand, squeeze/unsqueeze and indexing change how a
tensor reads its base's flat storage (a `graph.View`), never the data. The Tensor class mixes these in."""

from __future__ import annotations

import math

from .errors import TruenoTypeError, TruenoValueError
from .expr import Expr
from .graph import View, contiguous_strides


class Views:
    """The movement methods of Tensor (it supplies `expr`, `device`, `shape`, `ndim`, `size`, `contiguous`)."""

    __slots__ = ()

    def _layout(self):
        """(base expression, strides, offset): how this tensor reads its base's flat storage."""
        e = self.expr
        if e.view is not None:
            return e.inputs[0], e.view.strides, e.view.offset
        return e, contiguous_strides(e.shape), 0

    def _view(self, shape, strides, offset):
        base = self._layout()[0]
        view = View(tuple(shape), tuple(strides), offset)
        if view.identity and view.shape == base.shape:
            return type(self)(self.device, base)
        return type(self)(self.device, Expr(view.shape, view=view, inputs=(base,)))

    def _row_major(self) -> bool:
        _, strides, offset = self._layout()
        return strides == contiguous_strides(self.shape, strides)

    def reshape(self, *shape):
        shape = shape_arg(shape)
        if shape.count(-1) > 1 or any(d < -1 for d in shape):
            raise TruenoValueError(f"reshape: bad shape {shape} (one -1 at most, sizes >= 0)")
        if -1 in shape:
            known = math.prod(d for d in shape if d != -1)
            if known == 0 or self.size % known:
                raise TruenoValueError(f"reshape: cannot reshape {self.shape} ({self.size} elements) into {shape}")
            shape = tuple(self.size // known if d == -1 else d for d in shape)
        if math.prod(shape) != self.size:
            raise TruenoValueError(f"reshape: cannot reshape {self.shape} ({self.size} elements) into {shape}")
        src = self if self._row_major() else self.contiguous()
        return src._view(shape, contiguous_strides(shape), src._layout()[2])

    def permute(self, *axes):
        axes = shape_arg(axes)
        if sorted(axis_index(a, self.ndim, "permute") for a in axes) != list(range(self.ndim)) or len(axes) != self.ndim:
            raise TruenoValueError(f"permute: {axes} is not a permutation of the {self.ndim} axes of {self.shape}")
        axes = [axis_index(a, self.ndim, "permute") for a in axes]
        _, strides, offset = self._layout()
        return self._view([self.shape[a] for a in axes], [strides[a] for a in axes], offset)

    def transpose(self, axis0: int = -2, axis1: int = -1):
        """Swap two axes (the last two by default); `t.T` reverses all of them, as in NumPy."""
        if self.ndim < 2:
            return self
        axes = list(range(self.ndim))
        a, b = axis_index(axis0, self.ndim, "transpose"), axis_index(axis1, self.ndim, "transpose")
        axes[a], axes[b] = axes[b], axes[a]
        return self.permute(axes)

    @property
    def T(self):
        return self.permute(list(range(self.ndim))[::-1])

    def expand(self, *shape):
        """Broadcast to `shape` (NumPy's rules; -1 keeps a dimension); nothing is copied."""
        shape = shape_arg(shape)
        if len(shape) < self.ndim:
            raise TruenoValueError(f"expand: cannot broadcast {self.shape} to {shape} (fewer dimensions)")
        _, strides, offset = self._layout()
        lead = len(shape) - self.ndim
        out_shape, out_strides = list(shape[:lead]), [0] * lead
        for d, (have, want) in enumerate(zip(self.shape, shape[lead:])):
            want = have if want == -1 else want
            if have != want and have != 1:
                raise TruenoValueError(f"expand: cannot broadcast {self.shape} to {shape} (axis {d}: {have} vs {want})")
            out_shape.append(want)
            out_strides.append(strides[d] if have == want else 0)
        return self._view(out_shape, out_strides, offset)

    broadcast_to = expand

    def squeeze(self, axis=None):
        axes = range(self.ndim) if axis is None else axes_tuple(axis, self.ndim, "squeeze")
        drop = {a for a in axes if self.shape[a] == 1}
        if axis is not None and len(drop) != len(axes):
            raise TruenoValueError(f"squeeze: axis {axis} of {self.shape} is not of size 1")
        _, strides, offset = self._layout()
        keep = [d for d in range(self.ndim) if d not in drop]
        return self._view([self.shape[d] for d in keep], [strides[d] for d in keep], offset)

    def unsqueeze(self, axis: int):
        a = axis_index(axis, self.ndim + 1, "unsqueeze")
        _, strides, offset = self._layout()
        return self._view(self.shape[:a] + (1,) + self.shape[a:], strides[:a] + (0,) + strides[a:], offset)

    def __getitem__(self, index):
        index = index if isinstance(index, tuple) else (index,)
        if sum(i is Ellipsis for i in index) > 1:
            raise TruenoValueError("an index can only have one ellipsis ('...')")
        named = sum(i is not None and i is not Ellipsis for i in index)
        if named > self.ndim:
            raise TruenoValueError(f"too many indices for a tensor of shape {self.shape}: {named}")
        if Ellipsis not in index:
            index = index + (Ellipsis,)
        at = index.index(Ellipsis)
        index = index[:at] + (slice(None),) * (self.ndim - named) + index[at + 1:]
        _, strides, offset = self._layout()
        shape, out_strides, d = [], [], 0
        for i in index:
            if i is None:
                shape.append(1), out_strides.append(0)
                continue
            size, stride = self.shape[d], strides[d]
            if isinstance(i, slice):
                start, stop, step = i.indices(size)
                n = len(range(start, stop, step))
                offset += start * stride if n else 0
                shape.append(n), out_strides.append(stride * step)
            elif isinstance(i, int) and not isinstance(i, bool):
                if not -size <= i < size:
                    raise TruenoValueError(f"index {i} is out of range for axis {d} of size {size}")
                offset += (i % size) * stride
            else:
                raise TruenoTypeError(f"tensors take ints, slices, None and ... as indices, got {type(i).__name__}")
            d += 1
        return self._view(shape, out_strides, offset)


def shape_arg(shape) -> tuple[int, ...]:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    if not all(isinstance(d, int) and not isinstance(d, bool) for d in shape):
        raise TruenoTypeError(f"a shape is a tuple of ints, got {shape!r}")
    return tuple(shape)


def axis_index(axis, ndim: int, what: str) -> int:
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise TruenoTypeError(f"{what}: an axis is an int, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise TruenoValueError(f"{what}: axis {axis} is out of range for {ndim} dimension(s)")
    return axis % ndim


def axes_tuple(axis, ndim: int, what: str) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = tuple(axis_index(a, ndim, what) for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if len(set(axes)) != len(axes):
        raise TruenoValueError(f"{what}: repeated axis in {axis}")
    return axes
