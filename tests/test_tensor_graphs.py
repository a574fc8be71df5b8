"""Property test: random lazy-tensor expression graphs against NumPy float64, on every backend.

A drawn program is a list of steps over a growing list of values (each step reads earlier values, so
a value is often read more than once: shared subexpressions):

- leaves: float32 data (uniform in [-3, 3), or small integers for ties and zeros) of 0-d to 4-d shapes,
  dims mostly 1..7 and now and then 17, 64, 257 or 1000 (up to 4096 elements), as dev.tensor,
  tw.asarray or a resident DeviceArray;
- elementwise catalog ops: unary ops on any value, binary ops between operands of different shapes
  (NumPy broadcasting both ways) or with a Python scalar, comparisons, `where` and `floor` on exact
  values, and log / sqrt / rsqrt / div / pow on operands kept away from 0 (|x| + c);
- reductions: sum, max, min, mean with axis None / int / negative int / tuple / (), keepdims or not,
  and the row pattern v op v.reduce(axis, keepdims=True) (x - max, x * mean, ...);
- movement ops: reshape (with -1), permute / swapaxes / transpose(), indexing with steps (negative too), ints,
  None and ..., now and then an empty slice (size-0 tensors), expand / broadcast_to, squeeze / unsqueeze;
- now and then an early `tw.realize` of some values, which later steps then build on.

At the end one to three values (intermediates too, sometimes the same one twice) are realised together
with ONE `tw.realize`, read, and compared element by element with a float64 NumPy run of the program.

The bound is derived from the catalog, step by step; no blanket atol. Each value carries, per element, a
bound e on |device - float64|. An op of catalog tolerance (rtol, atol) whose inputs are off by e gives
at most

    L e + atol + rtol (|y| + L e)

where L bounds the op's derivative on [x - e, x + e] (1 for relu, 0.25 for sigmoid, 2 (|x| + e) for
square, exp(x + e) for exp, |b| e_a + |a| e_b + e_a e_b for a * b, ...). A sum of n terms adds
max(atol, (n - 1) 2^-24) * sum(|x| + e), the catalog's atol or float32's summation bound, whichever is
larger, so the bound grows with the reduction's length; errors add up along a chain of ops. Ops that
are exact in float32 (relu, abs, neg, clip, floor, maximum / minimum, max / min reductions, views,
copies, comparisons, where) only carry their inputs' bounds, so a value computed from the inputs by
exact ops alone must come back bit for bit (bound 0); the discontinuous ops (floor, comparisons,
where's condition) are only drawn on such values, where the reference decides them. The inputs are
finite and a step whose float64 result would pass 1e6 in magnitude becomes tanh of its first operand,
so nothing overflows and no NaN appears (NaN and inf are test_properties.py's and test_ops.py's).

Deterministic: hypothesis derandomised, no example database; the same programs run on every backend.

Bugs it found have a regression test below (all fixed): test_reading_a_prefix_view,
test_one_column_row_step and test_pow_reference_keeps_0d.
"""

from __future__ import annotations

import math

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("hypothesis")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import trueno_web as tw  # noqa: E402
from trueno_web import ops  # noqa: E402
from trueno_web.runtime import block_on  # noqa: E402

U = 2.0**-24  # float32's unit roundoff
LIMIT = 1e6  # a step whose float64 result passes this magnitude becomes tanh
MAX_SIZE = 4096  # elements of a value at most
DIMS = (3, 4, 1, 2, 5, 7)  # the first is what shrinking goes to
LONG = (17, 64, 257, 1000)  # now and then: past a workgroup (256) and into multi-pass reductions
#: examples per backend (the webgpu ones compile a few kernels each on lavapipe)
EXAMPLES = {"webgpu": 200, "numpy": 400, "wasm-simd": 300}

# ---------------------------------------------------------------- the float64 reference and its bound


