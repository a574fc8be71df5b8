"""Accuracy like a math library: every elementwise op of the catalog, on every backend, within its
ulp bound (`Op.ulp`) of a float64 reference on a dense float32 sample (accuracy.sweep_sample: every
exponent of both signs, subnormals, +-0, +-inf, NaN, a dense grid where the activations bend and the
known hard points); alone, fused in a batch's chain, and in a tensor expression. The float64 references
(`Op.exact`, else `Op.numpy` on float64) are themselves checked against 60-digit decimal arithmetic.

On webgpu a result whose reference is below float32's normal range may be +-0 (a GPU may flush
subnormals; WGSL allows it); the CPU backends must give the subnormal. bench/accuracy_sweep.py runs the
full 2^20 values per op and prints the table of docs/accuracy.md.
"""

from __future__ import annotations

import array
import math
from decimal import Decimal, localcontext

import pytest
from _cases import FLOAT_CATALOG, flat

from trueno_web import accuracy, ops, references
from trueno_web.host import numpy_available
from trueno_web.runtime import block_on

ELEMENTWISE = [op for op in FLOAT_CATALOG if op.elementwise and op.returns == "same"]
# lavapipe: 2^16 per op keeps CI short; the CPU backends 2^18. Without NumPy (inside Pyodide: e2e/
# test_accuracy_in_pyodide.py) the references are pure Python: 2^12 values per op, 2^11 through a chain.
SWEEP_LOG2N = {"webgpu": 16}
SMALL = not numpy_available()


def worst(op: ops.Op, inputs, got, kw, backend: str) -> str:
    """'' when every element is within the op's bound, else the worst element described."""
    return accuracy.worst(op, inputs, got, kw, flush=backend == "webgpu", where=backend)


def sample_size(backend: str) -> int:
    return 1 << (12 if SMALL else SWEEP_LOG2N.get(backend, 18))


@pytest.mark.parametrize("op", ELEMENTWISE, ids=lambda op: op.name)
def test_sweep_within_the_ulp_bound(dev, op):
    inputs = accuracy.sweep_inputs(op, sample_size(dev.backend))
    kw = accuracy.sweep_params(op)
    problem = worst(op, inputs, block_on(getattr(dev, op.name)(*inputs, **kw)), kw, dev.backend)
    assert not problem, problem


@pytest.mark.parametrize(
    "op", [op for op in ELEMENTWISE if op.group == "activation" or op.name in ("exp", "log")], ids=lambda op: op.name
)
def test_fused_chain_and_tensor_expression_keep_the_bound(dev, op):
    """The op inside a fused map chain (between two exact negations) and in a tensor expression gives the
    same accuracy as alone (2^14 values; 2^11 without NumPy)."""
    inputs = accuracy.sweep_inputs(op, 1 << (11 if SMALL else 14), seed=5)
    kw = accuracy.sweep_params(op)
    b = dev.batch()
    ids = [b.neg(b.neg(b.upload(x))) for x in inputs]
    out = b.neg(b.neg(getattr(b, op.name)(*ids, **kw)))
    block_on(b.execute())
    problem = worst(op, inputs, block_on(b.read(out)), kw, dev.backend)
    assert not problem, "batch: " + problem
    t = getattr(-dev.tensor(inputs[0]), op.name)(**kw)
    negated = array.array("f", (-v for v in inputs[0]))
    problem = worst(op, [negated], block_on((-(-t)).numpy()), kw, dev.backend)
    assert not problem, "tensor: " + problem


# ---------------------------------------------------------------- named cases

NAMED_CASES = [  # (op, x, float64 value): each must come back within the op's bound, signs of zero too
    ("tanh", 1e-45, 1.401298464324817e-45),
    ("elu", -1e-45, -1.401298464324817e-45),
    ("selu", -1e-45, -1.7580993408473766 * 1.401298464324817e-45),
    ("mish", -20.0, -20.0 * math.exp(-20.0)),
    ("hardswish", 3.4e38, accuracy.f32(3.4e38)),
    ("elu", -0.0, -0.0),
    ("selu", -0.0, -0.0),
    ("gelu", -4.4, None),
    ("gelu", -10.0, None),
    ("mish", -12.0, None),
    ("swish", -100.0, None),
    ("sin", -0.0, -0.0),
]


