"""The wasm-simd backend: the planned graph on hand-written WASM SIMD128 kernels (trueno_web/kernels.wasm,
built from wasm/kernels.c by `python wasm/build.py`, loaded by wasm_module.py).

No NumPy: buffers are offsets into the module's linear memory, placed by its allocator (tw_alloc/tw_free);
this executor holds them and the row-major copies of strided views, and hands each plan step to its
template's runner (wasm_runners.py). The module runs under `js.WebAssembly` in the browser (Pyodide) and under
wasmtime on the desktop (tests, benchmarks).
"""

from __future__ import annotations

import platform
import sys

from .. import runtime
from ..errors import DeviceLostError, LimitError
from ..graph import Node, Plan, storage, template
from ..host import HostData
from ..layout import contiguous_strides
from ..stats import Stats, tally
from .base import CPU_LIMITS, WORD_DTYPES, CpuExecutor, upload_pending
from .wasm_module import BrowserModule, WasmtimeModule, i32, wasm_bytes, words
from .wasm_runners import RUNNERS

MAX_BYTES = 2**31  # one buffer at most; all of them together share wasm32's 4 GiB


class WasmBuffer:
    """`nbytes` of float32 data at `ptr` in the module's linear memory."""

    __slots__ = ("ptr", "nbytes", "__weakref__")

    def __init__(self, ptr: int, nbytes: int):
        self.ptr = ptr
        self.nbytes = nbytes

    def __repr__(self) -> str:
        return f"WasmBuffer(ptr={self.ptr:#x}, nbytes={self.nbytes})"


class WasmExecutor(CpuExecutor):
    """CPU executor on the WASM SIMD kernels; transfers are zero, dispatches count the steps it ran."""

    backend = "wasm-simd"
    dtypes = WORD_DTYPES  # the C kernels' 32-bit words

    def __init__(self, module):
        self.module = module
        simd = bool(module.call("tw_simd"))
        self.adapter_info = {
            "vendor": "trueno_web",
            "device": f"WASM {'SIMD128' if simd else 'scalar'} kernels on {module.runtime} "
            f"({platform.machine() or sys.platform})",
            "description": "CPU fallback",
            "software": True,
        }
        self.limits = dict(CPU_LIMITS, max_storage_buffer_binding_size=MAX_BYTES, max_buffer_size=MAX_BYTES)
        self.closed = False

    @classmethod
    async def create(cls, wasm: bytes | None = None) -> WasmExecutor:
        """Instantiate the shipped module (or `wasm`, e.g. the scalar build for a benchmark)."""
        wasm = wasm_bytes() if wasm is None else wasm
        if runtime.is_browser():
            return cls(await BrowserModule.create(wasm))
        return cls(WasmtimeModule(wasm))

    # ------------------------------------------------------------ memory

    def check_size(self, nbytes: int, what: str) -> None:
        if nbytes > MAX_BYTES:
            raise LimitError(
                f"{what} needs {nbytes} bytes in one buffer, past the wasm-simd backend's "
                f"max_buffer_size of {MAX_BYTES} bytes (wasm32 linear memory); split the data"
            )

    def alloc(self, nbytes: int, what: str) -> WasmBuffer:
        if self.closed:
            raise DeviceLostError("this wasm-simd device was closed; create a new one with `await GpuDevice.create()`")
        self.check_size(nbytes, what)
        ptr = self.module.call("tw_alloc", i32(nbytes)) & 0xFFFFFFFF
        if ptr == 0:
            raise LimitError(
                f"{what} needs {nbytes} bytes, but the wasm-simd backend's linear memory cannot grow "
                "that far (wasm32 holds 4 GiB at most, browsers often less); free data or split it"
            )
        return WasmBuffer(ptr, nbytes)

    def upload(self, host: HostData, stats: tuple[Stats, ...]) -> WasmBuffer:
        buf = self.alloc(host.dtype.nbytes(host.size), "this input")
        self.module.write(buf.ptr, host.data)
        return buf

    def free(self, buffer: WasmBuffer) -> None:
        if not self.closed and buffer is not None and buffer.ptr:
            self.module.call("tw_free", i32(buffer.ptr))
            buffer.ptr = 0

    def live_bytes(self) -> int:
        """Bytes held by live allocations in linear memory (a leak check for tests)."""
        return self.module.call("tw_live_bytes") & 0xFFFFFFFF

    def close(self) -> None:
        self.closed = True
        self.module = None

    # ------------------------------------------------------------ running

    async def execute(self, nodes: list[Node], plan: Plan, stats: tuple[Stats, ...], read: int | None = None) -> None:
        if self.closed:
            raise DeviceLostError("this wasm-simd device was closed; create a new one with `await GpuDevice.create()`")
        upload_pending(self, nodes, stats)
        for step in plan.steps:
            RUNNERS[template(step, nodes)](self, nodes, step)
        if plan.steps:
            tally(stats, dispatches=len(plan.steps), submits=1)

    async def read(self, buffer: WasmBuffer, nbytes: int, stats: tuple[Stats, ...], take: bool = False) -> memoryview:
        if self.closed:
            raise DeviceLostError("this wasm-simd device was closed; create a new one with `await GpuDevice.create()`")
        return self.module.read(buffer.ptr, nbytes)

    def result_buffer(self, node: Node) -> WasmBuffer:
        if node.buffer is None:
            node.buffer = self.alloc(node.dtype.nbytes(node.size), f"the result of {node.op.name}")
        return node.buffer

    def gather(self, nodes: list[Node], i: int) -> WasmBuffer | None:
        """A row-major copy of node i where it is a strided view (the caller frees it), else None: one
        tw_gather call, each dimension's size, stride and valid range written after the copy's floats."""
        view = nodes[i].view
        if view is None or view.identity:
            return None
        mask = view.mask or [(0, d) for d in view.shape]
        dims = [(d, s, lo, hi) for d, s, (lo, hi) in zip(view.shape, view.strides, mask)]
        return self._copy(storage(nodes, i).buffer, view.offset, dims, nodes[i].size, nodes[i].dtype.itemsize)

    def transposed(self, node: Node) -> WasmBuffer:
        """A row-major copy of node's matrices transposed (its last two dimensions swapped; the caller frees it)."""
        *lead, r, c = node.shape
        dims = [(d, s, 0, d) for d, s in zip(lead, contiguous_strides(node.shape))] + [(c, 1, 0, c), (r, c, 0, r)]
        return self._copy(node.buffer, 0, dims, node.size)

    def _copy(self, src: WasmBuffer, offset: int, dims: list, n: int, itemsize: int = 4) -> WasmBuffer:
        """tw_gather of the n elements at `dims` (size, stride, valid range per dimension) from `offset` of src
        (tw_gather16 of float16's two-byte elements)."""
        dims = dims or [(1, 0, 0, 1)]
        end = -(-itemsize * n // 4) * 4  # the dimension words after the copy, word-aligned
        out = self.alloc(end + 16 * len(dims), "a copy of a strided view")
        if n:
            self.module.write(out.ptr + end, words(dims))
            name = "tw_gather" if itemsize == 4 else "tw_gather16"
            self.module.call(name, i32(src.ptr), offset, i32(out.ptr), i32(out.ptr + end), len(dims))
        return out