class Ref:
    """A value of the reference run: float64 data x and, per element, a bound e on |device - x|."""

    __slots__ = ("x", "e")

    def __init__(self, x, e=None):
        self.x = np.asarray(x, dtype=np.float64)
        self.e = np.zeros_like(self.x) if e is None else np.broadcast_to(np.asarray(e, np.float64), self.x.shape)

    @property
    def exact(self) -> bool:
        return not np.any(self.e)

    @property
    def shape(self):
        return self.x.shape


#: derivative bounds of the smooth unary ops over all reals (measured: swish 1.0998, gelu 1.1290,
#: mish 1.0885, selu 1.7581, hardswish 1.5); the ones that depend on x or a parameter are in _lipschitz
LIPSCHITZ = {
    "relu": 1.0,
    "sigmoid": 0.25,
    "tanh": 1.0,
    "swish": 1.1,
    "gelu": 1.13,
    "mish": 1.09,
    "selu": 1.7582,
    "hardswish": 1.5,
    "clip": 1.0,
    "neg": 1.0,
    "abs": 1.0,
    "copy": 1.0,
    "sin": 1.0,
    "cos": 1.0,
}
#: ops exact in float32 (their result needs no rounding): they add no tolerance of their own
EXACT = {"relu", "clip", "neg", "abs", "copy", "floor", "maximum", "minimum", "lt", "le", "gt", "ge", "eq", "ne"}


def _lipschitz(name: str, v: Ref, params: tuple):
    x, e = v.x, v.e
    if name in LIPSCHITZ:
        return LIPSCHITZ[name]
    if name == "leaky_relu":
        return max(1.0, abs(params[0]))
    if name == "elu":
        return max(1.0, abs(params[0]))
    if name == "scale":
        return abs(params[0])
    if name == "square":
        return 2 * (np.abs(x) + e)
    if name == "exp":
        with np.errstate(over="ignore"):  # inf: the step becomes tanh (programs.checked)
            return np.exp(x + e)
    if name == "floor":
        return 0.0  # drawn on exact values only
    lo = x - e  # log, sqrt, rsqrt: drawn on |v| + c only, so lo > 0
    assert np.all(lo > 0), f"{name} drawn too close to 0"
    return {"log": 1 / lo, "sqrt": 0.5 / np.sqrt(lo), "rsqrt": 0.5 * lo**-1.5}[name]


def _bound(name: str, y, prop):
    """The bound of an op's result: its inputs' bounds carried through (prop), plus the catalog's
    tolerance unless the op is exact in float32."""
    if name in EXACT:
        return prop
    op = ops.get(name)
    return prop + op.atol + op.rtol * (np.abs(y) + prop)


def ref_unary(name: str, v: Ref, params: tuple = ()) -> Ref:
    y = np.reshape(ops.get(name).numpy(v.x, *params), v.shape)
    return Ref(y, _bound(name, y, _lipschitz(name, v, params) * v.e))


def ref_binary(name: str, a: Ref, b: Ref) -> Ref:
    y = ops.get(name).numpy(a.x, b.x)
    if name in ("add", "sub"):
        prop = a.e + b.e
    elif name == "mul":
        prop = np.abs(b.x) * a.e + np.abs(a.x) * b.e + a.e * b.e
    elif name in ("maximum", "minimum"):
        prop = np.maximum(a.e, b.e)
    elif name == "div":  # b = |v| + c > 0 (b.x - b.e > 0)
        assert np.all(b.x - b.e > 0)
        prop = (a.e * b.x + np.abs(a.x) * b.e) / (b.x * (b.x - b.e))
    elif name == "pow":  # a = |v| + c > 0, b an exact scalar exponent k
        k = float(b.x)
        lo, hi = a.x - a.e, a.x + a.e
        assert np.all(lo > 0) and b.exact
        prop = abs(k) * np.maximum(lo ** (k - 1), hi ** (k - 1)) * a.e
    else:  # comparisons: drawn on exact values only
        assert a.exact and b.exact, name
        prop = np.zeros_like(y)
    return Ref(y, _bound(name, y, prop))