@pytest.mark.parametrize("name,x,value", NAMED_CASES, ids=lambda v: repr(v))
def test_named_cases(dev, name, x, value):
    op = ops.get(name)
    xs = array.array("f", [x])
    w = accuracy.float64_reference(op, [xs], accuracy.sweep_params(op))[0] if value is None else value
    got = float(flat(block_on(getattr(dev, name)(xs)))[0])
    assert accuracy.ulp_error(got, float(w), flush=dev.backend == "webgpu") <= op.ulp, (
        f"{name}({x!r}) = {got!r}, want {w!r}"
    )


POW_SUBNORMAL = [
    (0.0, 1.1754942e-38),
    (0.0, -1e-40),
    (-1e-40, 0.5),
    (math.inf, 1e-40),
    (math.inf, -1e-40),
    (-1e-40, 3.0),
    (2.0, 1e-40),
    (-2.0, 1e-40),
    (1.1754942e-38, 0.0005825),
    (1e-45, 0.01),
    (3e-39, -0.25),
]


def test_pow_of_subnormal_operands(dev):
    """pow with a subnormal base or exponent: within the bound of the result for the operands as given, or
    (webgpu) for them flushed to zero, never a mix of the two: on the lent H100 pow(0, 1.1754942e-38) gave
    inf (test_reliability's special-value graphs found it), the kernel's y > 0 reading the exponent as 0
    where its bits had said nonzero, and pow(1.1754942e-38, 0.0005825) 0.9409 for 0.9504, its log2 of a
    subnormal base normalised by a multiply that the GPU flushed to 0."""
    op = ops.get("pow")
    x, y = (array.array("f", v) for v in zip(*POW_SUBNORMAL))
    got = flat(block_on(dev.pow(x, y)))
    errors = accuracy.sweep_errors(op, [x, y], got, {}, flush=dev.backend == "webgpu")
    assert all(e <= op.ulp for e in errors), [(a, b, g) for a, b, g, e in zip(x, y, got, errors) if not e <= op.ulp]


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
    "selu": lambda d: (
        Decimal(references.SELU_SCALE) * (d if d > 0 else Decimal(references.SELU_ALPHA) * (_dec_exp(d) - 1))
    ),
    "hardswish": lambda d: d * min(max(d + 3, Decimal(0)), Decimal(6)) / 6,
    "exp": _dec_exp,
    "log": lambda d: d.ln(),
}


@pytest.mark.parametrize("path", ["numpy", "pure Python"])
@pytest.mark.parametrize("name", sorted(DECIMAL))
def test_float64_references_agree_with_60_digit_decimals(name, path, monkeypatch):
    """The float64 reference (NumPy's path: Op.exact, else Op.numpy in float64; the pure-Python path, as
    without NumPy: Op.ref or accuracy.PY_EXACT) within 2^-40 relative of the definition computed in 60 digits,
    on 1500 sample values (the hard points included) where the result is a normal float32."""
    if path == "numpy" and SMALL:
        pytest.skip("NumPy is not installed here")
    if path != "numpy":
        monkeypatch.setattr(accuracy, "numpy_available", lambda: False)
    op = ops.get(name)
    xs = [x for x in flat(accuracy.sweep_sample(1500, seed=3)) if math.isfinite(x) and abs(x) < 400]
    if name == "log":
        xs = [abs(x) for x in xs if x != 0]
    w = flat(accuracy.float64_reference(op, [xs], accuracy.sweep_params(op)))
    bad = []
    with localcontext() as ctx:
        ctx.prec, ctx.Emax, ctx.Emin = 60, 10**8, -(10**8)  # exp(4e6) for gelu(-400)
        for x, v in zip(xs, w):
            d = DECIMAL[name](Decimal(x))
            if abs(d) < Decimal(accuracy.F32_TINY) or abs(d) > Decimal(references.F32_MAX):
                continue
            if abs(Decimal(v) - d) > abs(d) * Decimal(2) ** -40:
                bad.append(f"{name}({x!r}): reference {v!r}, decimal {float(d)!r}")
    assert not bad, "; ".join(bad[:5])


def test_ulp_errors_counts_what_it_should():
    """The measure: 1 ulp is 1, the sign of zero, NaN and infinities are exact matches, a nonzero result for an
    exact zero counts in ulps of 2^-149, flushes only where asked."""
    one = 1.5 + 2.0**-23
    got = [one, 0.0, -0.0, math.nan, math.inf, 1.0, 0.0, 2.0**-140]
    err = flat(accuracy.ulp_errors(got, [1.5, 0.0, 0.0, math.nan, 1e39, math.nan, 1e-40, 0.0]))
    assert err[:-1] == [1.0, 0.0, math.inf, 0.0, 0.0, math.inf, accuracy.ulp_error(0.0, 1e-40)]
    assert err[-2] > 1e3 and err[-1] == 2.0**9 and accuracy.ulp_errors([0.0], [1e-40], flush=True)[0] == 0


