"""Losses written with tensor ops, so they fuse and differentiate like any expression: `cross_entropy`
(class indices or probabilities as labels) and `mse`."""

from __future__ import annotations

import array

from ..dtypes import float32, int32
from ..errors import TruenoValueError
from ..tensor import Tensor, asarray
from ..tensor.core import as_tensors
from ..tensor.views import axis_index

REDUCTIONS = ("mean", "sum", "none")


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction not in REDUCTIONS:
        raise TruenoValueError(f"reduction is one of {', '.join(REDUCTIONS)}; got {reduction!r}")
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


def one_hot(labels, num_classes: int, axis: int = -1) -> Tensor:
    """float32 1.0 at each label's class along a new axis (`axis` of the result), else 0.0; labels are int32
    (or uint32) class indices (float labels holding integers are converted); one outside [0, num_classes)
    gives a row of zeros."""
    (labels,) = as_tensors([labels])
    if labels.dtype.kind in ("float", "bool"):
        labels = labels.astype(int32)
    a = axis_index(axis, labels.ndim + 1, "one_hot")
    classes = asarray(array.array("i", range(num_classes)), labels.device).astype(labels.dtype, copy=False)
    shape = [1] * (labels.ndim + 1)
    shape[a] = num_classes
    return (labels.unsqueeze(a) == classes.reshape(shape)).astype(float32)


def cross_entropy(logits, labels, axis: int = -1, reduction: str = "mean") -> Tensor:
    """-sum(p * log_softmax(logits)) along the class axis, with p the labels' one-hot (labels of logits' shape
    without that axis: class indices) or the labels themselves (labels of logits' shape: probabilities);
    reduced over the samples by `reduction` ("mean", "sum" or "none")."""
    logits, labels = as_tensors([logits, labels])
    if logits.ndim == 0:
        raise TruenoValueError("cross_entropy needs logits with a class axis; got a 0-d tensor")
    a = axis_index(axis, logits.ndim, "cross_entropy")
    without = logits.shape[:a] + logits.shape[a + 1 :]
    if labels.shape == logits.shape:
        target = labels
    elif labels.shape == without:
        target = one_hot(labels, logits.shape[a], a)
    else:
        raise TruenoValueError(
            f"cross_entropy: labels of shape {labels.shape} fit logits of shape {logits.shape} neither as class "
            f"indices (shape {without}) nor as probabilities (shape {logits.shape})"
        )
    return _reduce(-(target * logits.log_softmax(a)).sum(a), reduction)


def mse(prediction, target, reduction: str = "mean") -> Tensor:
    """(prediction - target)^2, broadcast, reduced by `reduction` ("mean", "sum" or "none")."""
    prediction, target = as_tensors([prediction, target])
    diff = prediction - target
    return _reduce(diff * diff, reduction)
