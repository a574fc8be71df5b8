"""Benchmark: elementwise chains end to end (upload, compute, download).

    python bench/chain.py [--sizes 16,20,24] [--repeat 7] [--small 10,14] [--small-repeat 200]

Chains: 3 ops (relu, scale, add) and 5 ops (relu, scale, add, sigmoid, mul). Columns: one-shot ops,
batch unfused (one kernel per op, one submit), batch fused (one kernel), NumPy on the host, and a
hand-written raw wgpu-py version of the fused kernel (the floor for our overhead: fresh buffers per
call, and cached ones written with write_buffer). Then a one-shot relu against the same round trip in
raw wgpu-py (the target: "within 20%"). Prints ms (us) per call, the variants taking turns, and the ratios.
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

import trueno_web as tw
from trueno_web.runtime import block_on

RAW_WGSL = """
{DECLS}
@group(0) @binding({OUT}) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.y * nwg.x * 256u + gid.x;
    if (i >= arrayLength(&y)) { return; }
    {BODY}
}
"""
RAW_KERNELS = {  # name -> (inputs, WGSL body storing y[i] from x0[i], x1[i] ...)
    "chain3": (2, "let v = max(x0[i], 0.0) * 2.0 + x1[i]; y[i] = v;"),
    "chain5": (2, "let v = max(x0[i], 0.0) * 2.0 + x1[i]; y[i] = (1.0 / (1.0 + exp(-v))) * x1[i];"),
    "relu": (1, "y[i] = max(x0[i], 0.0);"),
}


def raw_source(kernel: str) -> tuple[int, str]:
    """(inputs, WGSL) of one of RAW_KERNELS: inputs x0, x1, ... at bindings 0, 1, ..., y after them."""
    inputs, body = RAW_KERNELS[kernel]
    decls = "\n".join(f"@group(0) @binding({j}) var<storage, read> x{j}: array<f32>;" for j in range(inputs))
    return inputs, RAW_WGSL.replace("{DECLS}", decls).replace("{OUT}", str(inputs)).replace("{BODY}", body)


class RawWgpu:
    """A kernel written directly against wgpu-py (the floor for our overhead): `run` makes buffers and a bind
    group per call, `run_cached` keeps them per size (write, one dispatch, read back)."""

    def __init__(self, five: bool = False, kernel: str | None = None):
        import wgpu

        self.wgpu = wgpu
        adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
        wanted = ("max-storage-buffer-binding-size", "max-buffer-size")
        self.device = adapter.request_device_sync(required_limits={k: adapter.limits[k] for k in wanted})
        self.inputs, code = raw_source(kernel or ("chain5" if five else "chain3"))
        module = self.device.create_shader_module(code=code)
        self.pipeline = self.device.create_compute_pipeline(
            layout="auto", compute={"module": module, "entry_point": "main"}
        )
        self.usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.COPY_SRC
        self.kept: dict[int, tuple] = {}  # nbytes -> (buffers, bind group) of run_cached

    def _group(self, buffers):
        return self.device.create_bind_group(
            layout=self.pipeline.get_bind_group_layout(0),
            entries=[
                {"binding": i, "resource": {"buffer": b, "offset": 0, "size": b.size}} for i, b in enumerate(buffers)
            ],
        )

    def _dispatch_and_read(self, group, out, n: int) -> np.ndarray:
        dev = self.device
        enc = dev.create_command_encoder()
        cp = enc.begin_compute_pass()
        cp.set_pipeline(self.pipeline)
        cp.set_bind_group(0, group)
        groups = -(-n // 256)
        cp.dispatch_workgroups(min(groups, 65535), -(-groups // 65535), 1)
        cp.end()
        dev.queue.submit([enc.finish()])
        return np.frombuffer(dev.queue.read_buffer(out), dtype=np.float32)

    def run(self, *arrays: np.ndarray) -> np.ndarray:
        dev = self.device
        buffers = [dev.create_buffer_with_data(data=a, usage=self.usage) for a in arrays]
        buffers.append(dev.create_buffer(size=arrays[0].nbytes, usage=self.usage))
        out = self._dispatch_and_read(self._group(buffers), buffers[-1], arrays[0].size)
        for b in buffers:
            b.destroy()
        return out

    def run_cached(self, *arrays: np.ndarray) -> np.ndarray:
        kept = self.kept.get(arrays[0].nbytes)
        if kept is None:
            buffers = [
                self.device.create_buffer(size=arrays[0].nbytes, usage=self.usage) for _ in range(self.inputs + 1)
            ]
            kept = self.kept[arrays[0].nbytes] = buffers, self._group(buffers)
        buffers, group = kept
        for b, a in zip(buffers, arrays):
            self.device.queue.write_buffer(b, 0, a)
        return self._dispatch_and_read(group, buffers[-1], arrays[0].size)


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


def timed(fns: dict, repeat: int, warm: int = 3, clock=time.perf_counter) -> dict:
    """Median ms per function of `repeat` calls after `warm` untimed ones each, the functions taking turns in
    a rotating order (a busy machine slows them alike; on an NVIDIA adapter the first large transfers of a
    process leave submits slow for a few dozen calls: docs/benchmarks.md). `clock`: time.thread_time gives
    this thread's CPU time (the host's own cost, what a loaded machine distorts least)."""
    for fn in fns.values():
        for _ in range(warm):
            fn()
    times: dict = {name: [] for name in fns}
    names = list(fns)
    for r in range(repeat):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            start = clock()
            fns[name]()
            times[name].append(clock() - start)
    return {name: sorted(t)[len(t) // 2] * 1e3 for name, t in times.items()}


def one_shot_table(dev, sizes, repeat: int) -> None:
    """A one-shot relu (upload, kernel, read back) against the same round trip written in raw wgpu-py,
    cached (buffers and bind group kept, write_buffer) and fresh (new buffers and bind group per call):
    wall-clock, and this thread's CPU time."""
    raw = RawWgpu(kernel="relu")
    print("\n| one-shot relu | ours us | raw cached us | raw fresh us | ours/cached | ours/fresh | CPU: ours/cached |")
    print("|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(1)
    for p in sizes:
        x = rng.standard_normal(1 << p, dtype=np.float32)
        for result in (block_on(dev.relu(x)), raw.run(x), raw.run_cached(x)):
            np.testing.assert_array_equal(result, np.maximum(x, 0))
        fns = {"ours": lambda: block_on(dev.relu(x)), "cached": lambda: raw.run_cached(x), "fresh": lambda: raw.run(x)}
        t = timed(fns, repeat, warm=10)
        cpu = timed(fns, repeat, warm=0, clock=time.thread_time)
        print(
            f"| 2^{p} | {t['ours'] * 1e3:.0f} | {t['cached'] * 1e3:.0f} | {t['fresh'] * 1e3:.0f} | "
            f"{t['ours'] / t['cached']:.2f} | {t['ours'] / t['fresh']:.2f} | {cpu['ours'] / cpu['cached']:.2f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="16,20,24", help="log2 of the element counts")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--small", default="10,14", help="log2 sizes of the one-shot relu table ('' to skip)")
    parser.add_argument("--small-repeat", type=int, default=200)
    args = parser.parse_args()
    dev = block_on(tw.GpuDevice.create("webgpu"))
    print(
        f"# adapter: {dev.adapter_info['device']} ({dev.adapter_info.get('backend_type', '')}); host: {platform.processor() or platform.machine()}"
    )
    print(
        "| chain | n | one-shot ms | unfused ms | fused ms | numpy ms | raw wgpu ms | raw cached ms | one-shot/fused | fused/raw | fused/raw cached |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    for five in (False, True):
        raw = RawWgpu(five)
        for p in (int(s) for s in args.sizes.split(",")):
            n = 1 << p
            x, other = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
            expect = numpy_chain(x, other, five)
            for result in (block_on(batched(dev, x, other, five, True)), raw.run(x, other), raw.run_cached(x, other)):
                np.testing.assert_allclose(result, expect, rtol=2e-5, atol=1e-6)
            t = timed(
                {
                    "one": lambda: block_on(one_shot(dev, x, other, five)),
                    "unfused": lambda: block_on(batched(dev, x, other, five, False)),
                    "fused": lambda: block_on(batched(dev, x, other, five, True)),
                    "numpy": lambda: numpy_chain(x, other, five),
                    "raw": lambda: raw.run(x, other),
                    "cached": lambda: raw.run_cached(x, other),
                },
                args.repeat,
            )
            print(
                f"| {5 if five else 3} ops | 2^{p} | {t['one']:.2f} | {t['unfused']:.2f} | {t['fused']:.2f} | "
                f"{t['numpy']:.2f} | {t['raw']:.2f} | {t['cached']:.2f} | {t['one'] / t['fused']:.2f}x | "
                f"{t['fused'] / t['raw']:.2f} | {t['fused'] / t['cached']:.2f} |"
            )
        raw.kept.clear()
    if args.small:
        one_shot_table(dev, [int(s) for s in args.small.split(",")], args.small_repeat)


if __name__ == "__main__":
    main()
