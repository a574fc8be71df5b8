"""Lazy tensors: NumPy-style expressions on a device, run as one batch when a result is needed.

The modules, bottom to top: expr (a node of an expression), lower (realize: expressions -> one batch), views,
reduce, linalg and sorting (the Tensor class's mixins: movement ops, reductions, matmul, sorting and sets), core (the Tensor class:
operators, the catalog's ops as methods, running), creation (asarray), join (concatenate, stack).
"""

from __future__ import annotations

from .core import Tensor, broadcast_shapes
from .creation import asarray
from .join import concatenate, stack
from .linalg import matmul
from .lower import realize

__all__ = ["Tensor", "asarray", "realize", "matmul", "broadcast_shapes", "concatenate", "stack"]
