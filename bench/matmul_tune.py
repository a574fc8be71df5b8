"""Matmul tuning: every tiling, split of K and tile order on the shapes of interest, in one process, GPU-timed
on resident buffers (bench/grid.py's Resident), against cuBLAS SGEMM with TF32 off where PyTorch has CUDA.

    python bench/matmul_tune.py                      # the sweep; markdown tables on stdout
    python bench/matmul_tune.py --json tune.json     # also every figure (and the fastest choices) as JSON
    python bench/matmul_tune.py --scalar --json s.json  # the same with scalar loads and stores on every shape
    python bench/matmul_tune.py --scalar-loads --json l.json  # scalar loads, vec4 stores
    python bench/matmul_tune.py --write tune.json s.json l.json  # no GPU: the fastest choice per shape of those
                                                                 # runs -> matmul_tuned.py

Each candidate's result is checked first (max |err| / (|A| @ |B|) in float64) and left out above 1e-5.
"auto" is what the library picks on this adapter now (its table, else the rule of kernels/matmul.py); the fastest
row of a shape, auto or not, is its choice for --write.
"""

from __future__ import annotations

import argparse
import datetime
import functools
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from devices import HoldingExecutor, TimedDriver, webgpu
from grid import Resident, cuda_time, torch_cuda

from trueno_web.kernels import matmul
from trueno_web.kernels.matmul_direct import TILE, direct_fits
from trueno_web.runtime import block_on

# (batch, m, k, n): the target squares and odd shape, the transformer block's six (seq 1024, d_model 1024,
# 16 heads: qkv, scores, probabilities @ v, output projection, fc, proj) and its small size's last projection
SHAPES = (
    "1x4096x4096x4096,1x4095x4093x4097,1x1024x1024x1024,1x1000x999x1001,"
    "1x1024x1024x3072,16x1024x64x1024,16x1024x1024x64,"
    "1x1024x4096x1024,1x1024x1024x4096,1x128x1024x256"
)
SPLITS = (1, 2, 3, 4, 6, 8, 12, 16, 24)
TABLE = Path(__file__).resolve().parent.parent / "trueno_web" / "kernels" / "matmul_tuned.py"


