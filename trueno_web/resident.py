"""DeviceArray: data kept on a device, usable in any number of batches without another upload."""

from __future__ import annotations

import math
import sys

from .dtypes import DType, float32
from .errors import TruenoValueError


class DeviceArray:
    """Data resident on a device (from `await dev.upload(x)`); `read()` downloads it."""

    def __init__(self, device, buffer, shape: tuple[int, ...], dtype: DType = float32):
        self.device = device
        self.shape = shape
        self.dtype = dtype
        self.buffer = buffer  # the executor's storage: opaque above the backends
        self._free = device.executor.free  # None once released or donated

    def __del__(self):
        if not sys.is_finalizing():  # at exit the executor may be gone before its arrays
            self.release()

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def check_alive(self) -> None:
        if self._free is None:
            raise TruenoValueError("this DeviceArray was released; upload the data again")

    async def read(self):
        """Download the data (one transfer)."""
        return await self.device.read(self)

    def donate(self) -> None:
        """Hand the buffer over to another owner (a jitted function's output written into it, in place): this
        array is released without freeing it."""
        self._free = None

    def release(self) -> None:
        """Give the device memory back now rather than at garbage collection."""
        free, self._free = self._free, None
        if free is not None:
            free(self.buffer)

    def __repr__(self) -> str:
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, backend={self.device.backend!r})"
