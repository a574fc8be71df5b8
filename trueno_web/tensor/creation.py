"""Making tensors: from host data, a number, a DeviceArray or a Tensor (asarray). Constructors such as
zeros, ones, full and arange go here too."""

from __future__ import annotations

from ..errors import TruenoTypeError, TruenoValueError
from ..resident import DeviceArray
from .core import Tensor
from .expr import leaf


def asarray(data, device=None, shape=None) -> Tensor:
    """A Tensor on `device` from host data (converted to float32), a DeviceArray or a Tensor."""
    if isinstance(data, Tensor):
        if device is not None and data.device is not device:
            raise TruenoValueError("this tensor is on another device; read it and make a new one there")
        return data
    if isinstance(data, DeviceArray):
        if device is not None and data.device is not device:
            raise TruenoValueError("this DeviceArray is on another device; upload the data to this device")
        return Tensor(data.device, leaf(data.device, data))
    if device is None:
        raise TruenoTypeError("asarray needs device= for host data (e.g. tw.asarray(x, device=dev))")
    return Tensor(device, leaf(device, data, shape))
