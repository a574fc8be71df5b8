"""The recorded graph of a batch and its plan: elementwise chains fused into map steps, reductions
along rows fused with the elementwise ops around them into row steps.

Planning (per `execute()`, over the nodes queued since the last one): nodes run in the order they
were queued. An elementwise node joins the open step of an input of the same size. A reduction along
rows (option rows=R) opens a row step, or joins one of the same rows x cols, or turns the open map
group of its input into one (the chain is computed as the reduction reads it). Elementwise nodes join a
row step as element values (rows x cols) or as row values (one per row, on its reductions' results);
an element value may read a row value broadcast along its row (a view the step resolves). A full
reduction takes the chains that compute its inputs out of their open map groups into a ReduceStep (each
input's ancestors there; the rest of a group stays open), unless a value of those chains is needed
elsewhere (kept, or read outside them): then the group runs as a map step that writes it, as unfused.
A step closes when something it does not hold reads one of its values (an op of another kind, a view
it cannot resolve, a node of another size), or when one more node would need more storage bindings
than the device has; whatever reads a step's value therefore runs after it. A step writes to memory
only the values something needs afterwards: values consumed outside it, values nothing consumes
(results) and values marked `keep`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .layout import View, contiguous_strides
from .ops import Op


@dataclass(eq=False)
class Node:
    """One buffer of a batch: an upload, an imported device buffer, an op's result, or a view (no
    storage of its own: it reads its one input's storage through `view`)."""

    id: int
    op: Op | None
    inputs: tuple[int, ...]
    params: tuple[float, ...]
    shape: tuple[int, ...]
    options: dict = field(default_factory=dict)
    host: object = None  # HostData waiting for upload
    buffer: object = None  # backend storage once it exists
    imported: bool = False  # a DeviceArray the batch does not own
    keep: bool = False
    done: bool = False
    fused_away: bool = False
    view: View | None = None

    @property
    def size(self) -> int:
        return math.prod(self.shape)


@dataclass
class MapStep:
    """A fused elementwise chain: load `loads`, compute `nodes` in order, store `stores`."""

    size: int
    loads: list[int]
    nodes: list[int]
    stores: list[int]


@dataclass
class RowStep:
    """Reductions along rows fused with the elementwise ops around them (kernels/rows.py): `nodes` in
    order are element values (rows x cols, row-major) and row values (`row_values`: the reductions
    and elementwise ops on their results, one per row); `aliases` maps a view that broadcasts a row
    value along its row to that value. Loads and stores as in MapStep."""

    rows: int
    cols: int
    nodes: list[int]
    row_values: set[int] = field(default_factory=set)
    aliases: dict[int, int] = field(default_factory=dict)
    loads: list[int] = field(default_factory=list)
    stores: list[int] = field(default_factory=list)


@dataclass
class ReduceStep:
    """A full reduction (the last of `nodes`) fused with the elementwise chain that feeds it (the others,
    in order; kernels/reduce.py): its first pass computes the chain per element from `loads` as it reads
    them; only the reduction's value is stored. `aliases` maps a reduction input that is a row-major view
    of a chain value of its size (a reshape) to that value."""

    size: int
    loads: list[int]
    nodes: list[int]
    stores: list[int]
    aliases: dict[int, int] = field(default_factory=dict)

    @property
    def node(self) -> int:
        """The reduction."""
        return self.nodes[-1]

    def chain(self, nodes: list[Node]) -> MapStep:
        """The chain alone as a map step storing what the reduction reads (CPU executors run that first)."""
        reads = (self.aliases.get(i, i) for i in nodes[self.node].inputs)
        return MapStep(self.size, self.loads, self.nodes[:-1], [i for i in dict.fromkeys(reads) if i in self.nodes])


@dataclass
class OpStep:
    """A full reduction of loaded data, softmax, matmul or convolution: one node, its own kernel."""

    node: int


Step = MapStep | RowStep | ReduceStep | OpStep


def storage(nodes: list[Node], i: int) -> Node:
    """The node whose buffer holds node i's data (its base, for a view)."""
    node = nodes[i]
    return nodes[node.inputs[0]] if node.view is not None else node


def template(step: Step, nodes: list[Node]) -> str:
    """The kernel template a step runs on (the key of every backend's table)."""
    if isinstance(step, (OpStep, ReduceStep)):
        return nodes[step.node].op.row.template
    return "map" if isinstance(step, MapStep) else "rows"


def row_reduction(node: Node) -> bool:
    """A reduction along rows (the option rows=R): it runs as a RowStep."""
    return node.op is not None and node.options.get("rows") is not None


def full_reduction(node: Node) -> bool:
    """A reduction of all of its input (no option rows): it runs as a ReduceStep or an OpStep."""
    return node.op is not None and node.op.row.template == "reduce" and node.options.get("rows") is None


