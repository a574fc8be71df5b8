"""Reliability: property tests, faults, load and limits, with nothing silently wrong.

Sections (docs/reliability.md has the table of what was tried and what happened):

  properties  hypothesis over single catalog ops (every kind, sizes including 0, 1 and odd ones;
              NaN, +-inf, -0.0, subnormals, values that overflow exp, float32 extremes; any float32
              scalar parameter) and over random batch graphs with the same values, against the
              float64 NumPy reference, on webgpu (lavapipe), numpy and wasm-simd (wasmtime)
  faults      the device destroyed before, between and during execute/read; WebGPU validation
              errors (a buffer past max_buffer_size, a pipeline past the binding limit); cancelled
              and timed-out executes and reads (every one leaves the device usable)
  load        4,000 batches in a loop per backend: Python heap, RSS, pooled GPU buffers, bind
              groups, pipelines and wasm linear memory stay flat; 64 batches awaited together
  limits      a 160 MiB input (marked slow): refused on webgpu with a LimitError naming
              max_storage_buffer_binding_size, computed on the CPU backends; grids of more than
              65535 workgroups (marked slow)
  safety      scalars travel as data: no WGSL source depends on a scalar's value, and the
              pipeline cache does not grow with scalar values (nor with sizes)
"""

from __future__ import annotations

import array
import asyncio
import gc
import math
import random
import re
import sys

import pytest

hypothesis = pytest.importorskip("hypothesis")
import test_properties  # noqa: E402
from _cases import (  # noqa: E402
    F32_MAX,
    FLOAT_CATALOG,
    INF,
    NAN,
    Case,
    attention_case,
    f32,
    flat,
    has_shape,
    magnitudes,
    mismatches,
    prod_order_free,
    reference,
    run,
    shape_of,
    uniform,
)
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from test_properties import check_graph, graphs  # noqa: E402

import trueno_web as tw  # noqa: E402
from trueno_web import ops, references  # noqa: E402
from trueno_web.kernels.rows import threads_per_row  # noqa: E402

