"""The Python array API standard's (2024.12) Tensor members that are not an op: the namespace, the device,
NumPy's transpose, the spec's axis moves, the Python conversions of one element (blocking: they run the
tensor) and DLPack on the CPU backends. The Tensor class mixes these in; the namespace's free functions are
in trueno_web/namespace.py."""

from __future__ import annotations

import math
import sys

from .. import runtime
from ..errors import TruenoTypeError, TruenoValueError, UnavailableError
from .expr import leaf
from .views import axis_index, shape_arg

API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")
CPU_BACKENDS = ("numpy", "wasm-simd")  # their results are host memory: DLPack hands NumPy's array over
DL_CPU = 1  # DLPack's kDLCPU


class ArrayApi:
    """The array API members of Tensor. The class supplies, besides the Views mixin's needs, `dtype`,
    `numpy_sync()`, `item()` and the hook `_apply`; the operators with a catalog row are in core.py."""

    __slots__ = ()

    def __array_namespace__(self, api_version: str | None = None):
        """The trueno_web module: the namespace of the standard's functions on these tensors."""
        if api_version is not None and api_version not in API_VERSIONS:
            raise TruenoValueError(
                f"trueno_web implements array API {API_VERSIONS[-1]}; got api_version={api_version!r}"
            )
        return sys.modules[__name__.split(".")[0]]

    def to_device(self, device, /, *, stream=None):
        """This tensor on `device` (itself where it is there already; else read here and uploaded there)."""
        if device is self.device:
            return self
        if stream is not None:
            raise TruenoValueError("to_device: trueno_web has no streams; leave stream=None")
        return type(self)(device, leaf(device, self.numpy_sync()))

    # ------------------------------------------------------------ axes

    def transpose(self, *axes):
        """NumPy's transpose: the axes reversed, or permuted as given (`t.transpose(1, 0, 2)`)."""
        axes = shape_arg(axes)
        return self.permute(axes or tuple(range(self.ndim))[::-1])

    def swapaxes(self, axis1: int, axis2: int):
        """The two axes swapped."""
        axes = list(range(self.ndim))
        a, b = axis_index(axis1, self.ndim, "swapaxes"), axis_index(axis2, self.ndim, "swapaxes")
        axes[a], axes[b] = axes[b], axes[a]
        return self.permute(axes)

    def moveaxis(self, source, destination):
        """The axes `source` (an int or a tuple) moved to the places `destination`, the others in order."""
        src = [axis_index(a, self.ndim, "moveaxis") for a in (source if isinstance(source, tuple) else (source,))]
        dst = [
            axis_index(a, self.ndim, "moveaxis")
            for a in (destination if isinstance(destination, tuple) else (destination,))
        ]
        if len(src) != len(dst) or len(set(src)) != len(src) or len(set(dst)) != len(dst):
            raise TruenoValueError(
                f"moveaxis: source {source} and destination {destination} must be distinct axes, as many"
            )
        rest = iter(a for a in range(self.ndim) if a not in src)
        where = dict(zip(dst, src))
        return self.permute([where[d] if d in where else next(rest) for d in range(self.ndim)])

    @property
    def T(self):
        """The transpose of a 2-D tensor (the standard's T; `transpose()` reverses the axes of any tensor)."""
        if self.ndim != 2:
            raise TruenoValueError(f"T is for 2-D tensors; this one has shape {self.shape} (use t.transpose() or t.mT)")
        return self.permute(1, 0)

    @property
    def mT(self):
        """The last two axes swapped: a stack of matrices transposed."""
        if self.ndim < 2:
            raise TruenoValueError(f"mT needs at least 2 dimensions; this tensor has shape {self.shape}")
        return self.swapaxes(-2, -1)

    def __iter__(self):
        """The tensors along the first axis (views: nothing runs)."""
        if not self.shape:
            raise TruenoTypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    # ------------------------------------------------------------ one element as a Python number

    def _scalar(self, what: str):
        """The one element's value (a bool, int or float), computed now: blocking where runtime.block_on can."""
        if self.size != 1:
            raise TruenoTypeError(f"{what}() takes a tensor of one element; this one has shape {self.shape}")
        try:
            return runtime.block_on(self.item())
        except UnavailableError as e:  # async code on the desktop (a tw.jit trace too), or a browser without JSPI
            value = "truth value" if what == "bool" else "value"
            raise TruenoTypeError(
                f"the {value} of a lazy tensor is unknown until it runs, and it cannot wait here: {e}"
            ) from None

    def __bool__(self) -> bool:
        return bool(self._scalar("bool"))

    def __int__(self) -> int:
        value = self._scalar("int")
        if isinstance(value, float) and not math.isfinite(value):
            raise (TruenoValueError if math.isnan(value) else OverflowError)(f"int() of {value}")
        return int(value)

    def __float__(self) -> float:
        return float(self._scalar("float"))

    def __complex__(self) -> complex:
        return complex(self._scalar("complex"))

    def __index__(self) -> int:
        if not self.dtype.integral:
            raise TruenoTypeError(f"only integer tensors are indices; this one is {self.dtype}")
        return int(self._scalar("index"))

    # ------------------------------------------------------------ DLPack

    def _host(self, what: str):
        if self.device.backend not in CPU_BACKENDS:
            raise TruenoTypeError(
                f"{what}: DLPack needs a CPU backend ({', '.join(CPU_BACKENDS)}); read it with `await t.numpy()`"
            )
        return self.numpy_sync()

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """The tensor's values as a DLPack capsule (NumPy's array of them: CPU backends only)."""
        kwargs = {"stream": stream, "dl_device": dl_device, "copy": copy}
        if max_version is not None:
            kwargs["max_version"] = max_version
        return self._host("__dlpack__").__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        if self.device.backend not in CPU_BACKENDS:
            raise TruenoTypeError(f"__dlpack_device__: DLPack needs a CPU backend ({', '.join(CPU_BACKENDS)})")
        return (DL_CPU, 0)

    # ------------------------------------------------------------ operators with a catalog row

    def __floordiv__(self, other):
        return self.floor_divide(other)

    def __rfloordiv__(self, other):
        return self._tensors([other, self])[0].floor_divide(self)

    def __mod__(self, other):
        return self.remainder(other)

    def __rmod__(self, other):
        return self._tensors([other, self])[0].remainder(self)
