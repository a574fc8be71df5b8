"""Where host<->device time goes with wgpu-py: staging buffers of several sizes, mapped for writing and for
reading, the host copies into and out of them (1 and several threads), the GPU copy and map wait,
queue.write_buffer, and the latency of a small map (await vs sync_wait).

    python bench/transfers.py

Prints one table (ms and GB/s per step). The driver's transfer constants come from these figures
(docs/benchmarks.md).
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import wgpu

MB = 1 << 20
POOL = ThreadPoolExecutor(8)


def addr(view) -> int:
    view = memoryview(view)
    if not view.readonly:
        return ctypes.addressof((ctypes.c_char * view.nbytes).from_buffer(view))
    return ctypes.addressof(view.obj)


def memcpy(dst, src, n, threads):
    if threads == 1:
        ctypes.memmove(dst, src, n)
        return
    step = -(-n // threads // 4096) * 4096
    for f in [POOL.submit(ctypes.memmove, dst + o, src + o, min(step, n - o)) for o in range(0, n, step)]:
        f.result()


def med(fn, reps=5):
    fn()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return sorted(ts)[len(ts) // 2]


def main():
    adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    dev = adapter.request_device_sync(
        required_limits={k: adapter.limits[k] for k in ("max-storage-buffer-binding-size", "max-buffer-size")}
    )
    q = dev.queue
    print(f"# adapter {adapter.info['device']} ({adapter.info['backend_type']}); {os.cpu_count()} CPUs")
    rows = []
    U = wgpu.BufferUsage
    for size in (1 * MB, 4 * MB, 8 * MB, 16 * MB, 32 * MB, 64 * MB):
        host = np.random.default_rng(0).standard_normal(size // 4, dtype=np.float32)
        dst = bytearray(size)
        dst_addr = addr(dst)
        gpu = dev.create_buffer(size=size, usage=U.STORAGE | U.COPY_SRC | U.COPY_DST)
        q.write_buffer(gpu, 0, host)
        # ---- read side
        rd = dev.create_buffer(size=size, usage=U.MAP_READ | U.COPY_DST)

        def copy_and_map():
            enc = dev.create_command_encoder()
            enc.copy_buffer_to_buffer(gpu, 0, rd, 0, size)
            q.submit([enc.finish()])
            rd.map_async(wgpu.MapMode.READ, 0, size).sync_wait()

        def timed_read(threads, fresh=False):
            copy_and_map()
            view = rd.read_mapped(0, size, copy=False)
            out = bytearray(size) if fresh else dst
            t = time.perf_counter()
            memcpy(addr(out) if fresh else dst_addr, addr(view), size, threads)
            dt = time.perf_counter() - t
            t2 = time.perf_counter()
            memcpy(dst_addr, addr(view), size, threads)
            dt2 = time.perf_counter() - t2
            view.release()
            rd.unmap()
            return dt, dt2

        def cm():
            copy_and_map()
            rd.unmap()

        t_cm = med(cm)
        r1 = [timed_read(1) for _ in range(4)][1:]
        r8 = [timed_read(8) for _ in range(4)][1:]
        rf = [timed_read(8, fresh=True) for _ in range(4)][1:]
        assert np.array_equal(np.frombuffer(dst, np.float32), host)
        t_r1, t_r1b = min(r[0] for r in r1), min(r[1] for r in r1)
        t_r8 = min(r[0] for r in r8)
        t_rf = min(r[0] for r in rf)
        t_rb = med(lambda: q.read_buffer(gpu, 0, size))
        # ---- write side
        wr = dev.create_buffer(size=size, usage=U.MAP_WRITE | U.COPY_SRC, mapped_at_creation=True)
        src_addr = host.ctypes.data

        def timed_write(threads):
            view = wr._experimental_get_mapped_range(0, size)
            t = time.perf_counter()
            memcpy(addr(view), src_addr, size, threads)
            dt = time.perf_counter() - t
            wr.unmap()
            t = time.perf_counter()
            enc = dev.create_command_encoder()
            enc.copy_buffer_to_buffer(wr, 0, gpu, 0, size)
            q.submit([enc.finish()])
            wr.map_async(wgpu.MapMode.WRITE, 0, size).sync_wait()
            return dt, time.perf_counter() - t

        w1 = [timed_write(1) for _ in range(4)][1:]
        w8 = [timed_write(8) for _ in range(4)][1:]
        t_w1, t_wdma = min(w[0] for w in w1), min(w[1] for w in w1)
        t_w8 = min(w[0] for w in w8)
        flag = dev.create_buffer(size=16, usage=U.STORAGE | U.COPY_SRC)
        t_wb = med(lambda: (q.write_buffer(gpu, 0, host), q.read_buffer(flag)))
        t_new = med(
            lambda: dev.create_buffer(size=size, usage=U.MAP_WRITE | U.COPY_SRC, mapped_at_creation=True).destroy()
        )
        gb = lambda t: f"{size / t / 1e9:.1f}"  # noqa: E731
        rows.append(
            (
                size // MB,
                f"{t_cm * 1e3:.2f}",
                gb(t_r1),
                gb(t_r1b),
                gb(t_r8),
                gb(t_rf),
                gb(t_rb),
                gb(t_w1),
                gb(t_w8),
                f"{t_wdma * 1e3:.2f}",
                gb(t_wb),
                f"{t_new * 1e3:.2f}",
            )
        )
        for b in (gpu, rd, wr, flag):
            b.destroy()
    print(
        "| MiB | GPU copy+map wait ms | read mapped 1 thr GB/s | again | 8 thr | 8 thr into fresh | queue.read_buffer "
        "| write mapped 1 thr | 8 thr | unmap+copy+remap ms | queue.write_buffer+wait | new mapped buffer ms |"
    )
    print("|" + "---|" * 12)
    for r in rows:
        print("| " + " | ".join(str(c) for c in r) + " |")

    # latency of a small read: await (poll thread) vs sync_wait
    small = dev.create_buffer(size=4096, usage=U.STORAGE | U.COPY_SRC | U.COPY_DST)
    st = dev.create_buffer(size=4096, usage=U.MAP_READ | U.COPY_DST)

    def small_read(mode):
        enc = dev.create_command_encoder()
        enc.copy_buffer_to_buffer(small, 0, st, 0, 4096)
        q.submit([enc.finish()])
        if mode == "await":

            async def go():
                await st.map_async(wgpu.MapMode.READ, 0, 4096)

            asyncio.run(go()) if False else LOOP.run_until_complete(go())
        elif mode == "sync":
            st.map_async(wgpu.MapMode.READ, 0, 4096).sync_wait()
        else:
            st.map_async("READ_NOSYNC", 0, 4096).sync_wait()
        st.read_mapped(0, 4096)
        st.unmap()

    for mode in ("await", "sync", "nosync"):
        t = med(lambda: small_read(mode), reps=21)
        print(f"small read (4 KiB) with {mode}: {t * 1e6:.0f} us")


LOOP = asyncio.new_event_loop()

if __name__ == "__main__":
    main()


def driver_phases():
    """trueno_web's own driver at 4 and 64 MiB: write, read, the user-facing read, and a profile."""
    import cProfile
    import io
    import pstats
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import trueno_web as tw
    from trueno_web.runtime import block_on

    dev = block_on(tw.GpuDevice.create("webgpu"))
    drv = dev.executor.driver
    flag = drv.device.create_buffer(size=16, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC)
    for size in (4 * MB, 64 * MB):
        x = np.random.default_rng(1).standard_normal(size // 4, dtype=np.float32)
        a = block_on(dev.upload(x))
        raw = a.buffer.raw
        t_w = med(lambda: (drv.write_buffer(raw, memoryview(x)), drv.device.queue.read_buffer(flag)), reps=9)
        t_r = med(lambda: block_on(drv.read_buffer(raw, size)), reps=9)
        t_a = med(lambda: block_on(a.read()), reps=9)
        t_np = med(lambda: np.empty(size, np.uint8).fill(0), reps=9)
        print(
            f"driver {size // MB} MiB: write+wait {t_w * 1e3:.2f} ms, read_buffer {t_r * 1e3:.2f} ms, "
            f"DeviceArray.read {t_a * 1e3:.2f} ms, np.empty+fill {t_np * 1e3:.2f} ms"
        )
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(3):
        block_on(drv.read_buffer(raw, 64 * MB))
    prof.disable()
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(14)
    print(s.getvalue()[-3500:])


if __name__ == "__main__":
    driver_phases()
