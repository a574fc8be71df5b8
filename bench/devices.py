"""The benchmarks' webgpu device: the library's own driver and executor, and what only benchmarks add.

    dev = webgpu(TimedDriver, HoldingExecutor)   # bench/grid.py's: dev.executor is a HoldingExecutor,
                                                 # dev.executor.driver a TimedDriver

TimedDriver      WgpuNativeDriver that also asks for timestamp queries where the adapter has them
HoldingExecutor  GpuExecutor that, while `hold` is set, keeps the dispatch list of its last execute() (and the
                 parameter and scratch buffers it binds) so that it can be run again on the same buffers
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import trueno_web as tw
from trueno_web.backends.gpu import GpuExecutor
from trueno_web.backends.wgpu_native import WgpuNativeDriver
from trueno_web.runtime import block_on


class TimedDriver(WgpuNativeDriver):
    """The desktop driver, asking for "timestamp-query" too (GPU-timed passes: bench/grid.py)."""

    wanted_features = {**WgpuNativeDriver.wanted_features, "timestamp-query": "timestamp-query"}


class HoldingExecutor(GpuExecutor):
    """GpuExecutor that, while `hold` is set, keeps what its last execute() submitted: `held`, the dispatch
    list [(pipeline, binds, grid)], and the parameter and scratch buffers it binds, until `drop_held()` or
    the next execute(). Unset (the default), it runs as GpuExecutor does."""

    def __init__(self, driver):
        super().__init__(driver)
        self.hold = False
        self.held: list = []
        self._release_held = lambda: None

    def prepare(self, nodes, planned):
        self.drop_held()  # first: the pool hands the same buffers out again, as it would have
        work, release = super().prepare(nodes, planned)
        if not self.hold:
            return work, release
        self.held, self._release_held = work, release
        return work, lambda: None

    def drop_held(self) -> None:
        """Give the held parameter and scratch buffers back to the pool."""
        release, self._release_held = self._release_held, lambda: None
        self.held = []
        release()

    @contextlib.contextmanager
    def holding(self):
        self.hold = True
        try:
            yield self
        finally:
            self.hold = False
            self.drop_held()

    def close(self) -> None:
        self.drop_held()
        super().close()


def webgpu(driver_cls=WgpuNativeDriver, executor_cls=GpuExecutor) -> tw.GpuDevice:
    """A GpuDevice on the desktop's webgpu backend, built as GpuDevice.create("webgpu") builds it, of the
    benchmark's driver and executor classes."""
    return tw.GpuDevice(executor_cls(block_on(driver_cls.create())))
