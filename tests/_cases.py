"""Shared parity cases: inputs per catalog row, references and tolerance checks.

Imports nothing heavy at import time (no NumPy), so the same helpers run on the desktop and inside
Pyodide. The reference is the catalog's `op.numpy` on float64 arrays where NumPy imports, and the
pure-Python `op.ref` otherwise. Results are compared with the catalog's tolerances:

    |got - want| <= atol * magnitude + rtol * |want|

where `want` is the float64 reference rounded to float32 (so a result that overflows float32 is
+-inf in both), `magnitude` is 1 for elementwise ops and softmax, and for reductions, matmul and
convolve2d it is the op applied to |inputs| in float64 (sum(|x|) for sum, sum(|a b|) for dot,
|A| @ |B| per element for matmul, ...), the size of what the accumulation rounds. NaN must match
NaN, and an infinite value on either side must match exactly.
"""

from __future__ import annotations

import array
import math
import random
from dataclasses import dataclass, field
from functools import lru_cache

from trueno_web import accuracy, ops, references
from trueno_web.dtypes import float32, signature
from trueno_web.host import numpy_available
from trueno_web.runtime import block_on

HAVE_NUMPY = numpy_available()
F32_MAX = references.F32_MAX
NAN, INF = math.nan, math.inf

#: every catalog row, with its aliases, as (method name, row)
#: the ops that compute in float32 (the float harness here: float32 inputs, their references in float64); the
#: others, and every op on its other dtypes, are tests/test_dtypes.py's
FLOAT_CATALOG = tuple(op for op in ops.CATALOG if float32 in op.dtypes and op.returns != "target")
NAMES = tuple((name, op) for op in FLOAT_CATALOG for name in (op.name, *op.aliases))
ELEMENTWISE = tuple(op for op in FLOAT_CATALOG if op.elementwise and op.returns == "same")  # float32 to float32

#: values for scalar parameters the caller must give (others use the catalog default)
PARAM_VALUES = {"lo": -0.5, "hi": 0.75, "s": -1.5}

#: the special inputs every op is checked on. No value whose result would be float32-subnormal
#: in an exact op: WGSL allows a GPU to flush subnormals to zero.
SPECIALS = (
    NAN,
    INF,
    -INF,
    -0.0,
    0.0,
    1.0,
    -1.0,
    100.0,
    -100.0,
    88.75,
    -88.75,
    1e30,
    -1e30,
    1e-30,
    -1e-30,
    F32_MAX,
    -F32_MAX,
)

#: Where a float32 result may legitimately differ from the float64 reference rounded to float32,
#: because an intermediate of the op's float32 formula overflows. For these inputs the checks
#: accept either the value given here or the reference (webgpu and numpy give the value here):
#:   norm_l2 = sqrt(sum(x * x)): x * x, or the float32 sum of squares, overflows past F32_MAX, so +inf
#:   (no rescaling)
F32_OVERFLOW = {
    "norm_l2": lambda xs: INF if math.fsum(v * v for v in xs if math.isfinite(v)) > F32_MAX else None,
}


def prod_order_free(xs) -> bool:
    """Whether multiplying `xs` in float32 keeps every partial product, in any order, inside float32's
    normal range: the product of the factors above 1 at most 2^127.9 and that of those below 1 at
    least 2^-125.9 (finite nonzero ones; NaN, inf and 0 give the same result in any order). Then each
    of the n - 1 multiplications rounds once, and the result is within (n - 1) 2^-24 of the product.
    Otherwise the float32 result depends on the order of the multiplications (NumPy's too): a partial
    product may overflow to inf or underflow to 0 (or lose bits among the subnormals) where the true
    product is a normal number, giving +-inf, +-0, a NaN (inf * 0) or a value of the right sign only."""
    big = small = 0.0
    for v in xs:
        a = abs(v)
        if a == 0 or not math.isfinite(a):
            continue
        if a > 1:
            big += math.log2(a)
        else:
            small += math.log2(a)
    return big <= 127.9 and small >= -125.9


