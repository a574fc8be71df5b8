"""Moving bytes on the desktop driver: the MAP_WRITE upload ring, pooled MAP_READ staging, multi-threaded
host copies and their Tuning; and the held submit (a call's kernels and its read back go to the queue in one
submit). WgpuNativeDriver mixes these in."""

from __future__ import annotations

import asyncio
import ctypes
import dataclasses
import os
from concurrent.futures import ThreadPoolExecutor

from ..errors import DeviceLostError, GpuError, TruenoValueError


@dataclasses.dataclass
class Tuning:
    """How WgpuNativeDriver moves bytes. The defaults are the library's (measured on an H200 host and on
    lavapipe: docs/benchmarks.md); the other values (a "sync" or "poll" map wait, eager remapping, other
    chunk sizes and thread counts) are there for bench/'s sweeps (bench/grid.py --explore and --map-wait,
    bench/debug_latency.py). Change them with `driver.retune()`."""

    direct_write_max: int = 4 << 20  # up to this, queue.write_buffer (wgpu copies it at the next submit, in
    # the same one as the kernels: at 2^20 floats the H200 ran the fused 3-op chain 1.31 ms so, 1.55 ms through
    # the ring); above it, the staging ring
    chunk_bytes: int = 32 << 20  # staging chunk: the bus moves one while the CPU copies the next
    upload_depth: int = 4  # MAP_WRITE staging buffers in the ring
    read_depth: int = 4  # MAP_READ staging buffers per large read
    copy_threads: int = dataclasses.field(default_factory=lambda: max(1, min(8, os.cpu_count() or 1)))  # host
    # copies split over this many threads: 8, or the CPUs here where there are fewer
    copy_split_min: int = 4 << 20  # bytes per copy thread at least (waking threads costs more below)
    map_wait: str = "await"  # how a read waits for its map: "await" (the event loop runs meanwhile, after a
    # first `block_s`), "sync" (blocks on wgpu-py's poller thread) or "poll" (blocks polling the device here)
    block_s: float = 0.002  # "await" first blocks this long for the map: a short call's read is then done
    # without the event loop (no wake-up through its self-pipe from wgpu-py's poller thread, no loop turn)
    eager_remap: bool = False  # map an upload staging buffer again right after its copy (True) or when next needed

    def __post_init__(self):
        if self.map_wait not in ("await", "sync", "poll"):
            raise TruenoValueError(f"map_wait must be 'await', 'sync' or 'poll', not {self.map_wait!r}")


def gpu_call(what: str, fn, *args, **kwargs):
    """Run a wgpu call, turning its errors into trueno_web errors."""
    try:
        return fn(*args, **kwargs)
    except Exception as exc:  # wgpu raises GPUValidationError, GPUOutOfMemoryError, RuntimeError ...
        text = str(exc)
        if "lost" in text.lower() or "destroyed" in text.lower() and "device" in text.lower():
            raise DeviceLostError(f"{what}: the GPU device was lost ({text}); create a new GpuDevice") from exc
        raise GpuError(f"{what} failed: {text}") from exc


def _fresh(nbytes: int):
    """Writable memory the caller will own: np.empty (not touched yet) where NumPy imports."""
    try:
        import numpy
    except ImportError:
        return memoryview(bytearray(nbytes))
    return numpy.empty(nbytes, numpy.uint8)


def _address_of(buf) -> int:
    """The address of a contiguous buffer (read-only ones too), kept valid by the caller."""
    view = memoryview(buf)
    if not view.readonly:
        return ctypes.addressof((ctypes.c_char * view.nbytes).from_buffer(view))
    from wgpu.backends.wgpu_native._helpers import get_memoryview_and_address

    return get_memoryview_and_address(view)[1]


def _drop(staging, wait: bool = True) -> None:
    """Destroy an upload staging buffer once its pending map has settled (a map cut short by destroy()
    may never call back, and wgpu-py would then poll for it forever)."""
    ready = getattr(staging, "_tw_ready", None)
    if ready is not None and wait:
        try:
            ready.sync_wait()
        except Exception:
            pass
    staging.destroy()


def _unhook(promise) -> bool:
    """Keep the event loop out of a pending wgpu-py map promise: once settled, its poller thread only sets
    the promise's thread event, instead of also waking the loop (call_soon_threadsafe: a self-pipe write and
    a loop turn, ~30 us of CPU a read on lavapipe). True where that wake-up was already sent."""
    with promise._lock:  # the poller thread settles the promise under it
        woke = promise._state != "pending" and promise._call_soon_threadsafe is not None
        promise._call_soon_threadsafe = None
    return woke


