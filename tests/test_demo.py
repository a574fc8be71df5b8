"""The desktop demo's op table (`python -m trueno_web demo`): every catalog op runs on its sample inputs and
agrees with its NumPy reference, on every backend (the README's first command prints this table)."""

from __future__ import annotations

import numpy as np
import pytest

from trueno_web import ops
from trueno_web.app.demo import max_error, sample_inputs
from trueno_web.runtime import block_on


@pytest.mark.parametrize("op", ops.CATALOG, ids=lambda op: op.name)
def test_every_op_of_the_demo_table_runs_and_agrees(dev, op):
    inputs, params = sample_inputs(op, np.random.default_rng(1), n=257)
    result = block_on(getattr(dev, op.name)(*inputs, **params))
    assert max_error(op, result, inputs, params) < 1e-4
