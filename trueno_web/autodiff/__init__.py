"""Function transformations in JAX's style on lazy tensors: `grad`, `value_and_grad`, `vjp`, `jvp`.

`f` is traced once on the given tensors: its expression is built as usual (nothing runs) and walked
backwards into the gradients' expressions, so `await tw.realize(loss, *grads)` runs the forward and
backward passes in one batch. Gradients are taken with respect to the tensors passed in (every use of
such a tensor in `f` counts, closures included), and come back in the structure they were passed in.
`jvp` is the transpose of `vjp`: a vjp's pullback is linear in its cotangent, and its own vjp carries a
tangent forward.
"""

from __future__ import annotations

import functools

from ..errors import TruenoTypeError, TruenoValueError
from ..tensor import Tensor, asarray
from .backward import backward
from .trees import flatten, unflatten

__all__ = ["grad", "jvp", "value_and_grad", "vjp"]


def _is_tensor(x) -> bool:
    return isinstance(x, Tensor)


def _primals(tree, what: str):
    """The leaves of a tree of tensors, each given an expression of its own where it was a view or appeared
    twice (a gradient is taken with respect to an expression; a view reads its base's)."""
    leaves, structure = flatten(tree, what, _is_tensor)
    seen: set[int] = set()
    out = []
    for t in leaves:
        if t.expr.view is not None or id(t.expr) in seen:
            t = t.contiguous() if t.expr.view is not None else t.copy()
        seen.add(id(t.expr))
        out.append(t)
    return out, structure


def vjp(f, *primals, has_aux: bool = False):
    """(f(*primals), vjp_fn) or, with has_aux, (out, vjp_fn, aux) where f returns (out, aux): vjp_fn(ct)
    takes a cotangent of out's structure and returns one cotangent per primal, in the primals' structure."""
    flat, structures, args = [], [], []
    for i, p in enumerate(primals):
        leaves, structure = _primals(p, f"primal {i}")
        flat.append(leaves)
        structures.append(structure)
        args.append(unflatten(structure, leaves))
    result = f(*args)
    if has_aux:
        if not isinstance(result, tuple) or len(result) != 2:
            raise TruenoTypeError("with has_aux=True, f must return a pair (output, aux)")
        result, aux = result
    outs, out_structure = flatten(result, "f's output", _is_tensor)
    wrt = [t for leaves in flat for t in leaves]

    def vjp_fn(cotangent):
        cts, ct_structure = flatten(cotangent, "the cotangent", lambda x: _is_tensor(x) or isinstance(x, float))
        if ct_structure != out_structure or len(cts) != len(outs):
            raise TruenoValueError("the cotangent must have the structure of f's output")
        cts = [asarray(c, o.device).expand(o.shape) if isinstance(c, float) else c for c, o in zip(cts, outs)]
        for c, o in zip(cts, outs):
            if c.shape != o.shape:
                raise TruenoValueError(f"a cotangent of shape {c.shape} for an output of shape {o.shape}")
        grads = iter(backward(outs, cts, wrt) if wrt else [])
        return tuple(unflatten(s, [next(grads) for _ in leaves]) for s, leaves in zip(structures, flat))

    return (result, vjp_fn, aux) if has_aux else (result, vjp_fn)


def jvp(f, primals, tangents, has_aux: bool = False):
    """(f(*primals), the directional derivative of f at primals along tangents) as JAX's jvp: `primals` and
    `tangents` are tuples (or lists) of the same structure, each tangent of its primal's shape; the tangent
    out has the structure of f's output. With has_aux, f returns (out, aux) and jvp (out, tangent_out, aux).
    Computed as the transpose of the vjp (about twice a vjp's work), in the same lazy graph."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TruenoTypeError("jvp takes primals and tangents as tuples, as JAX does: jvp(f, (x,), (t,))")
    if len(primals) != len(tangents):
        raise TruenoValueError(
            f"jvp got {len(primals)} primal(s) and {len(tangents)} tangent(s); give one tangent each"
        )
    for i, (p, t) in enumerate(zip(primals, tangents)):
        ps, p_structure = flatten(p, f"primal {i}", _is_tensor)
        ts, t_structure = flatten(t, f"tangent {i}", _is_tensor)
        if p_structure != t_structure:
            raise TruenoValueError(f"tangent {i} must have the structure of primal {i}")
        for a, b in zip(ps, ts):
            if a.shape != b.shape:
                raise TruenoValueError(f"tangent {i} has shape {b.shape} where its primal has {a.shape}")
    out = vjp(f, *primals, has_aux=has_aux)
    result, pullback = out[0], out[1]
    outs, out_structure = flatten(result, "f's output", _is_tensor)
    seeds = [asarray(0.0, o.device).expand(o.shape) for o in outs]  # any cotangent: the pullback is linear in it
    _, transpose = vjp(lambda *cts: pullback(unflatten(out_structure, list(cts))), *seeds)
    tangent_out = unflatten(out_structure, list(transpose(tuple(tangents))))
    return (result, tangent_out, out[2]) if has_aux else (result, tangent_out)


def _argnums(argnums, nargs: int) -> tuple[int, ...]:
    many = isinstance(argnums, (tuple, list))
    nums = tuple(argnums) if many else (argnums,)
    for n in nums:
        if isinstance(n, bool) or not isinstance(n, int):
            raise TruenoTypeError(f"argnums holds ints, got {n!r}")
        if not -nargs <= n < nargs:
            raise TruenoValueError(f"argnums {n} is out of range for a call with {nargs} positional argument(s)")
    return tuple(n % nargs for n in nums)


def value_and_grad(f, argnums=0, has_aux: bool = False):
    """A function returning (f(*args), the gradient of f with respect to args[argnums]) — ((value, aux),
    grad) with has_aux. f returns a 0-d tensor. A tuple of argnums gives a tuple of gradients."""

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        nums = _argnums(argnums, len(args))

        def at(*chosen):
            full = list(args)
            for n, v in zip(nums, chosen):
                full[n] = v
            return f(*full, **kwargs)

        out = vjp(at, *(args[n] for n in nums), has_aux=has_aux)
        value, pullback = out[0], out[1]
        if not isinstance(value, Tensor) or value.shape != ():
            got = f"shape {value.shape}" if isinstance(value, Tensor) else type(value).__name__
            raise TruenoValueError(f"grad needs f to return a 0-d tensor (a scalar loss); it returned {got}")
        grads = pullback(asarray(1.0, value.device))
        grads = grads if isinstance(argnums, (tuple, list)) else grads[0]
        return ((value, out[2]) if has_aux else value), grads

    return wrapped


def grad(f, argnums=0, has_aux: bool = False):
    """A function returning the gradient of f (a 0-d tensor) with respect to args[argnums] (and aux, with
    has_aux: (grad, aux))."""
    vg = value_and_grad(f, argnums, has_aux)

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        (value, grads) = vg(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    return wrapped
