#!/usr/bin/env python3
"""Where the transformer block's time goes in the browser: each of our dispatches timed alone in the page.

    .venv/bin/python bench/browser_dispatches.py [--sizes 64x128x2] [--repeat 5]

In one page of headless Chromium (WebGPU on SwiftShader here), the block of bench/browser_transformer.py (the same
weights and x) runs once through `tw.realize`; its dispatches are caught as they go to the driver (Driver.submit
and Driver.queue), labelled by the plan step that made them (kernels.dispatches wrapped, as bench/transformer.py's
Labels do on the desktop), then each is submitted alone 1 and 11 times, each time waited for (`synchronize`): its
time is the slope, (t11 - t1) / 10, the best of --repeat; "all" is the whole list in one submit. SwiftShader has no
timestamp queries, so these are wall-clock figures on a shared CPU: compare within one run. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import browser_transformer as bt  # noqa: E402

TIME = r"""
import time
from trueno_web import kernels
from trueno_web.graph import MapStep, OpStep, ReduceStep

def label(step, nodes):
    if isinstance(step, OpStep):
        node = nodes[step.node]
        return f"{node.op.name} {'x'.join(map(str, node.shape))}"
    names = "+".join(dict.fromkeys(nodes[i].op.name for i in step.nodes if nodes[i].op is not None))
    return ("map " if isinstance(step, MapStep) else "reduce " if isinstance(step, ReduceStep) else "row ") + names

dev = DEVICES["webgpu"]
drv = dev.executor.driver
block = await TransformerBlock.create(dev, WEIGHTS, n_heads=HEADS, eps=E2E_ARGS["eps"])
xt = tw.asarray(await dev.upload(X, XSHAPE))
for _ in range(2):
    await tw.realize(block(xt))
await drv.synchronize()
dev.executor.forget()  # the block's dispatches built again below, where they are labelled
labels, work = [], []
inner, submit, queue = kernels.dispatches, drv.submit, drv.queue

def labelled(step, nodes, caps):
    out = inner(step, nodes, caps)
    labels.extend([label(step, nodes)] * len(out))
    return out

kernels.dispatches = labelled
drv.submit = lambda items: (work.extend(items), submit(items))[1]
drv.queue = lambda items: (work.extend(items), queue(items))[1]
try:
    await tw.realize(block(xt))
    await drv.synchronize()
finally:
    kernels.dispatches, drv.submit, drv.queue = inner, submit, queue

async def best(items):
    times = []
    for _ in range(E2E_ARGS["repeat"]):
        t = time.perf_counter()
        submit(items)
        await drv.synchronize()
        times.append(time.perf_counter() - t)
    return min(times) * 1e3

rows = []
for item, name in zip(work, labels):
    one, eleven = await best([item]), await best([item] * 11)
    rows.append((name, f"{item[2][0]}x{item[2][1]}", (eleven - one) / 10))
rows.append(("all, one submit", "", await best(work)))
rows
"""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="64x128x2", help="SEQxD_MODELxHEADS, comma separated")
    ap.add_argument("--repeat", type=int, default=5, help="timings per figure (the best is kept)")
    args = ap.parse_args(argv)
    from browser import ensure_assets
    from playwright.sync_api import sync_playwright

    ensure_assets()
    bt.ensure_peers()
    with bt.AssetServer(routes=dict(bt.ROUTES)) as server, sync_playwright() as pw:
        browser = bt.launch_chromium(pw, webgpu=True)
        try:
            page = bt.PyodidePage(browser, server, echo_output=False)
            setup = bt.setup_page(page, wasm=False)
            print(f"# adapter: {setup['adapter']}")
            for spec in args.sizes.split(","):
                seq, d_model, heads = (int(v) for v in spec.split("x"))
                _, blob = bt.block_data(seq, d_model, heads)
                route = f"/bench/block-{seq}x{d_model}x{heads}.safetensors"
                server.add_route(route, "application/octet-stream", blob)
                page.run(bt.LOAD, args={"data_url": route}, timeout_s=120)
                rows = page.run(TIME, args={"eps": bt.EPS, "repeat": args.repeat}, timeout_s=600)
                print(f"\n## seq {seq}, d_model {d_model}, {heads} heads: {len(rows) - 1} dispatches\n")
                print("| dispatch | grid | ms |\n|---|---|---|")
                for name, grid, ms in rows:
                    print(f"| {name} | {grid} | {ms:.2f} |")
        finally:
            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
