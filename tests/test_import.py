"""`import trueno_web` stays light, and the catalog generates every method with its signature."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys

import pytest

import trueno_web as tw
from trueno_web import ops

HEAVY = ("wgpu", "numpy", "js", "pyodide")

PROBE = """
import json, sys
import trueno_web
before = sorted(m for m in sys.modules if m.split(".")[0] in {heavy!r})
from trueno_web import GpuDevice, GpuCommandBatch, BufferId, DeviceArray, Stats, ops, runtime, errors
[op.name for op in ops.CATALOG]
GpuDevice.relu, GpuCommandBatch.matmul, runtime.is_browser(), runtime.sync_available()
after = sorted(m for m in sys.modules if m.split(".")[0] in {heavy!r})
print(json.dumps([before, after]))
"""


@pytest.mark.skipif(sys.platform == "emscripten", reason="needs a subprocess")
def test_import_pulls_in_neither_wgpu_nor_numpy():
    out = subprocess.run([sys.executable, "-c", PROBE.format(heavy=HEAVY)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    before, after = json.loads(out.stdout.strip().splitlines()[-1])
    assert before == [], f"import trueno_web imported {before}"
    assert after == [], f"the API objects and the catalog imported {after}"


def test_public_names():
    for name in tw.__all__:
        assert getattr(tw, name) is not None or name == "newaxis"  # the array API standard's newaxis is None
    with pytest.raises(AttributeError):
        tw.no_such_thing


NAMES = [(name, op) for op in ops.CATALOG for name in (op.name, *op.aliases)]


def expected_parameters(op):
    inputs = {
        "matmul": ["a", "b"],
        "conv2d": ["image", "kernel"],
        "ternary": ["cond", "a", "b"],
        "gather": ["x", "indices"],
        "scatter": ["x", "indices", "values"],
        "search": ["x1", "x2"],
        "attention": ["q", "k", "v", "mask"][: op.arity],
    }.get(op.kind, ["a", "b"] if op.arity == 2 else ["x"])
    return inputs, [(p.name, p.default) for p in op.params], list(op.options)


@pytest.mark.parametrize("cls", ["GpuDevice", "GpuCommandBatch"])
@pytest.mark.parametrize("name,op", NAMES, ids=[n for n, _ in NAMES])
def test_generated_method_and_signature(cls, name, op):
    method = getattr(getattr(tw, cls), name)
    assert callable(method) and method.__name__ == op.name
    assert op.doc in method.__doc__
    sig = inspect.signature(method)
    params = list(sig.parameters.values())
    inputs, scalars, options = expected_parameters(op)
    P = inspect.Parameter
    assert params[0].name == "self"
    got_inputs = params[1 : 1 + len(inputs)]
    assert [p.name for p in got_inputs] == inputs and len(inputs) == op.arity
    assert all(p.default is P.empty for p in got_inputs)
    got_scalars = params[1 + len(inputs) : 1 + len(inputs) + len(scalars)]
    assert [(p.name, None if p.default is P.empty else p.default) for p in got_scalars] == scalars
    got_options = params[1 + len(inputs) + len(scalars) :]
    assert [p.name for p in got_options] == options
    assert all(p.kind is P.KEYWORD_ONLY and p.default is None for p in got_options)


def test_catalog_rows_are_consistent():
    names = [op.name for op in ops.CATALOG]
    aliases = [a for op in ops.CATALOG for a in op.aliases]
    assert len(set(names + aliases)) == len(names) + len(aliases), "names and aliases are unique"
    known = (
        "unary",
        "binary",
        "ternary",
        "reduce",
        "softmax",
        "matmul",
        "conv2d",
        "scan",
        "gather",
        "scatter",
        "sort",
        "search",
        "attention",
    )
    for op in ops.CATALOG:
        assert op.kind in known, op
        arity = {"binary": 2, "matmul": 2, "conv2d": 2, "ternary": 3, "gather": 2, "scatter": 3, "sort": 1, "search": 2}
        assert op.arity == arity.get(op.kind, op.arity)
        assert op.arity in (1, 2) or op.kind in ("ternary", "scatter", "attention")
        assert op.rtol > 0 and op.atol >= 0 and op.doc
        assert callable(op.numpy) and callable(op.ref)
        assert ops.get(op.name) is op and all(ops.get(a) is op for a in op.aliases)
