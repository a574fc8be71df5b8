"""The WASM SIMD module (trueno_web/kernels.wasm) loaded where Python runs: under wasmtime on the desktop,
through `js.WebAssembly` in the browser (Pyodide); both give `call(name, *args)`, `write(ptr, bytes)` and
`read(ptr, nbytes)` on its linear memory."""

from __future__ import annotations

import array
import sys
from importlib.resources import files

from ..errors import UnavailableError


def wasm_bytes() -> bytes:
    """The shipped module, read through importlib.resources (works from a wheel and in Pyodide)."""
    return files("trueno_web").joinpath("kernels.wasm").read_bytes()


def i32(v: int) -> int:
    """An unsigned 32-bit offset as the signed i32 a wasm call takes."""
    return v - (1 << 32) if v >= 1 << 31 else v


def words(rows: list) -> memoryview:
    """The integers of `rows` (tuples) as little-endian i32 words (wasm's byte order)."""
    out = array.array("i", [w for row in rows for w in row])
    if sys.byteorder == "big":
        out.byteswap()
    return memoryview(out)


class WasmtimeModule:
    """Desktop: the module in wasmtime. Bytes move with one memmove each way."""

    runtime = "wasmtime"

    def __init__(self, wasm: bytes):
        try:
            import wasmtime
        except ImportError:
            raise UnavailableError(
                "the wasm-simd backend needs wasmtime on the desktop: pip install wasmtime"
            ) from None
        self._ctypes = __import__("ctypes")
        self.store = wasmtime.Store(wasmtime.Engine())
        instance = wasmtime.Instance(self.store, wasmtime.Module(self.store.engine, wasm), [])
        self.exports = instance.exports(self.store)
        self.memory = self.exports["memory"]
        self.funcs: dict = {}
        self.runtime = f"wasmtime {getattr(wasmtime, '__version__', '')}".strip()

    def call(self, name: str, *args):
        func = self.funcs.get(name)
        if func is None:
            func = self.funcs[name] = self.exports[name]
        return func(self.store, *args)

    def _view(self, ptr: int, nbytes: int) -> memoryview:
        if ptr + nbytes > self.memory.data_len(self.store):
            raise IndexError("outside wasm memory")
        base = self._ctypes.addressof(self.memory.data_ptr(self.store).contents)
        return memoryview((self._ctypes.c_ubyte * nbytes).from_address(base + ptr)).cast("B")

    def write(self, ptr: int, data: memoryview) -> None:
        data = memoryview(data).cast("B")
        if data.nbytes:
            self._view(ptr, data.nbytes)[:] = data

    def read(self, ptr: int, nbytes: int) -> memoryview:
        return memoryview(bytearray(self._view(ptr, nbytes))) if nbytes else memoryview(b"")


class BrowserModule:
    """Pyodide: the module through `js.WebAssembly`; bytes move through typed-array views of its memory."""

    runtime = "WebAssembly in the browser"

    def __init__(self, instance):
        import js

        self._js = js
        self.exports = instance.exports
        self.memory = self.exports.memory
        self.funcs: dict = {}

    @classmethod
    async def create(cls, wasm: bytes) -> BrowserModule:
        import js
        from pyodide.ffi import to_js

        result = await js.WebAssembly.instantiate(to_js(wasm), js.Object.new())
        return cls(result.instance)

    def call(self, name: str, *args):
        func = self.funcs.get(name)
        if func is None:
            func = self.funcs[name] = getattr(self.exports, name)
        return func(*args)

    def write(self, ptr: int, data: memoryview) -> None:
        data = memoryview(data).cast("B")
        if data.nbytes:  # memory.buffer is fetched each time: growing memory detaches the old one
            self._js.Uint8Array.new(self.memory.buffer, ptr, data.nbytes).assign(data)

    def read(self, ptr: int, nbytes: int) -> memoryview:
        if not nbytes:
            return memoryview(b"")
        out = bytearray(nbytes)
        self._js.Uint8Array.new(self.memory.buffer, ptr, nbytes).assign_to(out)
        return memoryview(out)
