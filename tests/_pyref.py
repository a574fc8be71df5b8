"""A pure-Python float64 reference for n-d arrays: what the tensor tests compare with, on the desktop and
inside Pyodide (no NumPy there).

`Ref` is a flat row-major list of Python floats plus a shape. It does what the tensor tests need, with
NumPy's rules: broadcasting, transpose/permute, reshape, expand, squeeze/unsqueeze, indexing with ints,
slices with steps, None and `...`; reductions with axis=None | int | tuple and keepdims; softmax and
log_softmax along an axis; matmul (1-D operands, batched (..., M, K) @ (..., K, N)); concatenate, stack
and pad (NumPy's pad_width forms, a scalar constant_values); where; the six
comparisons (1.0 / 0.0); every elementwise op through the catalog's pure-Python `op.ref`. Operators
`+ - * / ** @`, unary `-`, `abs()` and comparisons mix Refs and Python numbers.

Inputs come from `uniform()` (a seeded `random.Random`), rounded to float32 like the tensors' data.
`assert_close()` is np.testing.assert_allclose for a float32 result: NaN matches NaN, an infinity matches
only the same infinity, else |got - want| <= atol + rtol * |want|.

test_tensor.py's test_the_reference_matches_numpy checks this module against NumPy on the desktop
(concatenate/stack/pad: test_tensor_join.py; batched matmul: test_tensor_matmul.py).
"""

from __future__ import annotations

import array
import itertools
import math
import random

from trueno_web import ops

NAN, INF = math.nan, math.inf


def f32(values) -> list[float]:
    """Values rounded to float32 (out of range: +-inf), as Python floats."""
    out = array.array("f")
    for v in values:
        v = float(v)
        try:
            out.append(v)
        except OverflowError:
            out.append(math.copysign(INF, v))
    return list(out)


def contiguous_strides(shape) -> tuple[int, ...]:
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= d
    return tuple(reversed(strides))


def broadcast_shapes(*shapes) -> tuple[int, ...]:
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for d in range(ndim):
        sizes = {s[d - ndim + len(s)] for s in shapes if d - ndim + len(s) >= 0}
        big = sizes - {1}
        if len(big) > 1:
            raise ValueError(f"shapes {shapes} do not broadcast")
        out.append(big.pop() if big else 1)
    return tuple(out)


