// A Web Worker that makes the page's memory snapshot (snapshots.mjs) after the page is ready: it starts a
// Pyodide of its own with `_makeSnapshot` (which wraps the `js` module in proxies that WebGPU calls reject,
// so the page's interpreter cannot be the one snapshotted), unpacks the wheel, runs IMPORT_CODE, and
// stores the interpreter's memory under its name. Asked {pyodideURL, url, wheel: bytes}; answers
// {state: "stored", bytes, ms} or {state: "failed", error}.

import { IMPORT_CODE, storeSnapshot, unpackWheel } from "./snapshots.mjs";

self.onmessage = async (event) => {
  const { pyodideURL, url, wheel } = event.data;
  const t0 = performance.now();
  try {
    const { loadPyodide } = await import(pyodideURL + "pyodide.mjs");
    const pyodide = await loadPyodide({ indexURL: pyodideURL, _makeSnapshot: true });
    unpackWheel(pyodide, wheel);
    pyodide.runPython(IMPORT_CODE);
    const bytes = pyodide.makeMemorySnapshot();
    await storeSnapshot(url, bytes);
    self.postMessage({ state: "stored", bytes: bytes.length, ms: performance.now() - t0 });
  } catch (e) {
    self.postMessage({ state: "failed", error: String(e && e.message || e) });
  }
};
