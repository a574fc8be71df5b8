"""Accuracy like a math library (#14): every elementwise op of the catalog, on every backend, within its
ulp bound (`Op.ulp`) of a float64 reference on a dense float32 sample (accuracy.sweep_sample: every
exponent of both signs, subnormals, +-0, +-inf, NaN, a dense grid where the activations bend and the
known hard points); alone, fused in a batch's chain, and in a tensor expression. The float64 references
(`Op.exact`, else `Op.numpy` on float64) are themselves checked against 60-digit decimal arithmetic.

On webgpu a result whose reference is below float32's normal range may be +-0 (a GPU may flush
subnormals; WGSL allows it); the CPU backends must give the subnormal. bench/accuracy_sweep.py runs the
full 2^20 values per op and prints the table of docs/accuracy.md.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

import numpy as np
import pytest

from trueno_web import accuracy, ops, references
from trueno_web.runtime import block_on

ELEMENTWISE = [op for op in ops.CATALOG if op.elementwise]
SWEEP_LOG2N = {"webgpu": 16}  # lavapipe: 2^16 per op keeps CI short; the CPU backends 2^18


def worst(op: ops.Op, inputs, got, kw, backend: str) -> str:
    """'' when every element is within the op's bound, else the worst element described."""
    err = accuracy.sweep_errors(op, inputs, got, kw, flush=backend == "webgpu")
    i = int(np.argmax(err))
    if err[i] <= op.ulp:
        return ""
    at = ", ".join(repr(float(x[i])) for x in inputs)
    w = accuracy.float64_reference(op, inputs, kw)[i]
    return (f"{op.name} on {backend}: {int(np.sum(err > op.ulp))} values past {op.ulp} ulp; worst {err[i]:.3g} ulp "
            f"at ({at}): got {float(np.asarray(got).reshape(-1)[i])!r}, float64 {float(w)!r}")


def sample_size(backend: str) -> int:
    return 1 << SWEEP_LOG2N.get(backend, 18)


@pytest.mark.parametrize("op", ELEMENTWISE, ids=lambda op: op.name)
def test_sweep_within_the_ulp_bound(dev, op):
    inputs = accuracy.sweep_inputs(op, sample_size(dev.backend))
    kw = accuracy.sweep_params(op)
    problem = worst(op, inputs, np.asarray(block_on(getattr(dev, op.name)(*inputs, **kw))), kw, dev.backend)
    assert not problem, problem


@pytest.mark.parametrize("op", [op for op in ELEMENTWISE if op.group == "activation" or op.name in ("exp", "log")],
                         ids=lambda op: op.name)
def test_fused_chain_and_tensor_expression_keep_the_bound(dev, op):
    """The op inside a fused map chain (between two exact negations) and in a tensor expression gives the
    same accuracy as alone (2^14 values)."""
    inputs = accuracy.sweep_inputs(op, 1 << 14, seed=5)
    kw = accuracy.sweep_params(op)
    b = dev.batch()
    ids = [b.neg(b.neg(b.upload(x))) for x in inputs]
    out = b.neg(b.neg(getattr(b, op.name)(*ids, **kw)))
    block_on(b.execute())
    problem = worst(op, inputs, np.asarray(block_on(b.read(out))), kw, dev.backend)
    assert not problem, "batch: " + problem
    t = getattr(-dev.tensor(inputs[0]), op.name)(**kw)
    problem = worst(op, [-inputs[0]], np.asarray(block_on((-(-t)).numpy())), kw, dev.backend)
    assert not problem, "tensor: " + problem


# ---------------------------------------------------------------- the issue's cases, by name

ISSUE_CASES = [  # (op, x, float64 value): each must come back within the op's bound, signs of zero too
    ("tanh", 1e-45, 1.401298464324817e-45), ("elu", -1e-45, -1.401298464324817e-45),
    ("selu", -1e-45, -1.7580993408473766 * 1.401298464324817e-45), ("mish", -20.0, -20.0 * math.exp(-20.0)),
    ("hardswish", 3.4e38, float(np.float32(3.4e38))), ("elu", -0.0, -0.0), ("selu", -0.0, -0.0),
    ("gelu", -4.4, None), ("gelu", -10.0, None), ("mish", -12.0, None), ("swish", -100.0, None), ("sin", -0.0, -0.0),
]


@pytest.mark.parametrize("name,x,value", ISSUE_CASES, ids=lambda v: repr(v))
def test_the_issue_cases(dev, name, x, value):
    op = ops.get(name)
    xs = np.array([x], np.float32)
    w = accuracy.float64_reference(op, [xs], accuracy.sweep_params(op)) if value is None else np.array([value])
    got = np.asarray(block_on(getattr(dev, name)(xs)), np.float64)
    assert accuracy.ulp_errors(got, w, flush=dev.backend == "webgpu")[0] <= op.ulp, f"{name}({x!r}) = {got[0]!r}, want {w[0]!r}"


