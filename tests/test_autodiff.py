"""Gradients: every catalog op, view and reduction against central finite differences of its float64
NumPy reference, subgradient conventions checked exactly, grad of grad, misuse, and the same gradients
on every backend.

A case is a function written once against a namespace `xp` (NumPy, or trueno_web's tensors through
TW below), so the float64 reference and our float32 gradient come from the same lines."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _cases import FLOAT_CATALOG
from conftest import device_for

import trueno_web as tw
from trueno_web import ops
from trueno_web.autodiff.rules import ELEMENTWISE, INDEXING, REDUCTIONS
from trueno_web.runtime import block_on

NP_DEV = "numpy"


class TW:
    """The few functions the cases call through `xp` that NumPy spells differently."""

    @staticmethod
    def op(name, *args, **params):
        first = next(a for a in args if isinstance(a, tw.Tensor))
        return getattr(first, name)(*args[1:], **params) if args[0] is first else getattr(tw, name)(*args, **params)

    concatenate, stack, matmul, where = tw.concatenate, tw.stack, tw.matmul, tw.where

    @staticmethod
    def pad(x, widths):
        return x.pad(widths)


class NP:
    @staticmethod
    def op(name, *args, **params):
        op = ops.get(name)
        vals = [params.get(p.name, p.default) for p in op.params]
        return op.numpy(*[np.asarray(a, np.float64) for a in args], *vals)

    concatenate, stack, matmul = np.concatenate, np.stack, np.matmul

    @staticmethod
    def where(c, a, b):
        return np.where(c != 0, a, b)

    @staticmethod
    def pad(x, widths):
        return np.pad(x, widths)


def fd_grad(f, xs: list[np.ndarray], i: int) -> np.ndarray:
    """Central differences of the float64 function f at xs, with respect to xs[i]."""
    x = xs[i].astype(np.float64)
    out = np.zeros_like(x)
    for j in np.ndindex(x.shape):
        h = 1e-6 * max(1.0, abs(x[j]))
        up, down = x.copy(), x.copy()
        up[j] += h
        down[j] -= h
        args_up = [*xs[:i], up, *xs[i + 1 :]]
        args_down = [*xs[:i], down, *xs[i + 1 :]]
        out[j] = (float(f(*args_up)) - float(f(*args_down))) / (2 * h)
    return out


def check(f, arrays, dev, rtol=2e-3, atol=1e-4, argnums=None):
    """grad of f (written against xp) on `dev` against finite differences of its float64 reference."""
    arrays = [np.asarray(a, np.float32) for a in arrays]
    argnums = tuple(range(len(arrays))) if argnums is None else argnums
    tensors = [dev.tensor(a) for a in arrays]
    value, grads = tw.value_and_grad(lambda *ts: f(TW, *ts), argnums=argnums)(*tensors)
    block_on(tw.realize(value, *grads))
    ref64 = [a.astype(np.float64) for a in arrays]
    want_value = float(f(NP, *ref64))
    assert block_on(value.item()) == pytest.approx(want_value, rel=1e-4, abs=1e-4)
    for n, g in zip(argnums, grads):
        got = block_on(g.numpy())
        want = fd_grad(lambda *xs: f(NP, *xs), ref64, n)
        scale = atol * max(1.0, float(np.abs(want).max(initial=0.0)))
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=rtol, atol=scale, err_msg=f"gradient of argument {n}")


@pytest.fixture(scope="module")
def npdev():
    return device_for(NP_DEV)


RNG = np.random.default_rng(7)


def smooth_inputs(op, shape=(3, 5)):
    """Inputs away from the op's kinks and outside its domain's edges."""
    n = op.arity
    if op.name in ("log", "sqrt", "rsqrt", "log2", "log10"):
        return [RNG.uniform(0.5, 3.0, shape)]
    if op.name == "log1p":
        return [RNG.uniform(-0.5, 3.0, shape)]
    if op.name == "acosh":
        return [RNG.uniform(1.2, 3.0, shape)]
    if op.name in ("asin", "acos", "atanh"):
        return [RNG.uniform(-0.9, 0.9, shape)]
    if op.name == "tan":  # away from the poles at +-pi/2
        return [RNG.uniform(-1.2, 1.2, shape)]
    if op.name == "reciprocal":
        return [RNG.choice([-1, 1], shape) * RNG.uniform(0.5, 2, shape)]
    if op.name == "pow":
        return [RNG.uniform(0.5, 2.0, shape), RNG.uniform(-1.5, 1.5, shape)]
    if op.name == "div":
        return [RNG.uniform(-2, 2, shape), RNG.choice([-1, 1], shape) * RNG.uniform(0.5, 2, shape)]
    if op.name == "where":
        return [RNG.choice([0.0, 1.0], shape), RNG.uniform(-2, 2, shape), RNG.uniform(-2, 2, shape)]
    xs = [RNG.uniform(-2.5, 2.5, shape) for _ in range(n)]
    for x in xs:  # away from 0 and the clip bounds / hardswish's +-3, where the derivative jumps
        x[np.abs(x) < 0.05] = 0.3
    if op.name == "hardswish":
        xs[0][np.abs(np.abs(xs[0]) - 3) < 0.05] = 1.0
    if op.name in ("maximum", "minimum"):
        xs[1] = xs[0] + RNG.choice([-1, 1], shape) * RNG.uniform(0.1, 1, shape)
    return xs


ELEMENTWISE_OPS = [op for op in FLOAT_CATALOG if op.elementwise and op.returns == "same"]
PARAMS = {"clip": {"lo": -1.0, "hi": 1.5}, "scale": {"s": -1.75}, "leaky_relu": {"negative_slope": 0.2}}


def test_every_catalog_op_has_a_rule():
    kinds_with_rules = {"softmax", "matmul", "conv2d", "scan", "attention"}
    # argsort and searchsorted give int32 (no cotangent reaches them); sort has none yet: it raises a
    # TruenoTypeError that says so (tests/test_sorting.py)
    without = {"argsort", "searchsorted"}  # int32 results: no cotangent reaches them
    for op in ops.CATALOG:
        rules = (ELEMENTWISE, REDUCTIONS, INDEXING)
        assert any(op.name in r for r in rules) or op.kind.value in kinds_with_rules or op.name in without, op.name


@pytest.mark.parametrize("op", ELEMENTWISE_OPS, ids=lambda op: op.name)
def test_elementwise_against_finite_differences(op, npdev):
    xs = smooth_inputs(op)
    if op.name == "clip":
        xs[0][np.abs(xs[0] - 1.5) < 0.05] = 0.5
        xs[0][np.abs(xs[0] + 1.0) < 0.05] = 0.5
    weights = RNG.uniform(-1, 1, xs[0].shape)
    params = PARAMS.get(op.name, {})
    differentiable = tuple(i for i in range(op.arity) if not (op.name == "where" and i == 0))
    if op.name == "nextafter":  # JAX's zero gradient, where differences see the slope 1 of a step of one ulp
        grads = tw.grad(lambda a, b: (a.nextafter(b) * weights).sum(), argnums=(0, 1))(
            *(npdev.tensor(np.asarray(x, np.float32)) for x in xs)
        )
        assert all(not block_on(g.numpy()).any() for g in grads)
        return

    def f(xp, *args):
        w = args[-1]
        return (xp.op(op.name, *args[:-1], **params) * w).sum()

    check(f, [*xs, weights], npdev, argnums=differentiable)


def test_subgradient_conventions(npdev):
    """JAX's: relu'(0) = 0, |x|'(0) = 0, ties of maximum/minimum share equally, floor' = round' = ceil' = trunc' = sign' =
    floor_divide' = nextafter' = 0, copysign' = sign(a) times b's sign, comparisons 0."""
    x = npdev.tensor(np.array([-1.0, 0.0, 2.0], np.float32))
    y = npdev.tensor(np.array([-1.0, 1.0, 2.0], np.float32))
    cases = {
        "relu": (lambda a: a.relu().sum(), [0, 0, 1]),
        "abs": (lambda a: abs(a).sum(), [-1, 0, 1]),
        "floor": (lambda a: a.floor().sum(), [0, 0, 0]),
        **{
            name: (lambda a, name=name: getattr(a, name)().sum(), [0, 0, 0])
            for name in ("round", "ceil", "trunc", "sign")
        },
        "floor_divide": (lambda a: a.floor_divide(y).sum(), [0, 0, 0]),
        "nextafter": (lambda a: a.nextafter(y).sum(), [0, 0, 0]),
        "copysign": (lambda a: a.copysign(-y).sum(), [-1, 0, -1]),
        "lt": (lambda a: (a < y).sum(), [0, 0, 0]),
        "maximum": (lambda a: a.maximum(y).sum(), [0.5, 0, 0.5]),
        "minimum": (lambda a: a.minimum(y).sum(), [0.5, 1, 0.5]),
        "clip": (lambda a: a.clip(0.0, 2.0).sum(), [0, 0.5, 0.5]),
    }
    for name, (f, want) in cases.items():
        got = block_on(tw.grad(f)(x).numpy())
        np.testing.assert_array_equal(got, np.array(want, np.float32), err_msg=name)


REDUCTION_CASES = [
    ("sum", None, False),
    ("sum", 1, True),
    ("sum", (0, 2), False),
    ("max", -1, False),
    ("min", (1, 2), True),
    ("prod", 0, False),
    ("prod", None, False),
    ("norm_l1", 2, False),
    ("norm_l2", None, False),
    ("norm_l2", (0, 1), True),
    ("mean", 1, False),
    ("var", (0, 2), False),
    ("std", -1, True),
]


@pytest.mark.parametrize("name,axis,keepdims", REDUCTION_CASES, ids=lambda v: repr(v))
def test_reductions_against_finite_differences(name, axis, keepdims, npdev):
    x = RNG.uniform(0.3, 1.7, (3, 4, 5)) * RNG.choice([-1, 1], (3, 4, 5))
    w = RNG.uniform(-1, 1, np.zeros((3, 4, 5)).sum(axis=axis, keepdims=keepdims).shape)

    def f(xp, a, w):
        if xp is NP and name.startswith("norm"):
            r = (
                np.abs(a).sum(axis, keepdims=keepdims)
                if name == "norm_l1"
                else np.sqrt((a * a).sum(axis, keepdims=keepdims))
            )
        else:
            r = getattr(a, name)(axis=axis, keepdims=keepdims)
        return (r * w).sum()

    check(f, [x, w], npdev, argnums=(0,))


def test_max_ties_and_prod_zeros(npdev):
    x = npdev.tensor(np.array([[3.0, 1.0, 3.0], [2.0, 0.0, 5.0]], np.float32))
    np.testing.assert_array_equal(block_on(tw.grad(lambda a: a.max())(x).numpy()), [[0, 0, 0], [0, 0, 1]])
    np.testing.assert_array_equal(
        block_on(tw.grad(lambda a: a.max(axis=1).sum())(x).numpy()), [[0.5, 0, 0.5], [0, 0, 1]]
    )
    np.testing.assert_array_equal(block_on(tw.grad(lambda a: a.prod(axis=1).sum())(x).numpy()), [[3, 9, 3], [0, 10, 0]])
    two_zeros = npdev.tensor(np.array([0.0, 2.0, 0.0], np.float32))
    np.testing.assert_array_equal(block_on(tw.grad(lambda a: a.prod())(two_zeros).numpy()), [0, 0, 0])


VIEW_CASES = {
    "reshape": lambda xp, a: a.reshape(5, 3, 4),
    "transpose": lambda xp, a: a.transpose(0, 2, 1),
    "transpose()": lambda xp, a: a.transpose(),
    "swapaxes": lambda xp, a: a.swapaxes(0, 2),
    "T": lambda xp, a: a[1].T,
    "mT": lambda xp, a: a.swapaxes(-1, -2) if xp is NP else a.mT,
    "slice": lambda xp, a: a[1:, ::2, 1:4],
    "negative step": lambda xp, a: a[::-1, 3:0:-2],
    "int index": lambda xp, a: a[1, :, 2],
    "prefix": lambda xp, a: a[0] * a[:1],  # row-major from offset 0, smaller than the base
    "newaxis and ellipsis": lambda xp, a: a[None, ..., 1],
    "views of views": lambda xp, a: (
        a.transpose(2, 0, 1)[1:3].reshape(2, -1)[:, ::3] if xp is NP else a.permute(2, 0, 1)[1:3].reshape(2, -1)[:, ::3]
    ),
    "reshape of a slice": lambda xp, a: a[1].reshape(4, 5)[::2] if xp is NP else a[1].reshape(4, 5)[::2],
    "squeeze/unsqueeze": lambda xp, a: a[:, :1].squeeze(1)[:, None] if xp is NP else a[:, :1].squeeze(1).unsqueeze(1),
    "broadcast": lambda xp, a: a[:, :1, :] * a[:1, :, :1],
    "pad": lambda xp, a: xp.pad(a, [(1, 0), (0, 2), (1, 1)]),
    "concatenate": lambda xp, a: xp.concatenate([a, a[:, 1:] * 2.0], axis=1),
    "stack": lambda xp, a: xp.stack([a[0], a[2]], axis=1),
}


@pytest.mark.parametrize("name", VIEW_CASES)
def test_views_against_finite_differences(name, npdev):
    x = RNG.uniform(-2, 2, (3, 4, 5))
    view = VIEW_CASES[name]
    out_shape = view(NP, x).shape
    w = RNG.uniform(-1, 1, out_shape)
    check(lambda xp, a, w: (view(xp, a) * w).sum(), [x, w], npdev, argnums=(0,))


def test_matmul_softmax_and_layers(npdev):
    a = RNG.uniform(-1, 1, (2, 3, 4))
    b = RNG.uniform(-1, 1, (4, 5))
    c = RNG.uniform(-1, 1, (1, 5, 2))
    check(lambda xp, a, b, c: xp.matmul(xp.matmul(a, b), c).sum() * 0.5, [a, b, c], npdev)
    x = RNG.uniform(-2, 2, (3, 6))
    w = RNG.uniform(-1, 1, (3, 6))

    def softmaxes(xp, x, w):
        if xp is NP:
            e = np.exp(x - x.max(-1, keepdims=True))
            s = e / e.sum(-1, keepdims=True)
            return (s * w).sum() + (np.log(s) * w * w).sum()
        return (x.softmax(-1) * w).sum() + (x.log_softmax(-1) * w * w).sum()

    check(softmaxes, [x, w], npdev)


def test_layer_norm_attention_linear(npdev):
    x = RNG.uniform(-2, 2, (2, 5, 8))
    g, b = RNG.uniform(0.5, 1.5, (8,)), RNG.uniform(-1, 1, (8,))

    def ln(xp, x, g, b):
        if xp is NP:
            m = x.mean(-1, keepdims=True)
            v = ((x - m) ** 2).mean(-1, keepdims=True)
            y = (x - m) / np.sqrt(v + 1e-5) * g + b
        else:
            y = tw.layer_norm(x, g, b)
        return (y * y * x).sum()

    check(ln, [x, g, b], npdev)

    q, k, v = (RNG.uniform(-1, 1, (2, 4, 3)) for _ in range(3))

    def attention(xp, q, k, v):
        if xp is NP:
            s = q @ k.transpose(0, 2, 1) / math.sqrt(3)
            s = np.where(np.tril(np.ones((4, 4))) > 0, s, -np.inf)
            e = np.exp(s - s.max(-1, keepdims=True))
            y = (e / e.sum(-1, keepdims=True)) @ v
        else:
            y = tw.scaled_dot_product_attention(q, k, v, causal=True)
        return (y * y).sum()

    check(attention, [q, k, v], npdev)
    w, bias = RNG.uniform(-1, 1, (3, 2)), RNG.uniform(-1, 1, (2,))
    check(
        lambda xp, x, w, b: (
            ((x @ w + b) if xp is NP else tw.linear(x, w, b)).tanh().sum() if xp is not NP else np.tanh(x @ w + b).sum()
        ),
        [q, w, bias],
        npdev,
    )


def test_grad_of_grad(npdev):
    x = npdev.tensor(np.array([0.3, -0.7, 1.2], np.float32))
    d2 = tw.grad(lambda a: tw.grad(lambda b: (b.tanh() * b.exp()).sum())(a).sum())(x)
    v = np.array([0.3, -0.7, 1.2])
    t, e = np.tanh(v), np.exp(v)
    dt, d2t = 1 - t * t, -2 * t * (1 - t * t)
    want = d2t * e + 2 * dt * e + t * e  # (t e)'' = t'' e + 2 t' e + t e
    np.testing.assert_allclose(block_on(d2.numpy()), want, rtol=1e-4, atol=1e-5)
    a = npdev.tensor(RNG.uniform(-1, 1, (3, 3)).astype(np.float32))
    b = npdev.tensor(RNG.uniform(-1, 1, (3, 3)).astype(np.float32))
    # d/da sum(grad_a sum((a @ b)^2)) = d/da sum(2 (a @ b) @ b^T) = 2 * ones @ (b @ b^T)... checked numerically
    h = tw.grad(lambda p: (tw.grad(lambda q: ((q @ b) * (q @ b)).sum())(p) * p).sum())(a)
    an, bn = block_on(a.numpy()).astype(np.float64), block_on(b.numpy()).astype(np.float64)
    want = 4 * an @ bn @ bn.T  # the gradient of sum(2 (a b b^T) * a) = 2 * 2 a b b^T
    np.testing.assert_allclose(block_on(h.numpy()), want, rtol=1e-4, atol=1e-5)


def test_pytrees_has_aux_and_vjp(npdev):
    params = {"w": npdev.tensor(np.ones((2, 2), np.float32)), "b": [npdev.tensor(np.zeros(2, np.float32))]}
    x = npdev.tensor(np.array([[1.0, 2.0]], np.float32))

    def loss(p, x):
        y = x @ p["w"] + p["b"][0]
        return (y * y).sum(), y

    (value, aux), grads = tw.value_and_grad(loss, has_aux=True)(params, x)
    assert set(grads) == {"w", "b"} and isinstance(grads["b"], list)
    assert block_on(value.item()) == 18.0
    np.testing.assert_array_equal(block_on(aux.numpy()), [[3, 3]])
    np.testing.assert_array_equal(block_on(grads["w"].numpy()), [[6, 6], [12, 12]])
    np.testing.assert_array_equal(block_on(grads["b"][0].numpy()), [6, 6])
    out, pullback = tw.vjp(lambda a: a * 3.0, x)
    (ct,) = pullback(npdev.tensor(np.array([[1.0, -1.0]], np.float32)))
    np.testing.assert_array_equal(block_on(ct.numpy()), [[3, -3]])
    unused = tw.grad(lambda a, b: (a * 2.0).sum(), argnums=1)(x, x[0])
    np.testing.assert_array_equal(block_on(unused.numpy()), [0, 0])


def test_misuse_raises_and_names_it(npdev):
    x = npdev.tensor(np.ones(3, np.float32))
    with pytest.raises(tw.TruenoValueError, match="0-d tensor"):
        tw.grad(lambda a: a * 2.0)(x)
    with pytest.raises(tw.TruenoValueError, match="argnums 2 is out of range"):
        tw.grad(lambda a, b: (a * b).sum(), argnums=2)(x, x)
    with pytest.raises(tw.TruenoTypeError, match=r"primal 0\['b'\]\[0\] is a float, not a Tensor"):
        tw.grad(lambda p: p["a"].sum())({"a": x, "b": [1.0]})
    with pytest.raises(tw.TruenoTypeError, match="pair"):
        tw.grad(lambda a: a.sum(), has_aux=True)(x)
    assert block_on(tw.grad(lambda a: (a * a).sum())(x).numpy()).tolist() == [2, 2, 2]  # still usable


def _mlp_loss(p, x, t):
    h = (x @ p["w1"] + p["b1"]).relu()
    return ((h @ p["w2"] + p["b2"] - t) ** 2.0).mean()


def _mlp(dev):
    rng = np.random.default_rng(3)
    p = {
        "w1": rng.normal(0, 0.5, (6, 8)),
        "b1": rng.normal(0, 0.1, (8,)),
        "w2": rng.normal(0, 0.5, (8, 3)),
        "b2": rng.normal(0, 0.1, (3,)),
    }
    return (
        {k: dev.tensor(v.astype(np.float32)) for k, v in p.items()},
        dev.tensor(rng.normal(0, 1, (5, 6)).astype(np.float32)),
        dev.tensor(rng.normal(0, 1, (5, 3)).astype(np.float32)),
    )


def test_same_gradients_on_every_backend(dev):
    ref_dev = device_for(NP_DEV)
    want = tw.value_and_grad(_mlp_loss)(*_mlp(ref_dev))
    got = tw.value_and_grad(_mlp_loss)(*_mlp(dev))
    block_on(tw.realize(got[0], *got[1].values()))
    assert block_on(got[0].item()) == pytest.approx(block_on(want[0].item()), rel=1e-5)
    for k in want[1]:
        np.testing.assert_allclose(block_on(got[1][k].numpy()), block_on(want[1][k].numpy()), rtol=1e-4, atol=1e-6)


def _dispatches(dev, *tensors) -> int:
    before = dev.stats.dispatches
    block_on(tw.realize(*tensors))
    return dev.stats.dispatches - before


def test_backward_fuses_like_the_forward(dev):
    """layer_norm's gradient is ONE row kernel, and a loss with it costs what the loss alone costs; an MLP's
    backward pass adds 8 kernels: the three matmuls (each reads its transposed operand in place; the relu
    mask multiplied in the first one's epilogue), the relu mask and the loss's derivative (one map each), the
    two bias sums, the mean's 0-d scale."""
    p, x, t = _mlp(dev)
    c = dev.tensor(RNG.uniform(-1, 1, (4, 16)).astype(np.float32))
    z = dev.tensor(RNG.uniform(-1, 1, (4, 16)).astype(np.float32))
    block_on(tw.realize(*p.values(), x, t, c, z))

    def ln_loss(a):
        return (tw.layer_norm(a) * c).sum()

    assert _dispatches(dev, tw.grad(ln_loss)(z)) == 1
    assert _dispatches(dev, *tw.value_and_grad(ln_loss)(z)) == _dispatches(dev, ln_loss(z))
    loss, grads = tw.value_and_grad(_mlp_loss)(p, x, t)
    assert _dispatches(dev, loss, *grads.values()) == _dispatches(dev, _mlp_loss(p, x, t)) + 8
