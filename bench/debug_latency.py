"""Temporary: what makes one-shot calls slow after some sections of the grid (poll-thread tokens?)."""
import sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent.parent)); sys.path.insert(0, str(Path(__file__).resolve().parent))
import numpy as np
import trueno_web as tw
from trueno_web.runtime import block_on
import grid, chain as ch

dev = block_on(tw.GpuDevice.create("webgpu"))
drv = dev._executor.driver
poller = drv.device._poller
res = grid.Resident(dev)
x1k = np.random.rand(1024).astype(np.float32)

def probe(label):
    ts = []
    for _ in range(9):
        t = time.perf_counter(); block_on(dev.relu(x1k)); ts.append(time.perf_counter() - t)
    print(f"{label}: one-shot relu 1K {sorted(ts)[4]*1e6:.0f} us; tokens {len(poller._token_ids)}; unresolved {len(type(drv.device.queue.read_buffer.__self__) and [])}", flush=True)

def resident_map(n=1 << 24):
    x = np.random.rand(n).astype(np.float32); o = x.copy()
    b = dev.batch()
    out = b.add(b.scale(b.relu(b.upload(x)), 2.0), b.upload(o))
    block_on(b.execute()); block_on(b.read(out))
    work, release = res.ex.prepare(b._nodes, res.steps(b, [out.index]), ())
    res.run(res.encode(work, 1))
    smalls = [res.run(res.encode(work, 2)) for _ in range(3)]
    bigs = [res.run(res.encode(work, 200)) for _ in range(3)]
    release(); b.release()
    print(f"resident map: small {[round(v*1e3,2) for v in smalls]} ms, big {[round(v*1e3,2) for v in bigs]} ms", flush=True)

probe("fresh")
resident_map()
probe("after resident map")
torch = grid.torch_cuda()
if torch is not None:
    a = torch.randn(4096, 4096, device="cuda"); (a @ a).sum().item()
probe("after torch")
resident_map()
x = np.random.rand(1 << 24).astype(np.float32)
block_on(ch.batched(dev, x, x, False, True))
probe("after 2^24 batch")
for chunk in (8 << 20, 32 << 20):
    drv.chunk_bytes = chunk
    block_on(ch.batched(dev, x, x, False, True))
    probe(f"after chunk {chunk >> 20}M batch")
drv.reset_staging()
probe("after reset_staging")
a = block_on(dev.upload(x))
for _ in range(3):
    drv.write_buffer(a._buffer.raw, memoryview(x))
for b in drv._uploads:
    b.destroy()   # the old bench's way: destroy with maps pending
drv._uploads.clear()
time.sleep(0.2)
probe("after destroying pending-map staging")
resident_map()
