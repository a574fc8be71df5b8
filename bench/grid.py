"""The benchmark grid: trueno_web's webgpu backend against NumPy, raw wgpu-py, and (where PyTorch with
CUDA is importable) cuBLAS/torch and the device's copy bandwidth, in one run.

    python bench/grid.py                 # everything; markdown tables on stdout
    python bench/grid.py --explore       # also the tuning sweeps (matmul tilings, map vec4s per thread, ...)
    python bench/grid.py --json out.json # also every figure as JSON

Kernel figures are on resident buffers: a plan's dispatches recorded R times into one command buffer,
timed from submit to the queue's work-done, the slope between R = 2 and R = reps (so submit latency and
recording fall out). End-to-end figures are wall-clock medians of whole calls (upload, kernels, read).
Bandwidth counts bytes read plus bytes written once each; the torch copy is the ceiling for memory-bound
kernels and cuBLAS SGEMM with TF32 off the ceiling for the matmul.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from devices import HoldingExecutor, TimedDriver, webgpu

import trueno_web as tw
from trueno_web import kernels
from trueno_web.runtime import block_on

RESULTS: dict = {}
EXTRA: list[str] = []  # tables printed after the main one
AUTO: list[float] = []  # auto's time over the faster single backend, per crossover cell
ROWS: list[tuple] = []


def record(section: str, name: str, **figures) -> None:
    RESULTS.setdefault(section, {})[name] = figures


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def wall(fn, repeat=7, warm=1):
    for _ in range(warm):
        fn()
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return median(ts)


def set_constants(module, settings) -> None:
    """Set a kernel module's tuning constants from NAME=VALUE strings (a benchmark's --set / --radix), each
    value read as its constant's type: an int, a bool (0 or 1), or a tuple of ints (comma-separated)."""
    for setting in settings:
        name, value = setting.split("=")
        old = getattr(module, name)
        new = tuple(int(v) for v in value.split(",")) if isinstance(old, tuple) else type(old)(int(value))
        setattr(module, name, new)


def wall_ms(fn, repeat=7, warm=1):
    """wall() in milliseconds."""
    return wall(fn, repeat, warm) * 1e3


# ------------------------------------------------------------------ torch references (optional)


def torch_cuda():
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    return torch


