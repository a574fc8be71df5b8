"""Benchmark: elementwise chains end to end (upload, compute, download).

    python bench/chain.py [--sizes 16,20,24] [--repeat 5]

Chains: 3 ops (relu, scale, add) and 5 ops (relu, scale, add, sigmoid, mul). Columns: one-shot ops,
batch unfused (one kernel per op, one submit), batch fused (one kernel), NumPy on the host, and a
hand-written raw wgpu-py version of the fused kernel (the floor for our overhead). Prints ms per run
and the ratios the batch issue tracks.
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

import trueno_web as tw
from trueno_web.runtime import block_on

RAW_WGSL = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> other: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.y * nwg.x * 256u + gid.x;
    if (i >= arrayLength(&y)) { return; }
    let v = max(x[i], 0.0) * 2.0 + other[i];
    y[i] = BODY;
}
"""


class RawWgpu:
    """The fused chain written directly against wgpu-py: buffers, one dispatch, read back."""

    def __init__(self, five: bool):
        import wgpu

        self.wgpu = wgpu
        adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
        wanted = ("max-storage-buffer-binding-size", "max-buffer-size")
        self.device = adapter.request_device_sync(required_limits={k: adapter.limits[k] for k in wanted})
        body = "(1.0 / (1.0 + exp(-v))) * other[i]" if five else "v"
        module = self.device.create_shader_module(code=RAW_WGSL.replace("BODY", body))
        self.pipeline = self.device.create_compute_pipeline(layout="auto", compute={"module": module, "entry_point": "main"})

    def run(self, x: np.ndarray, other: np.ndarray) -> np.ndarray:
        wgpu, dev = self.wgpu, self.device
        usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.COPY_SRC
        bx = dev.create_buffer_with_data(data=x, usage=usage)
        bo = dev.create_buffer_with_data(data=other, usage=usage)
        by = dev.create_buffer(size=x.nbytes, usage=usage)
        group = dev.create_bind_group(layout=self.pipeline.get_bind_group_layout(0), entries=[
            {"binding": i, "resource": {"buffer": b, "offset": 0, "size": b.size}} for i, b in enumerate((bx, bo, by))])
        enc = dev.create_command_encoder()
        cp = enc.begin_compute_pass()
        cp.set_pipeline(self.pipeline)
        cp.set_bind_group(0, group)
        groups = -(-x.size // 256)
        cp.dispatch_workgroups(min(groups, 65535), -(-groups // 65535), 1)
        cp.end()
        dev.queue.submit([enc.finish()])
        out = np.frombuffer(dev.queue.read_buffer(by), dtype=np.float32)
        for b in (bx, bo, by):
            b.destroy()
        return out


def chain(ns, x, other, five: bool):
    """The chain against namespace `ns` (a GpuDevice or a batch): returns what to await / the BufferId."""
    y = ns.add(ns.scale(ns.relu(x), 2.0), other)
    return ns.mul(ns.sigmoid(y), other) if five else y


def numpy_chain(x, other, five):
    y = np.maximum(x, 0) * np.float32(2.0) + other
    return (1 / (1 + np.exp(-y))) * other if five else y


async def one_shot(dev, x, other, five):
    y = await dev.add(await dev.scale(await dev.relu(x), 2.0), other)
    return await dev.mul(await dev.sigmoid(y), other) if five else y


async def batched(dev, x, other, five, fuse):
    with dev.batch(fuse=fuse) as b:
        out = chain(b, b.upload(x), b.upload(other), five)
        await b.execute()
        return await b.read(out)


def timed(fn, repeat, warm=3):
    """Median ms of `repeat` calls after `warm` untimed ones (on an NVIDIA adapter the first large
    transfers of a process leave submits slow for a few dozen calls; see docs/benchmarks.md)."""
    for _ in range(warm):
        fn()
    best = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best.append(time.perf_counter() - start)
    return sorted(best)[len(best) // 2] * 1e3  # median ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="16,20,24", help="log2 of the element counts")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    dev = block_on(tw.GpuDevice.create("webgpu"))
    print(f"# adapter: {dev.adapter_info['device']} ({dev.adapter_info.get('backend_type', '')}); host: {platform.processor() or platform.machine()}")
    print("| chain | n | one-shot ms | unfused ms | fused ms | numpy ms | raw wgpu ms | one-shot/fused | fused/raw |")
    print("|---|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    for five in (False, True):
        raw = RawWgpu(five)
        for p in (int(s) for s in args.sizes.split(",")):
            n = 1 << p
            x, other = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
            expect = numpy_chain(x, other, five)
            for result in (block_on(batched(dev, x, other, five, True)), raw.run(x, other)):
                np.testing.assert_allclose(result, expect, rtol=2e-5, atol=1e-6)
            t = {
                "one": timed(lambda: block_on(one_shot(dev, x, other, five)), args.repeat),
                "unfused": timed(lambda: block_on(batched(dev, x, other, five, False)), args.repeat),
                "fused": timed(lambda: block_on(batched(dev, x, other, five, True)), args.repeat),
                "numpy": timed(lambda: numpy_chain(x, other, five), args.repeat),
                "raw": timed(lambda: raw.run(x, other), args.repeat),
            }
            print(f"| {5 if five else 3} ops | 2^{p} | {t['one']:.2f} | {t['unfused']:.2f} | {t['fused']:.2f} | "
                  f"{t['numpy']:.2f} | {t['raw']:.2f} | {t['one'] / t['fused']:.2f}x | {t['fused'] / t['raw']:.2f} |")


if __name__ == "__main__":
    main()
