"""float64 and int64: every catalog op on each of them it computes in (ops.Op.dtypes) on the numpy backend,
bit for bit against NumPy in that dtype (values past 32-bit range and precision, NaN, inf, subnormals); the
promotion table, finfo/iinfo/can_cast against NumPy's; astype between all six dtypes; a reduction and a
matmul in float64; and the TruenoTypeError on the backends that hold no 64-bit dtype (webgpu, wasm-simd),
each device still usable after."""

from __future__ import annotations

import math

import numpy as np
import pytest

import trueno_web as tw
from trueno_web import ops
from trueno_web.dtypes import DTYPES, WIDE, bool_, float32, float64, int32, int64, py_cast, uint32
from trueno_web.errors import TruenoTypeError
from trueno_web.kinds import Kind
from trueno_web.runtime import block_on

NP = {bool_: np.bool_, int32: np.int32, uint32: np.uint32, float32: np.float32, int64: np.int64, float64: np.float64}
SPECIAL = {
    int64: [0, 1, -1, 7, -7, 2**31, -(2**31) - 1, 2**32 + 5, 2**53 + 1, 2**63 - 1, -(2**63), 3037000500],
    float64: [0.0, -0.0, 1.0, -1.5, 2.5, math.inf, -math.inf, math.nan, 5e-324, -1e-310, 1.7e308, 0.1, -7.0],
}
NARROW = {
    bool_: [True, False],
    int32: [-(2**31), 2**31 - 1, 0, -5],
    uint32: [0, 2**32 - 1, 7],
    float32: [math.nan, -0.0, math.inf, 1e-45, 3.4e38, 0.1],
}
PARAMS = {"negative_slope": 0.01, "alpha": 1.25, "lo": -0.5, "hi": 0.75, "s": -1.5}


def values(dtype, n: int, seed: int):
    """n values of `dtype`: its special ones first (past 32-bit range and precision), then seeded random ones."""
    rng = np.random.default_rng(seed)
    if dtype is float64:
        rest = rng.uniform(-100, 100, n)
    else:
        rest = rng.integers(-(2**63), 2**63 - 1, n, dtype=np.int64)
    return np.concatenate([np.array(SPECIAL[dtype], NP[dtype]), rest])[:n]


def equal(got, want) -> bool:
    """Bit for bit (NaN equal to NaN), dtype and shape included."""
    return got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want, equal_nan=True)


def operands(op, dtype, n: int):
    xs = [values(dtype, n, seed) for seed in range(op.arity)]
    if op.name == "where":
        xs[0] = np.arange(n) % 3 == 0
    if "shift" in op.name:
        xs[1] = (np.arange(n) % 70 - 3).astype(np.int64)  # past 63 and negative: shifted out
    return xs


ELEMENTWISE = [
    pytest.param(op, d, id=f"{op.name}-{d.name}")
    for op in ops.CATALOG
    if op.elementwise and op.returns != "target"
    for d in WIDE
    if d in op.dtypes
]


@pytest.mark.parametrize("op,dtype", ELEMENTWISE)
def test_elementwise_op_in_64_bits(cpu, op, dtype):
    xs = operands(op, dtype, 1000)
    params = {p.name: PARAMS[p.name] for p in op.params}
    ts = [tw.asarray(x, cpu, dtype=x.dtype.name) for x in xs]
    call = getattr(tw, op.name) if op.name == "where" else getattr(ts[0], op.name)
    got = block_on(call(*(ts if op.name == "where" else ts[1:]), **params).numpy())
    _, out = tw.dtypes.signature(op, [t.dtype for t in ts])
    assert out is (bool_ if op.returns == "bool" else dtype)
    with np.errstate(all="ignore"):
        want = np.asarray(op.numpy(*xs, *params.values())).astype(NP[out])
    assert equal(got, want), f"{op.name} on {dtype}: {np.flatnonzero(got != want)[:8]}"