def row_broadcast(view: View, cols: int) -> bool:
    """Does element i of `view` read element i // cols of its base (one value per row of `cols`)?"""
    if view.mask is not None:
        return False
    inner, d = 1, len(view.shape)
    while d and inner < cols:
        d -= 1
        if view.shape[d] != 1 and view.strides[d] != 0:
            return False
        inner *= view.shape[d]
    return (
        inner == cols and view.offset == 0 and view.strides[:d] == contiguous_strides(view.shape[:d], view.strides[:d])
    )


def consumers(nodes: list[Node]) -> dict[int, list[int]]:
    """node id -> ids of the nodes that read it."""
    used: dict[int, list[int]] = {n.id: [] for n in nodes}
    for n in nodes:
        for i in n.inputs:
            used[i].append(n.id)
    return used


PLANS: dict = {}  # graph structure -> (steps, the pending nodes fused away); at most PLANS_KEPT, oldest out
PLANS_KEPT = 256


def plan(nodes: list[Node], pending: list[int], fuse: bool, max_bindings: int) -> list[Step]:
    """Steps that compute the pending op nodes; see the module docstring for the rules. A graph of the
    same structure as one planned before (a loop, a model's forward pass) gets that plan again: the key
    holds everything planning reads of a node (steps are never changed after planning)."""
    key = (
        fuse,
        max_bindings,
        tuple(pending),
        tuple(
            (
                n.op.name if n.op is not None else None,
                n.inputs,
                n.shape,
                n.view,
                n.keep,
                n.options.get("rows") if n.op is not None else None,
            )
            for n in nodes
        ),
    )
    if key in PLANS:
        steps, fused_away = PLANS[key]
        for nid in pending:
            nodes[nid].fused_away = nid in fused_away
        return steps
    steps = _plan(nodes, pending, fuse, max_bindings)
    if len(PLANS) >= PLANS_KEPT:
        del PLANS[next(iter(PLANS))]
    PLANS[key] = steps, {nid for nid in pending if nodes[nid].fused_away}
    return steps


