// Memory snapshots of the worker's interpreter (Pyodide's `_makeSnapshot` / `_loadSnapshot`): Python
// started, the trueno_web wheel unpacked and the page's modules imported, kept in Cache Storage so that a
// later visit starts Python from it instead of from scratch (docs/benchmarks.md, "the first minute").
// A snapshot's name holds Pyodide's version and the wheel's sha256 (manifest.json): a new wheel or a new
// Pyodide is a new name, and storing one deletes the others. Used by worker.mjs (load) and
// snapshot_maker.mjs (make: an interpreter made for a snapshot cannot call WebGPU, so it is a worker of its own).

export const CACHE = "trueno-web-snapshots";
// What the page's interpreter runs before its first panel, after the wheel is unpacked; the snapshot holds
// its result (the same code, made or loaded). The backends are the modules that opening the page's devices
// imports (GpuDevice.create): imported here, touching no JS, they are in the snapshot too.
export const IMPORT_CODE = "import importlib; importlib.invalidate_caches()\n" +
  "import trueno_web.app.demo_page as _dp\n" +
  "import trueno_web.backends.browser, trueno_web.backends.gpu, trueno_web.backends.wasm_simd";

const here = new URL(".", import.meta.url);

export function snapshotURL(pyodideVersion, wheelSha256) {
  return new URL(`snapshots/pyodide-${pyodideVersion}-trueno_web-${wheelSha256}.bin`, here).href;
}

// Unpack the project wheel (a pure wheel, no dependencies) from memory into site-packages. A snapshot
// holds the interpreter's memory but not its files: a loaded one needs the wheel's files again.
export function unpackWheel(pyodide, bytes) {
  const site = pyodide.runPython("import sysconfig; sysconfig.get_path('purelib')");
  pyodide.unpackArchive(bytes, "wheel", { extractDir: site });
}

// The snapshot stored under `url`, or null (none, or no Cache Storage here: an insecure origin).
export async function readSnapshot(url) {
  if (!self.caches) return null;
  const response = await (await caches.open(CACHE)).match(url);
  return response ? new Uint8Array(await response.arrayBuffer()) : null;
}

// Store `bytes` under `url` and delete every other snapshot (an older wheel's or Pyodide's).
export async function storeSnapshot(url, bytes) {
  const cache = await caches.open(CACHE);
  await cache.put(url, new Response(bytes, { headers: { "Content-Type": "application/octet-stream" } }));
  for (const request of await cache.keys()) {
    if (request.url !== url) await cache.delete(request);
  }
}

export async function dropSnapshot(url) {
  if (self.caches) await (await caches.open(CACHE)).delete(url);
}
