"""Host-side copies of the desktop driver: memory a read fills, raw addresses of Python buffers and mapped
ranges, and memmove split over threads for large copies."""

from __future__ import annotations

import ctypes
from concurrent.futures import ThreadPoolExecutor

from .wgpu_internals import readonly_address


def fresh(nbytes: int):
    """Writable memory the caller will own: np.empty (not touched yet) where NumPy imports."""
    try:
        import numpy
    except ImportError:
        return memoryview(bytearray(nbytes))
    return numpy.empty(nbytes, numpy.uint8)


def address_of(buf) -> int:
    """The address of a contiguous buffer (read-only ones too), kept valid by the caller."""
    view = memoryview(buf)
    if not view.readonly:
        return ctypes.addressof((ctypes.c_char * view.nbytes).from_buffer(view))
    return readonly_address(view)


def mapped_address(view) -> int:
    """The address of a whole mapped range from wgpu-py (a view over a ctypes array at its start)."""
    return ctypes.addressof(view.obj)


class CopyThreads:
    """memmove on several threads (ctypes releases the GIL), made on the first copy large enough to split."""

    def __init__(self):
        self.pool = None

    def copy(self, dst: int, src: int, nbytes: int, threads: int, split_min: int) -> None:
        """Copy `nbytes` on up to `threads` threads, `split_min` bytes a thread at least."""
        count = min(threads, nbytes // split_min)
        if count <= 1:
            ctypes.memmove(dst, src, nbytes)
            return
        if self.pool is None:
            self.pool = ThreadPoolExecutor(threads, thread_name_prefix="trueno_web-copy")
        step = -(-nbytes // count // 4096) * 4096
        jobs = [
            self.pool.submit(ctypes.memmove, dst + o, src + o, min(step, nbytes - o)) for o in range(0, nbytes, step)
        ]
        for job in jobs:
            job.result()

    def close(self, wait: bool) -> None:
        """Let the threads go (made again on the next large copy)."""
        if self.pool is not None:
            self.pool.shutdown(wait=wait)
            self.pool = None
