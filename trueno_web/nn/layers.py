"""Layers written with the public tensor ops, so they fuse like any expression: `linear` (a matmul and its
bias add), `layer_norm` (ONE row kernel on a GPU: both reductions and the normalisation), and
`scaled_dot_product_attention` (the fused attention op: one kernel on a GPU)."""

from __future__ import annotations

from .. import random
from ..errors import TruenoValueError
from ..tensor import Tensor, matmul
from ..tensor.core import as_tensors
from ..tensor.linalg import attention
from ..tensor.views import axes_tuple


def linear(x, w, b=None) -> Tensor:
    """x @ w + b, with w of shape (in_features, out_features) and b of shape (out_features,) or None."""
    x, w = as_tensors([x, w])
    if w.ndim != 2:
        raise TruenoValueError(f"linear: w must be 2-D (in_features, out_features); got shape {w.shape}")
    y = matmul(x, w)
    return y if b is None else y + b


def layer_norm(x, w=None, b=None, eps: float = 1e-5, axis=-1) -> Tensor:
    """(x - mean) / sqrt(var + eps) * w + b over `axis` (an int or a tuple of the trailing axes normalised,
    as torch's normalized_shape); w and b broadcast against x (None: 1 and 0)."""
    x = as_tensors([x] + [t for t in (w, b) if t is not None])[0]
    axes = axes_tuple(axis, x.ndim, "layer_norm")
    centred = x - x.mean(axes, keepdims=True)
    y = centred * ((centred * centred).mean(axes, keepdims=True) + float(eps)).rsqrt()
    y = y if w is None else y * w
    return y if b is None else y + b


def scaled_dot_product_attention(q, k, v, mask=None, scale: float | None = None, causal: bool = False) -> Tensor:
    """softmax(q @ k^T * scale [masked]) @ v over the last two axes, leading axes batched and broadcast:
    q (..., L, E), k (..., S, E), v (..., S, Ev) -> (..., L, Ev). `scale` defaults to 1/sqrt(E). `mask`
    broadcasts to (..., L, S): where it is 0 the score is -inf (not attended); `causal=True` masks the
    scores above the diagonal (query i attends keys j <= i). One fused op (the catalog's attention rows):
    the L x S scores are never in memory."""
    ts = as_tensors([q, k, v] + ([mask] if mask is not None else []))
    return attention(*ts[:3], ts[3] if mask is not None else None, scale, bool(causal))


def dropout(x, p: float, key, training: bool = True) -> Tensor:
    """Zero each element with probability p and scale the rest by 1 / (1 - p) (inverted dropout), the mask
    drawn on the device from `key` (tw.random); `training=False` or p = 0: x itself. One fused kernel with
    what feeds x and what uses the result."""
    (x,) = as_tensors([x])
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise TruenoValueError(f"dropout: p is a probability in [0, 1]; got {p}")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0.0
    return x * random.bernoulli(key, 1.0 - p, x.shape, device=x) * (1.0 / (1.0 - p))