def _axes(axis, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(f"axis {a} out of range for {ndim} dimension(s)")
    return tuple(a % ndim for a in axes)


def _mean(xs) -> float:
    xs = list(xs)
    return ops.get("sum").ref(xs) / len(xs) if xs else NAN


def _var(xs, ddof=0) -> float:
    xs = list(xs)
    if len(xs) - ddof <= 0:
        return NAN
    m = _mean(xs)
    return ops.get("sum").ref((v - m) * (v - m) for v in xs) / (len(xs) - ddof)


#: the catalog's reductions of one tensor (its rows of kind "reduce" but dot, which takes two)
CATALOG_REDUCTIONS = tuple(op.name for op in ops.CATALOG if op.kind == "reduce" and op.arity == 1)

#: reductions by name: a function of a list of floats (the catalog's refs, plus mean, var, std)
REDUCTIONS = {
    **{name: ops.get(name).ref for name in CATALOG_REDUCTIONS},
    "mean": _mean,
    "var": _var,
    "std": lambda xs: math.sqrt(_var(xs)) if not math.isnan(_var(xs)) else NAN,
}


class Ref:
    """A float64 n-d array: `flat` (row-major list of floats) and `shape` (see the module docstring)."""

    __slots__ = ("flat", "shape")
    __hash__ = None  # == is elementwise

    def __init__(self, flat, shape=None):
        flat = [float(v) for v in flat]
        self.shape = (len(flat),) if shape is None else tuple(int(d) for d in shape)
        if math.prod(self.shape) != len(flat):
            raise ValueError(f"{len(flat)} values do not fill shape {self.shape}")
        self.flat = flat

    @classmethod
    def scalar(cls, x: float) -> Ref:
        return cls([x], ())

    @classmethod
    def nested(cls, rows) -> Ref:
        """From nested lists (rectangular), or a number (0-d)."""
        shape, level = [], rows
        while isinstance(level, (list, tuple)):
            shape.append(len(level))
            level = level[0] if level else None
        flat = rows
        for _ in range(len(shape) - 1):
            flat = [v for row in flat for v in row]
        return cls([flat] if not shape else flat, shape)

    @classmethod
    def full(cls, shape, value: float) -> Ref:
        return cls([value] * math.prod(shape), shape)

    # ------------------------------------------------------------ basics

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return len(self.flat)

    def __repr__(self) -> str:
        return f"Ref(shape={self.shape}, {self.flat[:8]}{'...' if self.size > 8 else ''})"

    def tolist(self):
        """Nested lists (a float for 0-d), as ndarray.tolist()."""

        def build(flat, shape):
            if not shape:
                return flat[0]
            if len(shape) == 1:
                return list(flat)
            step = math.prod(shape[1:])
            return [build(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]

        return build(self.flat, self.shape)

    def f32(self) -> array.array:
        """The values as array.array('f') (host data for a tensor: dev.tensor(r.f32(), shape=r.shape))."""
        return array.array("f", f32(self.flat))

    def astype_f32(self) -> Ref:
        return Ref(f32(self.flat), self.shape)

    # ------------------------------------------------------------ movement

    def _gather(self, shape, strides, offset) -> Ref:
        flat = self.flat
        if not shape:
            return Ref([flat[offset]], ())
        out = [
            flat[offset + sum(i * s for i, s in zip(idx, strides))]
            for idx in itertools.product(*(range(n) for n in shape))
        ]
        return Ref(out, shape)

    def permute(self, *axes) -> Ref:
        axes = tuple(axes[0]) if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else axes
        axes = _axes(axes, self.ndim)
        if sorted(axes) != list(range(self.ndim)):
            raise ValueError(f"{axes} is not a permutation of {self.ndim} axes")
        strides = contiguous_strides(self.shape)
        return self._gather([self.shape[a] for a in axes], [strides[a] for a in axes], 0)

    def transpose(self, *axes) -> Ref:
        """NumPy's transpose: no axes reverses them, else a permutation."""
        return self.permute(axes if axes else tuple(range(self.ndim))[::-1])

    def swapaxes(self, a: int, b: int) -> Ref:
        order = list(range(self.ndim))
        a, b = a % self.ndim, b % self.ndim
        order[a], order[b] = order[b], order[a]
        return self.permute(order)

    @property
    def T(self) -> Ref:
        return self.transpose()

    def reshape(self, *shape) -> Ref:
        shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        if -1 in shape:
            known = math.prod(d for d in shape if d != -1)
            shape = tuple(self.size // known if d == -1 else d for d in shape)
        return Ref(self.flat, shape)

    def broadcast_to(self, shape) -> Ref:
        shape = tuple(shape)
        if broadcast_shapes(self.shape, shape) != shape:
            raise ValueError(f"cannot broadcast {self.shape} to {shape}")
        lead = len(shape) - self.ndim
        own = contiguous_strides(self.shape)
        strides = [0] * lead + [own[d] if self.shape[d] == shape[lead + d] else 0 for d in range(self.ndim)]
        return self._gather(shape, strides, 0)

    def squeeze(self, axis=None) -> Ref:
        drop = set(_axes(axis, self.ndim)) if axis is not None else {d for d, n in enumerate(self.shape) if n == 1}
        if any(self.shape[d] != 1 for d in drop):
            raise ValueError(f"cannot squeeze axis {axis} of {self.shape}")
        return Ref(self.flat, [n for d, n in enumerate(self.shape) if d not in drop])

    def unsqueeze(self, axis: int) -> Ref:
        a = axis % (self.ndim + 1)
        return Ref(self.flat, self.shape[:a] + (1,) + self.shape[a:])

    def __getitem__(self, index) -> Ref:
        index = index if isinstance(index, tuple) else (index,)
        named = sum(i is not None and i is not Ellipsis for i in index)
        if Ellipsis not in index:
            index = index + (Ellipsis,)
        at = index.index(Ellipsis)
        index = index[:at] + (slice(None),) * (self.ndim - named) + index[at + 1 :]
        strides = contiguous_strides(self.shape)
        shape, out_strides, offset, d = [], [], 0, 0
        for i in index:
            if i is None:
                shape.append(1)
                out_strides.append(0)
                continue
            if isinstance(i, slice):
                r = range(*i.indices(self.shape[d]))
                shape.append(len(r))
                out_strides.append(strides[d] * r.step)
                offset += r.start * strides[d] if len(r) else 0
            else:
                if not -self.shape[d] <= i < self.shape[d]:
                    raise IndexError(f"index {i} out of range for axis {d} of size {self.shape[d]}")
                offset += (i % self.shape[d]) * strides[d]
            d += 1
        return self._gather(shape, out_strides, offset)

    # ------------------------------------------------------------ elementwise

    def map(self, fn, *params) -> Ref:
        """fn (a catalog op name, or a function of one float) on every element."""
        fn = ops.get(fn).ref if isinstance(fn, str) else fn
        return Ref([fn(v, *params) for v in self.flat], self.shape)

    def __neg__(self) -> Ref:
        return self.map("neg")

    def __abs__(self) -> Ref:
        return self.map("abs")

    def __add__(self, other):
        return apply("add", self, other)

    def __radd__(self, other):
        return apply("add", other, self)

    def __sub__(self, other):
        return apply("sub", self, other)

    def __rsub__(self, other):
        return apply("sub", other, self)

    def __mul__(self, other):
        return apply("mul", self, other)

    def __rmul__(self, other):
        return apply("mul", other, self)

    def __truediv__(self, other):
        return apply("div", self, other)

    def __rtruediv__(self, other):
        return apply("div", other, self)

    def __pow__(self, other):
        return apply("pow", self, other)

    def __rpow__(self, other):
        return apply("pow", other, self)

    def __lt__(self, other):
        return apply("lt", self, other)

    def __le__(self, other):
        return apply("le", self, other)

    def __gt__(self, other):
        return apply("gt", self, other)

    def __ge__(self, other):
        return apply("ge", self, other)

    def __eq__(self, other):
        return apply("eq", self, other)

    def __ne__(self, other):
        return apply("ne", self, other)

    def __matmul__(self, other):
        return matmul(self, other)

    def __rmatmul__(self, other):
        return matmul(other, self)

    def clip(self, lo, hi) -> Ref:
        return self.map("clip", lo, hi)

    def pad(self, pad_width, constant_values: float = 0.0) -> Ref:
        return pad(self, pad_width, constant_values)

    # ------------------------------------------------------------ reductions and axis ops

    def reduce(self, fn, axis=None, keepdims=False) -> Ref:
        """fn (a name of REDUCTIONS, or a function of a list of floats) over `axis`."""
        fn = REDUCTIONS[fn] if isinstance(fn, str) else fn
        axes = _axes(axis, self.ndim)
        kept = [d for d in range(self.ndim) if d not in axes]
        moved = self.permute(kept + list(axes)) if self.ndim else self
        n = math.prod(self.shape[d] for d in axes)
        rows = math.prod(self.shape[d] for d in kept)
        out = [fn(moved.flat[r * n : (r + 1) * n]) for r in range(rows)]
        shape = (
            [1 if d in axes else self.shape[d] for d in range(self.ndim)] if keepdims else [self.shape[d] for d in kept]
        )
        return Ref(out, shape)

    def sum(self, axis=None, keepdims=False):
        return self.reduce("sum", axis, keepdims)

    def max(self, axis=None, keepdims=False):
        return self.reduce("max", axis, keepdims)

    def min(self, axis=None, keepdims=False):
        return self.reduce("min", axis, keepdims)

    def prod(self, axis=None, keepdims=False):
        return self.reduce("prod", axis, keepdims)

    def mean(self, axis=None, keepdims=False):
        return self.reduce("mean", axis, keepdims)

    def var(self, axis=None, keepdims=False):
        return self.reduce("var", axis, keepdims)

    def std(self, axis=None, keepdims=False):
        return self.reduce("std", axis, keepdims)

    def norm_l1(self, axis=None, keepdims=False):
        return self.reduce("norm_l1", axis, keepdims)

    def norm_l2(self, axis=None, keepdims=False):
        return self.reduce("norm_l2", axis, keepdims)

    def along(self, fn, axis: int = -1) -> Ref:
        """fn (a function of a list of floats giving a list as long) on every 1-D slice along `axis`."""
        a = axis % self.ndim
        order = [d for d in range(self.ndim) if d != a] + [a]
        moved = self.permute(order)
        n = self.shape[a]
        out = []
        for r in range(moved.size // n if n else 0):
            out.extend(fn(moved.flat[r * n : (r + 1) * n]))
        return Ref(out, moved.shape).permute([order.index(d) for d in range(self.ndim)])

    def softmax(self, axis: int = -1) -> Ref:
        return self.along(ops.get("softmax").ref, axis)

    def log_softmax(self, axis: int = -1) -> Ref:
        return self.along(ops.get("log_softmax").ref, axis)


def as_ref(x) -> Ref:
    if isinstance(x, Ref):
        return x
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return Ref.scalar(float(x))
    return Ref.nested(x)


def apply(name: str, *args, **params) -> Ref:
    """The catalog op `name` elementwise on broadcast arguments (Refs or numbers), via its `op.ref`."""
    op = ops.get(name)
    refs = [as_ref(a) for a in args]
    shape = broadcast_shapes(*(r.shape for r in refs))
    flats = [(r if r.shape == shape else r.broadcast_to(shape)).flat for r in refs]
    values = [params.get(p.name, p.default) for p in op.params]
    return Ref([op.ref(*xs, *values) for xs in zip(*flats)] if flats else [], shape)


def where(cond, a, b) -> Ref:
    return apply("where", cond, a, b)


def maximum(a, b) -> Ref:
    return apply("maximum", a, b)


def minimum(a, b) -> Ref:
    return apply("minimum", a, b)


def matmul(a, b) -> Ref:
    """NumPy's a @ b: 1-D operands are vectors; leading dimensions broadcast."""
    a, b = as_ref(a), as_ref(b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul of a 0-d operand")
    a2 = a.unsqueeze(0) if a.ndim == 1 else a
    b2 = b.unsqueeze(-1) if b.ndim == 1 else b
    (m, k), (k2, n) = a2.shape[-2:], b2.shape[-2:]
    if k != k2:
        raise ValueError(f"inner dimensions differ: {a.shape} @ {b.shape}")
    lead = broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    a3 = a2.broadcast_to(lead + (m, k)).flat
    b3 = b2.broadcast_to(lead + (k, n)).flat
    dot = ops.get("sum").ref
    out = []
    for g in range(math.prod(lead)):
        A, B = a3[g * m * k : (g + 1) * m * k], b3[g * k * n : (g + 1) * k * n]
        out.extend(dot(A[i * k + p] * B[p * n + j] for p in range(k)) for i in range(m) for j in range(n))
    shape = lead + (m, n)
    r = Ref(out, shape)
    if a.ndim == 1:
        r = r.squeeze(-2)
    return r.squeeze(-1) if b.ndim == 1 else r


def _axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} out of range for {ndim} dimension(s)")
    return axis % ndim


def concatenate(refs, axis: int = 0) -> Ref:
    """np.concatenate: same shapes but along `axis` (no 0-d)."""
    refs = [as_ref(r) for r in refs]
    if not refs or refs[0].ndim == 0:
        raise ValueError("concatenate needs at least one array of at least one dimension")
    a = _axis(axis, refs[0].ndim)
    first = refs[0].shape
    for r in refs:
        if r.ndim != len(first) or any(r.shape[d] != first[d] for d in range(len(first)) if d != a):
            raise ValueError(f"shapes {[r.shape for r in refs]} do not join along axis {axis}")
    outer, inner = math.prod(first[:a]), math.prod(first[a + 1 :])
    out = []
    for o in range(outer):
        for r in refs:
            run = r.shape[a] * inner
            out.extend(r.flat[o * run : (o + 1) * run])
    return Ref(out, first[:a] + (sum(r.shape[a] for r in refs),) + first[a + 1 :])


def stack(refs, axis: int = 0) -> Ref:
    """np.stack: same shapes, joined along a new axis."""
    refs = [as_ref(r) for r in refs]
    if not refs:
        raise ValueError("stack needs at least one array")
    if any(r.shape != refs[0].shape for r in refs):
        raise ValueError(f"shapes {[r.shape for r in refs]} differ")
    a = _axis(axis, refs[0].ndim + 1)
    return concatenate([r.unsqueeze(a) for r in refs], a)


def pad_width_pairs(pad_width, ndim: int) -> list[tuple[int, int]]:
    """NumPy's pad_width (an int, (n,), (before, after), ((before, after),), one pair or (n,) per axis)
    as one (before, after) per axis: np.broadcast_to(pad_width, (ndim, 2))."""
    widths = Ref.nested(pad_width).broadcast_to((ndim, 2)).flat
    if any(w < 0 or w != int(w) for w in widths):
        raise ValueError(f"pad widths {pad_width} must be ints >= 0")
    return [(int(widths[2 * d]), int(widths[2 * d + 1])) for d in range(ndim)]


def pad(r, pad_width, constant_values: float = 0.0) -> Ref:
    """np.pad(r, pad_width, constant_values=...) (mode 'constant', a scalar constant)."""
    r = as_ref(r)
    widths = pad_width_pairs(pad_width, r.ndim)
    shape = tuple(n + b + e for n, (b, e) in zip(r.shape, widths))
    out = [float(constant_values)] * math.prod(shape)
    strides = contiguous_strides(shape)
    start = sum(b * s for (b, _), s in zip(widths, strides))
    for value, idx in zip(r.flat, itertools.product(*(range(n) for n in r.shape))):
        out[start + sum(i * s for i, s in zip(idx, strides))] = value
    return Ref(out, shape)


# ---------------------------------------------------------------- inputs and comparison


def uniform(rng: random.Random, shape, lo: float = -3.0, hi: float = 3.0) -> Ref:
    """Float32 values uniform in [lo, hi) of `shape`, from `rng`."""
    shape = tuple(shape)
    return Ref(f32(rng.uniform(lo, hi) for _ in range(math.prod(shape))), shape)


def choice(rng: random.Random, shape, values) -> Ref:
    """Elements of `shape` drawn from `values` (float32)."""
    shape, values = tuple(shape), f32(values)
    return Ref([rng.choice(values) for _ in range(math.prod(shape))], shape)


def flat_values(data) -> list[float]:
    """A host result (NumPy array or array.array('f')) or a Ref as a flat list of floats."""
    if isinstance(data, Ref):
        return list(data.flat)
    if hasattr(data, "reshape"):
        data = data.reshape(-1)
    return [float(v) for v in data]


def mismatches(got, want, rtol: float, atol: float) -> list[str]:
    """Where flat `got` differs from flat `want` (as np.testing.assert_allclose: NaN == NaN, an infinity
    only equals the same infinity, else |got - want| <= atol + rtol * |want|)."""
    bad = []
    if len(got) != len(want):
        return [f"{len(got)} values, want {len(want)}"]
    for i, (g, w) in enumerate(zip(got, want)):
        if math.isnan(w) or math.isnan(g):
            ok = math.isnan(w) and math.isnan(g)
        elif math.isinf(w) or math.isinf(g):
            ok = g == w
        else:
            ok = abs(g - w) <= atol + rtol * abs(w)
        if not ok:
            bad.append(f"[{i}] got {g!r}, want {w!r}")
    return bad


def assert_close(got, want: Ref, rtol: float = 1e-7, atol: float = 0.0) -> None:
    """`got` (flat values, a host array or a Ref) is `want` within rtol/atol (see mismatches)."""
    bad = mismatches(flat_values(got), want.flat, rtol, atol)
    assert not bad, f"{len(bad)} of {want.size} values differ (rtol={rtol}, atol={atol}): " + "; ".join(bad[:10])
