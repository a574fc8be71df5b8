"""Attention's register-tiled kernel (kernels/attention_tiled.py) compiled by the browser's WebGPU (Tint) and run in
the page: its row maxima by subgroup shuffles (where the adapter's subgroups are 16 lanes wide; narrower ones take
workgroup memory at run time) and through workgroup memory, causal, over every key and masked. SwiftShader is a
software adapter, whose device reads keys from the buffers (kernels/caps.py): the page's device is given the
hardware adapters' staged kernels, as a real GPU's has. Checked here against the unfused expression in float64."""

from __future__ import annotations

import math

import numpy as np

ATTENTION = r"""
import random
import trueno_web as tw
from trueno_web.kernels import attention, attention_tiled
built = []  # the tiled kernel's sources built: (qv, vv, masked, vec, shuffles, enable)
source = attention_tiled.source
attention_tiled.source = lambda *a: built.append(a) or source(*a)
dev = await tw.GpuDevice.create("webgpu")
dev.executor.caps.attention_direct = False
min_vecs, attention.TILED_MIN_VECS = attention.TILED_MIN_VECS, 1  # head dims of 8: the tiled kernel too
rng = random.Random(7)
def rows(r, c):
    return [[rng.uniform(-2.0, 2.0) for _ in range(c)] for _ in range(r)]
q, k, v = rows(70, 8), rows(100, 8), rows(100, 12)
mask = [[abs(i - j) < 20 and i != 5 for j in range(100)] for i in range(70)]  # row 5: every key masked
out = {"q": q, "k": k, "v": v, "mask": mask, "subgroups": dev.executor.caps.subgroups}
for shuffles in (True, False):
    attention.TILED_SHUFFLES = shuffles
    dev.executor.forget()
    t = [dev.tensor(x) for x in (q, k, v)]
    for causal in (False, True):
        got = await tw.nn.scaled_dot_product_attention(*t, causal=causal).numpy()
        out[f"{shuffles}-{causal}"] = got.tolist()
    got = await t[0].attention_masked(t[1], t[2], dev.tensor(mask), causal=True).numpy()
    out[f"{shuffles}-masked"] = got.tolist()
attention.TILED_SHUFFLES = True
attention.TILED_MIN_VECS = min_vecs
attention_tiled.source = source
dev.executor.forget()
out["built"] = sorted({(a[2], a[4]) for a in built})
out
"""


def unfused(q, k, v, causal=False, mask=None):
    s = q @ k.T / math.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.arange(s.shape[1]) <= np.arange(s.shape[0])[:, None], s, -np.inf)
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    with np.errstate(invalid="ignore"):
        p = np.exp(s - s.max(-1, keepdims=True))
        return (p / p.sum(-1, keepdims=True)) @ v


def test_tiled_attention_compiles_and_runs_in_the_page(pyodide_page):
    got = pyodide_page.run(ATTENTION)
    assert got["subgroups"]  # this Chromium's SwiftShader has them: the shuffle variant is the one compiled
    q, k, v = (np.array(got[n], np.float64) for n in "qkv")
    mask = np.array(got["mask"], bool)
    for shuffles in (True, False):
        for name, want in (
            ("False", unfused(q, k, v)),
            ("True", unfused(q, k, v, causal=True)),
            ("masked", unfused(q, k, v, True, mask)),
        ):
            out = np.array(got[f"{shuffles}-{name}"], np.float64)
            assert np.array_equal(np.isnan(out), np.isnan(want)), (shuffles, name)
            finite = ~np.isnan(want)
            np.testing.assert_allclose(out[finite], want[finite], rtol=2e-5, atol=2e-5, err_msg=f"{shuffles}-{name}")
    assert np.isnan(np.array(got["True-masked"])[5]).all()
    assert got["built"] == [[False, False], [False, True], [True, False], [True, True]]  # (masked, shuffles)