REDUCTIONS = {  # NumPy's own calls, along axis 1, in the input's dtype
    "sum": lambda a: np.sum(a, 1, dtype=a.dtype),
    "prod": lambda a: np.prod(a, 1, dtype=a.dtype),
    "max": lambda a: np.max(a, 1),
    "min": lambda a: np.min(a, 1),
    "norm_l1": lambda a: np.sum(np.abs(a), 1),
    "norm_l2": lambda a: np.sqrt(np.sum(a * a, 1)),
}


def softmax(a, log=False):
    shifted = a - a.max(-1, keepdims=True)
    total = np.exp(shifted).sum(-1)[..., None]
    return shifted - np.log(total) if log else np.exp(shifted) / total


def scatter(a, at, v):
    out = a.copy()
    np.add.at(out, at, v)
    return out


def _kind_case(op, dtype):
    """(the tensor call, NumPy's own call, the host inputs) of a row that is not elementwise."""
    rng = np.random.default_rng(1)
    x = values(dtype, 60, 3).reshape(6, 10)
    x = np.where(np.isfinite(x), x, 0.5) if dtype is float64 else x  # NaN and inf: the elementwise tests
    at = rng.integers(-6, 6, 9)  # int64 indices, negative ones counting from the end
    v = x[:, :4].repeat(2, 0)[:9]
    cases = {
        Kind.REDUCE: (lambda t: getattr(t, op.name)(axis=1), REDUCTIONS.get(op.name), [x]),
        Kind.SCAN: (
            lambda t: getattr(t, op.name)(axis=1),
            lambda a: getattr(np, op.name)(a, axis=1, dtype=a.dtype),
            [x],
        ),
        Kind.SOFTMAX: (lambda t: getattr(t, op.name)(axis=-1), lambda a: softmax(a, op.name == "log_softmax"), [x]),
        Kind.SORT: (
            lambda t: getattr(t, op.name)(),
            lambda a: np.sort(a, kind="stable") if op.name == "sort" else np.argsort(a, kind="stable").astype(np.int32),
            [x],
        ),
        Kind.MATMUL: (lambda a, b: a @ b, lambda a, b: a @ b, [x, values(dtype, 40, 5).reshape(10, 4)]),
        Kind.CONV2D: (lambda a, b: a.convolve2d(b), op.numpy, [x, values(dtype, 6, 6).reshape(2, 3)]),
        Kind.SEARCH: (
            lambda a, b: tw.searchsorted(a, b),
            lambda a, b: np.searchsorted(a, b).astype(np.int32),
            [np.sort(x.reshape(-1)), x],
        ),
        Kind.GATHER: (  # float32 data at int64 indices (take computes in its index dtype)
            lambda a, i: a.take(i, axis=0),
            lambda a, i: np.take(a, i, axis=0),
            [rng.standard_normal((6, 4)).astype(np.float32), at],
        ),
        Kind.SCATTER: (lambda a, i, b: a.scatter_add(i, b, axis=0), scatter, [x[:, :4].copy(), at, v]),
        Kind.ATTENTION: (  # q (6, 10), k (6, 10), v (6, 4), causal; attention_masked's mask (1, 6)
            lambda q, k, v, *m: getattr(q, op.name)(k, v, *m, causal=True),
            lambda q, k, v, *m: op.numpy(q, k, v, *(m or [None]), 10**-0.5, True),
            [x, x[::-1].copy(), x[:, :4].copy()] + [np.array([[1, 0, 1, 1, 0, 1]], x.dtype)] * (op.arity - 3),
        ),
    }
    if op.name == "dot":
        return (lambda t, u: t.dot(u)), (lambda a, b: np.dot(a.reshape(-1), b.reshape(-1))), [x, x[::-1].copy()]
    return cases[op.kind]


OTHER_KINDS = [
    pytest.param(op, d, id=f"{op.name}-{d.name}")
    for op in ops.CATALOG
    if not op.elementwise
    for d in WIDE
    if d in op.dtypes
]


