"""Benchmark: the pre-norm transformer block (trueno_web.models.TransformerBlock) on our webgpu backend
vs NumPy on the host vs PyTorch on CUDA (where torch with CUDA imports: the ceiling, float32 with TF32
off, as bench/grid.py measures cuBLAS).

    python bench/transformer.py                         # seq 128 / d_model 256 / 4 heads, and 1024 / 1024 / 16
    python bench/transformer.py --sizes 128x256x4 --repeat 5

Per size, ms per forward pass (weights resident, seeded):
  ours end to end    wall-clock median of `await block(x).numpy()`: x resident, the result read back
  ours resident      wall-clock median of `await tw.realize(block(x))`: build the expression, plan, submit,
                     wait; the result stays on the GPU (what torch's figure counts); "host" below is this
                     minus the GPU time (Python: the expression, the plan, kernel sources, binding, submit)
  ours GPU           the same dispatches recorded again on the same buffers and timed by GPU timestamps
                     (bench/grid.py's Resident: the host's work falls out), and per dispatch, by kind
  numpy              the same block in float32 NumPy on the host
  torch              the same block in torch (F.layer_norm, addmm, F.scaled_dot_product_attention with
                     is_causal, gelu tanh), CUDA-event median, and its six matmuls alone
Each result is checked against a float64 NumPy forward pass first (max |err| / max |ref|).
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import platform
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from devices import HoldingExecutor, TimedDriver, webgpu
from grid import Resident, cuda_time, median, torch_cuda, wall

import trueno_web as tw
from trueno_web import kernels
from trueno_web.backends import gpu as gpu_backend
from trueno_web.graph import MapStep, OpStep, ReduceStep
from trueno_web.models import TransformerBlock
from trueno_web.runtime import block_on


def weights_for(d_model: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        k: (
            rng.standard_normal(s) / math.sqrt(s[0])
            if len(s) == 2
            else float(k.endswith("_w")) + rng.standard_normal(s) * 0.1
        ).astype(np.float32)
        for k, s in TransformerBlock.shapes(d_model).items()
    }


def numpy_block(w: dict, x: np.ndarray, heads: int, eps: float = 1e-5) -> np.ndarray:
    """The block in NumPy, in the dtype of its inputs (float32 for timing, float64 for the reference)."""

    def ln(t, g, b):
        mu = t.mean(-1, keepdims=True)
        c = t - mu
        return c / np.sqrt((c * c).mean(-1, keepdims=True) + eps) * g + b

    n, d = x.shape
    qkv = (
        (ln(x, w["ln1_w"], w["ln1_b"]) @ w["w_qkv"] + w["b_qkv"]).reshape(n, 3, heads, d // heads).transpose(1, 2, 0, 3)
    )
    q, k, v = qkv
    s = q @ k.transpose(0, 2, 1) * x.dtype.type(1 / math.sqrt(d // heads))
    s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    att = (p / p.sum(-1, keepdims=True)) @ v
    h = x + att.transpose(1, 0, 2).reshape(n, d) @ w["w_o"] + w["b_o"]
    z = ln(h, w["ln2_w"], w["ln2_b"]) @ w["w_fc"] + w["b_fc"]
    z = 0.5 * z * (1 + np.tanh(x.dtype.type(math.sqrt(2 / math.pi)) * (z + x.dtype.type(0.044715) * z**3)))
    return h + z @ w["w_proj"] + w["b_proj"]


def torch_block(torch, w: dict, heads: int, eps: float = 1e-5):
    F = torch.nn.functional

    def forward(x):
        n, d = x.shape
        a = F.layer_norm(x, (d,), w["ln1_w"], w["ln1_b"], eps)
        q, k, v = torch.addmm(w["b_qkv"], a, w["w_qkv"]).view(n, 3, heads, d // heads).permute(1, 2, 0, 3)
        att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        h = x + torch.addmm(w["b_o"], att.transpose(0, 1).reshape(n, d), w["w_o"])
        z = F.gelu(
            torch.addmm(w["b_fc"], F.layer_norm(h, (d,), w["ln2_w"], w["ln2_b"], eps), w["w_fc"]), approximate="tanh"
        )
        return h + torch.addmm(w["b_proj"], z, w["w_proj"])

    return forward


def rel_err(got, ref) -> float:
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    return float(np.abs(got - ref).max() / np.abs(ref).max())


class Labels:
    """Wraps kernels.dispatches while on: one label per dispatch (the step's kind and ops), in submit order."""

    def __init__(self):
        self.on, self.labels, self._inner = False, [], kernels.dispatches

        def dispatches(step, nodes, caps):
            out = self._inner(step, nodes, caps)
            if self.on:
                self.labels.extend([label(step, nodes)] * len(out))
            return out

        kernels.dispatches = dispatches


def label(step, nodes) -> str:
    if isinstance(step, OpStep):
        node = nodes[step.node]
        return f"{node.op.name} {'x'.join(map(str, node.shape))}"
    names = [nodes[i].op.name for i in step.nodes if nodes[i].op is not None]
    kind = "map " if isinstance(step, MapStep) else "reduce " if isinstance(step, ReduceStep) else "row "
    return kind + "+".join(dict.fromkeys(names))


def kind_of(lbl: str) -> str:
    if lbl.startswith("matmul"):
        return "matmul"
    if lbl.startswith("map copy"):
        return "copy"
    return lbl.split()[0]


def bench_size(dev, res: Resident, labels: Labels, torch, seq: int, d_model: int, heads: int, repeat: int) -> dict:
    w = weights_for(d_model)
    x = np.random.default_rng(1).standard_normal((seq, d_model)).astype(np.float32)
    ref = numpy_block({k: v.astype(np.float64) for k, v in w.items()}, x.astype(np.float64), heads)
    out: dict = {"size": f"seq {seq}, d_model {d_model}, {heads} heads"}

    block = block_on(TransformerBlock.create(dev, w, n_heads=heads))
    xt = dev.tensor(block_on(dev.upload(x)))
    got = block_on(block(xt).numpy())
    out["ours err"] = rel_err(got, ref)
    before = dev.stats.dispatches
    out["ours e2e"] = wall(lambda: block_on(block(xt).numpy()), repeat, warm=2)
    out["dispatches"] = (dev.stats.dispatches - before) // (repeat + 2)
    out["ours resident"] = wall(lambda: block_on(tw.realize(block(xt))), repeat, warm=2)
    out["build"] = wall(lambda: block(xt), repeat, warm=2)  # the expression alone (Python, no batch)
    # the held dispatches run again on the buffers they bound: the pool must not destroy the intermediates
    # it is given back at the end of the execute (it keeps 256 MB idle at most; the large size needs more)
    pool_bytes, gpu_backend.POOL_BYTES = gpu_backend.POOL_BYTES, 8 << 30
    with res.ex.holding():
        labels.on, labels.labels = True, []
        y = block(xt)
        block_on(tw.realize(y))
        labels.on = False
        work = list(res.ex.held)
        kinds = defaultdict(float)
        per = []
        if "timestamp-query" in res.drv.features:
            reps = 20
            for item, lbl in zip(work, labels.labels):
                s = median([res.gpu_ns([item], reps) for _ in range(3)]) / reps / 1e9
                per.append((lbl, s))
                kinds[kind_of(lbl)] += s
        out["ours GPU"] = res.time(reps=20)
    del y
    gpu_backend.POOL_BYTES = pool_bytes
    out["per dispatch"], out["by kind"] = per, dict(kinds)

    out["numpy"] = wall(lambda: numpy_block(w, x, heads), max(3, repeat // 2), warm=1)
    out["numpy err"] = rel_err(numpy_block(w, x, heads), ref)
    if torch is not None:
        tw_ = {k: torch.from_numpy(v).cuda() for k, v in w.items()}
        fwd, xc = torch_block(torch, tw_, heads), torch.from_numpy(x).cuda()
        with torch.no_grad():
            out["torch err"] = rel_err(fwd(xc).cpu().numpy(), ref)
            out["torch"] = cuda_time(torch, lambda: fwd(xc), reps=20)
            a = torch.randn(seq, d_model, device="cuda")
            f = torch.randn(seq, 4 * d_model, device="cuda")
            s = torch.randn(heads, seq, seq, device="cuda")
            qh = torch.randn(heads, seq, d_model // heads, device="cuda")

            def matmuls():
                a @ tw_["w_qkv"], qh @ qh.transpose(1, 2), s @ qh, a @ tw_["w_o"], a @ tw_["w_fc"], f @ tw_["w_proj"]

            out["torch matmuls"] = cuda_time(torch, matmuls, reps=20)
    return out


def profile(dev, seq: int, d_model: int, heads: int) -> None:
    """Where the host's time goes in a forward pass: cProfile of 20 `tw.realize(block(x))`, by own time."""
    import cProfile
    import pstats

    block = block_on(TransformerBlock.create(dev, weights_for(d_model), n_heads=heads))
    xt = dev.tensor(block_on(dev.upload(np.zeros((seq, d_model), np.float32))))
    for _ in range(3):
        block_on(tw.realize(block(xt)))
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(20):
        block_on(tw.realize(block(xt)))
    prof.disable()
    print(f"\n### cProfile, 20 forward passes, seq {seq} d_model {d_model}")
    pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    pstats.Stats(prof).sort_stats("cumtime").print_stats(25)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="128x256x4,1024x1024x16", help="SEQxD_MODELxHEADS, comma separated")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--profile", action="store_true", help="also cProfile 20 forward passes (realize) per size")
    args = parser.parse_args()
    dev = webgpu(TimedDriver, HoldingExecutor)
    res, labels = Resident(dev), Labels()
    torch = None if args.no_torch else torch_cuda()
    info = dev.adapter_info
    print(f"# date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M UTC}")
    print(f"# adapter: {info.get('device')} ({info.get('backend_type')}, {info.get('description')})")
    print(
        f"# host: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, NumPy {np.__version__}"
        + (f", torch {torch.__version__} on {torch.cuda.get_device_name()}" if torch else ", no torch with CUDA")
    )
    print(f"# command: python {' '.join(sys.argv)}", flush=True)
    rows = []
    for spec in args.sizes.split(","):
        seq, d_model, heads = (int(v) for v in spec.split("x"))
        r = bench_size(dev, res, labels, torch, seq, d_model, heads, args.repeat)
        if args.profile:
            profile(dev, seq, d_model, heads)
        rows.append(r)
        print(
            f"\n## {r['size']}: {r['dispatches']} dispatches; max|err|/max|ref| vs float64: ours {r['ours err']:.1e}, "
            f"numpy {r['numpy err']:.1e}"
            + (f", torch {r['torch err']:.1e}" if "torch" in r else "")
            + f"; host: the expression {r['build'] * 1e3:.2f} ms, resident - GPU {(r['ours resident'] - r['ours GPU']) * 1e3:.2f} ms"
        )
        if r["per dispatch"]:
            print("| dispatch | GPU ms |\n|---|---|")
            for lbl, s in r["per dispatch"]:
                print(f"| {lbl} | {s * 1e3:.3f} |")
            print(
                "by kind: "
                + ", ".join(f"{k} {v * 1e3:.3f} ms" for k, v in sorted(r["by kind"].items(), key=lambda kv: -kv[1]))
                + (f"; torch's six matmuls alone {r['torch matmuls'] * 1e3:.3f} ms" if "torch" in r else ""),
                flush=True,
            )
    print(
        "\n| size | ours end to end | ours resident | ours GPU | NumPy (host) | torch CUDA | resident / torch | GPU / torch | NumPy / resident |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        t = r.get("torch")
        ratio = (lambda a: f"{a / t:.2f}x") if t else (lambda a: "n/a")
        print(
            f"| {r['size']} | {r['ours e2e'] * 1e3:.3f} | {r['ours resident'] * 1e3:.3f} | {r['ours GPU'] * 1e3:.3f} | "
            f"{r['numpy'] * 1e3:.3f} | {t * 1e3 if t else float('nan'):.3f} | {ratio(r['ours resident'])} | "
            f"{ratio(r['ours GPU'])} | {r['numpy'] / r['ours resident']:.2f}x |"
        )


if __name__ == "__main__":
    main()
