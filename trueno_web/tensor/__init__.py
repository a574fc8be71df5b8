"""Lazy tensors: NumPy-style expressions on a device, run as one batch when a result is needed.

The modules, bottom to top: expr (a node of an expression), lower (realize: expressions -> one batch), views,
reduce and linalg (the Tensor class's mixins: movement ops, reductions, matmul), core (the Tensor class:
operators, the catalog's ops as methods, running), creation (asarray; the array API's zeros, ones, full,
empty), iota (arange, linspace, eye, tril, triu, meshgrid), join (concatenate, stack).
"""

from __future__ import annotations

from .core import Tensor, broadcast_shapes
from .creation import asarray, empty, empty_like, full, full_like, ones, ones_like, zeros, zeros_like
from .iota import arange, eye, linspace, meshgrid, tril, triu
from .join import concatenate, stack
from .linalg import matmul
from .lower import realize

__all__ = ["Tensor", "asarray", "realize", "matmul", "broadcast_shapes", "concatenate", "stack"]
__all__ += ["zeros", "ones", "full", "empty", "zeros_like", "ones_like", "full_like", "empty_like"]
__all__ += ["arange", "linspace", "eye", "tril", "triu", "meshgrid"]
