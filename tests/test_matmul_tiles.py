"""Every matmul tiling, split of K over workgroups and tile order, forced through Caps, on odd shapes
against NumPy in float64; and how the choice is made (the rule, the measured table, the limits)."""

from __future__ import annotations

import numpy as np
import pytest

from trueno_web import kernels
from trueno_web.graph import Node, OpStep
from trueno_web.kernels import matmul, matmul_tuned
from trueno_web.kinds import KINDS, Kind
from trueno_web.ops import get
from trueno_web.runtime import block_on

# (a shape, b shape) with edges in M and N: K and N odd (scalar loads) or multiples of 4 (vec4), one product
# or a batch; each kernel variant gets two of the four cases, the two variants together all four
SCALAR_2D, VEC4_2D = ((67, 101), (101, 35)), ((130, 200), (200, 132))
SCALAR_BATCH, VEC4_BATCH = ((2, 33, 71), (2, 71, 19)), ((2, 33, 72), (2, 72, 20))


def run_checked(gpu, shapes, seed=0):
    rng = np.random.default_rng(seed)
    for sa, sb in shapes:
        a, b = rng.standard_normal(sa, dtype=np.float32), rng.standard_normal(sb, dtype=np.float32)
        got = block_on((gpu.tensor(a) @ gpu.tensor(b)).numpy())
        ref, mag = a.astype(np.float64) @ b, np.abs(a).astype(np.float64) @ np.abs(b)
        assert got.shape == ref.shape
        assert np.all(np.abs(got - ref) <= 2e-6 * mag + 1e-30), (sa, sb, float(np.max(np.abs(got - ref) / mag)))


def compiled(gpu, *parts) -> bool:
    """Did the device compile a kernel whose text has all of `parts`? (A fresh device per test: pipelines
    another test compiled do not count.)"""
    return any(all(p in source for p in parts) for source, _ in gpu.executor.pipelines)


@pytest.mark.parametrize("config", list(kernels.MATMUL_CONFIGS))
@pytest.mark.parametrize("splits, group, products", [(1, 1, (SCALAR_2D, VEC4_BATCH)), (3, 2, (VEC4_2D, SCALAR_BATCH))])
def test_every_tiling_split_and_order(fresh_gpu, config, splits, group, products):
    cfg, caps = kernels.MATMUL_CONFIGS[config], fresh_gpu.executor.caps
    caps.matmul, caps.matmul_splits, caps.matmul_group = config, splits, group
    run_checked(fresh_gpu, products)
    if cfg.storage(False) > caps.wg_storage:  # 48 KiB tiles on a 32 KiB adapter (lavapipe): the smallest, unsplit
        assert compiled(fresh_gpu, "const BM: u32 = 64u;", "const BN: u32 = 64u;", "const BK: u32 = 8u;", "tiles N")
        assert not compiled(fresh_gpu, f"const BK: u32 = {cfg.bk}u;", f"const BN: u32 = {cfg.bn}u;")
        return
    tiling = (f"const BM: u32 = {cfg.bm}u;", f"const BN: u32 = {cfg.bn}u;", f"const BK: u32 = {cfg.bk}u;")
    assert compiled(fresh_gpu, *tiling, "ORDER (shaders/matmul.wgsl): " + ("groups" if group > 1 else "tiles N"))
    assert compiled(fresh_gpu, "var<storage, read> parts") == (splits > 1)


def test_scalar_loads_on_aligned_shapes(fresh_gpu):
    """Caps.matmul_vec off: whole-vec4 rows load and store as scalars, the odd shapes' path (a tuning choice)."""
    fresh_gpu.executor.caps.matmul_vec = False
    run_checked(fresh_gpu, (VEC4_2D, VEC4_BATCH))
    assert not compiled(fresh_gpu, "array<vec4<f32>>") and compiled(fresh_gpu, "var<storage, read> a: array<f32>")


def test_scalar_loads_with_vec4_stores(fresh_gpu):
    """Caps.matmul_vec off, matmul_vec_c on: the operands load as scalars, C stores as vec4s (a tuning choice)."""
    caps = fresh_gpu.executor.caps
    caps.matmul, caps.matmul_vec, caps.matmul_vec_c = "64x64x16", False, True
    run_checked(fresh_gpu, (VEC4_2D, VEC4_BATCH))
    assert compiled(fresh_gpu, "var<storage, read> a: array<f32>", "var<storage, read> b: array<f32>", "c: array<vec4")


def test_kept_dispatches_follow_the_caps(fresh_gpu):
    """A graph of the same structure run again after its caps changed gets the kernel those caps ask for."""
    caps = fresh_gpu.executor.caps
    for config in ("64x64x8", "128x128x16"):
        cfg = kernels.MATMUL_CONFIGS[config]
        caps.matmul = config
        run_checked(fresh_gpu, (VEC4_2D,))
        assert compiled(fresh_gpu, f"const BN: u32 = {cfg.bn}u;", f"const BK: u32 = {cfg.bk}u;"), config


