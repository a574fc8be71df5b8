"""The protocol every backend implements, and the pieces the CPU backends share."""

from __future__ import annotations

from typing import Protocol

from ..graph import MapStep, Node, OpStep
from ..host import HostData
from ..stats import Stats


class Executor(Protocol):
    """Runs planned steps of a batch graph. Buffers are opaque to everything above this layer."""

    backend: str  # "webgpu" | "numpy" | "wasm-simd"
    adapter_info: dict
    limits: dict  # max_storage_buffer_binding_size, max_buffer_size, max_storage_buffers_per_shader_stage,
    # max_compute_workgroups_per_dimension

    def check_size(self, nbytes: int, what: str) -> None:
        """Raise LimitError (naming the limit) if `what` cannot fit one buffer of this backend."""

    def upload(self, host: HostData, stats: tuple[Stats, ...]) -> object:
        """Host data to a backend buffer (counted as one upload)."""

    async def execute(self, nodes: list[Node], steps: list[MapStep | OpStep], stats: tuple[Stats, ...]) -> None:
        """Upload pending host data, run the steps in one submit, set `buffer` on every stored node."""

    async def read(self, node: Node, stats: tuple[Stats, ...]) -> memoryview:
        """float32 bytes of a node's buffer (counted as one download)."""

    def free(self, buffer: object) -> None:
        """Give a buffer back (to a pool, or to the allocator)."""

    def close(self) -> None:
        """Release everything; the executor is unusable afterwards."""


CPU_LIMITS = {
    "max_storage_buffer_binding_size": 2**62,
    "max_buffer_size": 2**62,
    "max_storage_buffers_per_shader_stage": 64,
    "max_compute_workgroups_per_dimension": 2**31,
}


def upload_pending(executor: Executor, nodes: list[Node], stats: tuple[Stats, ...]) -> None:
    """Give every node still holding host data its backend buffer (the uploads of an execute())."""
    for node in nodes:
        if node.host is not None and node.buffer is None:
            node.buffer = executor.upload(node.host, stats)
            node.host = None
