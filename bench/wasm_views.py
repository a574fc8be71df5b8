#!/usr/bin/env python3
"""The wasm-simd backend on the desktop (wasmtime): where strided views and row reductions cost.

    .venv/bin/python bench/wasm_views.py [--repeat 9]

Median wall-clock ms (x resident, result read back) of: the transformer block (seq 128, d_model 256,
4 heads; bench/transformer.py's weights), layer_norm and softmax of (1024, 256), sum over the last axis
of (1024, 256), and the causal-mask step of the block alone (as nn.scaled_dot_product_attention: where(key position <=
query position, both broadcast, scores * scale, -inf)).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from grid import wall
from transformer import weights_for

import trueno_web as tw
from trueno_web import nn
from trueno_web.models import TransformerBlock
from trueno_web.runtime import block_on


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    dev = block_on(tw.GpuDevice.create("wasm-simd"))
    rng = np.random.default_rng(0)
    block = block_on(TransformerBlock.create(dev, weights_for(256), n_heads=4))
    x = dev.tensor(block_on(dev.upload(rng.standard_normal((128, 256)).astype(np.float32))))
    a = dev.tensor(block_on(dev.upload(rng.standard_normal((1024, 256)).astype(np.float32))))
    s = dev.tensor(block_on(dev.upload(rng.standard_normal((4, 128, 128)).astype(np.float32))))
    key_pos = dev.tensor(block_on(dev.upload(np.arange(128, dtype=np.float32)))).expand((4, 128, 128))
    query_pos = dev.tensor(block_on(dev.upload(np.arange(128, dtype=np.float32)))).reshape(128, 1).expand((4, 128, 128))
    cases = {
        "transformer block 128x256x4": lambda: block(x),
        "layer_norm (1024, 256)": lambda: nn.layer_norm(a),
        "softmax (1024, 256)": lambda: a.softmax(-1),
        "sum axis -1 (1024, 256)": lambda: a.sum(-1),
        "scale + causal mask (4, 128, 128)": lambda: tw.where(key_pos <= query_pos, s * (1 / math.sqrt(64)), -math.inf),
    }
    for name, make in cases.items():
        ms = 1e3 * wall(lambda: block_on(make().numpy()), args.repeat, warm=2)
        print(f"{name:36s} {ms:9.2f} ms")


if __name__ == "__main__":
    main()
