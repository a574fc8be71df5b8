"""The accuracy tests (tests/test_accuracy.py, test_sums.py, test_loops.py), run unchanged inside Pyodide
in headless Chromium, on webgpu (SwiftShader) and wasm-simd: the ulp sweep of every elementwise op (2^12 values
each, every special value among them) alone, through a fused batch chain and a tensor expression, the
named cases and pow of subnormals; sum and norm_l1 against math.fsum (alternating 1e8, 1, -1e8, 1; 2^24 + 3 ones;
a wide range; random); the loops at lavapipe's 65535-trip boundary (matmul K = 8 * 65535 + 16,
convolutions of 65534 to 131071 taps) and LimitError for rows too long for the budget. NumPy is absent there: the
references are accuracy.py's pure-Python path (tests/test_accuracy.py checks it against NumPy's on the desktop).

Left to the desktop, for time (SwiftShader compiles a pipeline in seconds and runs the boundary's (2, K) @ (K, 2)
in ~20 s): the softmax denominators, dot / mean / norm_l2 / row sums and split K / taps on a lowered budget
(the same WGSL and the same splitting code as the cases here).
"""

from __future__ import annotations

from pathlib import Path

from e2e.harness import check_counts

TESTS = Path(__file__).resolve().parent.parent / "tests"
FILES = ["test_accuracy.py", "test_sums.py", "test_loops.py"]
SELECT = "(webgpu or wasm or raises) and not (dot_mean or random_products or softmax)"


def test_accuracy_suite_on_webgpu_and_wasm_simd(pyodide_page):
    result = pyodide_page.run_test_files(TESTS, FILES, "/home/pyodide/accuracy", select=SELECT, marks="")
    print(
        f"\naccuracy in Pyodide (webgpu + wasm-simd): {result['passed']} passed, {result['skipped']} skipped; "
        f"per file: {result['per_file']}; seconds per file: {result['seconds_per_file']}"
    )
    check_counts(result, at_least=142, per_file={"test_accuracy.py": 128, "test_sums.py": 8, "test_loops.py": 6})
