"""trueno_web: GPU compute from Python in the browser (Pyodide + WebGPU) and on the desktop (wgpu-py).

    import trueno_web as tw
    dev = await tw.GpuDevice.create()
    y = await dev.relu(x)

Nothing heavy is imported here: wgpu, NumPy and the `js` module load when a backend needs them.
"""

from __future__ import annotations

from . import errors, runtime
from .errors import (
    BatchError,
    DeviceLostError,
    GpuError,
    LimitError,
    TruenoError,
    TruenoTypeError,
    TruenoValueError,
    UnavailableError,
)

__version__ = "0.1.0"
__all__ = [
    "GpuDevice", "GpuCommandBatch", "BufferId", "DeviceArray", "Stats", "ops", "runtime", "errors",
    "TruenoError", "TruenoValueError", "TruenoTypeError", "LimitError", "BatchError", "GpuError",
    "DeviceLostError", "UnavailableError",
]

_LAZY = {
    "GpuDevice": ("device", "GpuDevice"),
    "DeviceArray": ("resident", "DeviceArray"),
    "GpuCommandBatch": ("batch", "GpuCommandBatch"),
    "BufferId": ("batch", "BufferId"),
    "Stats": ("stats", "Stats"),
    "ops": ("ops", None),
}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'trueno_web' has no attribute {name!r}")
    from importlib import import_module

    module_name, attr = _LAZY[name]
    module = import_module(f".{module_name}", __name__)
    value = module if attr is None else getattr(module, attr)
    globals()[name] = value
    return value
