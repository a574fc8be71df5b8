"""tw.jvp: tangents pushed forward against float64 central differences of the same function in NumPy, on
every backend; pytrees and has_aux; a scalar function's jvp is its gradient dotted with the tangent; one
batch realises the output and its tangent; misuse raises."""

from __future__ import annotations

import numpy as np
import pytest

import trueno_web as tw
from trueno_web.runtime import block_on

RNG = np.random.default_rng(11)


def ours(p, x):
    h = (x @ p["w"] + p["b"]).tanh()
    return {"h": h * x[:, :1], "p": (h * 2.0).softmax(-1).sum(0), "n": (h * h).mean()}


def reference(p, x):
    h = np.tanh(x @ p["w"] + p["b"])
    z = np.exp(2 * h - (2 * h).max(-1, keepdims=True))
    return {"h": h * x[:, :1], "p": (z / z.sum(-1, keepdims=True)).sum(0), "n": (h * h).mean()}


def directional(f, primals, tangents, eps=1e-6):
    """(f(p + eps t) - f(p - eps t)) / 2 eps in float64, leaf by leaf of f's output dict."""
    up = f(
        *[
            {k: v + eps * t[k] for k, v in p.items()} if isinstance(p, dict) else p + eps * t
            for p, t in zip(primals, tangents)
        ]
    )
    down = f(
        *[
            {k: v - eps * t[k] for k, v in p.items()} if isinstance(p, dict) else p - eps * t
            for p, t in zip(primals, tangents)
        ]
    )
    return {k: (up[k] - down[k]) / (2 * eps) for k in up}


def test_jvp_against_finite_differences(dev):
    p = {"w": RNG.normal(0, 0.5, (4, 3)), "b": RNG.normal(0, 0.1, (3,))}
    tp = {"w": RNG.normal(0, 1, (4, 3)), "b": RNG.normal(0, 1, (3,))}
    x, tx = RNG.normal(0, 1, (5, 4)), RNG.normal(0, 1, (5, 4))
    as32 = lambda tree: {k: dev.tensor(v.astype(np.float32)) for k, v in tree.items()}  # noqa: E731
    before = dev.stats.submits
    out, tangent = tw.jvp(
        ours, (as32(p), dev.tensor(x.astype(np.float32))), (as32(tp), dev.tensor(tx.astype(np.float32)))
    )
    block_on(tw.realize(*out.values(), *tangent.values()))
    assert dev.stats.submits - before == 1  # the forward pass and the tangent's: one batch
    p32 = {k: v.astype(np.float32).astype(np.float64) for k, v in p.items()}
    x32 = x.astype(np.float32).astype(np.float64)
    t32 = {k: v.astype(np.float32).astype(np.float64) for k, v in tp.items()}
    want_out = reference(p32, x32)
    want = directional(reference, (p32, x32), (t32, tx.astype(np.float32).astype(np.float64)))
    assert set(tangent) == set(want)
    for k in want:
        np.testing.assert_allclose(block_on(out[k].numpy()), want_out[k], rtol=1e-5, atol=1e-6, err_msg=k)
        np.testing.assert_allclose(block_on(tangent[k].numpy()), want[k], rtol=1e-4, atol=1e-5, err_msg=k)


def test_a_scalar_functions_jvp_is_its_gradient_along_the_tangent(dev):
    x = dev.tensor(RNG.uniform(-1, 1, (3, 4)).astype(np.float32))
    t = dev.tensor(RNG.uniform(-1, 1, (3, 4)).astype(np.float32))

    def f(a):
        return (a.exp() * a.sin()).sum() / (a * a + 1.0).sum()

    value, dot = tw.jvp(f, [x], [t])
    g = tw.grad(f)(x)
    want = float((block_on(g.numpy()).astype(np.float64) * block_on(t.numpy())).sum())
    assert dot.shape == () and block_on(dot.item()) == pytest.approx(want, rel=1e-5, abs=1e-6)
    assert block_on(value.item()) == pytest.approx(block_on(f(x).item()), rel=1e-6)


def test_has_aux_and_an_output_that_ignores_an_input():
    dev = block_on(tw.GpuDevice.create("numpy"))
    a, b = dev.tensor(np.array([1.0, 2.0], np.float32)), dev.tensor(np.array([3.0, -1.0], np.float32))
    ta, tb = dev.tensor(np.array([1.0, 0.0], np.float32)), dev.tensor(np.array([0.5, 0.5], np.float32))
    out, tangent, aux = tw.jvp(lambda u, v: ((u * 3.0, v.sum() * 0.0 + 1.0), u + v), (a, b), (ta, tb), has_aux=True)
    assert block_on(tangent[0].numpy()).tolist() == [3.0, 0.0]
    assert block_on(tangent[1].item()) == 0.0  # no dependence on v: a zero tangent, not an error
    assert block_on(aux.numpy()).tolist() == [4.0, 1.0]
    dev.close()


def test_misuse_raises_and_names_it():
    dev = block_on(tw.GpuDevice.create("numpy"))
    x = dev.tensor(np.ones(3, np.float32))
    with pytest.raises(tw.TruenoTypeError, match="tuples"):
        tw.jvp(lambda a: a * 2.0, x, x)
    with pytest.raises(tw.TruenoValueError, match="1 primal"):
        tw.jvp(lambda a: a * 2.0, (x,), (x, x))
    with pytest.raises(tw.TruenoValueError, match=r"shape \(2,\) where its primal has \(3,\)"):
        tw.jvp(lambda a: a * 2.0, (x,), (dev.tensor(np.ones(2, np.float32)),))
    with pytest.raises(tw.TruenoValueError, match="structure"):
        tw.jvp(lambda p: p["a"] * 2.0, ({"a": x},), ([x],))
    with pytest.raises(tw.TruenoTypeError, match=r"tangent 0\['a'\] is a float"):
        tw.jvp(lambda p: p["a"] * 2.0, ({"a": x},), ({"a": 1.0},))
    _, t = tw.jvp(lambda a: a * 2.0, (x,), (x,))  # still usable
    assert block_on(t.numpy()).tolist() == [2.0, 2.0, 2.0]
    dev.close()
