"""Input makers shared by the tests: seeded random Refs (pure Python, so they run inside Pyodide too), the
tensor of a Ref, and seeded float32 NumPy arrays (NumPy imported when called)."""

from __future__ import annotations

import random

from _pyref import Ref, uniform


def refs(rng: random.Random, lo: float = -3.0, hi: float = 3.0):
    """`data(*shape, lo=lo, hi=hi)`: a Ref of float32 values uniform in [lo, hi), drawn from `rng` (a test
    file's own seeded Random, so its inputs do not depend on the other files)."""

    def data(*shape, lo: float = lo, hi: float = hi) -> Ref:
        return uniform(rng, shape, lo, hi)

    return data


def tensor(dev, r: Ref):
    """A tensor of the float32 values of `r` (array.array('f') host data plus its shape)."""
    return dev.tensor(r.f32(), shape=r.shape)


def floats(n: int, seed: int, lo: float = -4.0, hi: float = 4.0):
    """n float32 values uniform in [lo, hi) (a NumPy array), from NumPy's generator seeded with `seed`."""
    import numpy as np

    return np.random.default_rng(seed).uniform(lo, hi, n).astype(np.float32)
