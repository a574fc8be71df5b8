"""The app around the library (nothing in `trueno_web` imports it):

    demo.py        `python -m trueno_web demo`: every op on the GPU and the CPU fallback, a timed chain
    demo_page.py   the Python side of the demo page (web/), run in its Web Worker under Pyodide
    server.py      the one static-file server: the demo page (`python -m trueno_web serve`), the browser
                   tests' assets (e2e/harness.py) and the JupyterLite site (scripts/build_jupyterlite.py)
"""