# derandomized: CI explores the same examples each run, so a red run is reproducible here
COMMON = dict(
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

# ================================================================ property tests: values

#: every kind of awkward float32
SUBNORMALS = (1e-40, -1e-40, 1.4e-45, -1.4e-45, 1.1754942e-38, -5e-39)
EXP_OVERFLOW = (88.72284, -88.72284, 88.8, -88.8, 89.0, -89.0, 100.0, -100.0, 104.0, -104.0, 1000.0, -1000.0)
SPECIAL_VALUES = (
    NAN,
    INF,
    -INF,
    -0.0,
    0.0,
    *SUBNORMALS,
    1.1754944e-38,
    *EXP_OVERFLOW,
    1e30,
    -1e30,
    3e38,
    F32_MAX,
    -F32_MAX,
    1.0,
    -1.0,
)
#: graphs chain up to 8 ops: no float32 extremes at the start (the chains make their own)
GRAPH_SPECIALS = (NAN, INF, -INF, -0.0, 0.0, *SUBNORMALS, *EXP_OVERFLOW, 1e30, -1e30)

#: a scalar parameter: any float32 at all (NaN, inf, subnormal, huge) now and then
SCALARS = (
    st.floats(-4, 4, width=32)
    | st.sampled_from([0.0, -0.0, 1.0, 0.5, 1e-40, NAN, INF, -INF, 1e30, F32_MAX])
    | st.floats(width=32)
)


def special_mix(n: int, seed: int, p: float, specials=SPECIAL_VALUES, span: float = 10.0) -> list[float]:
    """n float32 values: uniform in [-span, span], each one a special value with probability p."""
    rng = random.Random(seed)
    return list(f32(rng.choice(specials) if rng.random() < p else rng.uniform(-span, span) for _ in range(n)))


@st.composite
def float_data(draw, n: int):
    """n float32 values: for small n straight from hypothesis' float32 strategy (it tries every
    kind of edge value and shrinks to them), for larger n a seeded mix of SPECIAL_VALUES."""
    if n <= 8 and draw(st.booleans()):
        return list(f32(draw(st.lists(st.floats(width=32), min_size=n, max_size=n))))
    p = draw(st.sampled_from([0.0, 0.02, 0.2, 1.0]))
    return special_mix(n, draw(st.integers(0, 2**32 - 1)), p, span=draw(st.sampled_from([1.0, 10.0, 100.0])))


SIZES = st.sampled_from([0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 255, 256, 257, 1023, 1025, 4097]) | st.integers(0, 3000)
DIM = st.sampled_from([1, 2, 3, 4, 5, 7, 8, 16, 17]) | st.integers(1, 40)
SIDES = st.sampled_from(["left", "right"])


@st.composite
def op_cases(draw, catalog=FLOAT_CATALOG):
    """One call of one catalog op with awkward sizes, values and scalars (a _cases.Case)."""
    op = draw(st.sampled_from(catalog))
    params = {p.name: f32([draw(SCALARS)])[0] for p in op.params}  # the float32 the kernel gets
    if op.kind in ("unary", "binary", "ternary", "reduce", "scan"):
        n = draw(SIZES)
        if op.name in ("max", "min"):
            n = max(n, 1)  # empty max/min is a TruenoValueError (tests/test_errors.py)
        return Case(op, [(f32(draw(float_data(n))), (n,)) for _ in range(op.arity)], params, label=f"n={n}")
    if op.kind == "softmax":
        rows = draw(st.integers(0, 6))
        cols = draw(st.sampled_from([0, 1, 3, 4, 5, 255, 256, 257, 1025]) | st.integers(0, 1100))
        shape = (cols,) if draw(st.booleans()) else (rows, cols)
        return Case(op, [(f32(draw(float_data(math.prod(shape)))), shape)])
    if op.kind == "scatter":  # values at indices of x (duplicates and negative ones drawn too)
        n, k = draw(SIZES), draw(SIZES)
        k = k if n else 0
        at = draw(st.lists(st.integers(-n, n - 1), min_size=k, max_size=k)) if n else []
        return Case(
            op, [(f32(draw(float_data(n))), (n,)), (array.array("i", at), (k,)), (f32(draw(float_data(k))), (k,))]
        )
    if op.kind == "sort":
        shape = (draw(SIZES),) if draw(st.booleans()) else (draw(st.integers(0, 6)), draw(SIZES))
        options = {"descending": draw(st.booleans())}
        return Case(op, [(f32(draw(float_data(math.prod(shape)))), shape)], options=options)
    if op.kind == "search":  # x1 sorted in the sort's order (NaN last)
        x1 = sorted(draw(float_data(draw(SIZES))), key=lambda v: (v != v, v))
        n = draw(SIZES)
        return Case(op, [(f32(x1), (len(x1),)), (f32(draw(float_data(n))), (n,))], options={"side": draw(SIDES)})
    if op.kind == "attention":  # awkward lengths, finite values (special ones: tests/test_attention.py, _cases)
        n_q, n_k = draw(st.integers(1, 70)), draw(st.integers(1, 70))
        return attention_case(op, n_q, n_k, draw(st.integers(0, 2**16)), causal=draw(st.booleans()))
    if op.kind == "matmul":
        m, k, n = draw(DIM), draw(DIM), draw(DIM)
        return Case(op, [(f32(draw(float_data(m * k))), (m, k)), (f32(draw(float_data(k * n))), (k, n))])
    h, w = draw(DIM), draw(DIM)
    kh, kw = draw(st.integers(1, min(h, 6))), draw(st.integers(1, min(w, 6)))
    return Case(op, [(f32(draw(float_data(h * w))), (h, w)), (f32(draw(float_data(kh * kw))), (kh, kw))])


ACCUMULATING = ("reduce", "matmul", "conv2d")
_INDEX = re.compile(r"^\[(\d+)\]")


def _norm_l2_f32_squares(xs) -> float:
    """sqrt(sum(x * x)) with each square rounded to float32 (inf past 1.8e19, 0 below 1e-23): the
    catalog's formula in float32, as every backend computes it (no rescaling)."""
    return math.sqrt(math.fsum(f32([x * x for x in xs])))


def problems(case: Case, got, backend: str = "") -> list[str]:
    """Mismatches of `got` against the float64 reference (_cases.mismatches), less what float32
    accumulation explains and the catalog documents:
      reductions, matmul and convolve2d whose float64 magnitude (the op on |inputs|) is past
        F32_MAX may overflow in float32: +-inf or NaN there is float32 arithmetic, not an error, and
        a result at F32_MAX's edge is compared with the float64 value (not its rounding to inf);
      norm_l2 is sqrt(sum(x * x)) with x * x in float32 (F32_OVERFLOW documents the overflow side;
        the underflow side is the same formula: squares below 1e-23 are 0 or subnormal);
      products that land among float32's subnormals (matmul, convolve2d, dot) are exact only to
        2^-149 each: that much more slack per product summed into an element;
      elu is alpha * (exp(x) - 1): the catalog's absolute tolerance (one ulp of exp near 1, for
        alpha = 1) scales with |alpha|."""
    if not has_shape(got, case.out_shape(), case.out_dtype()):
        return [f"shape {shape_of(got)}, expected {case.out_shape()}"]
    atol = case.op.atol
    if case.op.name == "elu" and math.isfinite(case.params["alpha"]):
        atol *= max(1.0, abs(case.params["alpha"]))
    bad = mismatches(case, got, atol=atol, backend=backend)
    if not bad or case.op.kind not in ACCUMULATING:
        return bad
    values = flat(got)
    ref64 = list(reference(case))
    mags = magnitudes(case)
    slack = _underflow_slack(case)
    left = []
    for line in bad:
        i = int(_INDEX.match(line).group(1))
        if mags[i] * (1 + case.op.rtol) > F32_MAX and not math.isfinite(values[i]):
            continue
        exact = float(ref64[i])  # want[i] may be +-inf only by rounding a value at F32_MAX's edge
        tol = atol * mags[i] + case.op.rtol * abs(exact)
        if (
            math.isfinite(values[i])
            and math.isfinite(exact)
            and abs(values[i] - exact) <= tol + slack + abs(exact) * 2.0**-24
        ):
            continue
        if case.op.name == "norm_l2":
            alt = _norm_l2_f32_squares(case.inputs[0][0])
            tol = case.op.atol * mags[i] + case.op.rtol * abs(alt)
            if (math.isinf(alt) and values[i] == alt) or abs(values[i] - f32([alt])[0]) <= tol:
                continue
        left.append(line)
    return left


SUBNORMAL_ULP = 2.0**-149  # the spacing of float32 subnormals: a product rounded there errs by half of it


def _underflow_slack(case: Case) -> float:
    """Products that land among the subnormals keep only absolute precision (2^-149): one ulp of
    slack per product summed into an element (matmul's k, convolve2d's kh * kw, dot's n)."""
    op, shapes = case.op, [s for _, s in case.inputs]
    if op.kind == "matmul":
        return shapes[0][1] * SUBNORMAL_ULP
    if op.kind == "conv2d":
        return shapes[1][0] * shapes[1][1] * SUBNORMAL_ULP
    if op.name == "dot":
        return math.prod(shapes[0]) * SUBNORMAL_ULP
    return 0.0


def check_op_case(dev, case: Case) -> None:
    got = run(case.call(dev))
    bad = problems(case, got, dev.backend)
    assert not bad, f"{case!r} on {dev.backend}: {len(bad)} mismatches:\n  " + "\n  ".join(bad[:8])


# The op-level properties: every backend, every kind of op. The examples are drawn over the whole
# catalog, so each run puts ~60 examples through each op on each backend.
@settings(max_examples=1500, **COMMON)
@given(case=op_cases())
def test_single_ops_against_numpy_reference(dev, case):
    check_op_case(dev, case)


@settings(max_examples=300, **COMMON)
@given(case=op_cases(tuple(op for op in FLOAT_CATALOG if op.params)))
def test_scalar_parameters_of_any_float32_value(dev, case):
    """leaky_relu, elu, clip and scale with NaN, +-inf, subnormal and huge scalars."""
    check_op_case(dev, case)


def test_clip_with_nan_bounds_agrees_across_backends(dev):
    """clip with a NaN bound: min(max(x, lo), hi) in NumPy's NaN-propagating sense gives NaN."""
    x = f32([-2.0, 0.0, 0.5, 3.0, NAN])
    for lo, hi in ((NAN, 1.0), (-1.0, NAN), (NAN, NAN)):
        case = Case(ops.get("clip"), [(x, (5,))], {"lo": lo, "hi": hi})
        check_op_case(dev, case)


@st.composite
def rich_graphs(draw):
    """test_properties.graphs() (random elementwise chains, sometimes ending in a reduction or a
    softmax, an intermediate kept), with inputs that also hold subnormals and exp-overflowing values."""
    n, inputs, steps, keep = draw(graphs())
    p = draw(st.sampled_from([0.02, 0.1, 0.5]))
    inputs = [special_mix(n, draw(st.integers(0, 2**32 - 1)), p, GRAPH_SPECIALS, span=8.0) for _ in inputs]
    return n, inputs, steps, keep


@settings(max_examples=300, **COMMON)
@given(graph=rich_graphs())
def test_random_graphs_with_special_values(dev, graph, float32_aware_graph_checks):
    """Fused == unfused (bit for bit on the CPU backends; see test_properties.close_enough for
    webgpu) and every op == its reference, on all three backends."""
    check_graph(dev, graph)


@pytest.fixture
def float32_aware_graph_checks(monkeypatch):
    """check_graph compares each op with _cases.mismatches; with these values a tail reduction meets
    float32 effects that `problems` allows for (a dot of 1e30 * 1e30 products is inf + -inf = NaN
    in float32 where float64 gives -inf; norm_l2 of mish(-88.8) = 2e-37 squares to 0)."""
    monkeypatch.setattr(test_properties, "mismatches", problems)


def test_special_value_pool_is_what_it_says():
    assert all(0 < abs(v) < 1.1754944e-38 for v in f32(SUBNORMALS)), "subnormal in float32"
    assert all(references.exp(abs(v)) > F32_MAX for v in f32(EXP_OVERFLOW)), "exp overflows float32"
    assert all(references.exp(-abs(v)) < 1.1754944e-38 for v in f32(EXP_OVERFLOW)), "exp(-|v|) is subnormal or 0"


def test_problems_filter_still_catches_wrong_results():
    """The filter of float32 accumulation effects lets no plain error through."""
    case = Case(ops.get("sum"), [(f32([F32_MAX, F32_MAX, -F32_MAX]), (3,))])
    assert problems(case, INF) == [] and problems(case, NAN) == []  # float32 overflow: allowed
    assert problems(case, 1.0) != []  # a finite wrong value: not allowed
    case = Case(ops.get("sum"), [(f32([1.0, 2.0]), (2,))])
    assert problems(case, INF) != [] and problems(case, 3.5) != []
    case = Case(ops.get("matmul"), [(f32([1e-30, 1e-30]), (1, 2)), (f32([1.1e-11, 1.1e-11]), (2, 1))])
    want = f32(reference(case))[0]
    assert problems(case, f32([want + 2.0**-149])) == []  # two products rounded among the subnormals
    assert problems(case, f32([want * 1.01])) != []
    case = Case(ops.get("matmul"), [(f32([F32_MAX, 1.2e31]), (1, 2)), (f32([1.0, 1.0]), (2, 1))])
    assert math.isinf(f32(reference(case))[0])  # F32_MAX + 1.2e31 rounds to inf as a float32 ...
    assert problems(case, f32([F32_MAX])) == []  # ... float32 accumulation may stop at F32_MAX
    assert problems(case, f32([1e38])) != []
    case = Case(ops.get("norm_l2"), [(f32([1e-30]), (1,))])
    assert problems(case, 0.0) == []  # (1e-30)^2 is 0 in float32
    assert problems(case, 1.0) != []
    # prod: where a partial product can leave float32's normal range the order decides (+-inf, 0, NaN) ...
    case = Case(ops.get("prod"), [(f32([1e30, 1e30, -1e-30, 1e-30]), (4,))])
    assert not prod_order_free(case.inputs[0][0])
    assert problems(case, -INF) == [] and problems(case, -0.0) == [] and problems(case, NAN) == []
    assert problems(case, 1.0) != [] and problems(case, INF) != []  # ... but never the sign
    case = Case(ops.get("prod"), [(f32([2.0, 3.0, -0.5, 1e30]), (4,))])  # in range: the product, rounded
    assert prod_order_free(case.inputs[0][0])
    assert problems(case, f32([-3e30])[0]) == []
    assert problems(case, -INF) != [] and problems(case, f32([-3.001e30])[0]) != []


# ================================================================ faults


def _fresh(name: str):
    """A device of this test alone (closed by the caller)."""
    from conftest import device_for

    device_for(name)  # skips with the reason where the backend is unavailable
    return run(tw.GpuDevice.create(name))


def still_works(dev) -> None:
    assert flat(run(dev.relu([-1.0, 2.0]))) == [0.0, 2.0]
    assert run(dev.sum([1.0, 2.0, 3.0])) == 6.0


def test_device_destroyed_between_execute_and_read(fresh_gpu):
    """Results computed, then the device goes: reading them raises DeviceLostError (never a wgpu
    exception, never stale data); releasing and collecting everything is quiet; a new device works."""
    dev = fresh_gpu
    resident = run(dev.upload(uniform(1000, seed=1)))
    b = dev.batch()
    out = b.softmax(b.add(b.upload(uniform(1000, seed=2)), resident))
    run(b.execute())
    dev.destroy()
    for pending in (b.read(out), resident.read(), dev.relu([1.0]), b.execute()):
        with pytest.raises(tw.DeviceLostError, match="create a new"):
            run(pending)
    with pytest.raises(tw.DeviceLostError):
        dev.batch()
    b.release()
    resident.release()
    del b, resident, out
    gc.collect()
    dev.close()
    again = run(tw.GpuDevice.create("webgpu"))
    try:
        still_works(again)
    finally:
        again.close()


def _read_job(dev, kind: str, stages: list):
    async def job():
        b = dev.batch()
        if kind == "map":  # 16 MiB through a fused chain: the read's map waits on the copy
            out = b.add(b.relu(b.upload(uniform(1 << 22, seed=3))), b.upload(uniform(1 << 22, seed=4)))
        else:  # a 1024^3 matmul: the read waits for the kernel itself
            a = b.upload(uniform(1 << 20, -1, 1, seed=5), shape=(1024, 1024))
            out = b.matmul(a, a)
        try:
            stages.append("execute")
            await b.execute()
            stages.append("read")
            return await b.read(out)
        finally:
            b.release()

    return job()


def test_device_destroyed_while_a_read_is_pending():
    """Another task destroys the device while a batch's kernels run or its read is in flight: the
    read ends within seconds with a trueno_web error (or the right result, if it was done first),
    and a new device works. Up to ten tries, a fused map and a matmul in turn."""
    outcomes = []
    for trial in range(10):
        dev = _fresh("webgpu")
        stages: list = []

        async def scenario(dev, kind, stages):
            task = asyncio.ensure_future(_read_job(dev, kind, stages))
            while not stages or stages[-1] != "read":
                await asyncio.sleep(0)
            dev.destroy()
            try:
                await asyncio.wait_for(task, 3)
                return "done"
            except tw.TruenoError as exc:
                return type(exc).__name__
            except TimeoutError:
                return "HANG (no result 3 s after the loss)"
            except Exception as exc:
                return f"FOREIGN {type(exc).__module__}.{type(exc).__name__}: {str(exc)[:120]}"

        outcome = run(scenario(dev, ("map", "matmul")[trial % 2], stages))
        outcomes.append(outcome)
        dev.close()
        assert outcome in ("done", "DeviceLostError", "GpuError"), outcomes
        again = run(tw.GpuDevice.create("webgpu"))
        try:
            still_works(again)
        finally:
            again.close()


def test_arrays_collected_in_a_cycle_leave_the_pool_sound(fresh_gpu):
    """DeviceArrays that the garbage collector finds in reference cycles (an exception's traceback holding
    them: a model whose constructor raised after its weights were uploaded) give their buffers back to the
    pool while the collector finalizes everything the cycle reaches: the buffers must come back alive, so
    that the next arrays of their size compute (they had been released under the pool: 'writing a buffer
    failed' at the next call that took one)."""
    import gc

    gc.collect()
    for n in (100, 300, 1000):
        cycle = [run(fresh_gpu.upload([1.0] * n))]
        cycle.append(cycle)
        del cycle
    gc.collect()
    for n in (100, 300, 1000):
        x = fresh_gpu.tensor([float(i) for i in range(n)])
        assert run((x * 2).sum().item()) == n * (n - 1)


def test_buffer_past_max_buffer_size_is_a_gpu_error(fresh_gpu):
    """A WebGPU validation error (a buffer one byte past max_buffer_size) is a GpuError that says
    what failed; the device goes on."""
    driver = fresh_gpu.executor.driver
    with pytest.raises(tw.GpuError, match="(?s)creating a buffer failed.*(maximum buffer size|max_buffer_size)"):
        driver.create_buffer(driver.limits["max_buffer_size"] + 1)
    still_works(fresh_gpu)


def test_pipeline_past_the_binding_limit_is_a_gpu_error(fresh_gpu, monkeypatch):
    """The planner believes the adapter has 100 storage bindings (it has fewer): the fused kernel's
    pipeline fails WebGPU validation. execute() raises GpuError naming the limit, no pooled buffer
    leaks, and the same batch runs once the limit is right again."""
    ex = fresh_gpu.executor
    real = ex.limits["max_storage_buffers_per_shader_stage"]
    if real >= 80:
        pytest.skip(f"this adapter binds {real} storage buffers per stage: the 41 of this pipeline fit")
    monkeypatch.setitem(ex.limits, "max_storage_buffers_per_shader_stage", 100)
    b = fresh_gpu.batch()
    ins = [b.upload([float(i)] * 10) for i in range(40)]
    acc = ins[0]
    for u in ins[1:]:
        acc = b.keep(b.add(acc, u))
    with pytest.raises(tw.GpuError, match="max_storage_buffers_per_shader_stage"):
        run(b.execute())
    monkeypatch.setitem(ex.limits, "max_storage_buffers_per_shader_stage", real)
    run(b.execute())
    assert flat(run(b.read(acc))) == [780.0] * 10
    b.release()
    assert ex.pool.live == 0
    still_works(fresh_gpu)


def test_cancelled_before_it_runs_leaves_the_batch_and_device_usable(backend):
    """execute() in a task cancelled before it starts, and read() likewise: nothing ran, the batch
    executes when retried, the device is fine (desktop drivers never suspend inside execute(); the
    browser's do, see e2e/test_browser_faults.py)."""
    dev = _fresh(backend)
    try:
        x = uniform(3000, seed=6)
        b = dev.batch()
        out = b.scale(b.relu(b.upload(x)), 3.0)

        async def cancel(coro):
            task = asyncio.ensure_future(coro)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        run(cancel(b.execute()))
        with pytest.raises(tw.BatchError, match="execute"):
            run(b.read(out))
        run(b.execute())
        run(cancel(b.read(out)))
        assert flat(run(b.read(out))) == list(f32(max(v, 0.0) * 3.0 for v in x))
        b.release()
        still_works(dev)
    finally:
        dev.close()


def test_reads_cancelled_at_every_point_leave_the_device_usable():
    """A batch (a 16 MiB mish -> gelu -> mish chain, so its kernel is still running when the read
    starts) cancelled as soon as it is suspended in read(), then 1, 2, 4, ... event-loop turns
    later until it finishes on its own (at least three cancels inside read()); and asyncio.wait_for timeouts from 1 us to 10 s. Each ends
    cancelled or right, the next batch on the same device is right, and no pooled buffer stays
    checked out. The driver's short blocking wait for a map is off: a fast GPU finishes the chain within it,
    and read() would then never suspend."""
    dev = _fresh("webgpu")
    try:
        dev.executor.driver.retune(block_s=0.0)
        x = uniform(1 << 22, seed=7)
        chain = [ops.get(name) for name in ("mish", "gelu", "mish")]
        head = x[:1000]
        for op in chain:
            head = f32(flat(reference(Case(op, [(head, (1000,))]))))
        pool = dev.executor.pool
        stages: list = []

        def right(got) -> bool:
            return not mismatches(Case(chain[-1], [(head, (1000,))]), got[:1000], want=list(head), rtol=1e-4, atol=1e-5)

        async def job():
            b = dev.batch()
            out = b.mish(b.gelu(b.mish(b.upload(x))))
            try:
                stages.append("execute")
                await b.execute()
                stages.append("read")
                return flat(await b.read(out))
            finally:
                b.release()

        async def cancel_in_read(extra_turns: int) -> str:
            stages.clear()
            task = asyncio.ensure_future(job())
            while not task.done() and stages[-1:] != ["read"]:
                await asyncio.sleep(0)
            for _ in range(extra_turns):
                if task.done():
                    break
                await asyncio.sleep(0)
            if not task.done():
                task.cancel()
            try:
                return "done" if right(await task) else "WRONG"
            except asyncio.CancelledError:
                return f"cancelled in {stages[-1]}"

        outcomes = []
        extra = 0
        while len(outcomes) < 40 and ("done" not in outcomes or outcomes.count("cancelled in read") < 3):
            outcomes.append(run(cancel_in_read(extra)))
            assert pool.live == 0, f"a pooled buffer leaked after a cancel {extra} turns into read(): {outcomes}"
            assert right(run(job())), f"the batch after a cancel {extra} turns into read() is wrong"
            extra = 0 if outcomes[-1] == "done" else min(2 * extra or 1, 4096)  # (a read may not suspend)
        assert "WRONG" not in outcomes, outcomes
        assert outcomes.count("cancelled in read") >= 3 and "done" in outcomes, outcomes

        async def with_timeout(t):
            try:
                return "done" if right(await asyncio.wait_for(job(), t)) else "WRONG"
            except TimeoutError:
                return "timeout"

        timeouts = [run(with_timeout(t)) for t in (1e-6, 1e-4, 1e-3, 5e-3, 2e-2, 10.0)]
        # (a read whose kernel already finished completes without suspending: "done" even at 1 us)
        assert "WRONG" not in timeouts and "timeout" in timeouts and timeouts[-1] == "done", timeouts
        assert pool.live == 0
        assert right(run(job()))
        still_works(dev)
    finally:
        dev.close()


# ================================================================ load

LOAD_BATCHES = 4_000
LOAD_SIZES = (1, 7, 256, 1000, 4097)


def _rss() -> int | None:
    """Resident set size in bytes (Linux /proc), or None."""
    try:
        import os

        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return None


def _footprint(dev) -> dict:
    """What a leak would grow: Python heap blocks and objects, RSS, and the backend's own pools."""
    gc.collect()
    out = {"blocks": sys.getallocatedblocks(), "objects": len(gc.get_objects()), "rss": _rss()}
    ex = dev.executor
    if dev.backend == "webgpu":
        out.update(
            live=ex.pool.live,
            idle=sum(map(len, ex.pool.idle.values())),
            idle_bytes=ex.pool.idle_bytes,
            pipelines=len(ex.pipelines),
            bind_groups=len(getattr(ex.driver, "_groups", ())),
            staging=sum(map(len, getattr(ex.driver, "staging", {}).values())),
        )
    elif dev.backend == "wasm-simd":
        out.update(
            wasm_live_bytes=ex.live_bytes(),
            wasm_memory=ex.module.memory.data_len(ex.module.store) if hasattr(ex.module, "store") else None,
        )
    return out


def test_thousands_of_batches_keep_memory_and_buffers_flat(backend):
    """4,000 batches (upload, relu -> scale -> add fused, a sum, two reads, release) in a loop, sizes
    1 to 4097 and a new scale factor each time, every result checked. After a 500-batch warm-up:
    Python heap blocks grow by < 2,000 (one leaked object per batch would be 4,000), gc-tracked
    objects by < 500, RSS by < 8 MiB; on webgpu no pooled buffer stays checked out and the idle
    pool, pipelines, bind groups and staging buffers do not grow; on wasm-simd the live bytes and the
    linear memory size come back to where they were."""
    np = pytest.importorskip("numpy")
    dev = _fresh(backend)
    try:
        xs = {n: np.linspace(-2, 2, n, dtype=np.float32) for n in LOAD_SIZES}
        want = {}
        for n, x in xs.items():
            for k in range(13):
                y = x + np.maximum(x, 0) * np.float32(0.5 + k)
                want[n, k] = (y, float(np.sum(y, dtype=np.float64)), float(np.sum(np.abs(y), dtype=np.float64)))

        async def loop(first: int, count: int) -> int:
            bad = 0
            for i in range(first, first + count):
                n, k = LOAD_SIZES[i % len(LOAD_SIZES)], i % 13
                b = dev.batch()
                x = b.upload(xs[n])
                out = b.keep(b.add(b.scale(b.relu(x), 0.5 + k), x))  # read, and fused into the sum otherwise
                total = b.sum(out)
                await b.execute()
                got, got_total = await b.read(out), await b.read(total)
                b.release()
                y, s, mag = want[n, k]
                if not (np.allclose(got, y, rtol=1e-6, atol=1e-6) and abs(got_total - s) <= 1e-5 * mag + 1e-6):
                    bad += 1
            return bad

        assert run(loop(0, 500)) == 0
        before = _footprint(dev)
        assert run(loop(500, LOAD_BATCHES)) == 0, "wrong results under load"
        after = _footprint(dev)
        growth = {k: after[k] - before[k] for k in before if before[k] is not None}
        print(f"\n{backend}: after {LOAD_BATCHES} batches: growth {growth}; now {after}")
        assert growth["blocks"] < 2000 and growth["objects"] < 500, growth
        if before["rss"] is not None:
            assert growth["rss"] < 8 << 20, growth
        for key in (
            "live",
            "idle",
            "idle_bytes",
            "pipelines",
            "bind_groups",
            "staging",
            "wasm_live_bytes",
            "wasm_memory",
        ):
            if key in growth:
                assert growth[key] <= 0, (key, growth, after)
        if backend == "webgpu":
            assert after["live"] == 0
        assert dev.stats.submits >= LOAD_BATCHES
    finally:
        dev.close()


def test_64_batches_awaited_together(backend):
    """64 batches of different ops and sizes built and awaited together with asyncio.gather: every
    result is right, one submit each, and nothing stays checked out of the pool."""
    dev = _fresh(backend)
    try:
        cases = []
        for i in range(64):
            n = (1, 3, 1000, 4097, 65537)[i % 5]
            x, y = uniform(n, seed=100 + i), uniform(n, seed=200 + i)
            cases.append((i, x, y))

        async def one(i, x, y):
            b = dev.batch()
            a, c = b.upload(x), b.upload(y)
            chain = b.keep(b.mul(b.tanh(b.scale(a, 0.25 + i / 64)), c))
            kind = i % 4
            tail = (
                b.dot(chain, a)
                if kind == 0
                else b.max(chain)
                if kind == 1
                else b.softmax(chain)
                if kind == 2
                else b.leaky_relu(chain, negative_slope=i / 10)
            )
            await b.execute()
            result = (await b.read(chain), await b.read(tail), b.stats.submits)
            b.release()
            return result

        async def together():
            return await asyncio.gather(*(one(*c) for c in cases))

        results = run(together())
        tanh, mul, scale = ops.get("tanh"), ops.get("mul"), ops.get("scale")
        for (i, x, y), (chain, tail, submits) in zip(cases, results):
            assert submits == 1
            n = len(x)
            s = Case(scale, [(x, (n,))], {"s": f32([0.25 + i / 64])[0]})
            t = Case(tanh, [(f32(flat(reference(s))), (n,))])
            m = Case(mul, [(f32(flat(reference(t))), (n,)), (y, (n,))])
            bad = mismatches(m, chain, rtol=1e-5, atol=1e-5)  # the chain's three roundings (tanh's tolerance)
            assert not bad, (i, bad[:3])
            kind = i % 4
            name = ("dot", "max", "softmax", "leaky_relu")[kind]
            ins = [(f32(flat(chain)), (n,))] + ([(x, (n,))] if kind == 0 else [])
            params = {"negative_slope": f32([i / 10])[0]} if kind == 3 else {}
            tc = Case(ops.get(name), ins, params)
            assert not problems(tc, tail), (i, name, problems(tc, tail)[:3])
        if backend == "webgpu":
            assert dev.executor.pool.live == 0
    finally:
        dev.close()


# ================================================================ limits

MIB = 1 << 20


@pytest.mark.slow
def test_160_mib_input(backend, monkeypatch):
    """A 160 MiB input (lavapipe's max_storage_buffer_binding_size is 128 MiB). webgpu: one-shot
    ops, batch uploads and dev.upload raise LimitError naming the limit and its value, with nothing
    allocated; a 256 MiB matmul result from small inputs too; were the check bypassed, WebGPU's own
    validation gives a GpuError, not a crash. numpy and wasm-simd (wasm32: 2 GiB per buffer):
    relu and sum of it are right."""
    np = pytest.importorskip("numpy")
    dev = _fresh(backend)
    try:
        n = 160 * MIB // 4
        x = np.empty(n, np.float32)
        x[: n // 2] = np.linspace(-3, 3, n // 2, dtype=np.float32)
        x[n // 2 :] = x[: n // 2][::-1]
        x[-1], x[0], x[n // 2] = 7.5, -2.0, NAN
        if backend == "webgpu":
            limit = dev.limits["max_storage_buffer_binding_size"]
            if x.nbytes <= limit:
                pytest.skip(f"this adapter binds {limit} bytes per storage buffer: 160 MiB fits (lavapipe: 128 MiB)")
            pool = dev.executor.pool
            pattern = rf"max_storage_buffer_binding_size of {limit} bytes"
            for call in (lambda: dev.relu(x), lambda: dev.sum(x), lambda: dev.upload(x)):
                with pytest.raises(tw.LimitError, match=pattern):
                    run(call())
            b = dev.batch()
            with pytest.raises(tw.LimitError, match=pattern):
                b.upload(x)
            with pytest.raises(tw.LimitError, match=r"the result of matmul.*max_storage_buffer_binding_size"):
                run(dev.matmul(np.ones((8192, 1), np.float32), np.ones((1, 8192), np.float32)))
            assert pool.live == 0 and b.num_buffers == 0
            # the library's check bypassed: the driver is asked to bind 160 MiB, WebGPU refuses
            monkeypatch.setattr(dev.executor, "check_size", lambda nbytes, what: None)
            with pytest.raises(tw.GpuError, match=r"(?s)running kernels failed.*binding.*134217728"):
                run(dev.relu(x))
            monkeypatch.undo()
            assert pool.live == 0
            still_works(dev)
            half = x[: 32 * MIB]  # 128 MiB exactly: the largest input that fits, fine
            got = run(dev.relu(half))
            assert np.array_equal(got, np.maximum(half, 0), equal_nan=True)
            return
        got = run(dev.relu(x))
        assert got.shape == (n,) and np.array_equal(got, np.where(np.isnan(x), x, np.maximum(x, 0)), equal_nan=True)
        finite = np.nan_to_num(x, nan=0.0)
        total = run(dev.sum(finite))
        want = float(np.sum(finite, dtype=np.float64))
        assert abs(total - want) <= 1e-5 * float(np.sum(np.abs(finite), dtype=np.float64))
        assert math.isnan(run(dev.sum(x)))
    finally:
        dev.close()


def _grids(dev, monkeypatch) -> list:
    """Record the workgroup grid of every dispatch the webgpu driver submits."""
    grids = []
    driver = dev.executor.driver
    real = driver.submit

    def spy(work):
        grids.extend(grid for _, _, grid in work)
        return real(work)

    monkeypatch.setattr(driver, "submit", spy)
    return grids


@pytest.mark.slow
def test_more_than_65535_workgroups(gpu, monkeypatch):
    """Dispatches of more than 65535 workgroups (a 2-D grid past max_compute_workgroups_per_dimension):
    convolve2d with a 4098x4098 output (65,601 groups of 256). The recorded grids prove the size; the
    results match the reference. Softmax of 65,600 rows of 257 (several rows per workgroup: rows.threads_per_row)
    on a 2-D grid where a dimension holds 1000 workgroups, the last row on the grid's last row.
    (Elementwise maps cover 2048 floats per workgroup, so 65535 of them already span 512 MiB,
    past the binding limit: their 2-D grid is covered by test_ops.test_kernel_variants[max_per_dim=3]
    and matmul's by test_gpu_kernels.test_matmul_past_65535_workgroups_in_one_dimension.)"""
    np = pytest.importorskip("numpy")
    grids = _grids(gpu, monkeypatch)
    rng = np.random.default_rng(11)
    img = rng.uniform(-1, 1, (4100, 4100)).astype(np.float32)
    k = rng.uniform(-1, 1, (3, 3)).astype(np.float32)
    got = run(gpu.convolve2d(img, k))
    assert max(x * y for x, y in grids) > 65535 and max(y for _, y in grids) > 1, grids
    want = sum(img[i : i + 4098, j : j + 4098].astype(np.float64) * k[i, j] for i in range(3) for j in range(3))
    assert got.shape == (4098, 4098)
    assert np.max(np.abs(got - want)) <= 1e-5 * 9, "convolve2d past 65535 workgroups"
    grids.clear()
    monkeypatch.setattr(gpu.executor.caps, "max_per_dim", 1000)
    xs = rng.uniform(-8, 8, (65600, 257)).astype(np.float32)
    xs[-1, :] = -INF
    xs[-1, 5] = 2.0
    got = run(gpu.softmax(xs))
    groups = -(-65600 // (256 // threads_per_row(257)))  # several rows per workgroup
    assert grids == [(1000, -(-groups // 1000))] and groups > 1000, grids
    x64 = xs.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    want = e / e.sum(axis=1, keepdims=True)
    assert np.max(np.abs(got - want)) <= 2e-6, "softmax past 65535 workgroups"
    assert got[-1, 5] == 1.0 and np.all(np.delete(got[-1], 5) == 0.0), "the last row, on the grid's 2nd row"


# ================================================================ safety: scalars are data

EXTREME_SCALARS = (
    NAN,
    INF,
    -INF,
    -0.0,
    0.0,
    1e39,
    -1e39,
    1e-45,
    -1e-45,
    1e-40,
    F32_MAX,
    -F32_MAX,
    2**200,
    -(10**400),
    7,
    123456789,
)


def _compiles(dev, monkeypatch) -> list:
    """Record every (WGSL source, entry point) the executor compiles."""
    sources = []
    driver = dev.executor.driver
    real = driver.compile

    def spy(source, entry, checked=True):
        sources.append((source, entry))
        return real(source, entry, checked)

    monkeypatch.setattr(driver, "compile", spy)
    return sources


def _scalar_workload(dev, values: dict, x) -> None:
    """Every op with scalars, one-shot and fused in a batch, with the given scalar values."""
    for op in ops.CATALOG:
        if op.params:
            run(getattr(dev, op.name)(x, **{p.name: values[p.name] for p in op.params}))
    b = dev.batch()
    a = b.upload(x)
    chain = b.scale(
        b.clip(b.elu(b.leaky_relu(a, values["negative_slope"]), values["alpha"]), values["lo"], values["hi"]),
        values["s"],
    )
    b.add(chain, a)
    run(b.execute())
    b.release()


def test_ints_past_float_range_are_infinite_scalars(dev):
    """scale(x, +-10**400): an int past float64's range rounds to +-inf like any float32 past its
    range (it once raised a bare OverflowError)."""
    assert flat(run(dev.scale([1.0, -2.0], 10**400))) == [INF, -INF]
    assert flat(run(dev.scale([1.0, -2.0], -(10**400)))) == [-INF, INF]
    assert flat(run(dev.clip([5.0, -5.0], -(10**400), 10**400))) == [5.0, -5.0]


def test_wgsl_does_not_depend_on_scalar_values(fresh_gpu, monkeypatch):
    """Every WGSL source compiled for ops called with NaN, +-inf, -0.0, subnormal, float32-extreme,
    past-float32 and huge-int scalars is one already compiled for ordinary scalars: nothing of a
    scalar's value reaches the shader text, and the pipeline cache does not grow."""
    sources = _compiles(fresh_gpu, monkeypatch)
    names = [p.name for op in ops.CATALOG for p in op.params]
    x = uniform(1000, seed=12)
    _scalar_workload(fresh_gpu, dict.fromkeys(names, 0.5) | {"lo": -0.5, "hi": 0.5}, x)
    ordinary = set(sources)
    assert ordinary, "the spy saw the compiles"
    pipelines = len(fresh_gpu.executor.pipelines)
    compiled = fresh_gpu.stats.pipelines_compiled
    for value in EXTREME_SCALARS:
        _scalar_workload(fresh_gpu, dict.fromkeys(names, value), x)
    assert set(sources) == ordinary and len(sources) == len(ordinary), "a scalar changed a shader"
    assert len(fresh_gpu.executor.pipelines) == pipelines and fresh_gpu.stats.pipelines_compiled == compiled
    for source, _ in sources:
        for text in ("1e+39", "1e39", "123456789", "1.401298464324817e-45", "3.4028234663852886e+38"):
            assert text not in source


@settings(max_examples=60, **COMMON)
@given(
    values=st.fixed_dictionaries(
        {p.name: st.floats(width=32) | st.integers(-(2**80), 2**80) for op in ops.CATALOG for p in op.params}
    )
)
def test_random_scalars_compile_nothing_new(gpu, values):
    """Random scalar values (any float32, big ints) on the session device: no compile at all once
    the shapes of this workload have been seen."""
    x = uniform(300, seed=13)
    _scalar_workload(gpu, {k: 0.25 for k in values}, x)
    compiled = gpu.stats.pipelines_compiled
    _scalar_workload(gpu, values, x)
    assert gpu.stats.pipelines_compiled == compiled


def test_sizes_travel_as_data_too(fresh_gpu, monkeypatch):
    """relu at 14 sizes from 1 to 100,000 compiles one map kernel (vec4 with a bounds check), sum
    one reduction: sizes are parameters, not shader text."""
    sources = _compiles(fresh_gpu, monkeypatch)
    for n in (1, 2, 3, 4, 5, 7, 8, 100, 255, 256, 257, 1000, 4097, 100_000):
        run(fresh_gpu.relu(uniform(n, seed=n)))
    assert len(sources) == 1
    sources.clear()
    for n in (1, 2, 3, 4, 5, 7, 8, 100, 255, 256, 257, 1000, 4097, 100_000):
        run(fresh_gpu.sum(uniform(n, seed=n)))
    assert len(sources) <= 2  # its two entry points


def test_webgpu_rule_accepts_exactly_the_documented_device_behaviours():
    """On webgpu only: a subnormal input read as 0 (NVIDIA flushes them), a result below 2^-126 as 0, one
    value divided by itself folded to 1; a wrong finite value, or the fold on two different inputs, still
    fails; the CPU backends get no slack."""
    flushed = Case(ops.get("add"), [(f32([1e-40, 1.0]), (2,)), (f32([1e-40, 2.0]), (2,))])
    assert problems(flushed, f32([0.0, 3.0]), "webgpu") == [] and problems(flushed, f32([0.0, 3.0]), "numpy") != []
    assert problems(flushed, f32([0.0, 3.5]), "webgpu") != []
    scaled = Case(ops.get("scale"), [(f32([3.0]), (1,))], {"s": 1e-40})  # a subnormal scalar parameter
    assert problems(scaled, f32([0.0]), "webgpu") == [] and problems(scaled, f32([0.0]), "wasm-simd") != []
    same = f32([NAN, INF, 0.0, 2.0])
    assert problems(Case(ops.get("div"), [(same, (4,)), (same, (4,))]), f32([1.0] * 4), "webgpu") == []
    other = f32([NAN, INF, 0.0, 3.0])
    assert problems(Case(ops.get("div"), [(same, (4,)), (other, (4,))]), f32([1.0] * 4), "webgpu") != []
    assert problems(Case(ops.get("div"), [(same, (4,)), (same, (4,))]), f32([1.0] * 4), "numpy") != []
    # other ops: the inputs' subnormals read as 0 (the lent H100's matmul of a row [-5e-39, -0, 1] gave 0), a
    # result below 2^-126 as 0; a wrong normal value still fails
    mm = Case(ops.get("matmul"), [(f32([-5e-39, -0.0, 1.0]), (1, 3)), (f32([1.0, 2.0, 0.0]), (3, 1))])
    assert problems(mm, f32([0.0]), "webgpu") == [] and problems(mm, f32([0.0]), "numpy") != []
    assert problems(mm, f32([-1e-30]), "webgpu") != [] and problems(mm, f32([1.0]), "webgpu") != []
    tiny = Case(ops.get("sum"), [(f32([3e-38, -2e-38]), (2,))])  # 1e-38: a result below 2^-126
    assert problems(tiny, 0.0, "webgpu") == [] and problems(tiny, 0.0, "wasm-simd") != []
    assert problems(tiny, 2e-38, "webgpu") != []
