"""tw.linalg: the array API's linear algebra extension (2024.12), written with tensor ops.

Lazy, like any tensor expression: cholesky, solve, inv, det, slogdet, qr, matrix_power, diagonal, trace,
cross, vector_norm. Iterative (they read one norm back per Jacobi sweep): eigh, eigvalsh, svd, svdvals,
pinv, matrix_rank, matrix_norm return their results as the standard says, waiting for those reads
(runtime.block_on: a script, a notebook cell without a running loop, JSPI in the browser); in async code
await their coroutines instead: `await tw.linalg.eigh_async(x)`. float32 on every backend, float64 where the
device holds it (backend='numpy'); methods,
accuracy and limits in docs/linalg.md. matmul, matrix_transpose, vecdot, tensordot and outer are the
top-level functions (the standard has them in both places).
"""

from __future__ import annotations

import functools

from ..errors import UnavailableError
from ..namespace import matrix_transpose, outer, tensordot, vecdot
from ..runtime import block_on
from ..tensor import matmul
from .basics import cross, diagonal, trace, vector_norm
from .factor import QRResult, SlogdetResult, cholesky, det, inv, matrix_power, qr, slogdet, solve
from .jacobi import EighResult, SVDResult
from .jacobi import eigh as eigh_async
from .jacobi import eigvalsh as eigvalsh_async
from .jacobi import svd as svd_async
from .jacobi import svdvals as svdvals_async
from .spectral import matrix_norm as matrix_norm_async
from .spectral import matrix_rank as matrix_rank_async
from .spectral import pinv as pinv_async


def _waiting(coroutine_function):
    """The array API's function of an iterative routine: its coroutine run to the end (block_on)."""
    name = coroutine_function.__name__

    @functools.wraps(coroutine_function)
    def run(*args, **kwargs):
        try:
            return block_on(coroutine_function(*args, **kwargs))
        except UnavailableError as e:
            raise UnavailableError(
                f"linalg.{name} reads back as it iterates and cannot wait here ({e}); in async code write "
                f"`await tw.linalg.{name}_async(...)`"
            ) from None

    run.__doc__ = (coroutine_function.__doc__ or "").replace(" Await it.", "") + f" (async: {name}_async)"
    return run


eigh, eigvalsh, svd, svdvals = (_waiting(f) for f in (eigh_async, eigvalsh_async, svd_async, svdvals_async))
pinv, matrix_rank, matrix_norm = (_waiting(f) for f in (pinv_async, matrix_rank_async, matrix_norm_async))

__all__ = ["cholesky", "solve", "inv", "det", "slogdet", "qr", "matrix_power", "eigh", "eigvalsh", "svd"]
__all__ += ["svdvals", "pinv", "matrix_rank", "matrix_norm", "vector_norm", "diagonal", "trace", "cross"]
__all__ += ["EighResult", "SVDResult", "QRResult", "SlogdetResult"]
__all__ += ["eigh_async", "eigvalsh_async", "svd_async", "svdvals_async", "pinv_async", "matrix_rank_async"]
__all__ += ["matrix_norm_async", "matmul", "matrix_transpose", "vecdot", "tensordot", "outer"]