@pytest.mark.parametrize("op,dtype", OTHER_KINDS)
def test_other_kinds_in_64_bits(cpu, op, dtype):
    """Reductions, scans, softmax, matmul, convolution, sorting and search, take (int64 indices) and
    scatter_add compute in float64 and int64 as NumPy does in that dtype (integers wrap)."""
    call, ref, xs = _kind_case(op, dtype)
    ts = [tw.asarray(x, cpu, dtype=x.dtype.name) for x in xs]
    got = block_on(call(*ts).numpy())
    with np.errstate(all="ignore"):
        want = np.asarray(ref(*xs))
    assert equal(got, want), f"{op.name} on {dtype}:\n{got}\n{want}"


def test_the_promotion_table():
    every = DTYPES + WIDE
    for a in every:
        for b in every:
            got = tw.result_type(a, b)
            if a.kind == "float" or b.kind == "float":  # an integer beside a float is that float
                floats = [d for d in (a, b) if d.kind == "float"]
                assert got is max(floats, key=lambda d: d.bits), (a, b)
            else:
                assert got == np.promote_types(NP[a], NP[b]).name, (a, b)
            same_kind = b is not bool_ and (a.kind == "float") == (b.kind == "float")  # integers apart from floats
            assert tw.can_cast(a, b) == (a is b or a is bool_ or (same_kind and got is b)), (a, b)
            if same_kind or a is bool_:
                assert tw.can_cast(a, b) == np.can_cast(NP[a], NP[b], "safe"), (a, b)
    assert tw.result_type(int32, uint32) is int64 and tw.result_type(int64, uint32) is int64
    assert tw.finfo(tw.float64) == tw.finfo(np.float64) and tw.finfo(tw.float64).bits == 64
    for name in ("eps", "max", "min", "smallest_normal"):
        assert getattr(tw.finfo(tw.float64), name) == float(getattr(np.finfo(np.float64), name))
        assert getattr(tw.finfo(tw.float32), name) == float(getattr(np.finfo(np.float32), name))
    assert (tw.iinfo(tw.int64).min, tw.iinfo(tw.int64).max) == (-(2**63), 2**63 - 1)
    assert tw.isdtype(tw.float64, "real floating") and tw.isdtype(tw.int64, ("signed integer", "bool"))
    assert not tw.isdtype(tw.int64, "unsigned integer") and tw.float64.itemsize == 8 and tw.int64.bits == 64


def test_promotion_and_weak_scalars_on_numpy(cpu):
    f = tw.asarray([0.1, 2.5], cpu, dtype=tw.float64)
    g = tw.asarray([0.1, 2.5], cpu)
    i = tw.asarray(np.array([2**40, -3]), cpu, dtype=tw.int64)
    u = tw.asarray(np.array([7, 2**32 - 1], np.uint32), cpu)
    assert g.dtype is float32 and f.dtype is float64  # float host data is float32 unless float64 is asked for
    assert (f + g).dtype is float64 and (f + i).dtype is float64 and (g + i).dtype is float32
    assert (i + u).dtype is int64 and (i * 2).dtype is int64 and (f * 2).dtype is float64
    assert block_on((f + g).numpy()).tolist() == (np.array([0.1, 2.5]) + np.float32([0.1, 2.5])).tolist()
    assert block_on((i + u).numpy()).tolist() == [2**40 + 7, 2**32 - 4]
    assert block_on((i + 2**41).numpy()).tolist() == [2**40 + 2**41, 2**41 - 3]  # a weak int past int32
    assert block_on((i / 4).numpy()).dtype == np.float64 and block_on(i.mean().numpy()).dtype == np.float64
    assert tw.__array_namespace_info__().default_dtypes(device=cpu)["real floating"] is float32