def _plan(nodes: list[Node], pending: list[int], fuse: bool, max_bindings: int) -> list[Step]:
    used = consumers(nodes)
    steps: list[Step] = []
    open_steps: dict[int, MapStep | RowStep] = {}  # member node id -> its open step

    def inside(c: int, members: set[int], aliases: dict[int, int]) -> bool:
        return c in members or (c in aliases and all(inside(x, members, aliases) for x in used[c]))

    def stored(m: int, members: set[int], aliases: dict[int, int]) -> bool:
        """Does member m go to memory: kept, a result, or needed outside its step?"""
        return nodes[m].keep or not used[m] or not all(inside(c, members, aliases) for c in used[m])

    def loads(members: set[int], aliases: dict[int, int]) -> list[int]:
        return list(
            dict.fromkeys(i for m in sorted(members) for i in nodes[m].inputs if i not in members and i not in aliases)
        )

    def close(step: MapStep | RowStep) -> None:
        if isinstance(step, RowStep) and not any(row_reduction(nodes[m]) for m in step.nodes):
            step = MapStep(step.rows * step.cols, [], step.nodes, [])  # no reduction joined it after all
        members, aliases = set(step.nodes), getattr(step, "aliases", {})
        step.stores = [m for m in step.nodes if stored(m, members, aliases)]
        step.loads = loads(members, aliases)
        for m in members:
            nodes[m].fused_away = m not in step.stores
            open_steps.pop(m, None)
        steps.append(step)

    def bindings(step: MapStep | RowStep, extra: Node) -> int:
        members, aliases = set(step.nodes) | {extra.id}, dict(getattr(step, "aliases", {}))
        aliases.update(_aliases(step, extra) if isinstance(step, RowStep) else {})
        return 1 + len(loads(members, aliases)) + sum(stored(m, members, aliases) for m in members)

    def row_level(node: Node, step: RowStep) -> bool:
        """Is `node` (joining `step`) a row value rather than an element value? (With one column, every
        elementwise node is a row value.)"""
        return row_reduction(node) or node.size == step.rows

    def _aliases(step: RowStep, node: Node) -> dict[int, int]:
        """The views `node` reads that a RowStep resolves to one of its members: a row value broadcast
        along rows (read by an element value), or the same data in another shape."""
        out = {}
        for i in node.inputs:
            view, base = nodes[i].view, nodes[i].inputs[0] if nodes[i].inputs else None
            if view is None or base not in step.nodes:
                continue
            computes_row_value = row_level(node, step) and not row_reduction(node)
            if view.identity and nodes[i].size == nodes[base].size and (base in step.row_values) == computes_row_value:
                out[i] = base
            elif base in step.row_values and not computes_row_value and row_broadcast(view, step.cols):
                out[i] = base
        return out

    def reads(node: Node, step: MapStep | RowStep) -> bool:
        """Can `node` join `step`: is it of the step's size, and does it read the step's members
        directly or through views the step resolves (RowStep aliases)?"""
        if isinstance(step, MapStep):
            size = nodes[node.inputs[0]].size if row_reduction(node) else node.size
            ok, alias = size == step.size, {}
        else:
            cells = step.rows * step.cols
            ok = (
                node.shape == (step.rows,) and nodes[node.inputs[0]].size == cells
                if row_reduction(node)
                else node.size in (step.rows, cells)
            )
            alias = _aliases(step, node)
        members = set(step.nodes)
        return ok and all(
            i in alias or storage(nodes, i).id not in members or nodes[i].view is None for i in node.inputs
        )

    def target(node: Node) -> MapStep | RowStep | None:
        """The open step `node` joins, with the same-size map groups it also reads merged in (a new step
        object replaces them), or None where there is none or the result would need too many bindings."""
        found = []
        for i in node.inputs:
            step = open_steps.get(storage(nodes, i).id)
            if step is not None and all(step is not f for f in found):
                found.append(step)
        step = next((f for f in found if isinstance(f, RowStep) and reads(node, f)), None)
        maps = [f for f in found if isinstance(f, MapStep) and reads(node, f)]
        if step is None and maps and row_reduction(node):  # the chain becomes the reduction's input
            if not node.shape[0]:
                return None
            group = maps.pop(0)
            step = RowStep(node.shape[0], group.size // node.shape[0], list(group.nodes))
            if step.cols == 1:  # one column: the chain's values are row values too
                step.row_values |= set(group.nodes)
        elif step is None and maps:
            step = maps.pop(0)
        if step is None:
            return None
        if isinstance(step, RowStep):
            trial = RowStep(step.rows, step.cols, list(step.nodes), set(step.row_values), dict(step.aliases))
        else:
            trial = MapStep(step.size, [], list(step.nodes), [])
        for other in maps:  # another map group of the same size joins too
            if isinstance(trial, MapStep) or other.size in (trial.rows, trial.rows * trial.cols):
                trial.nodes = sorted(set(trial.nodes) | set(other.nodes))
                if isinstance(trial, RowStep) and other.size == trial.rows:
                    trial.row_values |= set(other.nodes)
        if bindings(trial, node) > max_bindings:
            return None
        for m in trial.nodes:
            open_steps[m] = trial
        return trial

    def absorb(node: Node) -> ReduceStep | None:
        """Full reduction `node` with the chains that compute its inputs taken out of their open map groups,
        or None: no input is such a chain value, a chain value is needed elsewhere, or too many bindings."""
        aliases = {
            i: nodes[i].inputs[0]
            for i in node.inputs
            if nodes[i].view is not None and nodes[i].view.identity and nodes[i].size == storage(nodes, i).size
        }
        chain: set[int] = set()
        groups: list[MapStep] = []
        for i in node.inputs:
            group = open_steps.get(aliases.get(i, i))
            if not isinstance(group, MapStep):
                continue
            groups += [group] if all(group is not g for g in groups) else []
            members, stack = set(group.nodes), [aliases.get(i, i)]
            while stack:  # its ancestors in the group
                m = stack.pop()
                if m in members and m not in chain:
                    chain.add(m)
                    stack.extend(nodes[m].inputs)
        aliases = {i: b for i, b in aliases.items() if b in chain}
        inside = chain | set(aliases) | {node.id}
        if not chain or any(nodes[m].keep or not all(c in inside for c in used[m]) for m in inside - {node.id}):
            return None
        step = ReduceStep(nodes[node.inputs[0]].size, [], sorted(chain) + [node.id], [node.id], aliases)
        step.loads = loads(set(step.nodes), aliases)
        if 2 + len(step.loads) > max_bindings:  # the first pass binds tw_meta, the partials and the loads
            return None
        for group in groups:
            group.nodes = [m for m in group.nodes if m not in chain]
        for m in chain:
            open_steps.pop(m)
            nodes[m].fused_away = True
        node.fused_away = False
        return step

    for nid in pending:
        node = nodes[nid]
        if node.op is None:
            continue
        if fuse and full_reduction(node):
            step = absorb(node)
        else:
            step = target(node) if fuse and (node.op.elementwise or row_reduction(node)) else None
        for i in node.inputs:  # what it reads from a step it does not join is written by then
            other = open_steps.get(storage(nodes, i).id)
            if other is not None and other is not step:
                close(other)
        if isinstance(step, ReduceStep):
            steps.append(step)
            continue
        if step is None:
            if node.op.elementwise:
                step = MapStep(node.size, [], [], [])
            elif row_reduction(node):
                rows = node.shape[0]
                step = RowStep(rows, nodes[node.inputs[0]].size // rows if rows else 0, [])
            else:
                steps.append(OpStep(nid))
                continue
        step.nodes.append(nid)
        open_steps[nid] = step
        if isinstance(step, RowStep):
            step.aliases.update(_aliases(step, node))
            if row_level(node, step):
                step.row_values.add(nid)
        if not fuse:
            close(step)
    for step in {id(s): s for s in open_steps.values()}.values():
        close(step)
    return steps