# ---------------------------------------------------------------- the pure-Python path (inside Pyodide) = NumPy's


def agree(a: float, b: float) -> bool:
    """Two float64 references the same: both NaN, or equal with the same sign, or within 2^-40 relative (of
    2^-149 at least: far below a float32 ulp)."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if a == b:
        return math.copysign(1.0, a) == math.copysign(1.0, b)
    return abs(a - b) <= 2.0**-40 * max(abs(b), 2.0**-149)


@pytest.mark.skipif(SMALL, reason="compares with NumPy's path")
def test_the_pure_python_path_gives_numpys_references_errors_and_sample(monkeypatch):
    """Without NumPy (accuracy's pure-Python path, as inside Pyodide): every elementwise op's float64 reference
    agrees with NumPy's path on 2^12 sample values, ulp_error with ulp_errors on results 0, 1 and 3 ulps off and
    on unrelated values, and the sample holds the edge values and every exponent of both signs."""
    import numpy as np

    for op in ELEMENTWISE:
        inputs = accuracy.sweep_inputs(op, 1 << 12, seed=9)
        kw = accuracy.sweep_params(op)
        want = accuracy.float64_reference(op, inputs, kw).tolist()
        with monkeypatch.context() as m:
            m.setattr(accuracy, "numpy_available", lambda: False)
            mine = accuracy.float64_reference(op, [x.tolist() for x in inputs], kw)
        bad = [(x, a, b) for x, a, b in zip(inputs[0].tolist(), mine, want) if not agree(a, b)]
        assert not bad, f"{op.name}: {len(bad)} references differ, e.g. (x, pure Python, NumPy) {bad[:3]}"
        i = np.arange(len(want))
        with np.errstate(all="ignore"):
            off = (np.asarray(want, np.float32).view(np.int32) + i % 3 * (i % 2 * 2 - 1)).astype(np.int32)
            got = np.concatenate([off.view(np.float32), inputs[0]]).astype(np.float64)
        expect = accuracy.ulp_errors(got, want * 2, flush=op.name == "exp").tolist()
        mine = [accuracy.ulp_error(g, w, flush=op.name == "exp") for g, w in zip(got.tolist(), want * 2)]
        assert all(agree(a, b) for a, b in zip(mine, expect)), op.name
    with monkeypatch.context() as m:
        m.setattr(accuracy, "numpy_available", lambda: False)
        pure = accuracy.sweep_sample(1 << 12, seed=1)
    for sample in (pure, accuracy.sweep_sample(1 << 12, seed=1)):
        bits = set(np.frombuffer(bytes(memoryview(sample)), np.uint32).tolist())
        assert {int(b) >> 23 for b in bits} == set(range(512))
        edges = np.array(accuracy.EDGES + tuple(-v for v in accuracy.EDGES), np.float32).view(np.uint32).tolist()
        assert set(edges) <= bits


@pytest.mark.skipif(SMALL, reason="the NumPy backend's references need NumPy")
def test_float64_activations_in_blocks_give_the_bits_of_one_pass(monkeypatch):
    """references.in_float64 widens a large input a block of rows at a time (its float64 values in cache): the
    same bits as widening it whole, for rows that do and do not divide into blocks, a flat array, array and
    number arguments beside it, and the 0-d and one-row inputs that never split."""
    np = pytest.importorskip("numpy")
    monkeypatch.setattr(references, "WIDE_CHUNK", 64)
    rng = np.random.default_rng(3)
    ops_ = [lambda x: np.tanh(x) * np.exp(-x), lambda x, b: np.arctan2(x, b), lambda x, c: np.log1p(np.abs(x)) * c]
    for shape in [(37, 5), (101,), (7, 3, 4), (), (1, 300)]:
        x = rng.uniform(-4, 4, shape).astype(np.float32)
        b = rng.uniform(-4, 4, shape).astype(np.float32)
        for expr, extra in zip(ops_, [(), (b,), (2.5,)]):
            got = references.in_float64(expr)(x, *extra)
            want = np.asarray(expr(x.astype(np.float64), *extra)).astype(np.float32)
            assert got.shape == want.shape and got.dtype == np.float32
            np.testing.assert_array_equal(got, want)
