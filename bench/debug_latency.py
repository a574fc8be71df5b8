"""Diagnostic: one-shot latency between large transfers, RawWgpu devices and map-wait modes (docs/benchmarks.md, the slow state)."""

import gc
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import chain as ch
import grid
import numpy as np

import trueno_web as tw
from trueno_web.runtime import block_on

dev = block_on(tw.GpuDevice.create("webgpu"))
drv = dev.executor.driver
x1k = np.random.rand(1024).astype(np.float32)


def probe(label):
    ts = []
    for _ in range(9):
        t = time.perf_counter()
        block_on(dev.relu(x1k))
        ts.append(time.perf_counter() - t)
    import threading

    print(
        f"{label}: one-shot relu 1K {sorted(ts)[4] * 1e6:.0f} us; threads {threading.active_count()}; tokens {len(drv.device._poller._token_ids)}",
        flush=True,
    )


drv.retune(map_wait=os.environ.get("MAP_WAIT", drv.tuning.map_wait), eager_remap=os.environ.get("EAGER", "0") == "1")
print("map_wait", drv.tuning.map_wait, "eager_remap", drv.tuning.eager_remap)
probe("fresh")
for p in (20, 24):
    n = 1 << p
    x = np.random.rand(n).astype(np.float32)
    o = x.copy()
    block_on(ch.batched(dev, x, o, False, True))
    probe(f"after fused 2^{p}")
    block_on(ch.one_shot(dev, x, o, False))
    probe(f"after one-shot chain 2^{p}")
    raw = ch.RawWgpu(False)
    probe(f"after RawWgpu device 2^{p}")
    raw.run(x, o)
    probe(f"after raw.run 2^{p}")
    a = block_on(dev.upload(x))
    grid.wall(lambda: (drv.write_buffer(a.buffer.raw, memoryview(x)), grid.wait_idle(drv.device)))
    probe("after write+wait_idle")
    grid.wall(lambda: block_on(a.read()))
    probe("after a.read")
    q = drv.device.queue
    grid.wall(lambda: (q.write_buffer(a.buffer.raw, 0, x), grid.wait_idle(drv.device)))
    probe("after raw q.write_buffer")
    grid.wall(lambda: q.read_buffer(a.buffer.raw, 0, x.nbytes))
    probe("after raw q.read_buffer")
    a.release()
    del raw
    gc.collect()
    probe("after del raw")

time.sleep(1.0)
probe("after 1 s sleep")
x = np.random.rand(1 << 24).astype(np.float32)
for i in range(3):
    block_on(ch.batched(dev, x, x, False, True))
    probe(f"after fused 2^24 #{i}")
