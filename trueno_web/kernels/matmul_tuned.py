"""Matmul choices measured per adapter (bench/matmul_tune.py --write writes TUNED): for an adapter's device
name and a product shape, the tiling, splits of K, tile-order group, load width and C's store width (vec4
where rows allow, or scalar) that ran fastest there. Shapes not listed take kernels.matmul's rule; adapters
not listed, the rule for every shape."""

from __future__ import annotations

# adapter device name -> {"BxMxKxN": (matmul.CONFIGS key, splits, group, vec4 loads, vec4 stores)}
TUNED: dict[str, dict[str, tuple[str, int, int, bool, bool]]] = {
    "NVIDIA H100 80GB HBM3": {
        "16x1024x1024x64": ("128x64x8", 3, 1, True, True),
        "16x1024x64x1024": ("128x64x8", 1, 1, True, True),
        "1x1000x999x1001": ("128x128x16", 2, 1, True, True),
        "1x1024x1024x1024": ("128x128x16", 2, 1, True, True),
        "1x1024x1024x3072": ("128x128x16", 2, 1, True, True),
        "1x1024x1024x4096": ("128x256x16", 1, 1, False, True),
        "1x1024x4096x1024": ("128x256x16", 4, 1, False, True),
        "1x128x1024x256": ("64x64x16", 16, 1, True, True),
        "1x2048x2048x2048": ("128x256x16", 1, 1, False, False),
        "1x4095x4093x4097": ("256x128x8", 1, 4, True, True),
        "1x4096x1024x4096": ("128x256x16", 1, 1, False, True),
        "1x4096x4096x1024": ("128x256x16", 1, 1, False, False),
        "1x4096x4096x4096": ("128x256x16", 1, 16, False, False),
    },
    "NVIDIA H200": {
        "1x1024x1024x3072": ("128x128x8", 2, 1, False, False),
        "1x1024x1024x4096": ("128x256x8", 1, 1, False, False),
        "1x1024x4096x1024": ("128x256x8", 4, 1, False, False),
        "1x2048x2048x2048": ("128x256x8", 1, 1, False, False),
        "1x4096x1024x4096": ("128x256x8", 1, 1, False, False),
        "1x4096x4096x1024": ("128x256x8", 1, 1, False, False),
        "1x4096x4096x4096": ("256x128x8", 1, 4, False, False),
    },
}


def tuned_choice(adapter: str, m: int, k: int, n: int, batch: int) -> tuple[str, int, int, bool, bool] | None:
    """The measured (tiling, splits, group, vec4 loads, vec4 stores) of `batch` (m, k) @ (k, n) products on
    `adapter`, or None."""
    table = TUNED.get(adapter)
    return table.get(f"{batch}x{m}x{k}x{n}") if table else None
