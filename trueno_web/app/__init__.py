"""The app around the library (nothing in `trueno_web` imports it):

demo.py        `python -m trueno_web demo`: every op on the GPU and the CPU fallback, a timed chain
demo_page.py   the Python side of the demo page (web/), run in its Web Worker under Pyodide
demo_workloads.py  what the page computes (activations, filters, the chain) and how it measures it
digits.py      the digit panel: strokes drawn on the page to the 8x8 picture the classifier reads
digit_classifier.py  the digit panel: that picture through the shipped classifier, device and CPU
server.py      the one static-file server: the demo page (`python -m trueno_web serve`), the browser
               tests' assets (e2e/harness.py) and the JupyterLite site (scripts/build_jupyterlite.py)
"""
