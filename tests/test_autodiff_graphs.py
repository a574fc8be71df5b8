"""Property test: gradients of random tensor programs against finite differences of their float64 NumPy
replay. A program starts from one or two inputs and applies smooth elementwise ops, broadcasting binary
ops between earlier values, reductions on random axes (keepdims or not), movement ops (reshape, permute,
slicing with steps, integer indices, expand, pad, concatenate) and batched matmul; the loss is
sum(value * weights) of its last value. Inputs are kept where every op is smooth (no ties, no kinks).
Deterministic (derandomised), the same programs on every backend."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_autodiff import NP, TW, fd_grad

import trueno_web as tw
from trueno_web.runtime import block_on

UNARY = ["tanh", "sigmoid", "sin", "swish", "gelu", "square", "exp_tanh", "softplus"]


def unary(xp, name, a):
    if name == "exp_tanh":
        return xp.op("exp", xp.op("tanh", a))
    if name == "softplus":
        return xp.op("log", xp.op("exp", a) + 1.0)
    return xp.op(name, a)


@st.composite
def programs(draw):
    """(input shapes, steps): each step is (kind, args), replayed by `run` on NumPy or on tensors."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    shapes = [shape]
    if draw(st.booleans()):
        shapes.append(tuple(draw(st.sampled_from([1, n])) for n in shape))  # broadcasts against the first
    probe = [np.zeros(s) for s in shapes]
    steps = []
    for _ in range(draw(st.integers(2, 7))):
        cur = run(NP, probe, steps)
        kinds = ["unary", "binary", "scalar", "reduce", "view"] + (["matmul"] if cur[-1].ndim >= 1 else [])
        kind = draw(st.sampled_from(kinds))
        last = cur[-1]
        if kind == "unary":
            args = (draw(st.sampled_from(UNARY)),)
        elif kind == "binary":
            other = draw(st.integers(0, len(cur) - 1))
            try:
                np.broadcast_shapes(cur[other].shape, last.shape)
            except ValueError:
                continue
            args = (draw(st.sampled_from(["add", "sub", "mul"])), other)
        elif kind == "scalar":
            args = (draw(st.sampled_from(["add", "mul", "div"])), draw(st.sampled_from([0.5, -1.25, 2.0])))
        elif kind == "reduce":
            if last.ndim == 0:
                continue
            axes = draw(st.lists(st.integers(0, last.ndim - 1), unique=True, max_size=last.ndim))
            args = (draw(st.sampled_from(["sum", "mean", "max", "var"])), tuple(axes) or None, draw(st.booleans()))
        elif kind == "matmul":
            n = draw(st.integers(1, 3))
            args = (last.shape[-1], n, draw(st.integers(0, 2**16)))
        else:
            args = draw(view_of(last.shape))
        steps.append((kind, args))
    return shapes, steps


@st.composite
def view_of(draw, shape):
    kinds = ["reshape", "permute", "slice", "expand"] + (["index", "pad", "concatenate"] if shape else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "reshape":
        return (kind, (math.prod(shape),) if len(shape) != 1 else (1, shape[0]) if shape else (1,))
    if kind == "permute":
        return (kind, tuple(draw(st.permutations(range(len(shape))))))
    if kind == "slice":
        return (kind, tuple(slice(draw(st.integers(0, n - 1)), None, draw(st.sampled_from([1, 2, -1]))) for n in shape))
    if kind == "index":
        return (kind, draw(st.integers(0, shape[0] - 1)))
    if kind == "expand":
        return (kind, (draw(st.integers(1, 3)),) + tuple(shape))
    if kind == "pad":
        return (kind, [(draw(st.integers(0, 2)), draw(st.integers(0, 2))) for _ in shape])
    return (kind, None)


def run(xp, inputs, steps):
    vals = list(inputs)
    for kind, args in steps:
        a = vals[-1]
        if kind == "unary":
            v = unary(xp, args[0], a)
        elif kind == "binary":
            b = vals[args[1]]
            v = a + b if args[0] == "add" else a - b if args[0] == "sub" else a * b
        elif kind == "scalar":
            v = a + args[1] if args[0] == "add" else a * args[1] if args[0] == "mul" else a / args[1]
        elif kind == "reduce":
            name, axis, keepdims = args
            v = getattr(a, name)(axis=axis, keepdims=keepdims) if a.ndim else a
        elif kind == "matmul":
            k, n, seed = args
            w = np.random.default_rng(seed).uniform(-1, 1, (k, n))
            v = a @ (w if xp is NP else a.device.tensor(w.astype(np.float32))) if a.ndim else a
        else:
            v = movement(xp, a, *args)
        vals.append(v)
    return vals


def movement(xp, a, kind, arg):
    if kind == "reshape":
        return a.reshape(arg)
    if kind == "permute":
        return a.transpose(arg) if xp is NP else a.permute(arg)
    if kind == "slice":
        return a[arg]
    if kind == "index":
        return a[arg]
    if kind == "expand":
        return (np.broadcast_to(a, arg) if xp is NP else a.expand(arg)) * 1.0
    if kind == "pad":
        return xp.pad(a, arg)
    return xp.concatenate([a, a * 0.5], axis=0) if a.ndim else a


@settings(max_examples=60, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(programs(), st.integers(0, 2**16))
def test_random_programs(dev, program, seed):
    shapes, steps = program
    rng = np.random.default_rng(seed)
    inputs = [rng.uniform(0.2, 1.5, s) * rng.choice([-1, 1], s) for s in shapes]
    inputs = [x.astype(np.float32).astype(np.float64) for x in inputs]
    out_shape = run(NP, inputs, steps)[-1].shape
    w = rng.uniform(-1, 1, out_shape)

    def loss(xp, *xs):
        return (run(xp, list(xs), steps)[-1] * (w if xp is NP else xs[0].device.tensor(w.astype(np.float32)))).sum()

    tensors = [dev.tensor(x.astype(np.float32)) for x in inputs]
    value, grads = tw.value_and_grad(lambda *ts: loss(TW, *ts), argnums=tuple(range(len(inputs))))(*tensors)
    block_on(tw.realize(value, *grads))
    for i, g in enumerate(grads):
        want = fd_grad(lambda *xs: loss(NP, *xs), inputs, i)
        got = block_on(g.numpy())
        scale = max(1.0, float(np.abs(want).max(initial=0.0)))
        np.testing.assert_allclose(got, want, rtol=5e-3, atol=2e-3 * scale, err_msg=f"{steps}")


@pytest.fixture(scope="module")
def dev(backend):
    from conftest import device_for

    return device_for(backend)
