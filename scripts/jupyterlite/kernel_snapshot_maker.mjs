// A Web Worker, run once at site build (scripts/jupyterlite_snapshot.py, in headless Chromium), that
// does what jupyterlite-pyodide-kernel 0.8.6's worker does before its first cell (micropip, piplite,
// the kernel's packages, `import pyodide_kernel`) in a Pyodide started with `_makeSnapshot`. Asked
// {pyodideUrl, pipliteWheelUrl, pipliteUrls, packages}; answers {snapshot, files, loaded, ms}: the
// interpreter's memory, site-packages packed in one file (a snapshot holds memory, not files) and Pyodide's
// loadedPackages, from which kernel_pyodide.mjs starts the notebook's kernel; or {error}.

// How the snapshot names a JS object the interpreter's handle table holds that is not reached from
// globalThis (kernel_pyodide.mjs's `revive` reads it): {api: path, kind} for Pyodide's own API (the pyodide
// object's properties, two levels down: micropip's loadPackage, the kernel's loadPackagesFromImports), else
// {gone: what}: a freed handle's slot still shows the last object it held (a finished fetch's Response).
function nameOf(pyodide, obj) {
  if (obj === pyodide) return { api: [], kind: typeof obj };
  const seen = new Set([pyodide]);
  let level = [[pyodide, []]];
  for (let depth = 0; depth < 3; depth++) {
    const next = [];
    for (const [holder, path] of level) {
      let keys;
      try {
        keys = Object.getOwnPropertyNames(holder);
      } catch {
        continue;
      }
      for (const key of keys) {
        let value;
        try {
          value = holder[key];
        } catch {
          continue;
        }
        if (value === obj) return { api: [...path, key], kind: typeof obj };
        if (value && typeof value === "object" && !ArrayBuffer.isView(value) && !seen.has(value)) {
          seen.add(value);
          next.push([value, [...path, key]]);
        }
      }
    }
    level = next;
  }
  let what = typeof obj;
  try {
    what = `${Object.prototype.toString.call(obj)} ${obj.name || obj.constructor?.name || ""}`;
  } catch {}
  return { gone: what };
}

// site-packages as one file that kernel_pyodide.mjs writes back with FS calls (unpacking a zip in Python
// took longer than the rest of the start), read through FS so that the interpreter's memory does not
// grow: a little-endian u32 n, n bytes of JSON [[path relative to site-packages, offset, size], ...],
// then the files' bytes.
function packFiles(pyodide) {
  const { FS } = pyodide;
  const site = pyodide.runPython("import sysconfig; sysconfig.get_path('purelib')");
  const entries = [];
  const chunks = [];
  let offset = 0;
  const walk = (rel) => {
    for (const name of FS.readdir(`${site}/${rel}`).sort()) {
      if (name === "." || name === "..") continue;
      const path = rel ? `${rel}/${name}` : name;
      if (FS.isDir(FS.stat(`${site}/${path}`).mode)) {
        walk(path);
      } else {
        const data = FS.readFile(`${site}/${path}`);
        entries.push([path, offset, data.length]);
        chunks.push(data);
        offset += data.length;
      }
    }
  };
  walk("");
  const header = new TextEncoder().encode(JSON.stringify(entries));
  const out = new Uint8Array(4 + header.length + offset);
  new DataView(out.buffer).setUint32(0, header.length, true);
  out.set(header, 4);
  let at = 4 + header.length;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

self.onmessage = async (event) => {
  const { pyodideUrl, pipliteWheelUrl, pipliteUrls, packages } = event.data;
  const t0 = performance.now();
  try {
    const { loadPyodide } = await import(pyodideUrl);
    const indexURL = pyodideUrl.slice(0, pyodideUrl.lastIndexOf("/") + 1);
    const pyodide = await loadPyodide({ indexURL, _makeSnapshot: true });
    await pyodide.loadPackage(["micropip"]);
    await pyodide.runPythonAsync(`
import micropip
await micropip.install(${JSON.stringify(pipliteWheelUrl)}, keep_going=True)
import piplite.piplite
piplite.piplite._PIPLITE_DISABLE_PYPI = True
piplite.piplite._PIPLITE_URLS = ${JSON.stringify(pipliteUrls)}
for name in ${JSON.stringify(packages)}:
    await piplite.install(name, keep_going=True)
import pyodide_kernel
# the site's indices as this build's server gave them: the kernel sets its own URLs after the start
piplite.piplite._PIPLITE_URLS = []
piplite.piplite._PIPLITE_INDICES.clear()
`);
    const files = packFiles(pyodide);
    // Pyodide snapshots only an interpreter whose loadedPackages is empty: kept apart, the starter puts it back
    const loaded = { ...pyodide.loadedPackages };
    for (const name of Object.keys(loaded)) delete pyodide.loadedPackages[name];
    pyodide.runPython("import gc; gc.collect()"); // JS objects only garbage still refers to: let go
    const snapshot = pyodide.makeMemorySnapshot({ serializer: (obj) => nameOf(pyodide, obj) });
    self.postMessage({ snapshot, files, loaded, ms: performance.now() - t0 }, [snapshot.buffer, files.buffer]);
  } catch (e) {
    self.postMessage({ error: String((e && (e.stack || e.message)) || e) });
  }
};
