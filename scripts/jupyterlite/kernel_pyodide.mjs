// The JupyterLite site's `pyodideUrl` (static/pyodide/kernel_pyodide.mjs): the kernel's worker imports it
// and calls its loadPyodide as it would Pyodide's. It starts Pyodide from the snapshot made at site build
// (scripts/jupyterlite_snapshot.py: the kernel's packages installed and `pyodide_kernel` imported) and
// writes their files back into site-packages (a snapshot holds memory, not files). The build fills in the
// two file names (content-hashed) and the packages Pyodide had loaded.

import createPyodideModule from "./pyodide.asm.mjs";
import { loadPyodide as startPyodide } from "./pyodide.mjs";

const SNAPSHOT = "SNAPSHOT_FILE";
const FILES = "FILES_FILE";
const LOADED = "LOADED_PACKAGES"; // Pyodide's loadedPackages at the snapshot (which must be made without)
const here = new URL(".", import.meta.url);

let started = null; // the pyodide object, once loadPyodide has returned it

// A JS object the snapshot names (kernel_snapshot_maker.mjs's nameOf) for its slot in the handle table:
// Pyodide's API (not there yet while the snapshot is restored), looked up on each use, or a freed slot's
// leftover, which nothing uses.
function revive(name) {
  if (name.gone !== undefined) {
    return new Proxy({}, {
      get() {
        throw new Error(`a ${name.gone} the kernel's snapshot took for freed is used: rebuild the site with ` +
          "python scripts/build_jupyterlite.py --force, and report it if it happens again");
      },
    });
  }
  const target = () => {
    if (!started) throw new Error(`pyodide.${name.api.join(".")} used before Pyodide started`);
    return name.api.reduce((holder, key) => holder[key], started);
  };
  return new Proxy(name.kind === "function" ? function () {} : {}, {
    get: (_shell, key) => Reflect.get(target(), key),
    set: (_shell, key, value) => Reflect.set(target(), key, value),
    has: (_shell, key) => Reflect.has(target(), key),
    ownKeys: () => Reflect.ownKeys(target()),
    getOwnPropertyDescriptor: (_shell, key) => {
      const d = Reflect.getOwnPropertyDescriptor(target(), key);
      return d && { ...d, configurable: true };
    },
    apply: (_shell, self, args) => Reflect.apply(target(), self, args),
  });
}

async function bytesOf(name) {
  const response = await fetch(new URL(name, here));
  if (!response.ok) {
    throw new Error(`${name}: HTTP ${response.status}; rebuild the site: python scripts/build_jupyterlite.py --force`);
  }
  return new Uint8Array(await response.arrayBuffer());
}

// Write back site-packages as kernel_snapshot_maker.mjs packed it (packFiles).
function writeFiles(pyodide, bytes) {
  const site = pyodide.runPython("import sysconfig; sysconfig.get_path('purelib')");
  const n = new DataView(bytes.buffer, bytes.byteOffset).getUint32(0, true);
  const entries = JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + n)));
  const data = bytes.subarray(4 + n);
  const made = new Set();
  for (const [path, offset, size] of entries) {
    const full = `${site}/${path}`;
    const dir = full.slice(0, full.lastIndexOf("/"));
    if (!made.has(dir)) {
      pyodide.FS.mkdirTree(dir);
      made.add(dir);
    }
    pyodide.FS.writeFile(full, data.subarray(offset, offset + size), { canOwn: true }); // no copy
  }
}

export async function loadPyodide(options) {
  // `packages` names what the snapshot already holds, so that the worker skips installing it
  const { packages: _inSnapshot, ...rest } = options;
  const files = bytesOf(FILES);
  const snapshot = bytesOf(SNAPSHOT);
  // Pyodide 314.0.7 copies the snapshot into the module's memory as instantiated (its wasm sets the size,
  // not INITIAL_MEMORY): grow it first to the snapshot's memory (all after the header, whose size is word 1)
  const createGrown = async (settings) => {
    const module = await createPyodideModule(settings);
    const bytes = await snapshot;
    module.growMemory(bytes.length - new Uint32Array(bytes.buffer, bytes.byteOffset, 2)[1]);
    return module;
  };
  const pyodide = await startPyodide({
    ...rest,
    createPyodideModule: createGrown,
    _loadSnapshot: snapshot,
    _snapshotDeserializer: revive,
  });
  started = pyodide;
  Object.assign(pyodide.loadedPackages, LOADED);
  writeFiles(pyodide, await files);
  pyodide.runPython("import importlib; importlib.invalidate_caches()");
  return pyodide;
}