def ref_where(c: Ref, a: Ref, b: Ref) -> Ref:
    assert c.exact
    return Ref(np.where(c.x != 0, a.x, b.x), np.where(c.x != 0, a.e, b.e))


def axes_of(axis, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    return tuple(a % ndim for a in (axis if isinstance(axis, tuple) else (axis,)))


def ref_reduce(name: str, v: Ref, axis, keepdims: bool) -> Ref:
    n = math.prod(v.shape[a] for a in axes_of(axis, v.x.ndim))
    kw = dict(axis=axis, keepdims=keepdims)
    if name in ("max", "min"):  # exact: the largest element is one of the inputs
        return Ref(getattr(np, name)(v.x, **kw), np.max(v.e, **kw) if v.e.size else 0.0)
    op = ops.get("sum")
    total = np.sum(v.x, **kw)
    prop = np.sum(v.e, **kw)
    rounding = max(op.atol, (n - 1) * U * 1.01) * np.sum(np.abs(v.x) + v.e, **kw)
    s = Ref(total, prop + rounding + op.rtol * (np.abs(total) + prop))
    if name == "sum":
        return s
    # mean is sum * (1 / n): the scale op's tolerance on top (an empty axis: NaN, made tanh by checked)
    with np.errstate(all="ignore"):
        y, prop = (np.mean(v.x, **kw), s.e / n) if n else (s.x * np.nan, s.e)
    return Ref(y, _bound("scale", y, prop))


def ref_view(fn, v: Ref) -> Ref:
    return Ref(fn(v.x), fn(v.e))


# ---------------------------------------------------------------- leaves


def leaf_data(shape, seed: int, style: str):
    rng = np.random.default_rng(seed)
    if style == "ints":  # ties, zeros, exact sums: where and the comparisons see both branches
        return rng.integers(-2, 3, shape).astype(np.float32)
    return rng.uniform(-3, 3, shape).astype(np.float32)


# ---------------------------------------------------------------- programs


class Program:
    """Steps (tuples, see `build`), the float64 reference of every value, and the outputs."""

    def __init__(self):
        self.steps: list[tuple] = []
        self.values: list[Ref] = []
        self.outputs: tuple[int, ...] = ()

    def add(self, step: tuple, value: Ref) -> int:
        self.steps.append(step)
        self.values.append(value)
        return len(self.values) - 1

    def __repr__(self) -> str:
        lines, k = [], 0
        for step in self.steps:
            if step[0] == "realize":
                lines.append(f"  realize {step[1]}")
                continue
            lines.append(f"  v{k} = {step!r}  # {self.values[k].shape}")
            k += 1
        return "Program(\n" + "\n".join(lines) + f"\n  outputs {self.outputs})"


UNARY = {  # name: parameter tuples to draw from (catalog order)
    "relu": [()],
    "leaky_relu": [(0.01,), (0.25,), (-0.5,)],
    "elu": [(1.0,), (0.5,)],
    "sigmoid": [()],
    "tanh": [()],
    "swish": [()],
    "gelu": [()],
    "mish": [()],
    "selu": [()],
    "hardswish": [()],
    "clip": [(-0.5, 0.75), (-2.0, 1.5), (0.0, 3.0)],
    "scale": [(2.0,), (-0.5,), (3.0,), (1 / 3,)],
    "neg": [()],
    "abs": [()],
    "exp": [()],
    "square": [()],
    "sin": [()],
    "cos": [()],
    "copy": [()],
}
BINARY = ("add", "sub", "mul", "maximum", "minimum")
COMPARE = ("lt", "le", "gt", "ge", "eq", "ne")
SCALARS = (2.0, -1.5, 0.5, 3.0, 0.0)
GUARDED = ("log", "sqrt", "rsqrt", "div", "pow")
REDUCE = ("sum", "max", "min", "mean")
KINDS = (
    ["unary"] * 4
    + ["binary"] * 4
    + ["scalar"] * 2
    + ["guarded", "where", "exact", "reshape", "permute", "index", "index", "expand", "squeeze"]
    + ["reduce"] * 3
    + ["rowwise", "realize"]
)


def broadcast(*shapes):
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        return None


def small(shape) -> bool:
    return shape is not None and math.prod(shape) <= MAX_SIZE and len(shape) <= 4


@st.composite
def shapes(draw, min_ndim=1, max_ndim=3):
    out = []
    for _ in range(draw(st.integers(min_ndim, max_ndim))):
        d = draw(st.sampled_from(LONG)) if draw(st.integers(0, 4)) == 0 else draw(st.sampled_from(DIMS))
        out.append(d if math.prod(out) * d <= MAX_SIZE else 1)
    return tuple(out)


@st.composite
def partner_shape(draw, shape):
    """A shape that broadcasts with `shape`: leading dims dropped, some dims 1, a 1 of `shape` widened,
    now and then a new leading dim."""
    out = []
    for d in shape[draw(st.integers(0, len(shape))) :]:
        c = draw(st.integers(0, 3))
        out.append(1 if c == 0 else draw(st.sampled_from((2, 3))) if d == 1 and c == 1 else d)
    if len(out) == len(shape) and len(shape) < 4 and draw(st.integers(0, 3)) == 0:
        out.insert(0, draw(st.sampled_from((1, 2, 3))))
    return tuple(out)


@st.composite
def programs(draw):
    p = Program()

    def leaf(shape):
        seed, style = draw(st.integers(0, 2**16)), draw(st.sampled_from(("uniform", "uniform", "ints")))
        form = draw(st.sampled_from(("tensor", "asarray", "resident")))
        return p.add(("leaf", shape, seed, style, form), Ref(leaf_data(shape, seed, style)))

    def pick(candidates=None):
        """An earlier value, the recent ones first when shrinking (so chains stay chains)."""
        pool = list(range(len(p.values))) if candidates is None else candidates
        return pool[len(pool) - 1 - draw(st.integers(0, len(pool) - 1))]

    def partner(i):
        """A value that broadcasts with value i (an earlier one, i itself, or a new leaf)."""
        shape = p.values[i].shape
        fits = [j for j in range(len(p.values)) if small(broadcast(shape, p.values[j].shape))]
        c = draw(st.integers(0, 3))
        if c == 0:
            return i  # x op x
        if c == 1 and fits:
            return pick(fits)
        new = draw(partner_shape(shape))
        return leaf(new if small(broadcast(shape, new)) else shape)

    def checked(step, value, i):
        """Add the step, or tanh of value i where its result would leave the safe range."""
        if (
            not np.all(np.isfinite(value.x))
            or np.max(np.abs(value.x), initial=0) > LIMIT
            or not np.all(np.isfinite(value.e))
        ):
            return p.add(("unary", "tanh", i, (), "method"), ref_unary("tanh", p.values[i]))
        return p.add(step, value)

    leaf(draw(shapes(0) if draw(st.integers(0, 7)) == 0 else shapes()))
    for _ in range(draw(st.integers(1, 9))):
        kind = draw(st.sampled_from(KINDS))
        i = pick()
        v = p.values[i]
        if kind == "unary":
            name = draw(st.sampled_from(sorted(UNARY)))
            params = draw(st.sampled_from(UNARY[name]))
            form = draw(st.sampled_from(("method", "function", "operator")))
            checked(("unary", name, i, params, form), ref_unary(name, v, params), i)
        elif kind == "binary":
            j = partner(i)
            name = draw(st.sampled_from(BINARY))
            form = draw(st.sampled_from(("operator", "function")))
            checked(("binary", name, i, j, form), ref_binary(name, v, p.values[j]), i)
        elif kind == "scalar":
            name = draw(st.sampled_from(("add", "sub", "mul", "maximum", "minimum")))
            s, left = draw(st.sampled_from(SCALARS)), draw(st.booleans())
            a, b = (Ref(s), v) if left else (v, Ref(s))
            checked(("scalar", name, i, s, left), ref_binary(name, a, b), i)
        elif kind == "guarded":  # log / sqrt / rsqrt / pow of |v| + c, and u / (|v| + c)
            name, c = draw(st.sampled_from(GUARDED)), draw(st.sampled_from((0.25, 1.0, 2.0)))
            g = ref_binary("add", ref_unary("abs", v), Ref(c))
            if name == "div":
                j = partner(i)
                checked(("guarded", name, i, c, j), ref_binary("div", p.values[j], g), i)
            elif name == "pow":
                k = draw(st.sampled_from((2.0, 3.0, 0.5, -1.0, 1.5)))
                checked(("guarded", name, i, c, k), ref_binary("pow", g, Ref(k)), i)
            else:
                checked(("guarded", name, i, c, None), ref_unary(name, g), i)
        elif kind == "where":
            exact = [
                j for j in range(len(p.values)) if p.values[j].exact and small(broadcast(v.shape, p.values[j].shape))
            ]
            if not exact:
                continue
            c = pick(exact)
            j = partner(i)
            shape = broadcast(p.values[c].shape, v.shape, p.values[j].shape)
            if not small(shape):
                continue
            swap = draw(st.booleans())
            a, b = (j, i) if swap else (i, j)
            p.add(("where", c, a, b), ref_where(p.values[c], p.values[a], p.values[b]))
        elif kind == "exact":  # floor and the comparisons, on exact values
            exact = [j for j in range(len(p.values)) if p.values[j].exact]
            if not exact:
                continue
            a = pick(exact)
            name = draw(st.sampled_from(("floor",) + COMPARE))
            if name == "floor":
                p.add(("unary", "floor", a, (), "method"), ref_unary("floor", p.values[a]))
                continue
            others = [j for j in exact if small(broadcast(p.values[a].shape, p.values[j].shape))]
            b = pick(others)  # a itself at least
            p.add(("binary", name, a, b, "operator"), ref_binary(name, p.values[a], p.values[b]))
        elif kind == "reduce":
            name = draw(st.sampled_from(REDUCE))
            axis = draw(axis_arg(v.x.ndim))
            keepdims = draw(st.booleans())
            name = reducible(name, v, axis)
            checked(("reduce", name, i, axis, keepdims), ref_reduce(name, v, axis, keepdims), i)
        elif kind == "rowwise":  # v op v.reduce(axis, keepdims=True): x - max, x / sum, x * mean ...
            name, axis = draw(st.sampled_from(REDUCE)), draw(axis_arg(v.x.ndim))
            name = reducible(name, v, axis)
            r = ref_reduce(name, v, axis, True)
            if not np.all(np.isfinite(r.x)) or np.max(np.abs(r.x), initial=0) > LIMIT:
                continue  # a mean of an empty axis (NaN), or too large
            k = p.add(("reduce", name, i, axis, True), r)
            op = draw(st.sampled_from(BINARY))
            a, b = (k, i) if draw(st.booleans()) else (i, k)
            checked(("binary", op, a, b, "operator"), ref_binary(op, p.values[a], p.values[b]), i)
        elif kind == "reshape":
            shape = draw(reshape_target(v.x.size))
            p.add(("reshape", i, shape), ref_view(lambda x, s=shape: x.reshape(s), v))
        elif kind == "permute":
            n = v.x.ndim
            c = draw(st.integers(0, 2))
            if c == 0 or n < 2:
                axes = tuple(a - n if draw(st.booleans()) else a for a in draw(st.permutations(range(n))))
                p.add(("permute", i, axes), ref_view(lambda x, a=axes: np.transpose(x, a), v))
            elif c == 1:
                a0, a1 = draw(st.integers(-n, n - 1)), draw(st.integers(-n, n - 1))
                p.add(("transpose", i, a0, a1), ref_view(lambda x, a=a0, b=a1: np.swapaxes(x, a, b), v))
            else:
                p.add(("T", i), ref_view(lambda x: x.T, v))
        elif kind == "index":
            index = draw(index_for(v.shape))
            p.add(("index", i, index), ref_view(lambda x, k=index: x[k], v))
        elif kind == "expand":
            shape = draw(expand_target(v.shape))
            want = tuple(d if w == -1 else w for d, w in zip((None,) * (len(shape) - v.x.ndim) + v.shape, shape))
            if small(want):
                p.add(("expand", i, shape), ref_view(lambda x, s=want: np.broadcast_to(x, s), v))
        elif kind == "squeeze":
            ones = [a for a, d in enumerate(v.shape) if d == 1]
            if ones and draw(st.booleans()):
                a = draw(st.sampled_from(ones + [None]))
                a = a - v.x.ndim if a is not None and draw(st.booleans()) else a
                p.add(("squeeze", i, a), ref_view(lambda x, a=a: np.squeeze(x, axis=a), v))
            elif v.x.ndim < 4:
                a = draw(st.integers(-v.x.ndim - 1, v.x.ndim))
                p.add(("unsqueeze", i, a), ref_view(lambda x, a=a: np.expand_dims(x, a), v))
        elif kind == "realize":
            p.steps.append(("realize", tuple(sorted({i, pick()}))))
    last = len(p.values) - 1
    p.outputs = (last,) + tuple(pick() for _ in range(draw(st.integers(0, 2))))
    return p


def reducible(name: str, v: Ref, axis) -> str:
    """max and min of an empty axis raise (they have no identity): a sum there instead."""
    empty = any(v.shape[a] == 0 for a in axes_of(axis, v.x.ndim))
    return "sum" if empty and name in ("max", "min") else name


@st.composite
def axis_arg(draw, ndim):
    c = draw(st.integers(0, 4)) if ndim else 0
    if c == 0:
        return None
    if c in (1, 2):
        return draw(st.integers(-ndim, ndim - 1))
    if c == 3 and draw(st.integers(0, 3)) == 0:
        return ()
    axes = draw(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True))
    return tuple(a - ndim if draw(st.booleans()) else a for a in axes)


