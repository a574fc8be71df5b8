"""Neural-network building blocks written with the public tensor ops (above the tensor package): the
layers (layers.py: linear, layer_norm, scaled_dot_product_attention), the losses (losses.py: cross_entropy,
mse); initialisation and dropout go here too."""

from __future__ import annotations

from .layers import layer_norm, linear, scaled_dot_product_attention
from .losses import cross_entropy, mse, one_hot

__all__ = ["linear", "layer_norm", "scaled_dot_product_attention", "cross_entropy", "mse", "one_hot"]