POW_SUBNORMAL = [(0.0, 1.1754942e-38), (0.0, -1e-40), (-1e-40, 0.5), (np.inf, 1e-40), (np.inf, -1e-40),
                 (-1e-40, 3.0), (2.0, 1e-40), (-2.0, 1e-40), (1.1754942e-38, 0.0005825), (1e-45, 0.01), (3e-39, -0.25)]


def test_pow_of_subnormal_operands(dev):
    """pow with a subnormal base or exponent: within the bound of the result for the operands as given, or
    (webgpu) for them flushed to zero, never a mix of the two: on the lent H100 pow(0, 1.1754942e-38) gave
    inf (test_reliability's special-value graphs found it), the kernel's y > 0 reading the exponent as 0
    where its bits had said nonzero, and pow(1.1754942e-38, 0.0005825) 0.9409 for 0.9504, its log2 of a
    subnormal base normalised by a multiply that the GPU flushed to 0."""
    op = ops.get("pow")
    x, y = (np.array(v, np.float32) for v in zip(*POW_SUBNORMAL))
    got = np.asarray(block_on(dev.pow(x, y)), np.float64)
    errors = accuracy.sweep_errors(op, [x, y], got, {}, flush=dev.backend == "webgpu")
    assert np.all(errors <= op.ulp), [(a, b, g) for a, b, g, e in zip(x, y, got, errors) if not e <= op.ulp]


# ---------------------------------------------------------------- the references themselves


def _dec_exp(d: Decimal) -> Decimal:
    return d.exp()


def _dec_sigmoid(d: Decimal) -> Decimal:
    return 1 / (1 + _dec_exp(-d))


def _dec_tanh(d: Decimal) -> Decimal:
    e = _dec_exp(2 * d)
    return (e - 1) / (e + 1)


GELU_2C = (Decimal(8) / Decimal("3.14159265358979323846264338327950288419716939937510582097494")).sqrt()
DECIMAL = {  # op -> its definition in decimal arithmetic (finite x; params as float32 values)
    "sigmoid": _dec_sigmoid,
    "tanh": _dec_tanh,
    "swish": lambda d: d * _dec_sigmoid(d),
    "gelu": lambda d: d * _dec_sigmoid(GELU_2C * (d + Decimal("0.044715") * d**3)),
    "mish": lambda d: d * _dec_tanh((1 + _dec_exp(d)).ln()),
    "elu": lambda d: d if d > 0 else _dec_exp(d) - 1,
    "selu": lambda d: Decimal(references.SELU_SCALE) * (d if d > 0 else Decimal(references.SELU_ALPHA) * (_dec_exp(d) - 1)),
    "hardswish": lambda d: d * min(max(d + 3, Decimal(0)), Decimal(6)) / 6,
    "exp": _dec_exp,
    "log": lambda d: d.ln(),
}


@pytest.mark.parametrize("name", sorted(DECIMAL))
def test_float64_references_agree_with_60_digit_decimals(name):
    """Op.exact (or Op.numpy in float64) within 2^-40 relative of the definition computed in 60 digits, on
    1500 sample values (the hard points included) where the result is a normal float32."""
    op = ops.get(name)
    xs = accuracy.sweep_sample(1500, seed=3)
    xs = xs[np.isfinite(xs) & (np.abs(xs) < 400)]
    if name == "log":
        xs = np.abs(xs[xs != 0])
    w = accuracy.float64_reference(op, [xs], accuracy.sweep_params(op))
    bad = []
    with localcontext() as ctx:
        ctx.prec = 60
        for x, v in zip(xs.tolist(), w.tolist()):
            d = DECIMAL[name](Decimal(x))
            if abs(d) < Decimal(accuracy.F32_TINY) or abs(d) > Decimal(references.F32_MAX):
                continue
            if abs(Decimal(v) - d) > abs(d) * Decimal(2) ** -40:
                bad.append(f"{name}({x!r}): reference {v!r}, decimal {float(d)!r}")
    assert not bad, "; ".join(bad[:5])


def test_ulp_errors_counts_what_it_should():
    """The measure: 1 ulp is 1, the sign of zero, NaN and infinities are exact matches, flushes only where asked."""
    one = float(np.nextafter(np.float32(1.5), np.float32(2)))
    err = accuracy.ulp_errors([one, 0.0, -0.0, np.nan, np.inf, 1.0, 0.0], [1.5, 0.0, 0.0, np.nan, 1e39, np.nan, 1e-40])
    assert err.tolist() == [1.0, 0.0, math.inf, 0.0, 0.0, math.inf, accuracy.ulp_errors([0.0], [1e-40])[0]]
    assert err[-1] > 1e3 and accuracy.ulp_errors([0.0], [1e-40], flush=True)[0] == 0
