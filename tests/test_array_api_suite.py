"""The official array API test suite (data-apis/array-api-tests, 2024.12) against `trueno_web` on the
NumPy backend, file by file, through scripts/array_api_suite.py: a test that fails and is not listed in
array_api_xfails.txt (with its reason) fails here. Few, derandomized Hypothesis examples keep it quick and
reproducible; docs/array_api.md has the pass rate and the reasons grouped."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("array_api_suite", ROOT / "scripts" / "array_api_suite.py")
suite = importlib.util.module_from_spec(spec)
sys.modules["array_api_suite"] = suite
spec.loader.exec_module(suite)

SOURCE = suite.suite_source()
FILES = sorted(p.name for p in (SOURCE / "array_api_tests").glob("test_*.py")) if SOURCE else []
MAX_EXAMPLES = 5

pytestmark = [
    pytest.mark.skipif(SOURCE is None, reason="array-api-tests not found: set ARRAY_API_TESTS_DIR (docs/array_api.md)"),
    pytest.mark.skipif(importlib.util.find_spec("ndindex") is None, reason="the suite needs ndindex (pip install)"),
]


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return suite.prepare(tmp_path_factory.mktemp("array_api"))


def test_the_xfails_file_names_tests_of_the_suite_with_a_reason():
    ids = suite.xfail_ids()
    assert ids, "array_api_xfails.txt lists no test"
    unknown = sorted({i.split("::")[0] for i in ids} - {f"array_api_tests/{f}" for f in FILES})
    assert not unknown, f"array_api_xfails.txt names files the suite does not have: {unknown}"
    assert all(ids.values()), f"entries without a reason: {[i for i, r in ids.items() if not r][:5]}"


@pytest.mark.slow
@pytest.mark.parametrize("name", FILES)
def test_suite_file(work, name, tmp_path):
    report = tmp_path / "report.json"
    proc = suite.run(work, [f"array_api_tests/{name}"], "numpy", MAX_EXAMPLES, report)
    results = suite.outcomes(report) if report.exists() else {}
    failed = sorted(t for t, v in results.items() if v in ("failed", "error"))
    assert proc.returncode in (0, 5), (
        f"{len(failed)} test(s) failed that array_api_xfails.txt does not list (fix them, or add each with its "
        f"reason):\n" + "\n".join(failed[:40]) + f"\n{proc.stdout[-4000:]}\n{proc.stderr[-2000:]}"
    )
