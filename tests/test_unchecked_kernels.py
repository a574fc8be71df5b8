"""Kernels compiled without the WGSL runtime's checks (Dispatch.checked False: matmul and attention, whose
indices are in range and loops bounded by construction): the desktop driver compiles them through wgpu-native's
trusted shader modules, every other kernel checked; both ways compute the same bits; a bad source is still a
GpuError at the call. (Every test of those ops on the desktop runs them unchecked against its reference.)"""

from __future__ import annotations

import numpy as np
import pytest

import trueno_web as tw
from trueno_web import runtime
from trueno_web.backends import wgpu_internals
from trueno_web.runtime import block_on

pytestmark = pytest.mark.skipif(runtime.is_browser(), reason="the desktop driver (wgpu-py)")

RNG = np.random.default_rng(7)
A, B = RNG.standard_normal((67, 1029), dtype=np.float32), RNG.standard_normal((1029, 35), dtype=np.float32)
Q, K, V = (RNG.standard_normal((1, 2, n, 16), dtype=np.float32) for n in (7, 1025, 1025))
ROWS = RNG.standard_normal((3, 4097), dtype=np.float32) * 30
ROWS[1, 5] = np.inf


def programs(dev):
    """Each unchecked kernel (matmul tiled and split over K, attention causal and masked past the last key) and
    checked ones (a map, the row kernels of a softmax and a sum)."""
    t = dev.tensor
    mask = t(np.arange(1025) % 3 != 0)
    return [
        t(A) @ t(B),
        tw.nn.scaled_dot_product_attention(t(Q), t(K), t(V), causal=True),
        tw.nn.scaled_dot_product_attention(t(Q), t(K), t(V), mask=mask),
        t(ROWS).softmax(-1),
        (t(ROWS) * 2.0).relu().sum(-1),
    ]


def compute(dev) -> list[np.ndarray]:
    caps = dev.executor.caps
    caps.matmul, caps.matmul_splits = "64x64x16", 3  # the tiled kernel and the partials' sum on every adapter
    return [block_on(p.numpy()) for p in programs(dev)]


def test_checked_and_unchecked_kernels_compute_the_same_bits(fresh_gpu, monkeypatch):
    jobs = []
    real = fresh_gpu.executor.driver.compile_many

    async def spy(batch):
        jobs.extend(batch)
        return await real(batch)

    monkeypatch.setattr(fresh_gpu.executor.driver, "compile_many", spy)
    unchecked = compute(fresh_gpu)
    markers = {  # a line of each kernel's shader
        "matmul": "const BM: u32",
        "matmul's partials summed": "var<storage, read> parts: array",
        "attention": "fn tw_kt(",
        "map": "fn tw_chain(i: u32)",
        "rows": "let spread = tw_meta[3];",
    }
    kind = {name: {c for s, _, c in jobs if line in s} for name, line in markers.items()}
    assert kind == {name: {name in ("map", "rows")} for name in markers}, kind

    checked = block_on(tw.GpuDevice.create("webgpu"))
    try:
        monkeypatch.setattr(wgpu_internals, "unchecked_module", lambda device, source: None)
        for got, want in zip(unchecked, compute(checked), strict=True):
            np.testing.assert_array_equal(got, want)
    finally:
        checked.close()
    assert np.isnan(unchecked[3][1]).all() and np.isfinite(unchecked[3][0]).all()


@pytest.mark.parametrize("checked", [True, False])
def test_a_bad_source_is_a_gpu_error_either_way(gpu, checked):
    with pytest.raises(tw.GpuError, match="compiling WGSL"):
        gpu.executor.driver.compile("fn main( {", "main", checked)
    assert block_on(gpu.tensor([-1.0, 2.0]).relu().numpy()).tolist() == [0.0, 2.0]


def test_without_the_private_ffi_the_driver_compiles_checked(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_api(name, *args, **kwargs):
        if name.startswith("wgpu.backends.wgpu_native._api"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_api)
    assert wgpu_internals.unchecked_module(object(), "fn f() {}") is None
