"""The accuracy sweep: ulp errors of a backend's results against the catalog's float64 references (`Op.exact`,
else `Op.numpy` in float64), on dense float32 samples; used by tests/test_accuracy.py, tests/_cases.py and
bench/accuracy_sweep.py (docs/accuracy.md)."""

from __future__ import annotations

from .references import F32_MAX, numpy_module

F32_TINY = 2.0**-126  # float32's smallest normal


def ulp_errors(got, want, flush: bool = False):
    """Per element, |got - want| in ulps of float32 at `want` (float64), the ulp at a subnormal being
    2^-149. NaN must meet NaN and an infinity its own value (where float32 rounds `want` to it); a zero
    must have `want`'s sign; each miss counts as inf. `flush`: values below float32's normal range on both
    sides count as equal, zero or not, of either sign (a GPU may flush subnormals to zero; WGSL allows it)."""
    np = numpy_module()
    with np.errstate(all="ignore"):
        got = np.asarray(got, np.float64)
        want = np.asarray(want, np.float64)
        w32 = want.astype(np.float32).astype(np.float64)
        _, e = np.frexp(np.abs(want))
        ulp = np.ldexp(1.0, np.maximum(e - 1, -126) - 23)
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
    np = numpy_module()
    return np.where(np.abs(x) < F32_TINY, np.copysign(np.zeros_like(x), x), x)


def sweep_sample(n: int, seed: int = 0):
    """n float32 values for an accuracy sweep: half one per equal interval of the 2^32 bit patterns (every
    exponent of both signs, subnormals, infinities, NaN), half uniform in [-16, 16) (where the activations
    bend), and the edge values (+-0, +-inf, NaN, the smallest and largest subnormal, normal and finite, and
    the places where a formula is known to break: gelu near -4.4, mish at -20, hardswish's knees, exp's ends)."""
    np = numpy_module()
    rng = np.random.default_rng(seed)
    half = n // 2
    step = 2**32 // max(half, 1)
    bits = (np.arange(half, dtype=np.uint64) * step + rng.integers(0, step, half, dtype=np.uint64)).astype(np.uint32)
    edges = np.array([0.0, np.inf, np.nan, 1e-45, 1.1754942e-38, F32_TINY, F32_MAX, 1.0, 0.5, 3.0, 4.4, 10.0, 20.0,
                      88.72, 103.9], np.float32)
    edges = np.concatenate([edges, -edges])
    dense = rng.uniform(-16.0, 16.0, n - half - len(edges)).astype(np.float32)
    return np.concatenate([edges, bits.view(np.float32), dense])


SWEEP_PARAMS = {"lo": -0.5, "hi": 0.75, "s": -1.5}  # parameters without a default, in the sweep


def sweep_inputs(op, n: int, seed: int = 0):
    """An elementwise op's sampled inputs, one `sweep_sample` per input; pow also gets bases in (0, 4] with
    exponents in [-40, 40] (random bit patterns mostly overflow or underflow it)."""
    np = numpy_module()
    inputs = [sweep_sample(n, seed + j) for j in range(len(op.inputs))]
    if op.name == "pow":
        rng = np.random.default_rng(seed)
        inputs[0][-n // 4:] = rng.uniform(0, 4, n // 4).astype(np.float32)
        inputs[1][-n // 4:] = rng.uniform(-40, 40, n // 4).astype(np.float32)
    return inputs


def sweep_params(op) -> dict:
    """The op's scalar parameters as the float32 values the kernels see (the reference gets the same)."""
    np = numpy_module()
    return {p.name: float(np.float32(SWEEP_PARAMS[p.name] if p.default is None else p.default)) for p in op.params}


def float64_reference(op, inputs, params: dict):
    """op.exact (else op.numpy) on the inputs in float64."""
    np = numpy_module()
    with np.errstate(all="ignore"):
        xs = [np.asarray(x).astype(np.float64) for x in inputs]
        return np.asarray((op.exact or op.numpy)(*xs, *params.values()), np.float64).reshape(-1)


def sweep_errors(op, inputs, got, params: dict, flush: bool):
    """Per element, the ulp error of `got` (ulp_errors); with `flush`, the smaller of that and the error against
    the inputs and scalar parameters with their subnormals flushed (a GPU may read a subnormal input as zero)."""
    np = numpy_module()
    got = np.asarray(got).reshape(-1)
    err = ulp_errors(got, float64_reference(op, inputs, params), flush)
    if flush:
        flushed = {k: float(flush_subnormals(np.float64(v))) for k, v in params.items()}
        err = np.minimum(err, ulp_errors(got, float64_reference(op, [flush_subnormals(x) for x in inputs], flushed), True))
    return err
