"""Kinds as data: every catalog row has a kind row, and every backend's table covers every template."""

from __future__ import annotations

import pytest

from trueno_web import kernels, ops
from trueno_web.backends import auto, wasm_module, wasm_runners
from trueno_web.dtypes import DTYPES, signature
from trueno_web.kinds import HOST_TEMPLATES, KINDS, TEMPLATES, Kind


def test_every_kind_has_a_row_and_every_op_a_kind():
    assert set(KINDS) == set(Kind)
    assert all(op.kind in KINDS for op in ops.CATALOG + ops.GENERATORS)
    assert all(op.generator and op.elementwise and not op.inputs for op in ops.GENERATORS)
    assert not any(op.generator for op in ops.CATALOG)
    assert set(TEMPLATES) == {row.template for row in KINDS.values()} | {"rows"}  # rows: graph.RowStep


def test_every_backend_table_covers_every_template():
    for table in (kernels.TEMPLATES, wasm_runners.RUNNERS, auto.GPU_FROM):  # the NumPy backend's own aside
        assert set(table) == set(TEMPLATES) - set(HOST_TEMPLATES), table


def test_the_wasm_module_exports_a_symbol_for_every_op():
    wasmtime = pytest.importorskip("wasmtime", reason="wasmtime (the test extra) reads the module's exports")

    module = wasmtime.Module(wasmtime.Engine(), wasm_module.wasm_bytes())
    exported = {e.name for e in module.exports}
    wanted = {
        wasm_runners.export(op, compute, target if op.returns == "target" else signature(op, [compute] * op.arity)[1])
        for op in ops.CATALOG + ops.GENERATORS
        for compute in op.kernel_dtypes
        for target in (DTYPES if op.returns == "target" else (None,))
    }
    assert wanted <= exported, sorted(wanted - exported)