def candidates(batch, m, k, n, caps):
    """(tiling, splits, group) to time: every tiling that fits, split while the grid is under ~4 waves of
    132 SMs and each split keeps 4 slices of K; groups of 4, 8, 16 rows of tiles where there are 16 rows or more."""
    out = []
    for name, cfg in matmul.CONFIGS.items():
        if cfg.storage(False) > caps.wg_storage:
            continue
        groups = -(-m // cfg.bm) * -(-n // cfg.bn) * batch
        slices = -(-k // cfg.bk)
        for s in SPLITS:
            if s == 1 or (groups * s <= 4 * 132 and slices >= 4 * s):
                out.append((name, s, 1))
        if -(-m // cfg.bm) >= 16:
            out += [(name, 1, g) for g in (4, 8, 16)]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shapes", default=SHAPES, help="comma list of BATCHxMxKxN")
    parser.add_argument("--auto", default="", help="comma list of more shapes, timed with the library's pick only")
    parser.add_argument(
        "--top",
        nargs=2,
        metavar=("N", "JSON"),
        help="time only the N fastest choices per shape of that earlier run (and the library's pick)",
    )
    parser.add_argument("--also", default="", help="comma list of TILING:SPLITS:GROUP timed on every shape too")
    parser.add_argument(
        "--scalar",
        action="store_true",
        help="scalar loads and stores on every shape (Caps.matmul_vec and matmul_vec_c off; odd shapes load so)",
    )
    parser.add_argument("--scalar-loads", action="store_true", help="scalar loads, vec4 stores where rows allow")
    parser.add_argument("--json", help="write every figure here")
    parser.add_argument(
        "--write",
        metavar="JSON",
        nargs="+",
        help="write the fastest choice per shape of those runs' "
        "JSON into trueno_web/kernels/matmul_tuned.py (merged with the adapters and shapes already there), then exit",
    )
    args = parser.parse_args()
    if args.write:
        return write_table([json.loads(Path(p).read_text()) for p in args.write])
    dev = webgpu(TimedDriver, HoldingExecutor)
    res, caps = Resident(dev), dev.executor.caps
    widths = (not (args.scalar or args.scalar_loads), not args.scalar)  # forced on the candidates, not on auto
    torch = torch_cuda()
    head = {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "adapter": caps.adapter,
        "caps": repr(caps),
        "command": "python " + " ".join(sys.argv),
    }
    for key, value in head.items():
        print(f"# {key}: {value}", flush=True)
    results = {"head": head, "shapes": {}}
    summary = []
    rng = np.random.default_rng(1)
    earlier = json.loads(Path(args.top[1]).read_text())["shapes"] if args.top else {}
    for shape in [s for s in (args.shapes + "," + args.auto).split(",") if s]:
        batch, m, k, n = (int(v) for v in shape.split("x"))
        lead = (batch,) if batch > 1 else ()
        a = rng.standard_normal(lead + (m, k), dtype=np.float32)
        b = rng.standard_normal(lead + (k, n), dtype=np.float32)
        ref, mag, t_cublas = reference(torch, a, b)
        flop = 2.0 * batch * m * k * n
        rows = []
        cands = candidates(batch, m, k, n, caps) if shape not in args.auto.split(",") else []
        if shape in earlier:
            ranked = sorted(
                (r for r in earlier[shape]["rows"] if r["ms"] == r["ms"] and r["choice"]), key=lambda r: r["ms"]
            )
            cands = [tuple(r["choice"]) for r in ranked[: int(args.top[0])]]
        cands += [tuple(int(v) if v.isdigit() else v for v in c.split(":")) for c in args.also.split(",") if c]
        for cand in [None, *cands]:
            name, splits, group = (cand or ("", 0, 0))[:3]
            caps.matmul, caps.matmul_splits, caps.matmul_group = name, splits, group
            caps.matmul_vec, caps.matmul_vec_c = widths if cand else (None, None)
            picked = matmul.matmul_config(m, k, n, caps, batch)
            key = next(key for key, cfg in matmul.CONFIGS.items() if cfg == picked.cfg)
            width = {(True, True): "", (False, False): " scalar", (False, True): " scalar loads"}.get(
                (picked.vec, picked.vec_c), " scalar stores"
            )
            label = f"{key} s{picked.splits} g{picked.group}{width}"
            direct = direct_fits(k, int(batch > 1), caps)  # a software adapter's pick (never forced)
            if direct:
                label = f"direct {TILE.tm}x{TILE.tn} per thread, {TILE.tx}x{TILE.ty} threads"
            if cand and picked.splits != splits:
                continue  # clamped to another candidate
            with res.ex.holding():
                bt = dev.batch()
                r = bt.matmul(bt.upload(a), bt.upload(b))
                block_on(bt.execute())
                got = block_on(bt.read(r))
                err = float(np.max(np.abs(got - ref) / np.maximum(mag, 1e-30)))
                t = res.time(reps=10 if flop > 1e11 else 30) if err <= 1e-5 else float("nan")
                bt.release()
            rows.append(
                {
                    "label": ("auto " if cand is None else "") + label,
                    "choice": None if direct else [key, picked.splits, picked.group, picked.vec, picked.vec_c],
                    "ms": t * 1e3,
                    "tflops": flop / t / 1e12,
                    "err": err,
                }
            )
        caps.matmul, caps.matmul_splits, caps.matmul_group = "", 0, 0
        caps.matmul_vec, caps.matmul_vec_c = None, None
        cub = flop / t_cublas / 1e12 if t_cublas else None
        print(f"\n### {shape} (cuBLAS: {f'{t_cublas * 1e3:.3f} ms, {cub:.1f} TFLOPS' if cub else 'n/a'})\n")
        print("| choice | ms | TFLOPS | of cuBLAS | err |\n|---|---|---|---|---|")
        timed = sorted((r for r in rows if r["ms"] == r["ms"]), key=lambda r: r["ms"])
        for row in timed + [r for r in rows if r["ms"] != r["ms"]]:
            pct = f"{100 * row['tflops'] / cub:.0f}%" if cub else ""
            print(f"| {row['label']} | {row['ms']:.4f} | {row['tflops']:.1f} | {pct} | {row['err']:.1e} |", flush=True)
        best = timed[0]
        auto = rows[0]
        results["shapes"][shape] = {"cublas_ms": t_cublas and t_cublas * 1e3, "rows": rows, "best": best["choice"]}
        summary.append((shape, auto, best, cub))
    print("\n| shape | auto | auto TFLOPS | best | best TFLOPS | cuBLAS TFLOPS | auto / cuBLAS | best / cuBLAS |")
    print("|---|---|---|---|---|---|---|---|")
    for shape, auto, best, cub in summary:
        pct = (lambda r: f"{100 * r['tflops'] / cub:.0f}%") if cub else (lambda r: "")
        print(
            f"| {shape} | {auto['label'][5:]} | {auto['tflops']:.1f} | {best['label']} | {best['tflops']:.1f} | "
            f"{cub or float('nan'):.1f} | {pct(auto)} | {pct(best)} |"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


def reference(torch, a, b):
    """a @ b and |a| @ |b| in float64, and cuBLAS's seconds per float32 product (None without CUDA)."""
    if torch is None:
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        return a64 @ b64, np.abs(a64) @ np.abs(b64), None
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    t = cuda_time(torch, functools.partial(torch.matmul, ta, tb), reps=20)
    da, db = ta.double(), tb.double()
    ref, mag = (da @ db).cpu().numpy(), (da.abs() @ db.abs()).cpu().numpy()
    del ta, tb, da, db
    return ref, mag, t


def write_table(runs: list[dict]) -> None:
    """The fastest choice per shape over runs on one adapter, under its name, into matmul_tuned.TUNED (its
    shapes not in these runs keep their choices)."""
    from trueno_web.kernels.matmul_tuned import TUNED

    adapter = runs[0]["head"]["adapter"]
    if any(r["head"]["adapter"] != adapter for r in runs):
        raise SystemExit("--write: the runs come from different adapters")
    best: dict = {}
    for shape, entry in ((s, e) for r in runs for s, e in r["shapes"].items()):
        row = min((r for r in entry["rows"] if r["ms"] == r["ms"] and r["choice"]), key=lambda r: r["ms"])
        if shape not in best or row["ms"] < best[shape]["ms"]:
            best[shape] = row
    table = {shape: tuple(row["choice"]) for shape, row in best.items()}
    tuned = {**TUNED, adapter: {**TUNED.get(adapter, {}), **table}}
    text = TABLE.read_text()
    start = text.index("TUNED: dict")
    end = text.index("\n\n\n", start)
    lines = ["TUNED: dict[str, dict[str, tuple[str, int, int, bool, bool]]] = {"]
    for name in sorted(tuned):
        lines.append(f'    "{name}": {{')
        for shape, choice in sorted(tuned[name].items()):
            fields = ", ".join(f'"{v}"' if isinstance(v, str) else repr(v) for v in choice)
            lines.append(f'        "{shape}": ({fields}),')
        lines.append("    },")
    TABLE.write_text(text[:start] + "\n".join(lines) + "\n}" + text[end:])
    print(f"{TABLE}: {len(table)} choices for {adapter!r}")


if __name__ == "__main__":
    main()
