"""The NumPy executor's own arrays (uploads, fused chains' values), reused from call to call.

Why: a fresh 4 MiB array is fresh pages. glibc gives a batch's freed arrays back to the system once
they pass its trim threshold, and the next call faults and zeroes them all again (docs/benchmarks.md,
"CPU fallback vs NumPy"). A pooled array keeps its pages.

Ownership: the pool keeps blocks (flat arrays that own their memory) and lends views of them. Every
view of a block, however derived (reshapes, slices, strided views, memoryviews and arrays over those),
refers to the block itself (NumPy points a view's base at the array owning the memory), so a block is
free exactly when its reference count is the pool's own: no node, DeviceArray, caller or view holds
any part of it. `give_away` takes a block out of the pool for good (a result handed over to the caller).
"""

from __future__ import annotations

import math
import sys

KEEP_BYTES = 1 << 27  # the blocks kept, at most (128 MiB), or more: the most ever lent at once (a program that
# needed them finds them again: a (8192, 4096) float32 step's input and centred values are 256 MiB); past it,
# idle ones of other sizes go first


def _refs(blocks: list, i: int) -> int:
    """Reference count of blocks[i] as seen from here (compared with a free block's, measured the same way)."""
    return sys.getrefcount(blocks[i])


class ArrayPool:
    """float32 arrays lent by shape; see the module docstring."""

    def __init__(self, np):
        self.np = np
        self._blocks: dict[tuple, list] = {}  # (element count, dtype) -> the pool's blocks of that size
        self._bytes = 0
        self._peak = 0  # the most bytes of blocks ever lent at once
        self._free_refs = _refs([np.empty(1, np.float32)], 0)  # a block nothing but its list refers to

    def take(self, shape: tuple[int, ...], dtype="float32"):
        """A C-contiguous array of `shape` and `dtype` (a NumPy dtype or its name), contents undefined, free again
        once nothing refers to it."""
        size = math.prod(shape)
        blocks = self._blocks.setdefault((size, str(dtype)), [])
        for i in range(len(blocks)):
            if _refs(blocks, i) == self._free_refs:
                return blocks[i].reshape(shape)
        block = self.np.empty(size, dtype=dtype)
        lent = sum(
            bs[i].nbytes for bs in self._blocks.values() for i in range(len(bs)) if _refs(bs, i) != self._free_refs
        )
        self._peak = max(self._peak, lent + block.nbytes)
        if self._room(block.nbytes):
            blocks.append(block)
            self._bytes += block.nbytes
        return block.reshape(shape)

    def give_away(self, array) -> bool:
        """Take the block under `array` out of the pool for good; False where it is not the pool's."""
        base = array.base
        blocks = self._blocks.get((getattr(base, "size", -1), str(getattr(base, "dtype", ""))), ())
        for i in range(len(blocks)):
            if blocks[i] is base:
                del blocks[i]
                self._bytes -= base.nbytes
                return True
        return False

    def _room(self, nbytes: int) -> bool:
        """Is there room for a new block of `nbytes`? Drops free blocks to make it where needed."""
        budget = max(KEEP_BYTES, self._peak)
        for blocks in self._blocks.values():
            if self._bytes + nbytes <= budget:
                break
            for i in range(len(blocks) - 1, -1, -1):
                if _refs(blocks, i) == self._free_refs and self._bytes + nbytes > budget:
                    self._bytes -= blocks.pop(i).nbytes
        return self._bytes + nbytes <= budget

    def clear(self) -> None:
        """Forget every block (those in use stay with their holders)."""
        self._blocks.clear()
        self._bytes = 0
