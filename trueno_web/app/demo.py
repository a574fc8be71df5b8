"""`python -m trueno_web demo`: the adapter, every op on the GPU and the CPU fallback against NumPy,
relu -> scale -> add one-shot vs batched, and the models (trueno_web.models): the digit classifier's
held-out accuracy and the transformer block's time."""

from __future__ import annotations

import time

from .. import ops
from ..device import GpuDevice, cpu_backend
from ..dtypes import bool_, float32
from ..kinds import Kind
from ..models import Mlp, TransformerBlock, load_digits_file
from .training import DigitsTrainer


def sample_inputs(op: ops.Op, rng, n: int = 4097):
    """Inputs and scalar parameters that exercise `op`: float32 NumPy arrays, or int32 / bool ones for the
    integer and bool ops (shift amounts 0 to 31); astype converts float32 to int32."""
    import numpy as np

    if op.kind in (Kind.GATHER, Kind.SCATTER):  # data, int32 indices into it (and values to add)
        xs = [rng.standard_normal(n, dtype=np.float32), rng.integers(0, n, n).astype(np.int32)]
        return xs + [rng.standard_normal(n, dtype=np.float32)] * (op.arity - 2), {}
    if op.returns == "target":
        return [rng.standard_normal(n, dtype=np.float32) * 1000], {"dtype": "int32"}
    if float32 not in op.dtypes:
        if op.dtypes[0] is bool_:
            return [rng.integers(0, 2, n).astype(bool) for _ in range(op.arity)], {}
        xs = [rng.integers(-1000, 1000, n).astype(np.int32) for _ in range(op.arity)]
        if "shift" in op.name:
            xs[1] = rng.integers(0, 32, n).astype(np.int32)
        return xs, {}
    if op.kind is Kind.MATMUL:
        return [rng.standard_normal((65, 33), dtype=np.float32), rng.standard_normal((33, 17), dtype=np.float32)], {}
    if op.kind is Kind.CONV2D:
        return [rng.standard_normal((37, 53), dtype=np.float32), rng.standard_normal((5, 3), dtype=np.float32)], {}
    if op.kind is Kind.SOFTMAX:
        return [rng.standard_normal((7, n // 7), dtype=np.float32) * 4], {}
    if op.kind is Kind.ATTENTION:  # 3 heads of 40 queries, 50 keys, E = 16, Ev = 8 (a mask: about 3 keys in 4)
        qkv = [rng.standard_normal((3, n, 16), dtype=np.float32) for n in (40, 50)]
        qkv.append(rng.standard_normal((3, 50, 8), dtype=np.float32))
        return qkv + [(rng.random((40, 50)) < 0.75).astype(np.float32)] * (op.arity - 3), {}
    if op.kind is Kind.SEARCH:  # a binary search needs a sorted x1
        return [np.sort(rng.standard_normal(n, dtype=np.float32)), rng.standard_normal(n, dtype=np.float32)], {}
    params = {p.name: p.default if p.default is not None else 0.5 for p in op.params}
    if op.name == "clip":
        params = {"lo": -1.0, "hi": 1.5}
    if op.name == "prod":  # factors near 1: a product of 4097 normal draws overflows float32
        return [1 + rng.standard_normal(n, dtype=np.float32) * np.float32(0.01)], params
    return [rng.standard_normal(n, dtype=np.float32) * 3 for _ in range(op.arity)], params


def max_error(op: ops.Op, result, inputs, params) -> float:
    """Largest difference from the NumPy reference (float64 for float32 ops; the inputs' own dtype for the
    integer and bool ones), relative to the reference's magnitude."""
    import numpy as np

    with np.errstate(all="ignore"):
        if op.returns == "target":
            ref = np.asarray(inputs[0]).astype(params["dtype"]).astype(np.float64)
        elif float32 not in op.dtypes:
            ref = np.asarray(op.numpy(*inputs), np.float64)
        else:  # the kind's own call of the reference (its options resolved by its shape rule)
            wide = [np.asarray(x, np.float64) if np.asarray(x).dtype.kind == "f" else np.asarray(x) for x in inputs]
            _, options = op.row.shape(op, [np.shape(x) for x in inputs], {"axis": 0} if "axis" in op.options else {})
            ref = np.asarray(op.row.numpy(op, wide, list(params.values()), options), np.float64)
        got = np.asarray(result, np.float64)
        # NaN where NumPy has NaN (log of x < 0, ...), and infinities where it overflows float32, agree
        same = (np.isnan(got) & np.isnan(ref)) | (np.isinf(got) & (got == ref.astype(np.float32)))
        diff = np.where(same, 0.0, np.abs(got - ref))
    scale = max(float(np.max(np.abs(ref[np.isfinite(ref)]), initial=0.0)), 1e-30)
    return float(np.max(diff, initial=0.0)) / scale


async def _time(fn, repeat: int) -> float:
    await fn()  # warm: pipelines compile once per device
    start = time.perf_counter()
    for _ in range(repeat):
        await fn()
    return (time.perf_counter() - start) / repeat * 1e3


async def chain_timings(dev: GpuDevice, n: int, repeat: int = 5) -> dict[str, float]:
    """ms per relu -> scale -> add at n elements: one-shot ops vs one fused batch."""
    import numpy as np

    rng = np.random.default_rng(0)
    x, other = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)

    async def one_shot():
        return await dev.add(await dev.scale(await dev.relu(x), 2.0), other)

    async def batched():
        with dev.batch() as b:
            out = b.add(b.scale(b.relu(b.upload(x)), 2.0), b.upload(other))
            await b.execute()
            return await b.read(out)

    def host():
        return np.maximum(x, 0) * np.float32(2.0) + other

    start = time.perf_counter()
    for _ in range(repeat):
        host()
    numpy_ms = (time.perf_counter() - start) / repeat * 1e3
    return {"one-shot": await _time(one_shot, repeat), "batch (fused)": await _time(batched, repeat), "numpy": numpy_ms}


async def digits_accuracy(dev: GpuDevice) -> tuple[float, int]:
    """(accuracy, count) of the shipped classifier on the held-out digits that ship with it."""
    arrays, _ = load_digits_file()
    (x, shape), (labels, _) = arrays["test_x"], arrays["test_y"]
    mlp = await Mlp.digits(dev)
    pred = await mlp.predict(dev.tensor(x, shape=shape)).numpy()
    return sum(int(p) == y for p, y in zip(pred.reshape(-1).tolist(), labels)) / len(labels), len(labels)


async def train_digits(dev: GpuDevice, seconds: float = 3.0, print=print) -> tuple[float, int, float]:
    """Train the digits MLP from random weights for about `seconds` (at least 100 steps): (held-out
    accuracy, steps, ms per step)."""
    trainer = DigitsTrainer(dev)
    t0 = time.perf_counter()
    while trainer.steps < 100 or time.perf_counter() - t0 < seconds:
        loss = await trainer.step()
        if trainer.steps % 100 == 0:
            print(f"  step {trainer.steps}: loss {loss:.4f}")
    ms = (time.perf_counter() - t0) * 1e3 / trainer.steps
    return await trainer.accuracy(), trainer.steps, ms


async def block_timing(dev: GpuDevice, seq: int = 128, d_model: int = 256, heads: int = 4, repeat: int = 3) -> float:
    """ms per forward pass of the transformer block (seeded weights uploaded once, input resident,
    result read back), after one warm-up run."""
    import numpy as np

    rng = np.random.default_rng(0)
    weights = {
        k: (rng.standard_normal(s) / np.sqrt(s[0]) if len(s) == 2 else rng.standard_normal(s) * 0.1).astype(np.float32)
        for k, s in TransformerBlock.shapes(d_model).items()
    }
    block = await TransformerBlock.create(dev, weights, n_heads=heads)
    x = dev.tensor(await dev.upload(rng.standard_normal((seq, d_model), dtype=np.float32)))

    async def forward():
        return await block(x).numpy()

    return await _time(forward, repeat)


async def run_demo(print=print) -> None:
    import numpy as np

    gpu_available = await GpuDevice.is_available()
    devices = [await GpuDevice.create("webgpu")] if gpu_available else []
    devices.append(await GpuDevice.create(cpu_backend()))
    if not gpu_available:
        print("No WebGPU adapter found: showing the CPU fallback only (install mesa-vulkan-drivers for lavapipe).")
    for dev in devices:
        info = dev.adapter_info
        soft = " (runs on the CPU)" if info.get("software") else ""
        print(f"\n== backend {dev.backend}: {info.get('device', '')} {info.get('description', '')}{soft}")
        rng = np.random.default_rng(1)
        print(f"{'op':<20} {'shape':>10} {'max |err| / max |ref|':>22}")
        for op in ops.CATALOG:
            inputs, params = sample_inputs(op, rng)
            result = await getattr(dev, op.name)(*inputs, **params)
            err = max_error(op, result, inputs, params)
            shape = "x".join(map(str, np.shape(result))) or "scalar"
            print(f"{op.name:<20} {shape:>10} {err:>22.2e}")
        n = 1 << 20
        t = await chain_timings(dev, n)
        print(f"relu -> scale -> add at {n} elements: " + ", ".join(f"{k} {v:.2f} ms" for k, v in t.items()))
        accuracy, count = await digits_accuracy(dev)
        print(f"digits MLP (64-32-10): held-out accuracy {accuracy:.2%} of {count} digits")
        print("training the digits MLP from random weights (forward, backward, AdamW: one batch per step):")
        accuracy, steps, ms = await train_digits(dev, print=print)
        print(f"  trained {steps} steps ({ms:.1f} ms each): held-out accuracy {accuracy:.2%}")
        print(f"transformer block (seq 128, d_model 256, 4 heads): {await block_timing(dev):.2f} ms")
        print(f"stats: {dev.stats.as_dict()}")
