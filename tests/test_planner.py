"""The planner's pieces on small hand-built graphs (planner.Planner), and plan() as a whole: it only reads
the nodes, equal structures get equal keys and the same cached Plan, and the GPU executor builds the
dispatches of an equal key once."""

from __future__ import annotations

import pytest
from _cases import flat, run

from trueno_web import batch, kernels, ops, planner
from trueno_web.graph import MapStep, Node, OpStep, ReduceStep, RowStep
from trueno_web.layout import View
from trueno_web.planner import Planner, merged, plan, row_level, structure

relu, scale, neg, add, div, exp, total = (ops.get(k) for k in ("relu", "scale", "neg", "add", "div", "exp", "sum"))


class Graph:
    """A node list built by hand: uploads and ops, ids in order."""

    def __init__(self, *shapes: tuple[int, ...]):
        self.nodes = [Node(i, None, (), (), shape) for i, shape in enumerate(shapes)]

    def op(self, op, *inputs: int, shape=None, params=(), keep=False, **options) -> int:
        shape = shape or self.nodes[inputs[0]].shape
        self.nodes.append(Node(len(self.nodes), op, inputs, params, shape, dict(options), keep=keep))
        return len(self.nodes) - 1

    def view(self, base: int, shape: tuple[int, ...], strides: tuple[int, ...]) -> int:
        self.nodes.append(Node(len(self.nodes), None, (base,), (), shape, view=View(shape, strides)))
        return len(self.nodes) - 1

    @property
    def pending(self) -> list[int]:
        return [n.id for n in self.nodes if n.op is not None]

    def planner(self, max_bindings: int = 8) -> Planner:
        return Planner(self.nodes, True, max_bindings)


def chain() -> Graph:
    """x -> relu -> scale -> neg, 8 elements."""
    g = Graph((8,))
    g.op(neg, g.op(scale, g.op(relu, 0), params=(2.0,)))
    return g


def test_a_map_chain_joins_one_open_step_and_stores_its_result():
    g = chain()
    p = g.planner()
    p.add(g.nodes[1])
    step = p.open[1]
    assert isinstance(step, MapStep) and p.reads(g.nodes[2], step)
    assert p.target(g.nodes[2]).nodes == [1]  # the step it joins (before it is added)
    p.add(g.nodes[2])
    p.add(g.nodes[3])
    assert p.open[1] is p.open[3] and p.open[3].nodes == [1, 2, 3]
    members = {1, 2, 3}
    assert [p.stored(m, members, {}) for m in (1, 2, 3)] == [False, False, True]
    assert p.loads(members, {}) == [0]
    p.finish()
    assert p.steps == [MapStep(8, [0], [1, 2, 3], [3])] and p.fused_away == {1, 2} and not p.open


def test_a_row_step_holds_the_reduction_and_its_epilogue():
    """exp over 4 x 8, sum per row, scale of the sums (a row value), and a division of the exps by the
    scaled sums broadcast along rows (an element value reading a row value through a view it resolves)."""
    g = Graph((4, 8))
    e = g.op(exp, 0)
    s = g.op(total, e, shape=(4,), rows=4)
    r = g.op(scale, s, params=(0.5,))
    v = g.view(r, (4, 8), (1, 0))
    d = g.op(div, e, v)
    p = g.planner()
    for nid in (e, s):
        p.add(g.nodes[nid])
    step = p.open[s]
    assert isinstance(step, RowStep) and (step.rows, step.cols) == (4, 8) and step.row_values == {s}
    assert row_level(g.nodes[r], step) and not row_level(g.nodes[d], step)
    p.add(g.nodes[r])
    assert p.open[r] is p.open[s] and p.aliases(p.open[r], g.nodes[d]) == {v: r}
    p.add(g.nodes[d])
    p.finish()
    assert p.steps == [RowStep(4, 8, [e, s, r, d], {s, r}, {v: r}, [0], [d])]
    assert p.fused_away == {e, s, r}


def test_a_full_reduction_absorbs_its_chain():
    g = chain()
    t = g.op(total, 3, shape=())
    p = g.planner()
    for nid in (1, 2, 3):
        p.add(g.nodes[nid])
    group = p.open[1]
    assert p.chains(g.nodes[t]) == ({1, 2, 3}, [group], {})
    p.add(g.nodes[t])
    p.finish()
    assert p.steps == [ReduceStep(8, [0], [1, 2, 3, t], [t])] and p.fused_away == {1, 2, 3}
    assert group.nodes == [] and not p.open


