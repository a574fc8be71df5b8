"""The accuracy sweep: ulp errors of a backend's results against float64 references, on dense float32 samples;
used by tests/test_accuracy.py, tests/_cases.py and bench/accuracy_sweep.py (docs/accuracy.md).

Two paths, one definition. Where NumPy imports: NumPy's vectorised forms and the catalog's `Op.exact` (else
`Op.numpy` in float64) as the reference. Where it does not (inside Pyodide): pure Python per element, the
catalog's `Op.ref` in float64 (gelu: PY_EXACT, its cancellation-free form) and `ulp_error`; samples come from
`random.Random` instead of NumPy's generator, with the same structure. tests/test_accuracy.py checks on the
desktop that both paths give the same references and errors."""

from __future__ import annotations

import array
import math
import random

from .host import numpy_available
from .references import F32_MAX, GELU_C, numpy_module, reference_dtype, sigmoid

F32_TINY = 2.0**-126  # float32's smallest normal
#: the edge values every sweep sample starts with (and their negatives): +-0, +-inf, NaN, the smallest and largest
#: subnormal, normal and finite, and the places where a formula is known to break (gelu near -4.4, mish at -20,
#: hardswish's knees, exp's ends)
EDGES = (0.0, math.inf, math.nan, 1e-45, 1.1754942e-38, F32_TINY, F32_MAX, 1.0, 0.5, 3.0, 4.4, 10.0, 20.0, 88.72, 103.9)
SWEEP_PARAMS = {"lo": -0.5, "hi": 0.75, "s": -1.5}  # parameters without a default, in the sweep


def f32(x: float) -> float:
    """x rounded to float32 (out of range: +-inf), as a Python float."""
    return array.array("f", (x,))[0]


def _exact_gelu(x: float) -> float:
    """x * sigmoid(2u) (= 0.5 x (1 + tanh u)): no cancellation for x < 0; the cube of |x| <= 1e4 stays finite."""
    if x == -math.inf:
        return -0.0
    v = min(max(x, -1e4), 1e4)
    return x * sigmoid(2 * GELU_C * (v + 0.044715 * v * v * v))


#: pure-Python float64 references where the catalog's `Op.ref` loses accuracy in float64
PY_EXACT = {"gelu": _exact_gelu}


def ulp_error(got: float, want: float, flush: bool = False) -> float:
    """|got - want| in ulps of float32 at `want` (float64), the ulp at a subnormal or zero being 2^-149. NaN must
    meet NaN and an infinity its own value (where float32 rounds `want` to it); a zero must have `want`'s sign;
    each miss counts as inf. `flush`: values below float32's normal range on both sides count as equal, zero or
    not, of either sign (a GPU may flush subnormals to zero; WGSL allows it)."""
    if flush and abs(got) < F32_TINY and abs(want) < F32_TINY:
        return 0.0
    w32 = f32(want)
    if math.isnan(got) or math.isnan(want) or math.isinf(got) or math.isinf(w32):
        return 0.0 if (math.isnan(got) and math.isnan(want)) or got == w32 else math.inf
    if got == 0 and want == 0:
        return 0.0 if math.copysign(1.0, got) == math.copysign(1.0, want) else math.inf
    e = math.frexp(abs(want))[1] if want else -125
    return abs(got - want) / math.ldexp(1.0, max(e - 1, -126) - 23)


def ulp_errors(got, want, flush: bool = False):
    """ulp_error per element: a float64 NumPy array (NumPy's path), else a list."""
    if not numpy_available():
        return [ulp_error(float(g), float(w), flush) for g, w in zip(got, want)]
    np = numpy_module()
    with np.errstate(all="ignore"):
        got = np.asarray(got, np.float64)
        want = np.asarray(want, np.float64)
        w32 = want.astype(np.float32).astype(np.float64)
        _, e = np.frexp(np.abs(want))
        ulp = np.ldexp(1.0, np.maximum(np.where(want == 0, -125, e) - 1, -126) - 23)
        err = np.abs(got - want) / ulp
    special = np.isnan(got) | np.isnan(want) | np.isinf(got) | np.isinf(w32)
    same = (np.isnan(got) & np.isnan(want)) | (got == w32)
    err = np.where(special, np.where(same, 0.0, np.inf), err)
    zero = (got == 0) & (want == 0)
    err = np.where(zero & (np.signbit(got) != np.signbit(want)), np.inf, err)
    if flush:
        err = np.where((np.abs(got) < F32_TINY) & (np.abs(want) < F32_TINY), 0.0, err)
    return err


def flush_subnormals(x):
    """x with its subnormals replaced by zeros of their sign: what a GPU that flushes subnormal inputs reads."""
    if not numpy_available():
        return [math.copysign(0.0, v) if abs(v) < F32_TINY else v for v in x]
    np = numpy_module()
    return np.where(np.abs(x) < F32_TINY, np.copysign(np.zeros_like(x), x), x)


