"""DeviceArray: data kept on a device, usable in any number of batches without another upload."""

from __future__ import annotations

import math
import weakref

from .dtypes import DType, float32
from .errors import TruenoValueError


class DeviceArray:
    """Data resident on a device (from `await dev.upload(x)`); `read()` downloads it."""

    def __init__(self, device, buffer, shape: tuple[int, ...], dtype: DType = float32):
        self.device = device
        self.shape = shape
        self.dtype = dtype
        self.buffer = buffer  # the executor's storage: opaque above the backends
        self._finalizer = weakref.finalize(self, device.executor.free, buffer)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def check_alive(self) -> None:
        if not self._finalizer.alive:
            raise TruenoValueError("this DeviceArray was released; upload the data again")

    async def read(self):
        """Download the data (one transfer)."""
        return await self.device.read(self)

    def donate(self) -> None:
        """Hand the buffer over to another owner (a jitted function's output written into it, in place): this
        array is released without freeing it."""
        self._finalizer.detach()

    def release(self) -> None:
        """Give the device memory back now rather than at garbage collection."""
        self._finalizer()

    def __repr__(self) -> str:
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, backend={self.device.backend!r})"
