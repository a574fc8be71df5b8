"""Matmul choices measured per adapter (bench/matmul_tune.py --write writes TUNED): for an adapter's device
name and a product shape, the tiling, splits of K and tile-order group that ran fastest there. Shapes not
listed take kernels.matmul's rule; adapters not listed, the rule for every shape."""

from __future__ import annotations

# adapter device name -> {"BxMxKxN": (matmul.CONFIGS key, splits, group)}
TUNED: dict[str, dict[str, tuple[str, int, int]]] = {}


def tuned_choice(adapter: str, m: int, k: int, n: int, batch: int) -> tuple[str, int, int] | None:
    """The measured (tiling, splits, group) of `batch` (m, k) @ (k, n) products on `adapter`, or None."""
    table = TUNED.get(adapter)
    return table.get(f"{batch}x{m}x{k}x{n}") if table else None
