"""How a node reads flat storage: a View (shape, strides, offset, padding mask) and row-major strides.
Movement ops (views.py) compose views; kernels turn them into index arithmetic."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class View:
    """How a view node reads its base's flat storage: element (i0, i1, ...) of `shape` is at
    offset + i0 * strides[0] + i1 * strides[1] + ... (in elements; a stride may be 0 or negative).

    `mask` (padding, concatenation): per dim a valid range [lo, hi); an element outside any of them
    reads as 0.0 and its address means nothing (it may lie outside the storage). None: all valid (a
    mask that covers the whole shape is dropped, so equal views compare equal)."""

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int = 0
    mask: tuple[tuple[int, int], ...] | None = None

    def __post_init__(self):
        if (
            self.mask is not None
            and len(self.mask) == len(self.shape)
            and 0 not in self.shape
            and all(lo <= 0 and hi >= d for (lo, hi), d in zip(self.mask, self.shape))
        ):
            object.__setattr__(self, "mask", None)  # the common case, first: the mask covers everything
        elif self.mask is not None:
            mask = tuple((max(0, int(lo)), min(d, int(hi))) for (lo, hi), d in zip(self.mask, self.shape))
            if len(mask) != len(self.shape):
                raise ValueError(f"a view mask needs one (lo, hi) per dimension of {self.shape}; got {self.mask}")
            if any(lo >= hi for lo, hi in mask):  # nothing valid: one canonical form
                mask = tuple((0, 0) for _ in mask)
            full = all(lo == 0 and hi == d for (lo, hi), d in zip(mask, self.shape))
            object.__setattr__(self, "mask", None if full else mask)

    @property
    def identity(self) -> bool:
        """Row-major from the start of the storage: a kernel reads it as a plain flat array."""
        return self.mask is None and self.offset == 0 and self.strides == contiguous_strides(self.shape, self.strides)

    @property
    def rows_in_place(self) -> bool:
        """Readable in place by a kernel that takes an offset, a row stride and batch strides (kinds.KindRow
        views): no mask, no negative stride, a row's elements adjacent (the last stride 1, or rows of one)."""
        return (
            self.mask is None
            and all(s >= 0 for s in self.strides)
            and (not self.shape or self.shape[-1] == 1 or self.strides[-1] == 1)
        )

    def reach(self) -> tuple[int, int] | None:
        """(lowest, highest) storage element a valid element reads; None where none is valid."""
        bounds = self.mask or tuple((0, d) for d in self.shape)
        if any(lo >= hi for lo, hi in bounds):
            return None
        lo = self.offset + sum(s * (h - 1 if s < 0 else l) for (l, h), s in zip(bounds, self.strides))
        hi = self.offset + sum(s * (h - 1 if s > 0 else l) for (l, h), s in zip(bounds, self.strides))
        return lo, hi


@lru_cache(maxsize=4096)  # called for every view and layout a tensor expression takes
def contiguous_strides(shape: tuple[int, ...], like: tuple[int, ...] | None = None) -> tuple[int, ...]:
    """Row-major strides of `shape`; where `like` is given, dims of size 1 keep its stride (any is valid)."""
    out, step = [], 1
    for j in range(len(shape) - 1, -1, -1):
        out.append(like[j] if like is not None and shape[j] == 1 else step)
        step *= shape[j]
    return tuple(reversed(out))