@pytest.mark.parametrize("to", DTYPES + WIDE, ids=lambda d: d.name)
@pytest.mark.parametrize("src", WIDE, ids=lambda d: d.name)
def test_astype_from_and_to_64_bits(cpu, src, to):
    x = values(src, 200, 4)
    if src is float64:  # out-of-range floats saturate, NaN gives 0 (as py_cast does)
        x = np.concatenate([x, [-2.5, 2.5, 2.0**31, 2.0**63, -(2.0**64), 4.3e9, -0.9, 0.9]])
    got = block_on(tw.asarray(x, cpu, dtype=src).astype(to).numpy())
    want = [py_cast(v.item(), to) for v in x]
    assert got.dtype == NP[to]
    with np.errstate(over="ignore"):  # float64 past float32's range: +-inf
        expected = np.asarray(want, NP[to]) if to.kind == "float" else None
    assert np.array_equal(got, expected, equal_nan=True) if to.kind == "float" else got.tolist() == want
    for d, ys in NARROW.items():  # into 64 bits and back where no value is lost (can_cast): exact
        if tw.can_cast(d, src):
            y = np.array(ys, NP[d])
            assert equal(block_on(tw.asarray(y, cpu).astype(src).astype(d).numpy()), y), (d, src)


def test_a_float64_reduction_and_matmul_against_numpy(cpu):
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((37, 23)) * 1e3, rng.standard_normal((23, 19))
    ta, tb = tw.asarray(a, cpu, dtype=tw.float64), tw.asarray(b, cpu, dtype=tw.float64)
    bound = 23 * 2.0**-52 * (np.abs(a) @ np.abs(b))  # each product and sum rounds in float64 (any order)
    got = block_on((ta @ tb).numpy())
    assert got.dtype == np.float64 and np.all(np.abs(got - a @ b) <= bound)
    assert block_on(ta.sum().numpy()) == np.sum(a) and block_on(ta.sum(axis=0).numpy()).tolist() == a.sum(0).tolist()
    assert block_on((ta * 1e-300).sum().numpy()) != 0.0  # float32 would flush the products to 0
    one = block_on(cpu.upload(b, dtype="float64"))  # a one-shot call on a float64 DeviceArray
    assert equal(block_on(cpu.exp(one)), np.exp(b)) and block_on(cpu.sum(one)) == b.sum()


@pytest.mark.parametrize("backend", ["webgpu", "wasm-simd"])
def test_64_bit_dtypes_raise_where_the_backend_has_none(request, backend):
    dev = request.getfixturevalue({"webgpu": "gpu", "wasm-simd": "wasm"}[backend])
    x = np.linspace(-1, 1, 5)
    attempts = [
        lambda: dev.tensor(x, dtype=tw.float64),
        lambda: tw.asarray(x, dev, dtype="float64"),
        lambda: tw.asarray(x, dev).astype(tw.float64),
        lambda: tw.zeros((2, 3), dtype=tw.int64, device=dev),
        lambda: tw.arange(5, dtype=tw.int64, device=dev),
        lambda: block_on(dev.upload(x, dtype=tw.float64)),
        lambda: tw.asarray(np.array([1, 2], np.int32), dev) + tw.asarray(np.array([1, 2], np.uint32), dev),
        lambda: block_on(dev.add(np.array([1], np.int32), np.array([2], np.uint32))),
    ]
    for attempt in attempts:
        with pytest.raises(
            TruenoTypeError, match=f"needs backend='numpy'; {backend} holds bool, int32, uint32, float32"
        ):
            attempt()
    assert set(tw.__array_namespace_info__().dtypes(device=dev)) == {"bool", "int32", "uint32", "float32"}
    assert tw.asarray(x, dev).dtype is float32  # float64 host data without dtype=: float32, as before
    got = block_on((tw.asarray(x, dev) * 2 + tw.asarray([1, 2, 3, 4, 5], dev)).numpy())  # still usable
    assert got.dtype == np.float32 and got.tolist() == (np.float32(x) * 2 + np.arange(1, 6)).tolist()
