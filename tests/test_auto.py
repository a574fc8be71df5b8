"""`auto` on a hardware GPU: the router sends small work to the CPU fallback and large work to the GPU.

lavapipe is a software adapter, so `GpuDevice.create("auto")` never routes here; these tests build the
router over lavapipe's GpuExecutor by hand and shrink the thresholds, so both sides really run."""

from __future__ import annotations

import pytest
from _cases import flat, run

import trueno_web as tw
from trueno_web.backends import auto
from trueno_web.backends.gpu import GpuBuffer, GpuExecutor
from trueno_web.backends.numpy_cpu import NumpyExecutor
from trueno_web.backends.wgpu_native import WgpuNativeDriver

pytestmark = pytest.mark.gpu
SMALL = 64  # elements; the thresholds below are set around it


@pytest.fixture
def routed(monkeypatch):
    monkeypatch.setattr(auto, "GPU_FROM", {k: SMALL for k in auto.GPU_FROM} | {"matmul": SMALL**3})
    dev = tw.GpuDevice(auto.AutoExecutor(GpuExecutor(run(WgpuNativeDriver.create())), NumpyExecutor()))
    yield dev
    dev.close()


def chain(dev, x, y):
    async def go():
        with dev.batch() as b:
            out = b.add(b.scale(b.relu(b.upload(x)), 2.0), b.upload(y))
            await b.execute()
            return await b.read(out), b.stats

    return run(go())


def test_small_batches_run_on_the_cpu_and_large_ones_on_the_gpu(routed):
    assert routed.backend == "auto" and routed.adapter_info["cpu_fallback"] == "numpy"
    small = [float(i - 3) for i in range(SMALL // 4)]  # 3 cheap ops x 16 elements: below the threshold
    got, stats = chain(routed, small, small)
    assert flat(got) == [max(v, 0.0) * 2 + v for v in small]
    assert stats.uploads == 0 and stats.dispatches == 1  # the CPU: no transfers
    large = [float(i % 7 - 3) for i in range(SMALL * 4)]
    got, stats = chain(routed, large, large)
    assert flat(got) == [max(v, 0.0) * 2 + v for v in large]
    assert (stats.uploads, stats.downloads, stats.dispatches, stats.submits) == (2, 1, 1, 1)  # the GPU


def test_matmul_routes_by_its_work(routed):
    a = [[1.0, 2.0], [3.0, 4.0]]
    assert flat(run(routed.matmul(a, a))) == [7.0, 10.0, 15.0, 22.0]
    before = routed.stats.uploads
    n = SMALL + 1
    eye = [[float(i == j) for j in range(n)] for i in range(n)]
    assert flat(run(routed.matmul(eye, eye))) == sum(eye, [])
    assert routed.stats.uploads == before + 2


def test_resident_data_moves_to_where_the_batch_runs(routed):
    big = [1.0] * (SMALL * 4)
    resident = run(routed.upload(big))  # large: lives on the GPU
    assert isinstance(resident.buffer, GpuBuffer)
    small = run(routed.upload([2.0, 3.0]))  # small: lives on the CPU
    assert not isinstance(small.buffer, GpuBuffer)
    ones = run(routed.upload([1.0] * (SMALL * 4)))
    before = routed.stats.uploads
    got = run(routed.mul(resident, ones))
    assert flat(got) == big and routed.stats.uploads == before  # both inputs already on the GPU
    assert flat(run(routed.add(small, [1.0, 1.0]))) == [3.0, 4.0]  # small work: the CPU, where `small` is
    # a small batch that uses the large resident array runs on the GPU (most of its data lives there)
    total = run(routed.sum(resident))
    assert total == float(SMALL * 4)
    assert flat(run(routed.read(resident))) == big


def test_what_does_not_fit_one_gpu_binding_runs_on_the_cpu(routed, monkeypatch):
    monkeypatch.setitem(routed.executor.limits, "max_storage_buffer_binding_size", SMALL * 4 * 2)
    x = [1.0] * (SMALL * 4)  # past the (shrunk) binding: no LimitError under auto, the CPU runs it
    got, stats = chain(routed, x, x)
    assert flat(got) == [3.0] * len(x) and stats.uploads == 0


def test_a_large_batch_moves_small_cpu_resident_data_to_the_gpu(routed):
    small = run(routed.upload([2.0, 3.0]))  # lives on the CPU
    big = [1.0] * (SMALL * 4)

    async def go():
        with routed.batch() as b:
            d = b.dot(small, small)  # small work on its own ...
            s = b.sum(b.relu(b.upload(big)))  # ... but this step is large: the batch runs on the GPU
            await b.execute()
            return await b.read(d), await b.read(s), b.stats

    d, s, stats = run(go())
    assert (d, s) == (13.0, float(len(big)))
    assert stats.uploads == 2 and stats.downloads == 2  # big + the moved copy (once: one array, one buffer)
    assert flat(run(routed.read(small))) == [2.0, 3.0]  # the resident array itself is untouched


def test_map_work_counts_each_ops_cost(routed):
    """gelu weighs 16 units per element (cost 4, squared: exp/tanh), relu 1: the same size can go either way."""
    n = SMALL // 8  # relu: 8 units, the CPU; gelu: 128 units, the GPU (weighed by its cost alone: 32, the CPU)
    before = routed.stats.uploads
    run(routed.relu([1.0] * n))
    assert routed.stats.uploads == before
    got = run(routed.gelu([0.0] * n))
    assert flat(got) == [0.0] * n and routed.stats.uploads == before + 1