def sweep_sample(n: int, seed: int = 0):
    """n float32 values for an accuracy sweep: the EDGES of both signs, then half of n one per equal interval of
    the 2^32 bit patterns (every exponent of both signs, subnormals, infinities, NaN), the rest uniform in
    [-16, 16) (where the activations bend). A float32 NumPy array, else an array('f')."""
    half = n // 2
    step = 2**32 // max(half, 1)
    edges = EDGES + tuple(-v for v in EDGES)
    rest = n - half - len(edges)
    if not numpy_available():
        rng = random.Random(seed)
        bits = array.array("I", (i * step + rng.randrange(step) for i in range(half)))
        spread = array.array("f")
        spread.frombytes(bits.tobytes())
        return array.array("f", edges) + spread + array.array("f", (rng.uniform(-16.0, 16.0) for _ in range(rest)))
    np = numpy_module()
    rng = np.random.default_rng(seed)
    bits = (np.arange(half, dtype=np.uint64) * step + rng.integers(0, step, half, dtype=np.uint64)).astype(np.uint32)
    dense = rng.uniform(-16.0, 16.0, rest).astype(np.float32)
    return np.concatenate([np.array(edges, np.float32), bits.view(np.float32), dense])


def sweep_inputs(op, n: int, seed: int = 0):
    """An elementwise op's sampled inputs, one `sweep_sample` per input; pow also gets bases in (0, 4] with
    exponents in [-40, 40] in its last quarter (random bit patterns mostly overflow or underflow it)."""
    inputs = [sweep_sample(n, seed + j) for j in range(len(op.inputs))]
    if op.name == "pow":
        q = n // 4
        if not q:
            return inputs
        if numpy_available():
            rng = numpy_module().random.default_rng(seed)
            inputs[0][-q:] = rng.uniform(0, 4, q).astype(inputs[0].dtype)
            inputs[1][-q:] = rng.uniform(-40, 40, q).astype(inputs[1].dtype)
        else:
            rng = random.Random(seed)
            inputs[0][-q:] = array.array("f", (rng.uniform(0, 4) for _ in range(q)))
            inputs[1][-q:] = array.array("f", (rng.uniform(-40, 40) for _ in range(q)))
    return inputs


def sweep_params(op) -> dict:
    """The op's scalar parameters as the float32 values the kernels see (the reference gets the same)."""
    return {p.name: f32(SWEEP_PARAMS[p.name] if p.default is None else p.default) for p in op.params}


def float64_reference(op, inputs, params: dict):
    """The op on the inputs in float64: op.exact (else op.numpy) on NumPy's path, a float64 array; else a list,
    PY_EXACT's function (else op.ref) per element."""
    if not numpy_available():
        fn = PY_EXACT.get(op.name, op.ref)
        ps = list(params.values())
        return [float(fn(*xs, *ps)) for xs in zip(*inputs)]
    np = numpy_module()
    with np.errstate(all="ignore"):
        xs = [np.asarray(x).astype(reference_dtype(op)) for x in inputs]
        return np.asarray((op.exact or op.numpy)(*xs, *params.values()), np.float64).reshape(-1)


def _flat(values) -> list:
    """A result (a NumPy array or NDResult of any shape, an array('f'), a list) as a flat list."""
    return values.reshape(-1).tolist() if hasattr(values, "reshape") else list(values)


def sweep_errors(op, inputs, got, params: dict, flush: bool):
    """Per element, the ulp error of `got` (ulp_errors: a NumPy array, else a list); with `flush`, the smaller of
    that and the error against the inputs and scalar parameters with their subnormals flushed (a GPU may read a
    subnormal input as zero)."""
    got = _flat(got)
    err = ulp_errors(got, float64_reference(op, inputs, params), flush)
    if not flush:
        return err
    flushed = {k: 0.0 * v if abs(v) < F32_TINY else v for k, v in params.items()}
    again = ulp_errors(got, float64_reference(op, [flush_subnormals(x) for x in inputs], flushed), True)
    return [min(a, b) for a, b in zip(err, again)] if isinstance(err, list) else numpy_module().minimum(err, again)


def worst(op, inputs, got, params: dict, flush: bool, where: str = "") -> str:
    """'' when every element of `got` is within the op's ulp bound (`Op.ulp`), else the worst element described."""
    err = _flat(sweep_errors(op, inputs, got, params, flush))
    i = max(range(len(err)), key=err.__getitem__, default=0)
    if not err or err[i] <= op.ulp:
        return ""
    at = ", ".join(repr(float(x[i])) for x in inputs)
    want = float64_reference(op, [[x[i]] for x in inputs], params)[0]
    return (
        f"{op.name} on {where}: {sum(e > op.ulp for e in err)} values past {op.ulp} ulp; worst {err[i]:.3g} ulp "
        f"at ({at}): got {_flat(got)[i]!r}, float64 {float(want)!r}"
    )