def _factors(n: int) -> list[int]:
    out, f = [], 2
    while n > 1:
        while n % f == 0:
            out.append(f)
            n //= f
        f += 1
    return out


@st.composite
def reshape_target(draw, size):
    if size == 0:  # a 0 somewhere, no -1 (NumPy cannot infer it either)
        dims = [draw(st.sampled_from(DIMS)) for _ in range(draw(st.integers(0, 3)))]
        dims.insert(draw(st.integers(0, len(dims))), 0)
        return tuple(dims)
    ndim = draw(st.integers(0 if size == 1 else 1, 4))
    dims = [1] * ndim
    for f in _factors(size):
        dims[draw(st.integers(0, ndim - 1))] *= f
    if ndim and draw(st.booleans()):
        dims[draw(st.integers(0, ndim - 1))] = -1
    return tuple(dims)


@st.composite
def index_for(draw, shape):
    index = []
    for d in shape:
        c = draw(st.integers(0, 7))
        if c == 0:
            index.append(slice(None))
        elif c in (1, 2) and d:
            index.append(draw(st.integers(-d, d - 1)))
        elif c == 7:  # now and then an empty slice: size-0 tensors
            index.append(slice(d // 2, d // 2))
        else:
            step = draw(st.sampled_from((1, 2, 3, -1, -2)))
            start = draw(st.none() | st.integers(-d - 1, d))
            stop = draw(st.none() | st.integers(-d - 1, d))
            s = slice(start, stop, step)
            index.append(s if len(range(*s.indices(d))) else slice(None, None, step))
    c = draw(st.integers(0, 3))
    if c == 1 and index:  # the trailing dims through an ellipsis
        index = index[: draw(st.integers(0, len(index)))] + [Ellipsis]
    elif c == 2 and index:  # fewer indices than dims
        index = index[: draw(st.integers(1, len(index)))]
    if draw(st.integers(0, 3)) == 0 and len(shape) < 4:
        index.insert(draw(st.integers(0, len(index))), None)
    return index[0] if len(index) == 1 and draw(st.booleans()) else tuple(index)


@st.composite
def expand_target(draw, shape):
    out = [
        draw(st.sampled_from((2, 3))) if d == 1 and draw(st.booleans()) else -1 if draw(st.booleans()) else d
        for d in shape
    ]
    if len(shape) < 4 and draw(st.booleans()):
        out.insert(0, draw(st.sampled_from((1, 2, 3))))
    return tuple(out)


# ---------------------------------------------------------------- the same program on a device


def build(dev, program: Program) -> list:
    """Run the program's steps as tensor expressions on `dev` (only the early realize steps execute)."""
    vals = []
    for step in program.steps:
        kind = step[0]
        if kind == "leaf":
            _, shape, seed, style, form = step
            data = leaf_data(shape, seed, style)
            if form == "resident":
                t = dev.tensor(block_on(dev.upload(data)))
            elif form == "asarray":
                t = tw.asarray(float(data) if shape == () else data, device=dev)
            else:
                t = dev.tensor(data)
        elif kind == "realize":
            block_on(tw.realize(*(vals[i] for i in step[1])))
            continue
        elif kind == "unary":
            _, name, i, params, form = step
            t = _unary(vals[i], name, params, form)
        elif kind == "binary":
            _, name, i, j, form = step
            t = _binary(name, vals[i], vals[j], form)
        elif kind == "scalar":
            _, name, i, s, left = step
            a, b = (s, vals[i]) if left else (vals[i], s)
            t = _binary(name, a, b, "operator" if name in ("add", "sub", "mul") else "function")
        elif kind == "guarded":
            _, name, i, c, extra = step
            g = abs(vals[i]) + c
            t = vals[extra] / g if name == "div" else g**extra if name == "pow" else getattr(g, name)()
        elif kind == "where":
            _, c, a, b = step
            t = tw.where(vals[c], vals[a], vals[b])
        elif kind == "reduce":
            _, name, i, axis, keepdims = step
            t = getattr(vals[i], name)(axis=axis, keepdims=keepdims)
        elif kind == "reshape":
            t = vals[step[1]].reshape(*step[2]) if len(step[2]) > 1 else vals[step[1]].reshape(step[2])
        elif kind == "permute":
            t = vals[step[1]].permute(*step[2])
        elif kind == "transpose":
            t = vals[step[1]].swapaxes(step[2], step[3])
        elif kind == "T":
            t = vals[step[1]].transpose()
        elif kind == "index":
            t = vals[step[1]][step[2]]
        elif kind == "expand":
            t = vals[step[1]].expand(*step[2]) if len(step[2]) % 2 else vals[step[1]].broadcast_to(step[2])
        elif kind == "squeeze":
            t = vals[step[1]].squeeze(step[2])
        elif kind == "unsqueeze":
            t = vals[step[1]].unsqueeze(step[2])
        else:
            raise AssertionError(step)
        vals.append(t)
    return vals


def _unary(t, name, params, form):
    if form == "operator" and name == "neg":
        return -t
    if form == "operator" and name == "abs":
        return abs(t)
    if form == "operator" and name == "scale":
        return params[0] * t
    if form == "function":
        return getattr(tw, name)(t, *params)
    return getattr(t, name)(*params)


OPERATORS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
}


def _binary(name, a, b, form):
    if form == "operator" and name in OPERATORS:
        return OPERATORS[name](a, b)
    return getattr(tw, name)(a, b)


def check_program(dev, program: Program) -> None:
    vals = build(dev, program)
    outs = [vals[i] for i in program.outputs]
    submits = dev.stats.submits
    block_on(tw.realize(*outs))
    assert dev.stats.submits - submits <= 1, "tw.realize of several tensors runs one execute"
    for k, t in zip(program.outputs, outs):
        want = program.values[k]
        got = block_on(t.numpy())
        # the dtype the tensor says (a comparison's is bool, arithmetic on bools int32), its values against want's
        assert got.shape == want.shape and got.dtype == t.dtype and t.dtype in ("float32", "int32", "bool"), (
            k,
            got.shape,
            want.shape,
            got.dtype,
        )
        err = np.abs(got.astype(np.float64) - want.x)
        bad = ~(err <= want.e)  # a NaN is bad too
        if bad.any():
            at = tuple(np.argwhere(bad)[0])
            raise AssertionError(
                f"v{k} on {dev.backend}: {int(bad.sum())} of {bad.size} elements outside the bound; first at {at}: "
                f"got {got[at]!r}, float64 {want.x[at]!r}, |diff| {err[at]:.3g} > bound {want.e[at]:.3g}\n{program!r}"
            )


COMMON = dict(
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def test_random_tensor_graphs(dev):
    """Every backend (conftest's `dev`), the same derandomised programs on each."""

    @settings(max_examples=EXAMPLES[dev.backend], **COMMON)
    @given(program=programs())
    def run(program):
        check_program(dev, program)

    run()


def test_reading_a_prefix_view(dev):
    """Found by test_random_tensor_graphs (fixed in 88912da): a view of the leading elements of its
    base (x[0] of a (3, 3) tensor: identity strides at offset 0) was read as the whole base, and
    numpy() failed reshaping 9 values into (3,)."""
    x = np.arange(9, dtype=np.float32).reshape(3, 3)
    t = dev.tensor(x)
    assert block_on(t[0].numpy()).tolist() == x[0].tolist()
    assert block_on((t + 1)[:1].numpy()).tolist() == (x[:1] + 1).tolist()


def test_one_column_row_step(dev):
    """Found by test_random_tensor_graphs (fixed in 88912da): on webgpu, a reduction along rows of ONE
    element fused with the elementwise ops around it emitted WGSL that did not compile ("no definition
    in scope for identifier `e0`"): with one column graph.plan's row_level() made the add below a row
    value reading abs(x), an element value of the chain feeding the reduction, which the row kernel
    defines only inside its loop over the row."""
    x = -np.arange(1, 5, dtype=np.float32).reshape(4, 1)
    a = abs(dev.tensor(x))
    got = block_on((a + a.sum(axis=1, keepdims=True)).numpy())
    assert got.tolist() == (2 * np.abs(x)).tolist()


def test_pow_reference_keeps_0d():
    """Found by test_random_tensor_graphs: the catalog's NumPy reference of pow made its exponent
    contiguous with np.ascontiguousarray (c52139d), which turned a 0-d array into shape (1,)."""
    assert ops.get("pow").numpy(np.asarray(2.5), np.asarray(2.0)).shape == ()


def test_bound_is_zero_for_exact_ops_and_grows_with_length():
    """The bound's own rules: exact ops carry no tolerance; a longer sum gets a larger one."""
    x = Ref(np.arange(-3.0, 3.0))
    assert ref_unary("relu", x).exact and ref_binary("maximum", x, ref_unary("neg", x)).exact
    assert ref_reduce("max", x, None, False).exact
    short = ref_reduce("sum", Ref(np.ones(10)), None, False).e
    long = ref_reduce("sum", Ref(np.ones(5000)), None, False).e
    assert long / 5000 > short / 10  # per term: the (n - 1) 2^-24 bound passes the catalog's atol
    chain = ref_unary("sigmoid", ref_binary("add", Ref(np.ones(3)), Ref(np.ones(3))))
    assert np.all(chain.e > ops.get("sigmoid").atol)  # the add's bound is carried into the sigmoid
