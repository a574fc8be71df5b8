"""tw.linalg: the array API's linear algebra extension (2024.12), written with tensor ops.

Lazy, like any tensor expression: cholesky, solve, inv, det, slogdet, qr, matrix_power, diagonal, trace,
cross, vector_norm. Iterative, so coroutines (`await` them: they read one norm back per Jacobi sweep):
eigh, eigvalsh, svd, svdvals, pinv, matrix_rank, matrix_norm. float32 on every backend; methods, accuracy
and limits in docs/linalg.md. matmul, matrix_transpose, vecdot, tensordot and outer are top-level functions.
"""

from __future__ import annotations

from .basics import cross, diagonal, trace, vector_norm
from .factor import QRResult, SlogdetResult, cholesky, det, inv, matrix_power, qr, slogdet, solve
from .jacobi import EighResult, SVDResult, eigh, eigvalsh, svd, svdvals
from .spectral import matrix_norm, matrix_rank, pinv

__all__ = ["cholesky", "solve", "inv", "det", "slogdet", "qr", "matrix_power", "eigh", "eigvalsh", "svd"]
__all__ += ["svdvals", "pinv", "matrix_rank", "matrix_norm", "vector_norm", "diagonal", "trace", "cross"]
__all__ += ["EighResult", "SVDResult", "QRResult", "SlogdetResult"]