def test_split_k_within_the_loop_budget_on_the_device(fresh_gpu):
    """Splits longer than the loop budget (5 slices) take several dispatches each, adding to their partials;
    and a 2-D grid with spare workgroups (max_per_dim 5)."""
    caps = fresh_gpu.executor.caps
    caps.matmul, caps.matmul_splits, caps.loop_trips, caps.max_per_dim = "64x64x8", 3, 5, 5
    run_checked(fresh_gpu, [((9, 161), (161, 70)), ((3, 5, 97), (3, 97, 8)), ((70, 4), (4, 3))], seed=1)
    assert compiled(fresh_gpu, "let first = tw_meta[7];", "SPLIT for K split over workgroups")


def dispatches(sa, sb, caps) -> list:
    op = get("matmul")
    shape, o = KINDS[Kind.MATMUL].shape(op, [sa, sb], {})
    nodes = [Node(0, None, (), (), sa), Node(1, None, (), (), sb), Node(2, op, (0, 1), (), shape, o)]
    return kernels.dispatches(OpStep(2), nodes, caps)


def test_few_tiles_split_k_and_add_the_partials():
    """1024^3 is 64 tiles of 128x128: split 4 ways over K for 256 workgroups, then one dispatch adds the
    partials (in vec4s); 4096^3 has 1024 tiles and no split."""
    caps = kernels.Caps()
    choice = matmul.matmul_config(1024, 1024, 1024, caps)
    assert (choice.cfg, choice.splits, choice.group) == (matmul.CONFIGS["128x128x8"], 4, 1)
    main, add = dispatches((1024, 1024), (1024, 1024), caps)
    assert main.grid == (256, 1) and main.scratch == 4 * 4 * 1024**2 and (3, "partials") in main.bindings
    assert add.bindings == ((1, "partials"), (2, 2)) and add.grid == (1024, 1) and "vec4<f32>" in add.source
    assert matmul.matmul_config(4096, 4096, 4096, caps).splits == 1
    assert len(dispatches((4096, 4096), (4096, 4096), caps)) == 1


def test_split_limits():
    """No split shorter than MIN_SPLIT_SLICES unless forced, none empty, partials within one binding."""
    caps = kernels.Caps()
    assert matmul.matmul_config(64, 8 * 31, 64, caps).splits == 1  # 31 slices: too short to split
    caps.matmul_splits = 7
    assert matmul.matmul_config(64, 8 * 10, 64, caps).splits == 5  # 7 splits of 10 slices: 2 each, 5 used
    assert matmul.matmul_config(64, 3, 64, caps).splits == 1
    caps.binding_limit = 3 * 4 * 64 * 64
    assert matmul.matmul_config(64, 8 * 10, 64, caps).splits == 3


def test_the_measured_table_decides_for_its_adapter(monkeypatch):
    monkeypatch.setattr(matmul_tuned, "TUNED", {"Some GPU": {"2x100x300x50": ("64x64x16", 3, 2, False, True)}})
    caps = kernels.Caps(adapter="Some GPU")
    choice = matmul.matmul_config(100, 300, 50, caps, batch=2)
    assert (choice.cfg, choice.splits, choice.group, choice.vec, choice.vec_c) == (
        matmul.CONFIGS["64x64x16"],
        3,
        2,
        False,
        True,
    )
    caps.matmul_vec_c = False  # what Caps forces wins: the stores' width too
    assert not matmul.matmul_config(100, 300, 50, caps, batch=2).vec_c
    assert matmul.matmul_config(100, 300, 50, kernels.Caps(adapter="Other"), batch=2) == matmul.matmul_config(
        100, 300, 50, kernels.Caps(), batch=2
    )
    small = kernels.Caps(adapter="Some GPU", wg_storage=8192)  # the measured tiling does not fit: the rule
    rule = matmul.matmul_config(100, 300, 50, kernels.Caps(wg_storage=8192), batch=2)
    assert matmul.matmul_config(100, 300, 50, small, batch=2) == rule
    caps.matmul = "128x64x8"  # what Caps forces wins
    assert matmul.matmul_config(100, 300, 50, caps, batch=2).cfg == matmul.CONFIGS["128x64x8"]


def test_shipped_table_names_real_choices():
    for table in matmul_tuned.TUNED.values():
        for key, (name, splits, group, vec, vec_c) in table.items():
            assert len(key.split("x")) == 4 and name in matmul.CONFIGS and splits >= 1 and group >= 1, key
            assert isinstance(vec, bool) and isinstance(vec_c, bool), key


def test_the_rule_prefers_deep_tiles_that_fit_and_do_not_overhang():
    """With 48 KiB of workgroup memory the 16-deep 128x128 tile; N = 64 takes a 64-wide tile, not half an
    empty 128-wide one; tiny products the smallest tile."""
    caps = kernels.Caps(wg_storage=49152)
    assert matmul.matmul_config(1024, 1024, 1024, caps).cfg == matmul.CONFIGS["128x128x16"]
    assert matmul.matmul_config(1024, 1024, 64, caps, batch=16).cfg.bn == 64
    assert matmul.matmul_config(7, 8, 12, caps).cfg == matmul.CONFIGS["64x64x8"]
