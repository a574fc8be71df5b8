"""The wasm-simd backend's strided views and row reductions, without NumPy (so it runs inside Pyodide too):
every kind of view gathered by tw_gather (one call) against layout.View's definition read element by element;
reductions of R rows in one call bit-identical with each row reduced on its own."""

from __future__ import annotations

import array
import itertools
import math
import random

import pytest

import trueno_web as tw
from trueno_web import ops
from trueno_web.layout import View
from trueno_web.runtime import block_on

BASE = 1024
NAN, INF = float("nan"), float("inf")

#: (shape, strides, offset, mask) over a base of BASE floats
VIEWS = {
    "transpose": ((4, 8), (1, 4), 0, None),
    "transpose-long": ((300, 3), (1, 300), 0, None),
    "slice-long-rows": ((3, 300), (301, 1), 7, None),
    "broadcast-row": ((5, 7), (0, 1), 3, None),
    "broadcast-col": ((5, 7), (1, 0), 2, None),
    "broadcast-scalar": ((3, 4), (0, 0), 9, None),
    "negative-step": ((6,), (-1,), 10, None),
    "negative-both": ((3, 5), (-10, -2), 63, None),
    "offset-step": ((3, 4), (16, 2), 5, None),
    "rank3": ((2, 3, 4), (1, 8, 2), 0, None),
    "rank4": ((2, 2, 3, 2), (30, 1, 8, -1), 3, None),
    "rank6": ((2, 1, 3, 2, 2, 3), (200, 0, 40, -7, 3, 1), 20, None),
    "scalar": ((), (), 7, None),
    "padded": ((6, 9), (7, 1), -8, ((1, 5), (1, 8))),
    "padded-broadcast": ((4, 5), (0, 1), 2, ((0, 4), (2, 5))),
    "padded-outer": ((5, 3), (3, 1), 0, ((2, 4), (0, 3))),
    "padded-negative": ((3, 4, 5), (20, -5, 1), 15, ((0, 2), (1, 4), (0, 3))),
    "padded-strided-last": ((4, 6), (1, 4), -1, ((0, 4), (1, 5))),
    "padded-nothing-valid": ((2, 3), (3, 1), 0, ((0, 0), (0, 0))),
    "empty-outer": ((0, 5), (5, 1), 3, None),
    "empty-inner": ((4, 0), (1, 1), 0, None),
    "empty-middle": ((3, 0, 2), (1, 1, 1), 0, None),
}


@pytest.fixture
def calls(wasm, monkeypatch):
    """The names of the module's exports called while a test runs."""
    module = wasm.executor.module
    names, call = [], module.call
    monkeypatch.setattr(module, "call", lambda name, *args: names.append(name) or call(name, *args))
    return names


def base_data() -> array.array:
    """BASE distinct floats with a NaN, +-inf and -0.0 among them."""
    rng = random.Random(5)
    data = array.array("f", (rng.uniform(-100.0, 100.0) for _ in range(BASE)))
    data[1], data[4], data[9], data[13] = NAN, INF, -INF, -0.0
    return data


def reference_gather(flat: array.array, view: View) -> array.array:
    """The view by its definition, element by element: offset + sum(i * stride), 0.0 outside the mask."""
    out = array.array("f")
    for index in itertools.product(*(range(d) for d in view.shape)):
        valid = view.mask is None or all(lo <= i < hi for i, (lo, hi) in zip(index, view.mask))
        out.append(flat[view.offset + sum(i * s for i, s in zip(index, view.strides))] if valid else 0.0)
    return out


def as_bits(values) -> bytes:
    """The float32 bits of a read result (NumPy array or array('f')) or of a Python float."""
    if isinstance(values, float):
        return array.array("f", [values]).tobytes()
    return memoryview(values).tobytes()


@pytest.mark.parametrize("name", VIEWS)
def test_gather_wasm_matches_the_view_definition(wasm, calls, name):
    shape, strides, offset, mask = VIEWS[name]
    view = View(shape, strides, offset, mask)
    flat = base_data()
    b = wasm.batch()
    out = b.copy(b.view(b.upload(flat), shape, strides, offset, mask))
    block_on(b.execute())
    got = block_on(b.read(out))
    assert as_bits(got) == reference_gather(flat, view).tobytes()
    assert calls.count("tw_gather") == (1 if math.prod(shape) else 0), calls


def test_identity_views_are_not_gathered_wasm(wasm, calls):
    b = wasm.batch()
    out = b.copy(b.view(b.upload(base_data()), (32, 32), (32, 1)))
    block_on(b.execute())
    assert as_bits(block_on(b.read(out))) == base_data().tobytes()
    assert "tw_gather" not in calls


REDUCE = [op for op in ops.CATALOG if op.kind == "reduce"]


def rows_of(rows: int, cols: int, seed: int, specials: bool) -> array.array:
    """rows x cols floats (factors near 1 for prod); with `specials`, NaN, +-inf and 1e30 in some rows."""
    rng = random.Random(seed)
    data = array.array("f", (rng.choice((-1.0, 1.0)) * math.exp(rng.uniform(-0.3, 0.3)) for _ in range(rows * cols)))
    if specials and cols:
        for r, v in zip(range(0, rows, 2), itertools.cycle((NAN, INF, -INF, 1e30, -0.0))):
            data[r * cols + rng.randrange(cols)] = v
    return data


@pytest.mark.parametrize("specials", [False, True], ids=["finite", "specials"])
@pytest.mark.parametrize(
    "rows,cols", [(1, 5), (3, 1), (7, 4), (5, 17), (33, 3), (2, 2049), (3, 4100), (4, 0), (0, 6)], ids=lambda v: str(v)
)
@pytest.mark.parametrize("op", REDUCE, ids=lambda op: op.name)
def test_row_reductions_wasm_in_one_call_match_each_row_alone(wasm, calls, op, rows, cols, specials):
    inputs = [rows_of(rows, cols, seed, specials) for seed in range(len(op.inputs))]
    b = wasm.batch()
    if cols == 0 and rows and not op.empty:  # max/min of an empty row: refused where it is written
        with pytest.raises(tw.TruenoValueError, match="empty axis"):
            b.record(op, tuple(b.upload(x, shape=(rows, cols)) for x in inputs), (), {"rows": rows})
        assert b.num_operations == 0 and block_on(wasm.max([1.0, 3.0])) == 3.0  # nothing left behind; still usable
        return
    out = b.record(op, tuple(b.upload(x, shape=(rows, cols)) for x in inputs), (), {"rows": rows})
    block_on(b.execute())
    got = as_bits(block_on(b.read(out)))
    assert calls.count(f"tw_{op.name}") == 1, calls
    alone = b"".join(
        as_bits(block_on(getattr(wasm, op.name)(*(x[r * cols : (r + 1) * cols] for x in inputs)))) for r in range(rows)
    )
    assert got == alone


def test_row_reduction_wasm_of_a_transposed_view(wasm, calls):
    """Rows of a strided view: gathered (one call) then reduced (one call), as the gathered rows alone."""
    flat = base_data()[16 : 16 + 8 * 6]
    view = View((6, 8), (1, 6), 0)
    b = wasm.batch()
    out = b.record(ops.get("sum"), (b.view(b.upload(flat), view.shape, view.strides),), (), {"rows": 6})
    block_on(b.execute())
    got = as_bits(block_on(b.read(out)))
    assert calls.count("tw_gather") == 1 and calls.count("tw_sum") == 1, calls
    rows = reference_gather(flat, view)
    assert got == b"".join(as_bits(block_on(wasm.sum(rows[r * 8 : (r + 1) * 8]))) for r in range(6))