def test_a_kept_chain_value_is_not_absorbed():
    g = Graph((8,))
    kept = g.op(scale, g.op(relu, 0), params=(2.0,), keep=True)
    t = g.op(total, kept, shape=())
    p = g.planner()
    for nid in (1, 2):
        p.add(g.nodes[nid])
    assert p.absorb(g.nodes[t]) is None and p.open[1].nodes == [1, 2]
    p.add(g.nodes[t])
    p.finish()
    assert p.steps == [MapStep(8, [0], [1, 2], [2]), OpStep(t)] and p.fused_away == {1}


def test_the_binding_limit_splits_a_group():
    """add(add(x0, x1), x2): 1 parameter + 3 loads + 1 store = 5 bindings; with 4 the second add starts
    a step of its own, reading the first one's stored result."""
    g = Graph((8,), (8,), (8,))
    first = g.op(add, 0, 1)
    second = g.op(add, first, 2)
    p = g.planner(max_bindings=4)
    p.add(g.nodes[first])
    assert p.bindings(p.open[first], g.nodes[second]) == 5
    assert p.target(g.nodes[second]) is None
    p.add(g.nodes[second])
    p.finish()
    assert p.steps == [MapStep(8, [0, 1], [first], [first]), MapStep(8, [first, 2], [second], [second])]
    assert p.fused_away == set()
    assert plan(g.nodes, g.pending, True, 5).steps == (MapStep(8, [0, 1, 2], [first, second], [second]),)


def test_merged_copies_the_step_with_the_groups_of_its_size():
    step, other, small = MapStep(8, [], [1, 3], []), MapStep(8, [], [2], []), MapStep(4, [], [5], [])
    trial = merged(step, [other])
    assert trial.nodes == [1, 2, 3] and step.nodes == [1, 3] and trial is not step
    rows = merged(RowStep(4, 2, [6], {6}), [small])
    assert rows.nodes == [5, 6] and rows.row_values == {5, 6}


@pytest.mark.parametrize("fuse", [True, False])
def test_plan_does_not_change_the_nodes(fuse):
    g = chain()
    g.op(total, 3, shape=())
    before = [dict(vars(n)) for n in g.nodes]
    planner.PLANS.clear()
    made = plan(g.nodes, g.pending, fuse, 8)
    assert [vars(n) for n in g.nodes] == before
    assert made.fused_away == (frozenset({1, 2, 3}) if fuse else frozenset())
    assert plan(g.nodes, g.pending, fuse, 8) is made  # from the cache: nothing replayed on the nodes
    assert [vars(n) for n in g.nodes] == before


def test_equal_structures_get_equal_keys_and_the_same_plan():
    planner.PLANS.clear()
    a, b = chain(), chain()
    b.nodes[2].params = (3.0,)  # scalars are not structure
    assert structure(a.nodes, a.pending, True, 8) == structure(b.nodes, b.pending, True, 8)
    assert plan(a.nodes, a.pending, True, 8) is plan(b.nodes, b.pending, True, 8)
    b.nodes[2].keep = True  # what is stored differs: another structure
    other = plan(b.nodes, b.pending, True, 8)
    assert other.key != plan(a.nodes, a.pending, True, 8).key and other.steps[0].stores == [2, 3]
    assert len(planner.PLANS) == 2


def test_the_gpu_executor_reuses_its_dispatches_for_an_equal_key(gpu, monkeypatch):
    """The plan cache emptied before each run of one structure: a new Plan object of an equal key each
    time; the second run reuses the first's kernels and parameters (none built), the third, of another
    scalar, builds its own in their place."""
    built, plans = [], []
    real = kernels.dispatches
    monkeypatch.setattr(kernels, "dispatches", lambda *a, **k: built.append(a[0]) or real(*a, **k))
    monkeypatch.setattr(batch, "plan", lambda *a: plans.append(plan(*a)) or plans[-1])
    gpu.executor.forget()
    results, kept = [], []
    for s in (2.0, 2.0, 3.0):
        planner.PLANS.clear()
        b = gpu.batch()
        out = b.neg(b.scale(b.relu(b.upload([1.0, -2.0, 3.0])), s))
        run(b.execute())
        results.append(flat(run(b.read(out))))
        kept.append((len(built), gpu.executor.planned[plans[-1].key]))
        b.release()
    assert results == [[-2.0, 0.0, -6.0], [-2.0, 0.0, -6.0], [-3.0, 0.0, -9.0]]
    assert plans[0] is not plans[1] and plans[0].key == plans[1].key == plans[2].key
    assert [n for n, _ in kept] == [1, 1, 2] and kept[0][1] is kept[1][1] is not kept[2][1]
    assert list(gpu.executor.planned) == [plans[2].key]