def _prod_order(xs):
    """prod's documented order dependence (prod_order_free): None where the result is determined, else
    the check a float32 result must still pass: NaN, or the product's sign."""
    if prod_order_free(xs) or any(math.isnan(v) for v in xs):
        return None
    sign = -1.0 if sum(1 for v in xs if math.copysign(1.0, v) < 0) % 2 else 1.0
    return lambda g: math.isnan(g) or math.copysign(1.0, g) == sign


def _cumulative_prod_order(xs) -> list:
    """_prod_order of each prefix of xs (a cumulative_prod's elements; a parallel scan multiplies in another
    order than NumPy's sequential one), in one pass."""
    big = small = 0.0
    negatives, nan = 0, False
    out = []
    for v in xs:
        a = abs(v)
        nan = nan or math.isnan(v)
        negatives += math.copysign(1.0, v) < 0
        if a != 0 and math.isfinite(a):
            big, small = (big + math.log2(a), small) if a > 1 else (big, small + math.log2(a))
        if nan or (big <= 127.9 and small >= -125.9):
            out.append(None)
        else:
            sign = -1.0 if negatives % 2 else 1.0
            out.append(lambda g, sign=sign: math.isnan(g) or math.copysign(1.0, g) == sign)
    return out


#: Per reduction, a check that results of an order-dependent float32 computation still pass where the
#: reference cannot decide (see prod_order_free); None: the reference decides.
F32_ORDER = {"prod": _prod_order}


def run(awaitable):
    """Every test drives async code with block_on (JSPI in the browser, a private loop here)."""
    return block_on(awaitable)


def f32(values) -> array.array:
    """Round to float32 (overflow becomes +-inf)."""
    return array.array("f", values)


@lru_cache(maxsize=64)
def _uniform(n: int, lo: float, hi: float, seed: int) -> array.array:
    rng = random.Random(seed)
    return f32(rng.uniform(lo, hi) for _ in range(n))


def uniform(n: int, lo: float = -4.0, hi: float = 4.0, seed: int = 0) -> array.array:
    """n float32 values, uniform in [lo, hi), reproducible; a fresh copy each call."""
    return array.array("f", _uniform(n, lo, hi, seed))


def params_for(op: ops.Op, **override) -> dict:
    """Keyword arguments for an op's scalar parameters: the default, or PARAM_VALUES, or 0.5."""
    out = {}
    for p in op.params:
        if p.name in override:
            out[p.name] = override[p.name]
        elif p.default is not None:
            out[p.name] = p.default
        else:
            out[p.name] = PARAM_VALUES.get(p.name, 0.5)
    return out


@dataclass
class Case:
    """One call of one op: its float32 inputs (flat, with shapes), scalar params and options."""

    op: ops.Op
    inputs: list  # of (array('f') flat, shape); scatter_add's indices: array('i')
    params: dict = field(default_factory=dict)
    options: dict = field(default_factory=dict)
    label: str = ""

    def args(self) -> list:
        return [as_arg(data, shape) for data, shape in self.inputs]

    async def call(self, dev, name: str | None = None):
        """The op's one-shot method on `dev` (an awaitable). An input with no NumPy-free host form
        goes in as a DeviceArray uploaded with its shape."""
        args = [
            arg if arg is not None else await dev.upload(data, shape=shape)
            for arg, (data, shape) in zip(self.args(), self.inputs)
        ]
        return await getattr(dev, name or self.op.name)(*args, **self.params, **self.options)

    def queue(self, batch, ids=None):
        """Queue the op on a batch; `ids` replaces the host inputs with BufferIds."""
        return getattr(batch, self.op.name)(*(ids or self.args()), **self.params, **self.options)

    def resolved(self) -> tuple[tuple, dict]:
        """(output shape, resolved options), by the kind's shape rule."""
        return self.op.row.shape(self.op, [s for _, s in self.inputs], self.options)

    def out_shape(self) -> tuple:
        return self.resolved()[0]

    def out_dtype(self) -> str:
        """The result's dtype for float32 inputs (bool for comparisons)."""
        return signature(self.op, [float32] * self.op.arity)[1].name

    def __repr__(self) -> str:
        shapes = "x".join(str(s) for _, s in self.inputs)
        return f"<{self.op.name} {shapes} {self.params or ''}{self.options or ''} {self.label}>"


