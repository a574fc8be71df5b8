"""The desktop driver's submits: through wgpu-native's C functions (wgpu_internals.RawSubmit) and through
wgpu-py's objects, the same results; an error in the encoding or the submit raised there as GpuError, the driver usable after."""

from __future__ import annotations

import array

import pytest

from trueno_web import errors, runtime
from trueno_web.backends import wgpu_internals
from trueno_web.runtime import block_on

pytestmark = pytest.mark.skipif(runtime.is_browser(), reason="the desktop driver (wgpu-py)")

ADD_ONE = """
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < arrayLength(&x)) { x[g.x] = x[g.x] + 1.0; }
}
"""


@pytest.fixture
def driver():
    from trueno_web.backends.wgpu_native import WgpuNativeDriver

    d = block_on(WgpuNativeDriver.create())
    yield d
    d.close()
    d.destroy()


def run_add(driver, n: int, times: int) -> list[float]:
    pipeline = driver.compile(ADD_ONE, "main")
    raw = driver.create_buffer(4 * n)
    driver.write_buffer(raw, memoryview(array.array("f", range(n))))
    for _ in range(times):
        driver.submit([(pipeline, ((0, raw, 0, 4 * n),), (-(-n // 64), 1))])
    out = block_on(driver.read_buffer(raw, 4 * n))
    driver.destroy_buffer(raw)
    return array.array("f", bytes(out)).tolist()


@pytest.mark.parametrize("raw_path", [True, False], ids=["raw", "wgpu-py"])
def test_both_submit_paths_compute_the_same(driver, raw_path):
    assert driver._raw is not None  # wgpu-py 0.32 (the pinned one) has the private FFI
    if not raw_path:
        driver._raw = None
    assert run_add(driver, 1000, 3) == [i + 3.0 for i in range(1000)]


def test_an_error_in_the_raw_submit_is_raised_there(driver):
    pipeline = driver.compile(ADD_ONE, "main")
    raw = driver.create_buffer(256)
    too_many = driver.limits["max_compute_workgroups_per_dimension"] + 1
    with pytest.raises(errors.GpuError, match="running kernels failed"):
        driver.submit([(pipeline, ((0, raw, 0, 256),), (too_many, 1))])
    driver.destroy_buffer(raw)
    assert run_add(driver, 70, 2) == [i + 2.0 for i in range(70)]  # the driver works on


def test_raw_submit_needs_the_private_handles():
    assert wgpu_internals.raw_submit(object()) is None
