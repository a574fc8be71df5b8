"""trueno_web: GPU compute from Python in the browser (Pyodide + WebGPU) and on the desktop (wgpu-py).

    import trueno_web as tw
    dev = await tw.GpuDevice.create()
    y = await dev.relu(x)

Nothing heavy is imported here: wgpu, NumPy and the `js` module load when a backend needs them.
"""

from __future__ import annotations

from importlib import import_module
from importlib.util import find_spec

from . import dtypes, errors, runtime
from .dtypes import (
    can_cast,
    complex64,
    complex128,
    finfo,
    float16,
    float32,
    float64,
    iinfo,
    int32,
    int64,
    isdtype,
    result_type,
    uint32,
)
from .errors import (
    BatchError,
    DeviceClosedError,
    DeviceLostError,
    GpuError,
    LimitError,
    TruenoError,
    TruenoIndexError,
    TruenoTypeError,
    TruenoValueError,
    UnavailableError,
)

__version__ = "0.1.0"
__array_api_version__ = "2024.12"  # the Python array API standard this namespace implements (namespace.py)
# the array API namespace's free functions and constants that are no Tensor method (namespace.py)
_NAMESPACE = (
    "__array_namespace_info__",
    "from_dlpack",
    "astype",
    "reshape",
    "permute_dims",
    "matrix_transpose",
    "expand_dims",
    "broadcast_arrays",
    "broadcast_to",
    "flip",
    "roll",
    "tile",
    "repeat",
    "concat",
    "unstack",
    "vecdot",
    "tensordot",
    "outer",
    "clip",
    "e",
    "pi",
    "inf",
    "nan",
    "newaxis",
)
__all__ = [
    "GpuDevice",
    "GpuCommandBatch",
    "BufferId",
    "DeviceArray",
    "NDResult",
    "Stats",
    "ops",
    "random",
    "linalg",
    "runtime",
    "errors",
    "Tensor",
    "asarray",
    "realize",
    "matmul",
    "broadcast_shapes",
    "linear",
    "layer_norm",
    "scaled_dot_product_attention",
    "concatenate",
    "stack",
    "TruenoError",
    "TruenoValueError",
    "TruenoIndexError",
    "TruenoTypeError",
    "LimitError",
    "BatchError",
    "GpuError",
    "DeviceLostError",
    "DeviceClosedError",
    "UnavailableError",
    "grad",
    "jvp",
    "value_and_grad",
    "vjp",
    "nn",
    "optim",
    "jit",
    "synchronize",
    "dtypes",
    "bool",
    "int32",
    "uint32",
    "float16",
    "float32",
    "int64",
    "float64",
    "complex64",
    "complex128",
    "result_type",
    "can_cast",
    "finfo",
    "iinfo",
    "isdtype",
    "zeros",
    "ones",
    "full",
    "empty",
    "zeros_like",
    "ones_like",
    "full_like",
    "empty_like",
    "arange",
    "linspace",
    "eye",
    "tril",
    "triu",
    "meshgrid",
    "default_device",
    "set_default_device",
    *_NAMESPACE,
]

_NOT_FUNCTIONS = {"numpy", "numpy_sync", "read", "item", "mro"}  # Tensor methods that are no tensor function
_LAZY = {
    "Tensor": ("tensor", "Tensor"),
    "asarray": ("namespace", "asarray"),
    "matmul": ("tensor", "matmul"),
    "broadcast_shapes": ("tensor", "broadcast_shapes"),
    "linear": ("nn", "linear"),
    "layer_norm": ("nn", "layer_norm"),
    "scaled_dot_product_attention": ("nn", "scaled_dot_product_attention"),
    "concatenate": ("tensor", "concatenate"),
    "stack": ("tensor", "stack"),
    "realize": ("tensor", "realize"),
    "GpuDevice": ("device", "GpuDevice"),
    "DeviceArray": ("resident", "DeviceArray"),
    "NDResult": ("ndresult", "NDResult"),
    "GpuCommandBatch": ("batch", "GpuCommandBatch"),
    "BufferId": ("batch", "BufferId"),
    "Stats": ("stats", "Stats"),
    "ops": ("ops", None),
    "nn": ("nn", None),
    "optim": ("optim", None),
    "grad": ("autodiff", "grad"),
    "jvp": ("autodiff", "jvp"),
    "value_and_grad": ("autodiff", "value_and_grad"),
    "vjp": ("autodiff", "vjp"),
    "jit": ("programs", "jit"),
    "synchronize": ("device", "synchronize"),
    "default_device": ("device", "default_device"),
    "set_default_device": ("device", "set_default_device"),
    **{name: ("namespace", name) for name in _NAMESPACE},
    "random": ("random", None),
    "linalg": ("linalg", None),
    "fft": ("fft", None),
    "zeros": ("device", "zeros"),
    "ones": ("device", "ones"),
    "full": ("device", "full"),
    "empty": ("device", "empty"),
    "zeros_like": ("device", "zeros_like"),
    "ones_like": ("device", "ones_like"),
    "full_like": ("device", "full_like"),
    "empty_like": ("device", "empty_like"),
    "arange": ("device", "arange"),
    "linspace": ("device", "linspace"),
    "eye": ("device", "eye"),
    "tril": ("device", "tril"),
    "triu": ("device", "triu"),
    "meshgrid": ("device", "meshgrid"),
}


globals()["bool"] = dtypes.bool_  # tw.bool, as the array API names it (the builtin stays `bool` elsewhere)


def __getattr__(name: str):
    if name not in _LAZY:
        if name.startswith("_") or name in _NOT_FUNCTIONS or find_spec(f"{__name__}.{name}") is not None:
            raise AttributeError(f"module 'trueno_web' has no attribute {name!r}")  # a submodule: imported as one
        tensor = import_module(".tensor", __name__)
        if not callable(getattr(tensor.Tensor, name, None)):
            raise AttributeError(f"module 'trueno_web' has no attribute {name!r}")
        value = globals()[name] = getattr(tensor.Tensor, name)  # tw.exp(t), tw.sum(t, axis=0), tw.where(c, a, b)
        return value
    module_name, attr = _LAZY[name]
    module = import_module(f".{module_name}", __name__)
    value = module if attr is None else getattr(module, attr)
    globals()[name] = value
    return value
