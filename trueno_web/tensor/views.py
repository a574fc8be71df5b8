"""Movement ops as views: reshape, permute, expand, squeeze/unsqueeze, indexing and zero padding
change how a tensor reads its base's flat storage (a `layout.View`), never the data. The Tensor class
mixes these in; the helpers at the end (axes, shapes, pad widths) serve the other tensor modules too.

Padding is a view with a mask (per dim a valid range [lo, hi); elements outside read as 0.0, tinygrad's
way): every movement op composes the mask, except reshape, which copies a masked view first."""

from __future__ import annotations

import math
import operator
from numbers import Real

from ..errors import TruenoIndexError, TruenoTypeError, TruenoValueError
from ..layout import View, contiguous_strides
from .expr import Expr


class Views:
    """The movement methods of Tensor. The class supplies `expr`, `device`, `shape`, `ndim`, `size`, and
    the hooks `_new(expr)` (a tensor of that expression on this tensor's device) and `_const(value)` (a
    number or host data as a tensor on this device)."""

    __slots__ = ()

    def _mask(self) -> list[tuple[int, int]]:
        """Per dim the valid range [lo, hi) of this tensor (all of it, where it is not a masked view)."""
        view = self.expr.view
        return list(view.mask) if view is not None and view.mask is not None else [(0, d) for d in self.shape]

    def _view(self, shape, strides, offset, mask=None):
        """A view of this tensor's base; `mask`: per dim the valid range (None or all of it: no mask; an
        empty range anywhere: all zeros)."""
        base = self.expr.layout()[0]
        shape = tuple(shape)
        if mask is not None and not shape and any(lo >= hi for lo, hi in mask):
            # a 0-d view of no valid element: a 1-element one, copied (a 0-d View cannot carry a mask)
            return self._view((1,), (0,), offset, ((0, 0),)).reshape(())
        view = View(shape, tuple(strides), offset, None if mask is None else tuple(mask))
        if view.identity and view.shape == base.shape:
            return self._new(base)
        return self._new(Expr(view.shape, view=view, inputs=(base,), dtype=base.dtype))

    def contiguous(self):
        """This tensor in row-major memory of its own (a copy only where it is a strided view)."""
        expr = self.expr.contiguous()
        return self if expr is self.expr else self._new(expr)

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
        src = self if self.expr.row_major() else self.contiguous()
        return src._view(shape, contiguous_strides(shape), src.expr.layout()[2])

    def permute(self, *axes):
        axes = shape_arg(axes)
        if (
            sorted(axis_index(a, self.ndim, "permute") for a in axes) != list(range(self.ndim))
            or len(axes) != self.ndim
        ):
            raise TruenoValueError(f"permute: {axes} is not a permutation of the {self.ndim} axes of {self.shape}")
        axes = [axis_index(a, self.ndim, "permute") for a in axes]
        _, strides, offset = self.expr.layout()
        mask = self._mask()
        return self._view([self.shape[a] for a in axes], [strides[a] for a in axes], offset, [mask[a] for a in axes])

    def expand(self, *shape):
        """Broadcast to `shape` (NumPy's rules; -1 keeps a dimension); nothing is copied."""
        shape = shape_arg(shape)
        if len(shape) < self.ndim:
            raise TruenoValueError(f"expand: cannot broadcast {self.shape} to {shape} (fewer dimensions)")
        _, strides, offset = self.expr.layout()
        lead = len(shape) - self.ndim
        out_shape, out_strides = list(shape[:lead]), [0] * lead
        mask, out_mask = self._mask(), [(0, d) for d in shape[:lead]]
        for d, (have, want) in enumerate(zip(self.shape, shape[lead:])):
            want = have if want == -1 else want
            if have != want and have != 1:
                raise TruenoValueError(f"expand: cannot broadcast {self.shape} to {shape} (axis {d}: {have} vs {want})")
            out_shape.append(want)
            out_strides.append(strides[d] if have == want else 0)
            out_mask.append(mask[d] if have == want else (0, want if mask[d][0] < mask[d][1] else 0))
        return self._view(out_shape, out_strides, offset, out_mask)

    broadcast_to = expand

    def squeeze(self, axis=None):
        axes = range(self.ndim) if axis is None else axes_tuple(axis, self.ndim, "squeeze")
        drop = {a for a in axes if self.shape[a] == 1}
        if axis is not None and len(drop) != len(axes):
            raise TruenoValueError(f"squeeze: axis {axis} of {self.shape} is not of size 1")
        _, strides, offset = self.expr.layout()
        keep = [d for d in range(self.ndim) if d not in drop]
        mask = self._mask()
        dead = any(mask[d][0] >= mask[d][1] for d in drop)
        out_mask = [(0, 0) if dead else mask[d] for d in keep] + ([(0, 0)] if dead and not keep else [])
        return self._view([self.shape[d] for d in keep], [strides[d] for d in keep], offset, out_mask)

    def unsqueeze(self, axis: int):
        a = axis_index(axis, self.ndim + 1, "unsqueeze")
        _, strides, offset = self.expr.layout()
        mask = self._mask()
        return self._view(
            self.shape[:a] + (1,) + self.shape[a:],
            strides[:a] + (0,) + strides[a:],
            offset,
            mask[:a] + [(0, 1)] + mask[a:],
        )

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
        index = index[:at] + (slice(None),) * (self.ndim - named) + index[at + 1 :]
        _, strides, offset = self.expr.layout()
        mask = self._mask()
        shape, out_strides, out_mask, dead, d = [], [], [], False, 0
        for i in index:
            if i is None:
                shape.append(1), out_strides.append(0), out_mask.append((0, 1))
                continue
            size, stride = self.shape[d], strides[d]
            if isinstance(i, slice):
                start, stop, step = i.indices(size)
                n = len(range(start, stop, step))
                offset += start * stride if n else 0
                shape.append(n), out_strides.append(stride * step), out_mask.append(_sliced(mask[d], start, step, n))
            elif isinstance(i, int) and not isinstance(i, bool):
                if not -size <= i < size:
                    raise TruenoValueError(f"index {i} is out of range for axis {d} of size {size}")
                offset += (i % size) * stride
                dead = dead or not mask[d][0] <= i % size < mask[d][1]
            else:
                raise TruenoTypeError(f"tensors take ints, slices, None and ... as indices, got {type(i).__name__}")
            d += 1
        if dead:
            out_mask = [(0, 0)] * max(len(shape), 1)
        return self._view(shape, out_strides, offset, out_mask)

    def pad(self, pad_width, mode: str = "constant", constant_values=0.0):
        """Zero padding as NumPy's np.pad(x, pad_width): an int, (before, after), or one (before, after)
        per axis. A view (a mask: the padding reads as 0.0), nothing copied; `constant_values` c other
        than 0 is a `where` on a padded ones-view (one more fused load)."""
        if mode != "constant":
            raise TruenoValueError(f"pad: only mode='constant' is supported, got {mode!r}")
        if isinstance(constant_values, bool) or not isinstance(constant_values, Real):
            raise TruenoTypeError(f"pad: constant_values is one number, got {constant_values!r}")
        widths = pad_widths(pad_width, self.shape)
        _, strides, offset = self.expr.layout()
        mask = self._mask()
        shape = [n + b + a for n, (b, a) in zip(self.shape, widths)]
        offset -= sum(b * s for (b, _), s in zip(widths, strides))
        out = self._view(shape, strides, offset, [(lo + b, hi + b) for (lo, hi), (b, _) in zip(mask, widths)])
        if constant_values == 0 or out.shape == self.shape:
            return out
        inside = self._const(1.0).expand(self.shape).pad(widths)
        return inside.where(out, float(constant_values))


