"""concatenate and stack, tinygrad's way: each input padded to the output's shape along the axis (a
masked view, nothing copied) and the padded views added: one fused map kernel that reads each input
once. stack is concatenate of the inputs each given a new axis."""

from __future__ import annotations

from ..dtypes import bool_
from ..errors import TruenoTypeError, TruenoValueError
from .core import Tensor, as_tensors
from .views import axis_index


def _inputs(seq, what: str) -> list[Tensor]:
    if isinstance(seq, Tensor) or not isinstance(seq, (list, tuple)):
        raise TruenoTypeError(f"{what} takes a list or tuple of tensors, got {type(seq).__name__}")
    if not seq:
        raise TruenoValueError(f"{what} needs at least one tensor; got an empty sequence")
    return as_tensors(list(seq))


def concatenate(tensors, axis: int = 0) -> Tensor:
    """NumPy's concatenate: the tensors joined along `axis` (all other sizes equal). Lazy: the result
    reads each input through a padded view; no input is copied before the one kernel that adds them.
    A -0.0 of an input comes out as +0.0 where there are two inputs or more (x + 0.0)."""
    ts = _inputs(tensors, "concatenate")
    ndim = ts[0].ndim
    if ndim == 0:
        raise TruenoValueError("concatenate: zero-dimensional tensors cannot be concatenated (use stack)")
    if any(t.ndim != ndim for t in ts):
        raise TruenoValueError(
            f"concatenate: the tensors must have the same number of dimensions; got shapes "
            f"{', '.join(str(t.shape) for t in ts)}"
        )
    a = axis_index(axis, ndim, "concatenate")
    rest = [t.shape[:a] + t.shape[a + 1 :] for t in ts]
    if any(r != rest[0] for r in rest):
        raise TruenoValueError(
            f"concatenate: along axis {axis} all sizes but that axis's must match; got shapes "
            f"{', '.join(str(t.shape) for t in ts)}"
        )
    total = sum(t.shape[a] for t in ts)
    out, before = None, 0
    for t in ts:
        n = t.shape[a]
        if n == 0 and len(ts) > 1:
            continue
        widths = [(0, 0)] * ndim
        widths[a] = (before, total - before - n)
        padded = t.pad(widths)
        both_bool = out is not None and out.dtype is bool_ and padded.dtype is bool_
        out = padded if out is None else (out | padded) if both_bool else out + padded  # bools stay bool
        before += n
    return ts[0] if out is None else out


def stack(tensors, axis: int = 0) -> Tensor:
    """NumPy's stack: tensors of one shape joined along a new axis (concatenate of t.unsqueeze(axis))."""
    ts = _inputs(tensors, "stack")
    if any(t.shape != ts[0].shape for t in ts):
        raise TruenoValueError(
            f"stack: all tensors must have the same shape; got shapes {', '.join(str(t.shape) for t in ts)}"
        )
    a = axis_index(axis, ts[0].ndim + 1, "stack")
    return concatenate([t.unsqueeze(a) for t in ts], a)