def cuda_time(torch, fn, reps=50):
    """Median seconds per call by CUDA events, after warm-up."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(5):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        torch.cuda.synchronize()
        ts.append(start.elapsed_time(end) / 1e3 / reps)
    return median(ts)


# ------------------------------------------------------------------ our kernels on resident buffers


class Resident:
    """Times the dispatches of an execute() again on the buffers it left on the device (the device's
    executor a HoldingExecutor, its driver a TimedDriver: bench/devices.py)."""

    def __init__(self, dev):
        self.dev = dev
        self.ex: HoldingExecutor = dev.executor
        self.drv: TimedDriver = self.ex.driver

    def encode(self, work, reps):
        enc = self.drv.device.create_command_encoder()
        self.record(enc.begin_compute_pass(), work, reps)
        return enc.finish()

    def record(self, p, work, reps):
        """`reps` runs of `work` into compute pass `p`, and end it."""
        for _ in range(reps):
            self.drv.record(p, work)
        p.end()

    def run(self, cb):
        q = self.drv.device.queue
        t = time.perf_counter()
        q.submit([cb])
        wait_idle(self.drv.device)
        return time.perf_counter() - t

    def gpu_ns(self, work, reps):
        """GPU nanoseconds of one compute pass holding `reps` runs of `work`, from timestamp queries
        (the adapter's timestamp period is taken as 1 ns, as on NVIDIA and Mesa)."""
        import wgpu

        dev = self.drv.device
        qs = dev.create_query_set(type="timestamp", count=2)
        resolve = dev.create_buffer(size=16, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC)
        enc = dev.create_command_encoder()
        self.record(
            enc.begin_compute_pass(
                timestamp_writes={"query_set": qs, "beginning_of_pass_write_index": 0, "end_of_pass_write_index": 1}
            ),
            work,
            reps,
        )
        enc.resolve_query_set(qs, 0, 2, resolve, 0)
        dev.queue.submit([enc.finish()])
        t0, t1 = np.frombuffer(dev.queue.read_buffer(resolve), dtype=np.uint64)
        resolve.destroy()
        return int(t1) - int(t0)

    def time(self, reps=20):
        """Seconds per run of the dispatches of the last execute() (inside `ex.holding()`: its ops recomputed
        on the same buffers): from GPU timestamps where the adapter has them (median of 5 passes of `reps`
        runs), else the wall-clock slope between passes of 2 and `reps` runs."""
        work = self.ex.held
        assert work, "Resident.time() times the last execute() inside ex.holding()"
        try:
            self.run(self.encode(work, 1))
            if "timestamp-query" in self.drv.features:
                return median([self.gpu_ns(work, reps) for _ in range(5)]) / reps / 1e9
            small = min(self.run(self.encode(work, 2)) for _ in range(3))
            big = min(self.run(self.encode(work, reps)) for _ in range(3))
        finally:
            self.ex.drop_held()
        return max((big - small) / (reps - 2), 1e-9)


_FLAGS = {}


def wait_idle(device):
    """Block until the queue's work is done (wgpu-py 0.32's on_submitted_work_done is broken): a 16-byte
    read queued behind it."""
    import wgpu

    flag = _FLAGS.get(device)
    if flag is None:
        flag = _FLAGS[device] = device.create_buffer(
            size=16, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC
        )
    device.queue.read_buffer(flag)


def rel_error(got, ref, mag=None):
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    mag = np.abs(ref) if mag is None else mag
    return float(np.max(np.abs(got - ref) / np.maximum(mag, 1e-30)))


# ------------------------------------------------------------------ sections


def section_ceilings(torch, n, out):
    if torch is None:
        out.append(("ceiling", "torch not importable with CUDA here", "", "", ""))
        return {}
    dev = torch.device("cuda")
    x = torch.randn(n, device=dev)
    y = torch.empty_like(x)
    o = torch.randn(n, device=dev)
    t_copy = cuda_time(torch, lambda: y.copy_(x))
    big = torch.randn(1 << 26, device=dev)
    big_y = torch.empty_like(big)
    t_copy_big = cuda_time(torch, lambda: big_y.copy_(big), reps=20)
    t_chain = cuda_time(torch, lambda: torch.add(torch.relu(x).mul_(2.0), o, out=y))
    t_dot = cuda_time(torch, lambda: torch.dot(x, o))
    t_sum = cuda_time(torch, lambda: torch.sum(x))
    t_norm = cuda_time(torch, lambda: torch.linalg.vector_norm(x))
    xs = x.view(4096, -1)
    t_sm = cuda_time(torch, lambda: torch.softmax(xs, dim=-1))
    a = torch.randn(4096, 4096, device=dev)
    b = torch.randn(4096, 4096, device=dev)
    t_mm = cuda_time(torch, lambda: a @ b, reps=20)
    a2, b2 = torch.randn(4095, 4093, device=dev), torch.randn(4093, 4097, device=dev)
    t_mm_odd = cuda_time(torch, lambda: a2 @ b2, reps=20)
    host = torch.randn(n).pin_memory()
    t_h2d = cuda_time(torch, lambda: x.copy_(host, non_blocking=True))
    t_d2h = cuda_time(torch, lambda: host.copy_(x, non_blocking=True))
    nb = 4 * n
    c = {
        "copy_bw": 2 * nb / t_copy,
        "copy_bw_2^26": 2 * (4 << 26) / t_copy_big,
        "chain_bw": 3 * nb / t_chain,
        "chain_ms": t_chain * 1e3,
        "dot_bw": 2 * nb / t_dot,
        "sum_bw": nb / t_sum,
        "norm_bw": nb / t_norm,
        "softmax_bw": 2 * nb / t_sm,
        "sgemm_tflops": 2 * 4096**3 / t_mm / 1e12,
        "sgemm_odd_tflops": 2 * 4095 * 4093 * 4097 / t_mm_odd / 1e12,
        "h2d_pinned": nb / t_h2d,
        "d2h_pinned": nb / t_d2h,
        "torch": torch.__version__,
        "gpu": torch.cuda.get_device_name(),
    }
    record("ceilings", "torch", **c)
    gb = lambda v: f"{v / 1e9:.0f} GB/s"  # noqa: E731
    out += [
        ("device copy (torch, 2^24 f32)", gb(c["copy_bw"]), f"2^26: {gb(c['copy_bw_2^26'])}", "read+write", ""),
        ("relu-scale-add (torch, 3 kernels)", gb(c["chain_bw"]), f"{c['chain_ms']:.3f} ms", "", ""),
        ("dot / sum / norm_l2 (torch)", gb(c["dot_bw"]), gb(c["sum_bw"]), gb(c["norm_bw"]), ""),
        ("softmax 4096x4096 (torch)", gb(c["softmax_bw"]), "", "", ""),
        (
            "SGEMM 4096^3, TF32 off (cuBLAS)",
            f"{c['sgemm_tflops']:.1f} TFLOPS",
            f"odd 4095x4093x4097: {c['sgemm_odd_tflops']:.1f}",
            "",
            "",
        ),
        ("host<->device pinned (torch)", f"H2D {gb(c['h2d_pinned'])}", f"D2H {gb(c['d2h_pinned'])}", "", ""),
    ]
    return c


def section_resident(dev, res, n, explore, ceil, torch, out):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n, dtype=np.float32)
    o = rng.standard_normal(n, dtype=np.float32)
    copy_bw = ceil.get("copy_bw")
    pct = lambda bw: f"{100 * bw / copy_bw:.0f}% of copy" if copy_bw else ""  # noqa: E731
    ex = dev.executor

    # fused elementwise chain
    vpts = (1, 2, 4) if explore else (ex.caps.map_vpt,)
    default_vpt = ex.caps.map_vpt
    best = None
    for vpt in vpts:
        ex.caps.map_vpt = vpt
        b = dev.batch()
        out_id = b.add(b.scale(b.relu(b.upload(x)), 2.0), b.upload(o))
        block_on(b.execute())
        assert np.array_equal(block_on(b.read(out_id)), np.maximum(x, 0) * np.float32(2) + o)
        t = res.time(reps=200)
        bw = 3 * 4 * n / t
        record("resident", f"map_chain_vpt{vpt}", seconds=t, bw=bw)
        if vpt != default_vpt or not explore:
            pass
        out.append(
            (
                f"relu-scale-add fused, 2^{n.bit_length() - 1}" + (f" (vec4 x{vpt}/thread)" if explore else ""),
                f"{bw / 1e9:.0f} GB/s",
                f"{t * 1e6:.1f} us",
                pct(bw),
                "",
            )
        )
        best = max(best or 0, bw) if vpt == default_vpt else best
        b.release()
    ex.caps.map_vpt = default_vpt

    # raw wgpu-py kernel (the hand-written one in bench/chain.py), resident, on its own device
    try:
        out.append(raw_resident(x, o, copy_bw))
    except Exception as exc:  # pragma: no cover - reference only
        out.append(("raw wgpu-py fused kernel", f"failed: {exc}", "", "", ""))

    # reductions
    variants = [(ex.caps.subgroups, ex.caps.reduce_partials)]
    if explore:
        variants += [(not ex.caps.subgroups, ex.caps.reduce_partials)] if ex.caps.subgroups else []
        variants += [(ex.caps.subgroups, p) for p in (264, 528, 2048) if p != ex.caps.reduce_partials]
    for name, arrays, nbytes in (
        ("dot", (x, o), 8 * n),
        ("sum", (x,), 4 * n),
        ("norm_l2", (x,), 4 * n),
        ("max", (x,), 4 * n),
        ("min", (x,), 4 * n),
    ):
        for sg, parts in variants:
            saved = ex.caps.subgroups, ex.caps.reduce_partials
            ex.caps.subgroups, ex.caps.reduce_partials = sg, parts
            b = dev.batch()
            r = getattr(b, name)(*[b.upload(a) for a in arrays])
            block_on(b.execute())
            got = block_on(b.read(r))
            op = tw.ops.get(name)
            ref = op.numpy(*[a.astype(np.float64) for a in arrays])
            mag = op.numpy(*[np.abs(a.astype(np.float64)) for a in arrays]) if name not in ("max", "min") else abs(ref)
            assert abs(got - ref) <= 1e-4 * mag + 1e-6, (name, got, ref)
            t = res.time(reps=200)
            bw = nbytes / t
            record("resident", f"{name}_sg{int(sg)}_p{parts}", seconds=t, bw=bw)
            label = f"{name}, 2^{n.bit_length() - 1}" + (
                f" (subgroups {'on' if sg else 'off'}, {parts} partials)" if explore else ""
            )
            out.append((label, f"{bw / 1e9:.0f} GB/s", f"{t * 1e6:.1f} us", pct(bw), ""))
            ex.caps.subgroups, ex.caps.reduce_partials = saved
            b.release()

    # fused map-reduce: the chain computed as the partial pass reads x; nothing else is written
    for name in ("sum", "max"):
        b = dev.batch()
        r = getattr(b, name)(b.scale(b.relu(b.upload(x)), 2.0))
        block_on(b.execute())
        chain = np.maximum(x, 0).astype(np.float64) * 2
        want = chain.sum() if name == "sum" else chain.max()
        assert abs(block_on(b.read(r)) - want) <= 1e-4 * np.abs(chain).sum() + 1e-6, name
        t = res.time(reps=200)
        bw = 4 * n / t
        record("resident", f"{name}_relu_scale_fused", seconds=t, bw=bw)
        out.append(
            (
                f"{name}(relu(x) * 2) fused, 2^{n.bit_length() - 1}",
                f"{bw / 1e9:.0f} GB/s",
                f"{t * 1e6:.1f} us",
                pct(bw),
                "",
            )
        )
        b.release()

    # softmax
    for shape in ((4096, n // 4096), (1, n), (n // 64, 64)):
        xs = x.reshape(shape)
        b = dev.batch()
        r = b.softmax(b.upload(xs))
        block_on(b.execute())
        got = block_on(b.read(r))
        ref = tw.ops.get("softmax").numpy(xs.astype(np.float64))
        err = rel_error(got, ref, np.abs(ref) + 1e-12)
        t = res.time(reps=30)
        bw = 8 * n / t
        record("resident", f"softmax_{shape[0]}x{shape[1]}", seconds=t, bw=bw, err=err)
        out.append(
            (
                f"softmax {shape[0]}x{shape[1]}",
                f"{bw / 1e9:.0f} GB/s",
                f"{t * 1e6:.1f} us",
                pct(bw),
                f"max rel err {err:.1e}",
            )
        )
        b.release()


def raw_resident(x, o, copy_bw):
    import wgpu
    from chain import raw_source

    adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    wanted = ("max-storage-buffer-binding-size", "max-buffer-size")
    features = [f for f in ("timestamp-query",) if f in adapter.features]
    device = adapter.request_device_sync(
        required_features=features, required_limits={k: adapter.limits[k] for k in wanted}
    )
    module = device.create_shader_module(code=raw_source("chain3")[1])
    pipe = device.create_compute_pipeline(layout="auto", compute={"module": module, "entry_point": "main"})
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.COPY_SRC
    bx = device.create_buffer_with_data(data=x, usage=usage)
    bo = device.create_buffer_with_data(data=o, usage=usage)
    by = device.create_buffer(size=x.nbytes, usage=usage)
    group = device.create_bind_group(
        layout=pipe.get_bind_group_layout(0),
        entries=[
            {"binding": i, "resource": {"buffer": b, "offset": 0, "size": b.size}} for i, b in enumerate((bx, bo, by))
        ],
    )
    groups = -(-x.size // 256)

    qs = device.create_query_set(type="timestamp", count=2) if "timestamp-query" in device.features else None
    resolve = device.create_buffer(size=16, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC)

    def timed(reps):
        enc = device.create_command_encoder()
        p = enc.begin_compute_pass(
            timestamp_writes=None
            if qs is None
            else {"query_set": qs, "beginning_of_pass_write_index": 0, "end_of_pass_write_index": 1}
        )
        for _ in range(reps):
            p.set_pipeline(pipe)
            p.set_bind_group(0, group)
            p.dispatch_workgroups(min(groups, 65535), -(-groups // 65535), 1)
        p.end()
        if qs is not None:
            enc.resolve_query_set(qs, 0, 2, resolve, 0)
        cb = enc.finish()
        t = time.perf_counter()
        device.queue.submit([cb])
        if qs is not None:
            t0, t1 = np.frombuffer(device.queue.read_buffer(resolve), dtype=np.uint64)
            return (int(t1) - int(t0)) / 1e9
        wait_idle(device)
        return time.perf_counter() - t

    timed(1)
    if qs is not None:
        t = median([timed(50) for _ in range(5)]) / 50
    else:
        t = (min(timed(50) for _ in range(3)) - min(timed(2) for _ in range(3))) / 48
    bw = 3 * x.nbytes / t
    record("resident", "raw_wgpu_chain", seconds=t, bw=bw)
    for b in (bx, bo, by):
        b.destroy()
    return (
        "raw wgpu-py fused kernel (1 f32/thread)",
        f"{bw / 1e9:.0f} GB/s",
        f"{t * 1e6:.1f} us",
        f"{100 * bw / copy_bw:.0f}% of copy" if copy_bw else "",
        "",
    )


def section_matmul(dev, res, explore, ceil, torch, out, shapes):
    ex = dev.executor
    rng = np.random.default_rng(1)
    sgemm = ceil.get("sgemm_tflops")
    configs = [""] + ([k for k in kernels.MATMUL_CONFIGS if k.startswith("128")] if explore else [])
    for m, k, n in shapes:
        a = rng.standard_normal((m, k), dtype=np.float32)
        b_ = rng.standard_normal((k, n), dtype=np.float32)
        if torch is not None:
            ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b_).cuda()
            t = cuda_time(torch, lambda: ta @ tb, reps=20)  # cuBLAS SGEMM at this shape (TF32 off)
            record("matmul", f"torch_{m}x{k}x{n}", seconds=t, tflops=2 * m * n * k / t / 1e12)
            ta, tb = ta.double(), tb.double()
            ref = (ta @ tb).cpu().numpy()
            mag = (ta.abs() @ tb.abs()).cpu().numpy()
            del ta, tb
        elif m * n * k <= 2048**3:
            ref = a.astype(np.float64) @ b_.astype(np.float64)
            mag = np.abs(a).astype(np.float64) @ np.abs(b_).astype(np.float64)
        else:
            ref = mag = None
        for cfg in configs if (m, k, n) == shapes[0] else [""]:
            ex.caps.matmul = cfg
            chosen = kernels.matmul_config(m, k, n, ex.caps)
            name = cfg or f"auto={chosen[0].bm}x{chosen[0].bn}x{chosen[0].bk}"
            bt = dev.batch()
            r = bt.matmul(bt.upload(a), bt.upload(b_))
            try:
                block_on(bt.execute())
                got = block_on(bt.read(r))
                err = rel_error(got, ref, mag) if ref is not None else float("nan")
                t = res.time(reps=10 if m >= 4096 else 30)
            except Exception as exc:
                out.append((f"matmul {m}x{k}x{n} [{name}]", f"failed: {str(exc)[:80]}", "", "", ""))
                bt.release()
                continue
            tflops = 2 * m * n * k / t / 1e12
            record("matmul", f"{m}x{k}x{n}_{name}", seconds=t, tflops=tflops, err=err)
            cublas = RESULTS.get("matmul", {}).get(f"torch_{m}x{k}x{n}", {}).get("tflops") or sgemm
            ref_note = f"{100 * tflops / cublas:.0f}% of cuBLAS" if cublas else ""
            out.append(
                (
                    f"matmul {m}x{k}x{n} [{name}]",
                    f"{tflops:.1f} TFLOPS",
                    f"{t * 1e3:.2f} ms",
                    ref_note,
                    f"err {err:.1e}",
                )
            )
            bt.release()
    ex.caps.matmul = ""
    # NumPy on the host (one size)
    m = min(2048, shapes[0][0])
    a = rng.standard_normal((m, m), dtype=np.float32)
    t = wall(lambda: a @ a, repeat=3)
    record("matmul", f"numpy_{m}", seconds=t, tflops=2 * m**3 / t / 1e12)
    out.append((f"matmul {m}^3 NumPy (host BLAS)", f"{2 * m**3 / t / 1e12:.2f} TFLOPS", f"{t * 1e3:.1f} ms", "", ""))


AUTO_DEV: list = []


def section_end_to_end(dev, sizes, out, explore):
    import chain as ch

    if not AUTO_DEV:
        AUTO_DEV.append(block_on(tw.GpuDevice.create("auto")))

    rng = np.random.default_rng(2)
    drv = dev.executor.driver
    for p in sizes:
        n = 1 << p
        x, o = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
        raw = ch.RawWgpu(False)
        t = {
            "one-shot": wall(lambda: block_on(ch.one_shot(dev, x, o, False))),
            "unfused": wall(lambda: block_on(ch.batched(dev, x, o, False, False))),
            "fused": wall(lambda: block_on(ch.batched(dev, x, o, False, True))),
            "numpy": wall(lambda: ch.numpy_chain(x, o, False)),
            "raw": wall(lambda: raw.run(x, o)),
            "auto": wall(lambda: block_on(ch.batched(AUTO_DEV[0], x, o, False, True))),
        }
        record("end_to_end", f"2^{p}", **{k: v * 1e3 for k, v in t.items()})
        out.append(
            (
                f"3-op chain 2^{p}, transfers included",
                f"fused {t['fused'] * 1e3:.2f} ms",
                f"numpy {t['numpy'] * 1e3:.2f} ms",
                f"one-shot {t['one-shot'] * 1e3:.2f} / unfused {t['unfused'] * 1e3:.2f} / raw {t['raw'] * 1e3:.2f} ms",
                f"one-shot/fused {t['one-shot'] / t['fused']:.1f}x, fused/raw {t['fused'] / t['raw']:.2f}; "
                f"auto {t['auto'] * 1e3:.2f} ms",
            )
        )
        # transfers alone
        a = block_on(dev.upload(x))
        t_up = wall(lambda: (drv.write_buffer(a.buffer.raw, memoryview(x)), wait_idle(drv.device)))
        t_down = wall(lambda: block_on(a.read()))
        record("transfers", f"2^{p}", up_gbs=4 * n / t_up / 1e9, down_gbs=4 * n / t_down / 1e9)
        out.append(
            (
                f"upload / read 2^{p} (ours)",
                f"{4 * n / t_up / 1e9:.1f} GB/s",
                f"{4 * n / t_down / 1e9:.1f} GB/s",
                f"{t_up * 1e3:.2f} / {t_down * 1e3:.2f} ms",
                "",
            )
        )
        q = drv.device.queue
        t_up_raw = wall(lambda: (q.write_buffer(a.buffer.raw, 0, x), wait_idle(drv.device)))
        t_down_raw = wall(lambda: q.read_buffer(a.buffer.raw, 0, x.nbytes))
        record("transfers", f"2^{p} raw", up_gbs=4 * n / t_up_raw / 1e9, down_gbs=4 * n / t_down_raw / 1e9)
        out.append(
            (
                f"upload / read 2^{p} (raw wgpu-py write_buffer / read_buffer)",
                f"{4 * n / t_up_raw / 1e9:.1f} GB/s",
                f"{4 * n / t_down_raw / 1e9:.1f} GB/s",
                f"{t_up_raw * 1e3:.2f} / {t_down_raw * 1e3:.2f} ms",
                "",
            )
        )
        a.release()
        if explore:
            saved = drv.tuning
            for label, dwm, thr, chunk, wait in (
                ("write_buffer, 1 thread", 1 << 62, 1, saved.chunk_bytes, "await"),
                ("write_buffer, 1 thread, sync map", 1 << 62, 1, saved.chunk_bytes, "sync"),
                ("staging 1 thread 4M", 1 << 20, 1, 4 << 20, "await"),
                ("staging 1 thread 8M sync map", 1 << 20, 1, 8 << 20, "sync"),
                ("staging 4 threads 2M", 1 << 20, 4, 2 << 20, "await"),
                ("staging 4 threads 8M", 1 << 20, 4, 8 << 20, "await"),
                ("staging 8 threads 8M sync map", 1 << 20, 8, 8 << 20, "sync"),
                ("staging 8 threads 32M (default)", 1 << 20, 8, 32 << 20, "await"),
                ("staging 16 threads 32M", 1 << 20, 16, 32 << 20, "await"),
                ("staging 16 threads 64M", 1 << 20, 16, 64 << 20, "await"),
            ):
                drv.retune(
                    direct_write_max=dwm, copy_threads=min(thr, os.cpu_count() or 1), chunk_bytes=chunk, map_wait=wait
                )  # the staging buffers go: made again at the new chunk size
                for _ in range(12):  # out of the slow state that new staging buffers bring
                    block_on(ch.batched(dev, x, o, False, True))
                tf = wall(lambda: block_on(ch.batched(dev, x, o, False, True)))
                a = block_on(dev.upload(x))
                t_up = wall(lambda: (drv.write_buffer(a.buffer.raw, memoryview(x)), wait_idle(drv.device)), repeat=11)
                t_down = wall(lambda: block_on(a.read()), repeat=11)
                a.release()
                record(
                    "transfer_variants",
                    f"2^{p} {label}",
                    fused_ms=tf * 1e3,
                    up_gbs=4 * n / t_up / 1e9,
                    down_gbs=4 * n / t_down / 1e9,
                )
                out.append(
                    (
                        f"  variant: {label}",
                        f"fused chain {tf * 1e3:.2f} ms",
                        f"up {4 * n / t_up / 1e9:.1f} GB/s",
                        f"down {4 * n / t_down / 1e9:.1f} GB/s",
                        "",
                    )
                )
            drv.retune(**dataclasses.asdict(saved))
            # what host.from_host's copy of the driver's fresh bytearray costs (a proposed change)
            import trueno_web.batch as tb

            original = tb.from_host

            def no_copy(data, shape):
                if isinstance(data, np.ndarray):  # the driver's fresh array: the caller owns it
                    return data.view(np.float32).reshape(shape)
                return original(data, shape)

            tb.from_host = no_copy
            try:
                tf = wall(lambda: block_on(ch.batched(dev, x, o, False, True)))
            finally:
                tb.from_host = original
            record("transfer_variants", f"2^{p} from_host without copy", fused_ms=tf * 1e3)
            out.append(
                (
                    "  variant: default transfers, from_host without its copy",
                    f"fused chain {tf * 1e3:.2f} ms",
                    "",
                    "",
                    "",
                )
            )
    # host copy speed (what every transfer pays once)
    big = rng.standard_normal(1 << 24, dtype=np.float32)
    dst = np.empty_like(big)
    t = wall(lambda: np.copyto(dst, big))
    t_fresh = wall(lambda: big.copy())
    out.append(
        (
            "host memcpy 64 MiB (NumPy)",
            f"{big.nbytes / t / 1e9:.1f} GB/s",
            f"into fresh memory {big.nbytes / t_fresh / 1e9:.1f} GB/s",
            "",
            "",
        )
    )


def section_small_ops(dev, out):
    x = np.random.default_rng(3).standard_normal(1024, dtype=np.float32)
    names = ("relu", "sigmoid", "tanh", "gelu")

    async def run(fuse):
        with dev.batch(fuse=fuse) as b:
            v = b.upload(x)
            for i in range(100):
                v = getattr(b, names[i % 4])(v)
            await b.execute()
            return await b.read(v)

    async def reductions():
        with dev.batch() as b:
            v = b.upload(x)
            rs = [b.sum(v) if i % 2 else b.max(v) for i in range(100)]
            await b.execute()
            return await b.read(rs[-1])

    def numpy_ops():
        v = x
        for i in range(100):
            v = tw.ops.get(names[i % 4]).numpy(v)
        return v

    for label, fn in (
        ("100 ops, one batch, unfused (100 dispatches)", lambda: block_on(run(False))),
        ("100 ops, one batch, fused (1 dispatch)", lambda: block_on(run(True))),
        ("100 reductions, one batch (200 dispatches)", lambda: block_on(reductions())),
        ("100 ops NumPy (host)", numpy_ops),
    ):
        t = wall(fn, repeat=15, warm=2)
        record("small_ops", label, us_per_op=t / 100 * 1e6)
        out.append((label + ", 1K elements", f"{t / 100 * 1e6:.1f} us/op", f"{t * 1e3:.2f} ms/batch", "", ""))
    import chain as ch

    raw = ch.RawWgpu(kernel="relu")
    t = ch.timed(
        {"ours": lambda: block_on(dev.relu(x)), "cached": lambda: raw.run_cached(x), "fresh": lambda: raw.run(x)},
        100,
        warm=10,
    )  # ms, the three taking turns
    record(
        "small_ops",
        "one-shot relu 1K",
        us=t["ours"] * 1e3,
        raw_cached_us=t["cached"] * 1e3,
        raw_fresh_us=t["fresh"] * 1e3,
    )
    out.append(
        (
            "one-shot relu, 1K elements",
            f"{t['ours'] * 1e3:.0f} us/call",
            f"raw wgpu-py {t['cached'] * 1e3:.0f} us cached / {t['fresh'] * 1e3:.0f} us fresh",
            f"ours/raw {t['ours'] / t['cached']:.2f} / {t['ours'] / t['fresh']:.2f}",
            "",
        )
    )


WARMUP = 5  # untimed one-shot calls per device and cell of the crossover grid (Tuning.upload_depth + 1)


def section_crossover(dev, out, max_log2=24):
    """One-shot calls (upload, run, read) on webgpu and on NumPy by size: where the GPU starts to pay.
    The data for `auto`'s per-op thresholds. The three devices take turns (bench/auto.py's `timed`), so a
    burst of load on the shared host slows them alike, after WARMUP untimed calls each: a device's first
    uploads past direct_write_max make its staging ring (upload_depth new buffers, 12-20 ms calls on the H100)."""
    from auto import timed

    cpu = block_on(tw.GpuDevice.create("numpy"))
    auto = block_on(tw.GpuDevice.create("auto"))
    devices = {"webgpu": dev, "numpy": cpu, "auto": auto}
    rng = np.random.default_rng(4)
    cases = [
        ("relu", lambda n: (rng.standard_normal(n, dtype=np.float32),)),
        ("add", lambda n: (rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32))),
        ("gelu", lambda n: (rng.standard_normal(n, dtype=np.float32),)),
        ("sum", lambda n: (rng.standard_normal(n, dtype=np.float32),)),
        ("softmax", lambda n: (rng.standard_normal((max(n // 1024, 1), min(n, 1024)), dtype=np.float32),)),
    ]
    sizes = [p for p in (10, 14, 16, 18, 20, 22, 24) if p <= max_log2]
    header = ("op", *[f"2^{p}" for p in sizes])
    rows = []
    for name, make in cases:
        cells = []
        for p in sizes:
            args = make(1 << p)
            ms = timed(devices, lambda d: getattr(d, name)(*args), repeat=9 if p <= 20 else 5, warmup=WARMUP)
            tg, tc, ta = (ms[k] / 1e3 for k in devices)
            record("crossover", f"{name} 2^{p}", webgpu_ms=tg * 1e3, numpy_ms=tc * 1e3, auto_ms=ta * 1e3)
            AUTO.append(ta / min(tg, tc))
            cells.append(f"{tg * 1e3:.2f} / {tc * 1e3:.2f} / {ta * 1e3:.2f}")
        rows.append((name, *cells))
    cells = []
    for m in (64, 128, 256, 512, 1024, 2048):
        a = rng.standard_normal((m, m), dtype=np.float32)
        ms = timed(devices, lambda d: d.matmul(a, a), repeat=9 if m <= 512 else 5, warmup=WARMUP)
        tg, tc, ta = (ms[k] / 1e3 for k in devices)
        record("crossover", f"matmul {m}", webgpu_ms=tg * 1e3, numpy_ms=tc * 1e3, auto_ms=ta * 1e3)
        AUTO.append(ta / min(tg, tc))
        cells.append(f"{m}: {tg * 1e3:.2f} / {tc * 1e3:.2f} / {ta * 1e3:.2f}")
    cpu.close()
    auto.close()
    EXTRA.append("")
    EXTRA.append(
        f"One-shot calls, ms (webgpu / numpy / auto [{auto.backend}]), by element count; auto vs the faster "
        f"of the two: worst {max(AUTO):.2f}x, median {median(AUTO):.2f}x:"
    )
    EXTRA.append("")
    EXTRA.append("| " + " | ".join(header) + " |")
    EXTRA.append("|" + "---|" * len(header))
    for r in rows:
        EXTRA.append("| " + " | ".join(r) + " |")
    EXTRA.append("")
    EXTRA.append("matmul n x n x n, one-shot ms (webgpu / numpy / auto): " + ", ".join(cells))


def latency_probe(dev) -> str:
    """One-shot relu of 1K elements, median us (a health check printed between sections)."""
    x = np.ones(1024, np.float32)
    ts = []
    for _ in range(9):
        t = time.perf_counter()
        block_on(dev.relu(x))
        ts.append(time.perf_counter() - t)
    return f"one-shot probe {median(ts) * 1e6:.0f} us"


def targets() -> list[str]:
    """The targets table from this run's figures: each figure, its target, and whether it holds here."""
    r = lambda section, name: RESULTS.get(section, {}).get(name)  # noqa: E731
    rows = []
    ceil = r("ceilings", "torch") or {}

    def row(what, now, target, ok):
        rows.append(f"| {what} | {now} | {target} | {'' if ok is None else 'yes' if ok else 'no'} |")

    mm = RESULTS.get("matmul", {})
    for shape, cublas, want in (
        ("4096x4096x4096", ceil.get("sgemm_tflops"), 0.75),
        ("1024x1024x1024", None, 0.65),
        ("1000x999x1001", None, 0.65),
    ):
        ours = next((v["tflops"] for k, v in mm.items() if k.startswith(shape + "_auto=")), None)
        ref = (mm.get(f"torch_{shape}") or {}).get("tflops") or cublas
        if ours and ref:
            row(
                f"matmul {shape} vs cuBLAS",
                f"{ours:.1f} / {ref:.1f} TFLOPS = {100 * ours / ref:.0f}%",
                f">= {want:.0%}",
                ours / ref >= want,
            )
    copy = ceil.get("copy_bw")
    for name, want in (("softmax_1x" + str(1 << 24), 0.80), ("max_sg0_p1024", 0.85), ("max_sg1_p1024", 0.85)):
        fig = r("resident", name)
        if fig and copy:
            row(
                name.replace("_", " "),
                f"{100 * fig['bw'] / copy:.0f}% of copy",
                f">= {want:.0%}",
                fig["bw"] / copy >= want,
            )
    fused, unfused = (
        r("small_ops", "100 ops, one batch, fused (1 dispatch)"),
        r("small_ops", "100 ops, one batch, unfused (100 dispatches)"),
    )
    if fused and unfused:
        f, u = fused["us_per_op"], unfused["us_per_op"]
        row(
            "100 ops fused, 1K elements",
            f"{f:.1f} us/op (unfused {u:.1f})",
            "< unfused, <= 20 us/op",
            f < u and f <= 20,
        )
    one = r("small_ops", "one-shot relu 1K")
    if one:
        ratio = one["us"] / one["raw_cached_us"]
        row(
            "one-shot relu 1K vs raw wgpu-py (cached)",
            f"{one['us']:.0f} / {one['raw_cached_us']:.0f} us = {ratio:.2f}",
            "<= 1.20",
            ratio <= 1.20,
        )
    e2e = r("end_to_end", "2^20")
    if e2e:
        ratio = e2e["fused"] / e2e["raw"]
        row("fused 3-op batch 2^20 vs raw wgpu-py", f"{ratio:.2f}", "<= 1.05", ratio <= 1.05)
    if AUTO:
        row(
            "auto vs the faster single backend (crossover grid)",
            f"worst {max(AUTO):.2f}x",
            "<= 1.10",
            max(AUTO) <= 1.10,
        )
    if not rows:
        return []
    return ["", "Targets (this run):", "", "| figure | now | target | met |", "|---|---|---|---|", *rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--explore", action="store_true", help="also the tuning sweeps")
    parser.add_argument("--json", help="write every figure here as JSON")
    parser.add_argument("--log2n", type=int, default=24, help="log2 of the element count for the memory-bound rows")
    parser.add_argument(
        "--matmul",
        default="4096x4096x4096,4095x4093x4097,2048x2048x2048,1024x1024x1024,1000x999x1001",
        help="MxKxN shapes; the first gets the tiling sweep with --explore",
    )
    parser.add_argument("--map-wait", choices=("await", "sync", "poll"), help="the driver's map wait mode")
    parser.add_argument("--no-torch", action="store_true", help="leave PyTorch out (no CUDA context in this process)")
    parser.add_argument("--skip", default="", help="comma list of sections to skip: resident,matmul,e2e,small")
    args = parser.parse_args()
    skip = set(args.skip.split(","))
    n = 1 << args.log2n
    dev = webgpu(TimedDriver, HoldingExecutor)
    res = Resident(dev)
    if args.map_wait:
        res.drv.retune(map_wait=args.map_wait)
    torch = None if args.no_torch else torch_cuda()
    info = dev.adapter_info
    head = {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "adapter": f"{info.get('device')} ({info.get('backend_type')}, {info.get('description')})",
        "host": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, NumPy {np.__version__}",
        "caps": repr(dev.executor.caps),
        "command": "python " + " ".join(sys.argv),
    }
    RESULTS["head"] = head
    for k, v in head.items():
        print(f"# {k}: {v}")
    out: list[tuple] = []
    t0 = time.perf_counter()
    ceil = section_ceilings(torch, n, out) if torch else {}
    if torch is None:
        out.append(("ceilings", "PyTorch with CUDA not importable: no cuBLAS/copy references", "", "", ""))
    print(f"# ceilings done {time.perf_counter() - t0:.0f}s; {latency_probe(dev)}", flush=True)
    if "resident" not in skip:
        with res.ex.holding():
            section_resident(dev, res, n, args.explore, ceil, torch, out)
        print(f"# resident done {time.perf_counter() - t0:.0f}s; {latency_probe(dev)}", flush=True)
    if "matmul" not in skip:
        shapes = [tuple(int(v) for v in s.split("x")) for s in args.matmul.split(",")]
        with res.ex.holding():
            section_matmul(dev, res, args.explore, ceil, torch, out, shapes)
        print(f"# matmul done {time.perf_counter() - t0:.0f}s; {latency_probe(dev)}", flush=True)
    if "small" not in skip:
        section_small_ops(dev, out)
        print(f"# small ops done {time.perf_counter() - t0:.0f}s; {latency_probe(dev)}", flush=True)
    if "crossover" not in skip:
        section_crossover(dev, out, args.log2n)
        print(f"# crossover done {time.perf_counter() - t0:.0f}s; {latency_probe(dev)}", flush=True)
    if "e2e" not in skip:
        section_end_to_end(dev, (20, args.log2n), out, args.explore)
        print(f"# end to end done {time.perf_counter() - t0:.0f}s; {latency_probe(dev)}", flush=True)
    print()
    print("| what | figure | | | |")
    print("|---|---|---|---|---|")
    for row in out:
        print("| " + " | ".join(str(c) for c in row) + " |")
    for line in EXTRA + targets():
        print(line)
    if args.json:
        Path(args.json).write_text(json.dumps(RESULTS, indent=1, default=str))


if __name__ == "__main__":
    main()