def as_arg(data: array.array, shape: tuple):
    """Host data of a given shape without NumPy: a flat array('f'), or a 2-D memoryview of it."""
    if len(shape) <= 1:
        return data
    if 0 not in shape:
        return memoryview(data).cast("B").cast("f", shape)
    if HAVE_NUMPY:
        import numpy as np

        return np.frombuffer(data, dtype=np.float32).reshape(shape).copy()
    if len(shape) == 2 and shape[1] == 0:
        return [[] for _ in range(shape[0])]
    return None  # no NumPy-free host form (e.g. shape (0, 5)): Case.call uploads it with that shape


def _divisor_shape(n: int) -> tuple[int, int]:
    r = max((d for d in range(1, math.isqrt(n) + 1) if n % d == 0), default=1)
    return (r, n // r) if n else (0, 0)


def factors(n: int, seed: int = 0) -> array.array:
    """n float32 factors +-e^u, u uniform in [-a, a], a = min(1, 250 / n): their product keeps every
    partial product inside float32's normal range in any order (prod_order_free), so a product of them
    checks rounding rather than overflow."""
    a = min(1.0, 250.0 / max(n, 1))
    return f32(math.copysign(math.exp(u * a / 4), s) for u, s in zip(uniform(n, seed=seed), uniform(n, seed=seed + 7)))


def sweep_case(op: ops.Op, n: int, seed: int = 0) -> Case:
    """A case of `op` at size n: n elements per input (1-D) for elementwise ops, reductions and
    softmax; for matmul an (r, c) @ (c, 5) and for convolve2d an (r, c) image, r * c = n. Inputs are
    uniform in [-4, 4); where's condition is 0 for about half the elements (its negative draws), and
    prod multiplies `factors` (uniform values' products overflow float32 past ~100 elements)."""
    if op.name in ("prod", "cumulative_prod"):
        return Case(op, [(factors(n, seed), (n,))], label=f"n={n}")
    if op.kind == "ternary":
        cond = f32(max(v, 0.0) for v in uniform(n, seed=seed))
        inputs = [(cond, (n,))] + [(uniform(n, seed=seed + j), (n,)) for j in (1, 2)]
        return Case(op, inputs, params_for(op), label=f"n={n}")
    if op.kind in ("unary", "binary", "reduce", "softmax", "scan", "sort"):
        inputs = [(uniform(n, seed=seed + j), (n,)) for j in range(op.arity)]
        return Case(op, inputs, params_for(op), label=f"n={n}")
    if op.kind == "scatter":  # n values added into x of n elements at indices with duplicates, negative ones too
        return Case(op, [(uniform(n, seed=seed), (n,)), (scatter_indices(n), (n,)), (uniform(n, seed=seed + 1), (n,))])
    if op.kind == "search":  # x1 sorted, some of x2 equal to its values
        x1 = sorted(uniform(n, seed=seed))
        return Case(op, [(f32(x1), (n,)), (f32(x1[::2] + list(uniform(n, seed=seed + 1))), (n + (n + 1) // 2,))])
    if op.kind == "attention":  # L query rows (n up to 64, then ~sqrt(8 n)), L + 3 keys, causal; E = 4
        n_q = n if n <= 64 else min(1025, math.isqrt(8 * n))
        return attention_case(op, n_q, n_q + 3, seed, causal=True)
    r, c = _divisor_shape(n)
    if op.kind == "matmul":
        return Case(op, [(uniform(n, -1, 1, seed), (r, c)), (uniform(c * 5, -1, 1, seed + 1), (c, 5))], label=f"n={n}")
    kh, kw = min(r, 3), min(c, 4)
    return Case(op, [(uniform(n, -1, 1, seed), (r, c)), (uniform(kh * kw, -1, 1, seed + 1), (kh, kw))], label=f"n={n}")


def attention_case(op: ops.Op, n_q: int, n_k: int, seed: int = 0, causal: bool = False, e: int = 4) -> Case:
    """q (n_q, e), k (n_k, e), v (n_k, 3); attention_masked's mask (1, n_k): every third key masked."""
    inputs = [(uniform(n_q * e, -2, 2, seed), (n_q, e)), (uniform(n_k * e, -2, 2, seed + 1), (n_k, e))]
    inputs.append((uniform(n_k * 3, -1, 1, seed + 2), (n_k, 3)))
    if op.arity == 4:
        inputs.append((f32(float(j % 3 != 1) for j in range(n_k)), (1, n_k)))
    return Case(op, inputs, options={"causal": causal}, label=f"L={n_q} S={n_k}")


def scatter_indices(n: int) -> array.array:
    """int32 indices into n elements: every third one repeats 0, one in seven counts from the end."""
    return array.array("i", [0 if i % 3 == 0 else (i * 5) % n - (n if i % 7 == 1 else 0) for i in range(n)])


def matmul_case(m: int, k: int, n: int, seed: int = 0, flat: bool = False) -> Case:
    op = ops.get("matmul")
    a, b = uniform(m * k, -1, 1, seed), uniform(k * n, -1, 1, seed + 1)
    if flat:
        return Case(op, [(a, (m * k,)), (b, (k * n,))], options={"m": m, "k": k, "n": n}, label="flat")
    return Case(op, [(a, (m, k)), (b, (k, n))])


def conv_case(h: int, w: int, kh: int, kw: int, seed: int = 0) -> Case:
    op = ops.get("convolve2d")
    return Case(op, [(uniform(h * w, -1, 1, seed), (h, w)), (uniform(kh * kw, -1, 1, seed + 1), (kh, kw))])


def softmax_case(name: str, rows: int, cols: int, seed: int = 0, lo=-8.0, hi=8.0) -> Case:
    shape = (cols,) if rows is None else (rows, cols)
    return Case(ops.get(name), [(uniform(math.prod(shape), lo, hi, seed), shape)])


# ---------------------------------------------------------------- special values


def special_cases(op: ops.Op) -> list[Case]:
    """Cases that put every value of SPECIALS through the op (see the module docstring)."""
    sp = list(SPECIALS)
    normal = [1.5, -2.25, 0.5, 3.0, -0.75, 2.0, -1.25, 0.125]
    if op.kind == "unary":
        return [Case(op, [(f32(sp), (len(sp),))], params_for(op))]
    if op.kind == "binary":
        a = [x for x in sp for _ in sp]
        b = [y for _ in sp for y in sp]
        return [Case(op, [(f32(a), (len(a),)), (f32(b), (len(b),))])]
    if op.kind == "ternary":  # every combination: each special value in each input
        triples = [(c, a, b) for c in sp for a in sp for b in sp]
        return [Case(op, [(f32(t[j] for t in triples), (len(triples),)) for j in range(3)])]
    cases = []
    for v in sp:
        with_v = f32(normal[:5] + [v] + normal[5:])
        if op.kind in ("reduce", "scan"):
            inputs = [(with_v, (9,))] + ([(f32(normal + [1.0]), (9,))] if op.arity == 2 else [])
            cases.append(Case(op, inputs, label=f"v={v}"))
            if op.arity == 2:
                cases.append(Case(op, [(f32(normal + [1.0]), (9,)), (with_v, (9,))], label=f"b={v}"))
        elif op.kind == "softmax":
            rows = [[v, 1.0, -2.0, 0.5], [v, v, v, v], [v, -v, 0.0, 1.0], [-2.0, 1.0, v, 0.25]]
            cases.append(Case(op, [(f32(x for r in rows for x in r), (4, 4))], label=f"v={v}"))
        elif op.kind == "sort":
            for descending in (False, True):
                data = f32(normal[:5] + [v, -v] + normal[5:] + [v, 0.0, -0.0])
                cases.append(Case(op, [(data, (len(data),))], options={"descending": descending}, label=f"v={v}"))
        elif op.kind == "search":
            x1 = sorted(normal + [v, -v], key=lambda u: (u != u, u))
            cases.append(Case(op, [(f32(x1), (10,)), (f32(sp), (len(sp),))], label=f"v={v}"))
        elif op.kind == "matmul":
            cases.append(Case(op, [(with_v, (3, 3)), (f32(normal[:6]), (3, 2))], label=f"a={v}"))
            cases.append(Case(op, [(f32(normal[:6]), (2, 3)), (with_v, (3, 3))], label=f"b={v}"))
        elif op.kind == "scatter":
            cases.append(
                Case(op, [(with_v, (9,)), (scatter_indices(9), (9,)), (f32(normal + [v]), (9,))], label=f"{v}")
            )
        elif op.kind == "attention":  # v in q, in k, in v (a key every row attends: key 0); +-F32_MAX in q or k
            for at in range(0 if abs(v) < F32_MAX else 2, 3):  # overflows a float32 score (NaN rows), not float64's
                data = [f32(normal[:8]), f32(normal[:6] + [0.5, -1.0]), f32(normal[2:8] + [0.25, -0.5])]
                data[at][0] = v
                inputs = [(data[0], (4, 2)), (data[1], (4, 2)), (data[2], (4, 2))]
                if op.arity == 4:
                    inputs.append((f32([1.0, 0.0, 1.0, v]), (1, 4)))
                cases.append(Case(op, inputs, label=f"{'qkv'[at]}={v}"))
        elif op.kind == "conv2d":
            cases.append(Case(op, [(with_v, (3, 3)), (f32(normal[:4]), (2, 2))], label=f"img={v}"))
            cases.append(
                Case(op, [(f32(normal[:6] + normal[:3]), (3, 3)), (f32([1.0, 0.5, v, -1.0]), (2, 2))], label=f"ker={v}")
            )
    return cases


# ---------------------------------------------------------------- references


def reference_python(case: Case, absolute: bool = False) -> list[float]:
    """The pure-Python reference (op.ref, float64), flat. `absolute`: of |inputs| (the magnitude)."""
    ins = [
        [abs(v) if absolute and name != "indices" else v for v in data]
        for (data, _), name in zip(case.inputs, case.op.inputs)
    ]
    shapes = [s for _, s in case.inputs]
    return case.op.row.python(case.op, ins, shapes, list(case.params.values()), case.resolved()[1])


def reference_numpy(case: Case, absolute: bool = False):
    """The NumPy reference (op.numpy on float64 arrays: references.reference_dtype), flat float64."""
    import numpy as np

    dtype = references.reference_dtype(case.op)
    arrays = [np.asarray(data, dtype=dtype).reshape(shape) for data, shape in case.inputs]
    if absolute:  # (an index stays as it is)
        arrays = [a if name == "indices" else np.abs(a) for a, name in zip(arrays, case.op.inputs)]
    out = case.op.row.numpy(case.op, arrays, list(case.params.values()), case.resolved()[1])
    return np.asarray(out, dtype=np.float64).reshape(-1)


def reference(case: Case, absolute: bool = False):
    return reference_numpy(case, absolute) if HAVE_NUMPY else reference_python(case, absolute)


def flat(result) -> list[float]:
    """A result (ndarray, array('f') or float) as a flat list of floats."""
    if isinstance(result, float):
        return [result]
    if hasattr(result, "reshape") and hasattr(result, "tolist"):  # a NumPy array
        return result.reshape(-1).tolist()
    return list(result)


def shape_of(result) -> tuple:
    if isinstance(result, float):
        return ()
    return tuple(getattr(result, "shape", (len(result),)))


def has_shape(result, shape: tuple, dtype: str = "float32") -> bool:
    """An array of `dtype` of the natural shape (NumPy, or an NDResult where NumPy is absent), or a Python
    float for shape ()."""
    if isinstance(result, float):
        return tuple(shape) == ()
    if not hasattr(result, "shape"):  # a flat array('f') made by a test: the element count is all it has
        return result.typecode == "f" and tuple(shape) != () and len(result) == math.prod(shape)
    return tuple(result.shape) == tuple(shape) and str(result.dtype) == dtype


def _alternatives(case: Case, n: int) -> list:
    """Per result element, F32_OVERFLOW's documented float32 value (or None)."""
    fix = F32_OVERFLOW.get(case.op.name)
    if fix is None:
        return [None] * n
    if case.op.elementwise:
        return [fix(*xs) for xs in zip(*(data for data, _ in case.inputs))]
    return [fix(list(case.inputs[0][0]))]


def _row_inputs(case: Case, n: int) -> list[list[float]]:
    """A reduction's input per result element: all of it, or (option rows) each row."""
    xs = list(case.inputs[0][0])
    cols = len(xs) // n if n else 0
    return [xs[r * cols : (r + 1) * cols] for r in range(n)] if n != 1 else [xs]


def _order_checks(case: Case, n: int) -> list:
    """Per result element, F32_ORDER's check (or None)."""
    if case.op.kind == "scatter" or case.op.name == "cumulative_sum":  # where the adds' magnitudes pass float32's
        # range, a partial sum may overflow (a parallel scan adds in another order than NumPy's running sum)
        return [(lambda g: not math.isfinite(g)) if m > F32_MAX else None for m in magnitudes(case)]  # (or inf - inf)
    if case.op.name == "cumulative_prod":  # one row: each element is the product of a prefix
        return _cumulative_prod_order(list(case.inputs[0][0]))
    rule = F32_ORDER.get(case.op.name)
    return [rule(xs) for xs in _row_inputs(case, n)] if rule else [None] * n


def magnitudes(case: Case) -> list[float]:
    """What a reduction's, matmul's, convolve2d's or scatter_add's atol is scaled by, per result element: the
    op on |inputs| in float64 (sum(|x|) for sum, |A| @ |B| for matmul, ...; indices as they are), the size
    of what the accumulation rounds; for prod n * prod(|x|), n the factors per result: each of the n - 1
    multiplications rounds once, relative to the product (so prod's atol is the rounding per factor). A scan's:
    the running op on |inputs| (cumulative_prod's times the factors so far, i + 1 of one row)."""
    mags = [float(m) for m in reference(case, absolute=True)]
    if case.op.name == "prod":
        cols = len(case.inputs[0][0]) // len(mags) if mags else 0
        mags = [max(cols, 1) * m for m in mags]
    if case.op.name == "cumulative_prod":
        mags = [(i + 1) * m for i, m in enumerate(mags)]
    return mags


def webgpu_allows(case: Case, values: list[float], rtol: float, atol: float) -> list[bool]:
    """Per element, whether a GPU's documented behaviours (docs/accuracy.md) explain a result: an elementwise
    one within the op's ulp bound of the reference for the inputs as given or with their subnormals flushed,
    results below 2^-126 on both sides equal (accuracy.sweep_errors, the rule of tests/test_accuracy.py),
    and x / x = 1 for one value divided by itself (NVIDIA's compiler folds it, as a - a to 0); any other
    op's within the tolerance of the reference for the inputs with their subnormals flushed, or below 2^-126
    where that reference is too (a flushed result)."""
    if not HAVE_NUMPY:
        return [False] * len(values)
    import numpy as np

    inputs = [np.asarray(data, np.float32) for data, _ in case.inputs]
    if not case.op.elementwise:
        flushed = Case(
            case.op,
            [(array.array("f", accuracy.flush_subnormals(x)), shape) for x, (_, shape) in zip(inputs, case.inputs)],
            case.params,
            case.options,
        )
        want = reference(flushed)
        bad = {i for i, _ in _mismatched(flushed, values, want, rtol, atol)}
        tiny = accuracy.F32_TINY
        return [i not in bad or (abs(v) < tiny and abs(w) < tiny) for i, (v, w) in enumerate(zip(values, want))]
    ok = accuracy.sweep_errors(case.op, inputs, values, case.params, flush=True) <= case.op.ulp
    if case.op.name == "div" and inputs[0].tobytes() == inputs[1].tobytes():
        ok |= np.asarray(values) == 1.0
    return ok.tolist()


def mismatches(case: Case, got, want=None, rtol=None, atol=None, backend: str = "") -> list[str]:
    """Descriptions of the elements of `got` outside the tolerance (empty: all good); on `backend` "webgpu"
    also what webgpu_allows."""
    op = case.op
    rtol = op.rtol if rtol is None else rtol
    atol = op.atol if atol is None else atol
    values = flat(got)
    ref = reference(case) if want is None else want
    if len(values) != len(ref):
        return [f"{case!r}: {len(values)} values, expected {len(ref)}"]
    bad = _mismatched(case, values, ref, rtol, atol)
    if bad and backend == "webgpu":
        allowed = webgpu_allows(case, values, rtol, atol)
        bad = [(i, line) for i, line in bad if not allowed[i]]
    return [line for _, line in bad]


def _mismatched(case: Case, values: list[float], ref, rtol: float, atol: float) -> list[tuple[int, str]]:
    """(index, description) of each element of `values` outside the tolerance of the float64 `ref`."""
    op = case.op
    want = list(f32(ref))
    if op.kind in ("reduce", "matmul", "conv2d", "scan", "scatter") and atol:
        mags = magnitudes(case)
    else:
        mags = [1.0] * len(want)
    alts = _alternatives(case, len(want))
    orders = _order_checks(case, len(want))
    bad = []
    for i, (g, w, m, alt, order) in enumerate(zip(values, want, mags, alts, orders)):
        tol = atol * m + rtol * abs(w)
        if math.isnan(w) or math.isnan(g):
            ok = math.isnan(w) and math.isnan(g)
        elif math.isinf(w) or math.isinf(g):
            ok = g == w
        else:
            ok = abs(g - w) <= tol
        if not ok and not (alt is not None and g == alt) and not (order is not None and order(g)):
            bad.append(
                (i, f"[{i}] got {g!r}, want {w!r} (float64 {float(ref[i])!r}; tol {tol:.3g}){_inputs_at(case, i)}")
            )
    return bad


def _inputs_at(case: Case, i: int) -> str:
    if case.op.elementwise:
        return " at input " + ", ".join(repr(data[i]) for data, _ in case.inputs)
    return ""


def assert_matches(case: Case, got, **tol) -> None:
    assert has_shape(got, case.out_shape(), case.out_dtype()), (
        f"{case!r}: shape {shape_of(got)} of {getattr(got, 'dtype', '?')}, expected {case.out_shape()} of "
        f"{case.out_dtype()}"
    )
    bad = mismatches(case, got, **tol)
    assert not bad, f"{case!r}: {len(bad)} mismatches:\n  " + "\n  ".join(bad[:8])


def same_bits(x, y) -> bool:
    """Bitwise-equal float32 results, any NaN equal to any NaN."""
    a, b = f32(flat(x)), f32(flat(y))
    return len(a) == len(b) and all(
        (u != u and v != v) or (u == v and math.copysign(1, u) == math.copysign(1, v)) for u, v in zip(a, b)
    )
