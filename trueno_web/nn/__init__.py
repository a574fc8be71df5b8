"""Neural-network building blocks written with the public tensor ops (above the tensor package): the
layers (layers.py: linear, layer_norm, scaled_dot_product_attention), the losses (losses.py: cross_entropy,
mse), dropout (layers.py) and the initialisers (init.py), drawn on the device from explicit keys."""

from __future__ import annotations

from . import init
from .layers import dropout, layer_norm, linear, scaled_dot_product_attention
from .losses import cross_entropy, mse, one_hot

__all__ = ["linear", "layer_norm", "scaled_dot_product_attention", "dropout", "cross_entropy", "mse", "one_hot", "init"]
