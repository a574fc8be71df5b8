"""Backends: small executors behind one protocol (see `Executor` in backends/base.py).

webgpu    GpuExecutor over a driver: wgpu_native (desktop, wgpu-py) or browser (Pyodide, navigator.gpu)
numpy     NumpyExecutor (CPU, NumPy)
wasm-simd WasmExecutor (CPU, our WASM SIMD128 kernels; js.WebAssembly in the browser, wasmtime on desktop)
"""
