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
    """Finished command buffers kept for the next queue submit (WgpuNativeDriver supplies `device`, `lost`)."""

    def _init_held(self) -> None:
        self._held: list = []  # finished command buffers not submitted yet (see hold)
        self._failed: Exception | None = None  # a held submit's error, raised by the next call (_check)

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
