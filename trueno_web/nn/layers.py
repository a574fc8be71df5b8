"""Layers written with the public tensor ops, so they fuse like any expression: `linear` (a matmul and its
bias add), `layer_norm` (ONE row kernel on a GPU: both reductions and the normalisation), and
`scaled_dot_product_attention` (a batched matmul, a row-wise softmax, a batched matmul)."""

from __future__ import annotations

import array
import math

from .. import random
from ..errors import TruenoValueError
from ..tensor import Tensor, asarray, matmul
from ..tensor.core import as_tensors
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
    scores above the diagonal (query i attends keys j <= i)."""
    q, k, v = as_tensors([q, k, v] + ([mask] if mask is not None else []))[:3]
    if min(q.ndim, k.ndim, v.ndim) < 2 or q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise TruenoValueError(
            f"scaled_dot_product_attention needs q (..., L, E), k (..., S, E), v (..., S, Ev); "
            f"got q {q.shape}, k {k.shape}, v {v.shape}"
        )
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    scores = matmul(q, k.mT) * scale
    if causal:  # key position <= query position, compared in the kernel that applies it: the positions are
        # broadcast to the scores' shape first, so the comparison is of their size and fuses with the masking
        n_q, n_k = q.shape[-2], k.shape[-2]
        key_pos = asarray(array.array("f", range(n_k)), q.device).expand(scores.shape)
        query_pos = asarray(array.array("f", range(n_q)), q.device).reshape(n_q, 1).expand(scores.shape)
        scores = _masked(scores, key_pos <= query_pos)
    if mask is not None:
        scores = _masked(scores, mask)
    return matmul(scores.softmax(axis=-1), v)


def _masked(scores: Tensor, mask) -> Tensor:
    return Tensor.where(mask, scores, -math.inf)


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
