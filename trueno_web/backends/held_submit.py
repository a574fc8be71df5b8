"""The held submit of the desktop driver: a one-shot call's kernels wait for its read, so that both go to
the queue in one submit (as in a hand-written round trip); and `gpu_call`, wgpu errors as trueno_web's."""

from __future__ import annotations

import asyncio

from ..errors import DeviceLostError, GpuError


def gpu_call(what: str, fn, *args, **kwargs):
    """Run a wgpu call, turning its errors into trueno_web errors."""
    try:
        return fn(*args, **kwargs)
    except Exception as exc:  # wgpu raises GPUValidationError, GPUOutOfMemoryError, RuntimeError ...
        text = str(exc)
        if "lost" in text.lower() or "destroyed" in text.lower() and "device" in text.lower():
            raise DeviceLostError(f"{what}: the GPU device was lost ({text}); create a new GpuDevice") from exc
        raise GpuError(f"{what} failed: {text}") from exc


class HeldSubmit:
    """Work kept for a later queue submit (WgpuNativeDriver supplies `device`, `lost` and `_raw`): finished
    command buffers held for the read that follows them, or queued dispatches kept while the GPU is busy.
    At most one of the two is non-empty: each sends the other first, as it is older."""

    def _init_held(self) -> None:
        self._held: list = []  # finished command buffers not submitted yet (see hold)
        self._pending: list = []  # queued dispatches [(pipeline, bind group, grid)] not submitted yet (see queue)
        self._calls = 0  # keep() calls whose dispatches are in _pending
        self._due = False  # a send from the event loop is scheduled
        self._failed: Exception | None = None  # a held submit's error, raised by the next call (_check)

    def hold(self, command_buffer) -> None:
        """Keep a finished command buffer for the next queue submit, where the read that follows puts its
        copy (a one-shot call's kernels and read back are one submit, as in a hand-written round trip). Any
        other use of the queue (a submit, a write, a destroy) sends it first, and so does the event loop's
        next turn, should no read come. Without a running event loop it is submitted at once."""
        self._send_pending()
        self._held.append(command_buffer)
        self._send_soon()

    def keep(self, dispatches: list) -> None:
        """Queue dispatches (pipeline, bind group, grid) to go with later ones in one submit; sent by any other
        use of the queue, by the event loop's next turn, or at once without a running loop."""
        if self._held:
            self.send_held()
        self._pending.extend(dispatches)
        self._calls += 1
        self._send_soon()

    def _send_soon(self) -> None:
        if self._due:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.send_held()
            return
        self._due = True
        loop.call_soon(self._send_held_later)

    def send_held(self, also=()) -> None:
        """Submit the queued dispatches, then the held command buffers and `also` after them in one queue
        submit."""
        self._send_pending()
        buffers = self._held + list(also)
        self._held = []
        if buffers:
            gpu_call("running kernels", self.device.queue.submit, buffers)

    def _send_pending(self) -> None:
        if self._pending:
            work, self._pending, self._calls = self._pending, [], 0
            gpu_call("running kernels", self._raw, work)

    def _send_held_later(self) -> None:
        """send_held() from the event loop: a failure is kept for the driver's next call to raise."""
        self._due = False
        if self.lost:
            self.drop_held()
            return
        try:
            self.send_held()
        except Exception as exc:
            self._failed = exc

    def drop_held(self) -> None:
        """Forget the held and queued work unsent (a lost or destroyed device)."""
        self._held, self._pending, self._calls = [], [], 0

    def _raise_failed(self) -> None:
        """Raise the error of a held submit sent from the event loop, once."""
        if self._failed is not None:
            exc, self._failed = self._failed, None
            raise exc
