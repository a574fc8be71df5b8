"""Arguments of tw.linalg's functions: float tensors (float32, float64 where the device holds it; integers
converted to float32, bool refused), their rank
and squareness checked where the mistake is written, and the small constants the algorithms share."""

from __future__ import annotations

from ..dtypes import bool_, finfo, float32
from ..errors import TruenoTypeError, TruenoValueError
from ..resident import DeviceArray
from ..tensor import Tensor, arange, broadcast_shapes, eye


def eps(x: Tensor) -> float:
    """The machine epsilon of x's float dtype (2^-23 for float32): the algorithms' tolerances scale by it."""
    return finfo(x.dtype).eps


def tensor(x, where: str, ndim: int = 2) -> Tensor:
    """`x` as a Tensor of its dtype of at least `ndim` dimensions (a DeviceArray becomes a tensor of its device)."""
    if isinstance(x, DeviceArray):
        x = x.device.tensor(x)
    if not isinstance(x, Tensor):
        raise TruenoTypeError(f"linalg.{where} takes a Tensor; got {type(x).__name__} (make one with tw.asarray)")
    if x.ndim < ndim:
        what = "a stack of matrices (..., M, N)" if ndim == 2 else f"{ndim} or more dimensions"
        raise TruenoValueError(f"linalg.{where} needs {what}; got shape {x.shape}")
    return x


def floats(x, where: str, ndim: int = 2) -> Tensor:
    """`x` as a float Tensor of at least `ndim` dimensions (float64 kept; integers to float32; bool refused)."""
    x = tensor(x, where, ndim)
    if x.dtype is bool_:
        raise TruenoTypeError(f"linalg.{where} computes in floats; convert the bool tensor first (x.astype)")
    return x if x.dtype.kind == "float" else x.astype(float32)


def square(x, where: str) -> Tensor:
    """`x` as float square matrices (..., n, n)."""
    x = floats(x, where)
    if x.shape[-1] != x.shape[-2]:
        raise TruenoValueError(f"linalg.{where} needs square matrices (..., n, n); got shape {x.shape}")
    return x


def identity(x: Tensor, n: int) -> Tensor:
    """The n x n identity on x's device, broadcast to x's batch dimensions."""
    return eye(n, device=x.device).expand(*x.shape[:-2], n, n)


def rows(x: Tensor, n: int) -> Tensor:
    """0, 1, ..., n - 1 (int32) on x's device: the index along an axis, for masks and one-hots."""
    return arange(n, device=x.device)


def batch_of(*shapes) -> tuple[int, ...]:
    """The broadcast batch dimensions of matrices (everything but the last two axes)."""
    return broadcast_shapes(*(s[:-2] for s in shapes))


def symmetric(x: Tensor) -> Tensor:
    """The symmetric matrix of x's lower triangle (NumPy's UPLO='L'): tril(x) + tril(x, -1)^T."""
    n = x.shape[-1]
    lower = (rows(x, n)[:, None] >= rows(x, n)[None, :]).where(x, 0.0)
    strict = (rows(x, n)[:, None] > rows(x, n)[None, :]).where(x, 0.0)
    return lower + strict.mT
