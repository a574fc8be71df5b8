// Where the page gets Pyodide and the trueno_web wheel. Relative URLs resolve against this folder.
//
// Default: a local copy, as `python -m trueno_web serve` serves it (build/web/pyodide/ at pyodide/,
// build/web/wheels/ at wheels/, both filled by `python scripts/fetch_web_assets.py`). Behind any other
// static server, put those two folders next to index.html.
//
// To load Pyodide from a CDN instead, change this one line (same version as the local copy), e.g.
//   export const PYODIDE_URL = "https://cdn.jsdelivr.net/pyodide/v314.0.7/full/";
export const PYODIDE_URL = "pyodide/";

// The folder with manifest.json and the trueno_web wheel it names.
export const WHEELS_URL = "wheels/";