def _sliced(valid: tuple[int, int], start: int, step: int, n: int) -> tuple[int, int]:
    """The valid range [lo, hi) of j in range(n) where start + j * step lies in `valid` (a range again:
    the map is monotonic)."""
    lo, hi = valid
    if step > 0:
        first, last = -((start - lo) // step), -((start - hi) // step)  # ceil((lo - start) / step), ceil(...)
    else:
        first, last = (start - hi) // -step + 1, (start - lo) // -step + 1
    first, last = max(first, 0), min(last, n)
    return (first, last) if first < last else (0, 0)


def pad_widths(pad_width, shape: tuple[int, ...]) -> list[tuple[int, int]]:
    """(before, after) per axis from NumPy's pad_width forms, read as np.pad does (broadcast to (ndim, 2)):
    n, (n,), (before, after), ((before, after),), or one (before, after) or (n,) per axis; ints >= 0."""

    def num(v) -> int:
        if isinstance(v, (bool, float)) or not hasattr(v, "__index__"):
            raise TruenoTypeError(f"pad: pad widths are ints, got {pad_width!r}")
        return operator.index(v)

    seq = (tuple, list)
    if isinstance(pad_width, seq) and pad_width and all(isinstance(r, seq) for r in pad_width):
        rows = [[num(v) for v in r] for r in pad_width]
    elif isinstance(pad_width, seq) and any(isinstance(r, seq) for r in pad_width):
        raise TruenoValueError(f"pad: pad_width {pad_width!r} mixes numbers and pairs")
    else:
        rows = [[num(v) for v in pad_width] if isinstance(pad_width, seq) else [num(pad_width)]]
    ndim = len(shape)
    if len(rows) not in (1, ndim) or any(len(r) not in (1, 2) for r in rows) or len({len(r) for r in rows}) > 1:
        raise TruenoValueError(
            f"pad: pad_width {pad_width!r} does not fit a tensor of shape {shape} (give an int, "
            f"(before, after), or one (before, after) per axis: {ndim} of them)"
        )
    widths = [(r[0], r[-1]) for r in (rows * ndim if len(rows) == 1 else rows)]
    if any(b < 0 or a < 0 for b, a in widths):
        raise TruenoValueError(f"pad: pad widths must be >= 0, got {pad_width!r} for shape {shape}")
    return widths


def broadcast_shapes(*shapes) -> tuple[int, ...]:
    """NumPy's broadcast of shapes, or a TruenoValueError naming them."""
    if all(s == shapes[0] for s in shapes):
        return tuple(shapes[0]) if shapes else ()
    ndim = max(map(len, shapes), default=0)
    out = []
    for d in range(ndim):
        sizes = {s[d - ndim + len(s)] for s in shapes if d - ndim + len(s) >= 0} - {1}
        if len(sizes) > 1:
            raise TruenoValueError(f"shapes {' and '.join(map(str, shapes))} do not broadcast (NumPy's rules)")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


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
        raise TruenoIndexError(f"{what}: axis {axis} is out of range for {ndim} dimension(s)")
    return axis % ndim


def axes_tuple(axis, ndim: int, what: str) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    if type(axis) is int and -ndim <= axis < ndim:
        return (axis % ndim,)
    axes = tuple(axis_index(a, ndim, what) for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if len(set(axes)) != len(axes):
        raise TruenoValueError(f"{what}: repeated axis in {axis}")
    return axes