def _hook(promise) -> None:
    """Undo _unhook for a promise still pending (it is awaited: the loop must hear when it settles)."""
    with promise._lock:
        if promise._state == "pending":
            promise._call_soon_threadsafe = asyncio.get_running_loop().call_soon_threadsafe


def _mapped_address(view) -> int:
    """The address of a whole mapped range from wgpu-py (a view over a ctypes array at its start)."""
    return ctypes.addressof(view.obj)


class Transfers:
    """The byte-moving methods of WgpuNativeDriver (it supplies `wgpu`, `device`, `lost` and `_check`)."""

    def _init_transfers(self) -> None:
        self.staging: dict[int, list] = {}  # MAP_READ staging buffers by size
        self._uploads: list = []  # MAP_WRITE staging ring, mapped while idle
        self._pool = None  # copy threads, made on first large copy
        self.tuning = Tuning()
        self._held: list = []  # finished command buffers not submitted yet (see hold)
        self._failed: Exception | None = None  # a held submit's error, raised by the next call (_check)
        self._staged: tuple | None = None  # (raw, nbytes, staging) of stage_read, its copy submitted or held

    # ------------------------------------------------------------ the held submit

    def hold(self, command_buffer) -> None:
        """Keep a finished command buffer for the next queue submit, where the read that follows puts its
        copy (a one-shot call's kernels and read back are one submit, as in a hand-written round trip). Any
        other use of the queue (a submit, a write, a destroy) sends it first, and so does the event loop's
        next turn, should no read come. Without a running event loop it is submitted at once."""
        self._held.append(command_buffer)
        if len(self._held) > 1:
            return  # a send is already due
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.send_held()
            return
        loop.call_soon(self._send_held_later)

    def send_held(self, also=()) -> None:
        """Submit the held command buffers, and `also` after them, in one queue submit."""
        buffers = self._held + list(also)
        self._held = []
        if buffers:
            gpu_call("running kernels", self.device.queue.submit, buffers)

    def _send_held_later(self) -> None:
        """send_held() from the event loop: a failure is kept for the driver's next call to raise."""
        if self.lost:
            self._held = []
            return
        try:
            self.send_held()
        except Exception as exc:
            self._failed = exc

    def _raise_failed(self) -> None:
        """Raise the error of a held submit sent from the event loop, once."""
        if self._failed is not None:
            exc, self._failed = self._failed, None
            raise exc

    def write_buffer(self, raw, data: memoryview) -> None:
        """Host bytes into a buffer. Small writes go through queue.write_buffer; large ones are copied
        (on several threads) into pooled, already-mapped MAP_WRITE staging buffers, a chunk at a time,
        each chunk's GPU copy submitted at once so the bus works while the next chunk is copied."""
        self._check()
        self.send_held()  # the queue's own write would land before the held work
        data = data.cast("B")
        nbytes = data.nbytes
        tuning = self.tuning
        if nbytes <= tuning.direct_write_max:
            gpu_call("writing a buffer", self.device.queue.write_buffer, raw, 0, data)
            return
        src = _address_of(data)
        for off in range(0, nbytes, tuning.chunk_bytes):
            n = min(tuning.chunk_bytes, nbytes - off)
            staging = self._upload_staging()
            try:
                self._memcpy(_mapped_address(staging._experimental_get_mapped_range(0, n)), src + off, n)
                staging.unmap()

                def copy():
                    encoder = self.device.create_command_encoder()
                    encoder.copy_buffer_to_buffer(staging, 0, raw, off, -(-n // 4) * 4)
                    self.device.queue.submit([encoder.finish()])

                gpu_call("uploading", copy)
            except BaseException:
                self._uploads.remove(staging)
                staging.destroy()
                raise
            staging._tw_ready = (
                staging.map_async(self.wgpu.MapMode.WRITE, 0, staging.size) if tuning.eager_remap else None
            )
            staging._tw_unmapped = not tuning.eager_remap

    def _upload_staging(self):
        """The next upload staging buffer in the ring, mapped for writing (waits for its last copy)."""
        wgpu = self.wgpu
        chunk_bytes = self.tuning.chunk_bytes
        if len(self._uploads) >= self.tuning.upload_depth:
            staging = self._uploads.pop(0)
            if staging.size >= chunk_bytes:
                self._uploads.append(staging)
                try:
                    if staging._tw_ready is not None:
                        staging._tw_ready.sync_wait()
                    elif staging._tw_unmapped:
                        staging.map_async(wgpu.MapMode.WRITE, 0, staging.size).sync_wait()
                except Exception as exc:
                    raise DeviceLostError(f"uploading failed ({exc}); create a new GpuDevice") from exc
                staging._tw_ready = None
                staging._tw_unmapped = False
                return staging
            _drop(staging)  # from before a change of chunk size
        staging = gpu_call(
            "creating a staging buffer",
            self.device.create_buffer,
            size=chunk_bytes,
            usage=wgpu.BufferUsage.MAP_WRITE | wgpu.BufferUsage.COPY_SRC,
            mapped_at_creation=True,
        )
        staging._tw_ready = None
        staging._tw_unmapped = False
        self._uploads.append(staging)
        return staging

    def _memcpy(self, dst: int, src: int, nbytes: int) -> None:
        """memmove on up to `copy_threads` threads (ctypes releases the GIL); large copies only."""
        threads = min(self.tuning.copy_threads, nbytes // self.tuning.copy_split_min)
        if threads <= 1:
            ctypes.memmove(dst, src, nbytes)
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.tuning.copy_threads, thread_name_prefix="trueno_web-copy")
        step = -(-nbytes // threads // 4096) * 4096
        jobs = [
            self._pool.submit(ctypes.memmove, dst + o, src + o, min(step, nbytes - o)) for o in range(0, nbytes, step)
        ]
        for job in jobs:
            job.result()

    def _read_staging(self, nbytes: int) -> tuple[int, list]:
        """(size, free list) of the MAP_READ staging buffers a read of `nbytes` takes (one chunk each)."""
        chunk = min(self.tuning.chunk_bytes, nbytes)
        size = max(256, 1 << (chunk - 1).bit_length())
        return size, self.staging.setdefault(size, [])

    def _take_staging(self, size: int, free: list):
        """A MAP_READ staging buffer of `size` from its free list, or a new one."""
        wgpu = self.wgpu
        return (
            free.pop()
            if free
            else gpu_call(
                "creating a staging buffer",
                self.device.create_buffer,
                size=size,
                usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST,
            )
        )

    def stage_read(self, encoder, raw, nbytes: int) -> tuple | None:
        """Record the copy of a read expected next (one chunk at most) into `encoder`, after its kernels: the
        read then finds the result in that staging buffer (one command encoder fewer). (raw, nbytes, staging)
        for `_staged` once the encoder is finished, or None where the read is not one chunk."""
        if not 0 < nbytes <= self.tuning.chunk_bytes:
            return None
        size, free = self._read_staging(nbytes)
        staging = self._take_staging(size, free)
        try:
            encoder.copy_buffer_to_buffer(raw, 0, staging, 0, -(-nbytes // 4) * 4)
        except BaseException:
            free.append(staging)
            raise
        return raw, nbytes, staging

    def unstage(self, staged: tuple | None) -> None:
        """Give a staged read's staging buffer back to its pool (a later copy into it is queued after its own)."""
        if staged is not None:
            self._read_staging(staged[1])[1].append(staged[2])
            if staged is self._staged:
                self._staged = None

    async def read_buffer(self, raw, nbytes: int) -> memoryview:
        """The first `nbytes` of a buffer: a new uint8 NumPy array the caller owns (where NumPy imports:
        no zero-filling, and the page faults of fresh memory spread over the copy threads), else a
        memoryview over a new bytearray.

        Large reads go in chunks through pooled MAP_READ staging buffers: every chunk's GPU copy is
        queued at once, and each is copied out (on several threads) as soon as it lands, while the
        later ones are still on the bus. One host copy in all. The first copies join the held submit; a
        read staged with the kernels (stage_read) copies nothing more."""
        self._check()
        out = _fresh(nbytes)
        if nbytes == 0:
            return out
        dst = _address_of(out)
        chunk = min(self.tuning.chunk_bytes, nbytes)
        pieces = [(off, min(chunk, nbytes - off)) for off in range(0, nbytes, chunk)]
        size, free = self._read_staging(nbytes)
        staged, self._staged = self._staged, None
        if staged is not None and (staged[0] is not raw or staged[1] != nbytes):
            self.unstage(staged)  # not this read: its copy runs, unused
            staged = None
        taken = [] if staged is None else [staged[2]]
        try:
            for _ in range(min(len(pieces), self.tuning.read_depth) - len(taken)):
                taken.append(self._take_staging(size, free))

            def copy(first: int):
                if staged is not None:  # the copy went with the kernels (stage_read)
                    self.send_held()
                    return
                encoder = self.device.create_command_encoder()
                for j in range(first, min(first + len(taken), len(pieces))):
                    off, n = pieces[j]
                    encoder.copy_buffer_to_buffer(raw, off, taken[j % len(taken)], 0, -(-n // 4) * 4)
                self.send_held([encoder.finish()])

            for j, (off, n) in enumerate(pieces):
                staging = taken[j % len(taken)]
                if j % len(taken) == 0:
                    gpu_call("copying a result", copy, j)
                try:  # no sync submit before the map (wgpu-py's READ): the copy was just submitted
                    await self._wait_map(staging.map_async("READ_NOSYNC", 0, size))
                    self._check()  # destroyed meanwhile: no further copy or submit
                except DeviceLostError:
                    raise
                except Exception as exc:
                    raise DeviceLostError(f"reading a result failed ({exc}); create a new GpuDevice") from exc

                def take_out():
                    view = staging.read_mapped(0, -(-n // 4) * 4, copy=False)
                    self._memcpy(dst + off, _mapped_address(view), n)
                    view.release()
                    staging.unmap()

                gpu_call("reading a result", take_out)
        except BaseException:
            for staging in taken:
                staging.destroy()
            raise
        free.extend(taken)
        return out

    async def _wait_map(self, promise) -> None:
        """Wait for a map as `tuning.map_wait` says. "await" blocks up to `tuning.block_s` on the promise's
        thread event (set by wgpu-py's poller thread) with the event loop kept out of it (`_unhook`), then
        awaits it, giving up with DeviceLostError once the device is destroyed (a map cut short by destroy()
        never calls back; the promise is left pending: wgpu-py keeps it, and the callback wgpu-native holds,
        alive)."""
        if self.tuning.map_wait != "await":
            if self.tuning.map_wait == "poll":
                self._poll()
            promise.sync_wait()
            return
        settled = getattr(promise, "_thread_event", None)  # wgpu-py's GPUPromise sets it from any thread
        if settled is not None and hasattr(promise, "_call_soon_threadsafe"):  # 0.32's internals (pinned); else awaited
            woke = _unhook(promise)
            if settled.wait(self.tuning.block_s):  # short work: done by then, resolved here
                promise.sync_wait()  # (raises a failed map's error)
                if woke:  # its loop callback is queued: let it run, or a loop that never yields
                    await asyncio.sleep(0)  # piles them up (~3.7 KB each: test_ten_thousand_batches_...)
                return
            _hook(promise)
        task = asyncio.ensure_future(promise)
        try:
            while not task.done():
                await asyncio.wait({task}, timeout=0.05)
                if not task.done() and self.lost:
                    raise DeviceLostError(
                        "the GPU device was lost while a result was being read; create a new GpuDevice"
                    )
            task.result()
        finally:
            task.cancel()

    def _poll(self) -> None:
        """Wait here for the queue's work (callbacks fire on this thread, no hop through wgpu-py's poller)."""
        from wgpu.backends.wgpu_native._api import ffi, libf

        libf.wgpuDevicePoll(self.device._internal, True, ffi.NULL)

    def retune(self, **changes) -> Tuning:
        """Change fields of `tuning` (bench/ sweeps them) and free the staging buffers and copy threads
        (made again on demand, to the new sizes). Returns the previous Tuning: `retune(**asdict(old))`
        restores it."""
        old = self.tuning
        self.tuning = dataclasses.replace(old, **changes)
        self._free_staging()
        if self._pool is not None and self.tuning.copy_threads != old.copy_threads:
            self._pool.shutdown(wait=True)
            self._pool = None
        return old

    def _free_staging(self) -> None:
        """Free every staging buffer (they are made again on demand)."""
        self.unstage(self._staged)
        for bufs in self.staging.values():
            for b in bufs:
                b.destroy()
        self.staging.clear()
        for b in self._uploads:
            _drop(b, wait=not self.lost)
        self._uploads.clear()

    def _close_transfers(self) -> None:
        """Submit what is held, free the staging buffers and let the copy threads go."""
        if not self.lost:
            self.send_held()
        self._free_staging()
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None
