"""Moving bytes on the desktop driver: the MAP_WRITE upload ring, pooled MAP_READ staging and their Tuning.
WgpuNativeDriver mixes these in; the host side of each copy is host_copies.py's, the held submit that a
read joins is held_submit.py's."""

from __future__ import annotations

import asyncio
import dataclasses
import os

from ..errors import DeviceLostError, TruenoValueError
from . import wgpu_internals
from .held_submit import HeldSubmit, gpu_call
from .host_copies import CopyThreads, address_of, fresh, mapped_address


@dataclasses.dataclass
class Tuning:
    """How WgpuNativeDriver moves bytes. The defaults are the library's (measured: docs/benchmarks.md); the
    other values (a "sync" or "poll" map wait, eager remapping, other chunk sizes and thread counts) are
    there for bench/'s sweeps (bench/grid.py --explore and --map-wait, bench/debug_latency.py). Change them
    with `driver.retune()`."""

    direct_write_max: int = 4 << 20  # up to this, queue.write_buffer (wgpu copies it at the next submit, in
    # the same one as the kernels); above it, the staging ring
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


def _drop(staging, wait: bool = True) -> None:
    """Destroy an upload staging buffer once its pending map has settled (a map cut short by destroy()
    may never call back, and wgpu-py would then poll for it forever)."""
    ready = staging._tw_ready
    if ready is not None and wait:
        try:
            ready.sync_wait()
        except Exception:
            pass
    staging.destroy()


class Transfers(HeldSubmit):
    """The byte-moving methods of WgpuNativeDriver (it supplies `wgpu`, `device`, `lost` and `_check`)."""

    def _init_transfers(self) -> None:
        self._init_held()
        self.staging: dict[int, list] = {}  # MAP_READ staging buffers by size
        self._uploads: list = []  # MAP_WRITE staging ring, mapped while idle
        self._copies = CopyThreads()
        self.tuning = Tuning()
        self._staged: tuple | None = None  # (raw, nbytes, staging) of stage_read, its copy submitted or held

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
        src = address_of(data)
        for off in range(0, nbytes, tuning.chunk_bytes):
            n = min(tuning.chunk_bytes, nbytes - off)
            staging = self._upload_staging()
            try:
                self._memcpy(mapped_address(staging._experimental_get_mapped_range(0, n)), src + off, n)
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
        """memmove on up to `copy_threads` threads; large copies only."""
        self._copies.copy(dst, src, nbytes, self.tuning.copy_threads, self.tuning.copy_split_min)

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
        out = fresh(nbytes)
        if nbytes == 0:
            return out
        dst = address_of(out)
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
                    self._memcpy(dst + off, mapped_address(view), n)
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
        """Wait for a map as `tuning.map_wait` says. "await" blocks up to `tuning.block_s` on the promise with
        the event loop kept out of it (wgpu_internals.unhook: a short call's read is then done without a loop
        turn), then awaits it, giving up with DeviceLostError once the device is destroyed (a map cut short by
        destroy() never calls back; the promise is left pending: wgpu-py keeps it, and the callback
        wgpu-native holds, alive)."""
        if self.tuning.map_wait != "await":
            if self.tuning.map_wait == "poll":
                wgpu_internals.poll(self.device)
            promise.sync_wait()
            return
        if wgpu_internals.can_unhook(promise):  # else awaited
            woke = wgpu_internals.unhook(promise)
            if wgpu_internals.settled_within(promise, self.tuning.block_s):  # short work: resolved here
                promise.sync_wait()  # (raises a failed map's error)
                if woke:  # its loop callback is queued: let it run, or a loop that never yields piles them up
                    await asyncio.sleep(0)
                return
            wgpu_internals.hook(promise)
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

    def retune(self, **changes) -> Tuning:
        """Change fields of `tuning` (bench/ sweeps them) and free the staging buffers and copy threads
        (made again on demand, to the new sizes). Returns the previous Tuning: `retune(**asdict(old))`
        restores it."""
        old = self.tuning
        self.tuning = dataclasses.replace(old, **changes)
        self._free_staging()
        if self.tuning.copy_threads != old.copy_threads:
            self._copies.close(wait=True)
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
        self._copies.close(wait=False)
