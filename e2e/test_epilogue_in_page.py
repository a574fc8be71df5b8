"""The matmul epilogue (a bias, a residual, a relu computed where the product is stored) compiled by the browser's
WebGPU (Tint) and run in the page: the direct kernel, the tiles with vec4 and scalar epilogues, and a product split
over K whose sum computes the chain. SwiftShader is a software adapter, which plans no epilogue by default
(kernels/caps.py): the page's device is given the hardware adapters' budget, as a real GPU's has."""

from __future__ import annotations

import numpy as np

EPILOGUE = r"""
import random
import trueno_web as tw
from trueno_web.kernels.caps import EPILOGUE_BUDGET
dev = await tw.GpuDevice.create("webgpu")
caps = dev.executor.caps
caps.epilogue_budget = EPILOGUE_BUDGET
rng = random.Random(5)
def mat(r, c):
    return [[rng.uniform(-1.0, 1.0) for _ in range(c)] for _ in range(r)]
out = {}
for name, tiling, splits, n in (("direct", None, 0, 5), ("tiles-vec4", "64x64x8", 1, 8),
                                ("tiles-scalar", "64x64x8", 1, 5), ("split", "64x64x8", 2, 8)):
    caps.matmul, caps.matmul_splits = tiling, splits
    x, w, b, r = mat(9, 70), mat(70, n), [rng.uniform(-1.0, 1.0) for _ in range(n)], mat(9, n)
    before = dev.stats.dispatches
    y = (dev.tensor(x) @ dev.tensor(w) + dev.tensor(b)).relu()
    y = (await y.numpy()).tolist()
    z = await (dev.tensor(x) @ dev.tensor(w) + dev.tensor(r)).numpy()
    out[name] = {"x": x, "w": w, "b": b, "r": r, "y": y, "z": z.tolist(),
                 "dispatches": dev.stats.dispatches - before}
out
"""


def test_epilogues_compile_and_run_in_the_page(pyodide_page):
    got = pyodide_page.run(EPILOGUE)
    for name, case in got.items():
        x, w, b, r = (np.array(case[k], np.float64) for k in ("x", "w", "b", "r"))
        p, mag = x @ w, np.abs(x) @ np.abs(w)
        np.testing.assert_array_less(np.abs(np.array(case["y"]) - np.maximum(p + b, 0)), 1e-5 * mag + 1e-6)
        np.testing.assert_array_less(np.abs(np.array(case["z"]) - (p + r)), 1e-5 * mag + 1e-6)
        assert case["dispatches"] == (4 if name == "split" else 2), (name, case["dispatches"])  # one a product
