"""Planning a batch: the steps that compute the nodes queued since the last `execute()`, elementwise
chains fused into map steps, reductions along rows fused with the elementwise ops around them into row
steps, full reductions with the chains that feed them into reduce steps, the elementwise chain that reads a
matrix product into its matmul step (an epilogue).

The rules. Nodes run in the order they were queued. An elementwise node joins the open step of an input
of the same size. A reduction along rows (option rows=R) opens a row step, or joins one of the same rows
x cols, or turns the open map group of its input into one (the chain is computed as the reduction reads
it). Elementwise nodes join a row step as element values (rows x cols) or as row values (one per row, on
its reductions' results); an element value may read a row value broadcast along its row (a view the step
resolves). A full reduction takes the chains that compute its inputs out of their open map groups into a
ReduceStep (each input's ancestors there; the rest of a group stays open), unless a value of those chains
is needed elsewhere (kept, or read outside them): then the group runs as a map step that writes it, as
unfused. A step closes when something it does not hold reads one of its values (an op of another kind, a
view it cannot resolve, a node of another size), or when one more node would need more storage bindings
than the device has, or one more node would pass the budget of op costs (`budget`, the sum of the members'
`Op.cost`: a long chain runs as several kernels); whatever reads a step's value therefore runs after it. A step writes to memory only
the values something needs afterwards: values consumed outside it, values nothing consumes (results) and
values marked `keep`. A generator (no inputs: a tw.random draw) starts a map step that what reads it
joins; a group holding one, or a float16 conversion (an astype from or to float16: only the map kernel
reads and writes float16 storage), stays a map step (row and reduce steps load its values). A gather (take) is a
member that reads its data input whole at indices computed from its index input (an element value): it
never joins the step that computes its data; it joins a row step as an element value only, and no reduce
step (its group stays a map step there, as a generator's). A matrix product opens a matmul step: an elementwise
node of its size that reads the product or the chain's values plainly (no view) joins it, within `epilogue` op
costs, unless it is a generator, a gather or a float16 conversion; a product nothing joins runs as an op step.

Planning only reads the nodes: what it fuses away comes back in the Plan, for the batch to mark.
"""

from __future__ import annotations

from .gcpause import collector_paused
from .graph import (
    Key,
    MapStep,
    MatmulStep,
    Node,
    OpStep,
    Plan,
    ReduceStep,
    RowStep,
    Step,
    consumers,
    full_reduction,
    gathers,
    halves,
    map_only,
    merged,
    row_broadcast,
    row_reduction,
    storage,
)
from .kernels.caps import EPILOGUE_BUDGET, FUSE_BUDGET

PLANS: dict[Key, Plan] = {}  # graph structure -> its plan; at most PLANS_KEPT, oldest out
PLANS_KEPT = 256


def structure(
    nodes: list[Node],
    pending: list[int],
    fuse: bool,
    max_bindings: int,
    budget: int = FUSE_BUDGET,
    epilogue: int = EPILOGUE_BUDGET,
) -> Key:
    """Everything planning reads of a graph, and the dtypes (the GPU executor's kernels depend on them): the
    plan cache's key (built on every execute: kept lean)."""
    return Key(
        (
            fuse,
            max_bindings,
            budget,
            epilogue,
            tuple(pending),
            tuple(
                (n.op and n.op.name, n.inputs, n.shape, n.view, n.keep, n.into, n.options.get("rows"), n.dtype.name)
                for n in nodes
            ),
        )
    )


def plan(
    nodes: list[Node],
    pending: list[int],
    fuse: bool,
    max_bindings: int,
    budget: int = FUSE_BUDGET,
    epilogue: int = EPILOGUE_BUDGET,
) -> Plan:
    """The plan of the pending op nodes; see the module docstring for the rules. A graph of the same
    structure as one planned before (a loop, a model's forward pass) gets that Plan again."""
    with collector_paused():
        key = structure(nodes, pending, fuse, max_bindings, budget, epilogue)
        hit = PLANS.get(key)
        if hit is not None:
            return hit
        planner = Planner(nodes, fuse, max_bindings, budget, epilogue)
        for nid in pending:
            planner.add(nodes[nid])
        planner.finish()
    made = Plan(tuple(planner.steps), frozenset(planner.fused_away), key)
    if len(PLANS) >= PLANS_KEPT:
        del PLANS[next(iter(PLANS))]
    PLANS[key] = made
    return made


def row_level(node: Node, step: RowStep) -> bool:
    """Is `node` (joining `step`) a row value rather than an element value? (With one column, every
    elementwise node is a row value.)"""
    return row_reduction(node) or node.size == step.rows


class Planner:
    """One planning pass: `add` each pending node in order, then `finish`; `steps` then holds the plan's
    steps and `fused_away` the members no step stores. The open steps (map and row steps that nodes may
    still join) are kept by member; the nodes are only read."""

    def __init__(
        self,
        nodes: list[Node],
        fuse: bool,
        max_bindings: int,
        budget: int = FUSE_BUDGET,
        epilogue: int = EPILOGUE_BUDGET,
    ):
        self.nodes = nodes
        self.fuse = fuse
        self.max_bindings = max_bindings
        self.budget = budget
        self.epilogue_budget = epilogue
        self.used = consumers(nodes)
        self.steps: list[Step] = []
        self.open: dict[int, MapStep | RowStep] = {}  # member node id -> its open step
        self.counts: dict[int, list] = {}  # id(open map step) -> [it, members, loads, stored members]
        self.fused_away: set[int] = set()

    # ------------------------------------------------------------ the pass

    def add(self, node: Node) -> None:
        """Plan one node: join an open step, absorb its chains, or start a step; close what it reads outside."""
        if node.op is None:
            return
        if self.fuse and full_reduction(node):
            step = self.absorb(node)
        else:
            step = self.target(node) if self.fuse and (node.op.row.mapped or row_reduction(node)) else None
        for i in node.inputs:  # what it reads from a step it does not join is written by then
            other = self.open.get(storage(self.nodes, i).id)
            if other is not None and other is not step:
                self.close(other)
        if step is None:
            step = self.start(node)
        if isinstance(step, (ReduceStep, OpStep)):
            self.steps.append(step)
            return
        if isinstance(step, MatmulStep) and step.node == node.id:  # a product: open for its epilogue
            self.open[node.id] = step
            if not self.fuse:
                self.close(step)
            return
        if isinstance(step, MapStep):
            self.join(step, node, commit=True)
        step.nodes.append(node.id)
        step.cost += node.op.cost
        self.open[node.id] = step
        if isinstance(step, RowStep):
            step.aliases.update(self.aliases(step, node))
            if row_level(node, step):
                step.row_values.add(node.id)
        if not self.fuse:
            self.close(step)

    def finish(self) -> None:
        """Close the steps still open, in the order their members were queued."""
        for step in {id(s): s for s in self.open.values()}.values():
            self.close(step)

    def start(self, node: Node) -> Step:
        """A step of its own for a node that joins none: an open map, row or matmul step, or an OpStep."""
        if node.op.row.mapped:
            return MapStep(node.size, [], [], [])
        if row_reduction(node):
            rows = node.shape[0]
            return RowStep(rows, self.nodes[node.inputs[0]].size // rows if rows else 0, [])
        if node.op.row.template == "matmul":
            return MatmulStep(node.id, node.size)
        return OpStep(node.id)

    def close(self, step: MapStep | RowStep | MatmulStep) -> None:
        """Fix what an open step loads and stores, append it to the plan, and note the values it fuses away."""
        if isinstance(step, MatmulStep):
            self.close_product(step)
            return
        if isinstance(step, RowStep) and not any(row_reduction(self.nodes[m]) for m in step.nodes):
            step = MapStep(step.rows * step.cols, [], step.nodes, [])  # no reduction joined it after all
        members, aliases = set(step.nodes), step.aliases if isinstance(step, RowStep) else {}
        step.stores = [m for m in step.nodes if self.stored(m, members, aliases)]
        step.loads = self.loads(members, aliases)
        for m in members:
            if m not in step.stores:
                self.fused_away.add(m)
            self.open.pop(m, None)
        self.counts.pop(id(step), None)
        self.steps.append(step)

    def close_product(self, step: MatmulStep) -> None:
        """close() of a matmul step: an OpStep where no chain joined it."""
        members = {step.node, *step.nodes}
        for m in members:
            self.open.pop(m, None)
        if not step.nodes:
            self.steps.append(OpStep(step.node))
            return
        step.stores = [m for m in (step.node, *step.nodes) if self.stored(m, members, {})]
        step.loads = self.chain_loads(step.node, step.nodes)
        self.fused_away |= members - set(step.stores)
        self.steps.append(step)

    def epilogue(self, node: Node, step: MatmulStep) -> bool:
        """Can elementwise `node` join matmul step `step` (see the module docstring), within the budgets (the
        epilogue's, kernels/caps.py EPILOGUE_BUDGET: the chain is inlined once per element a thread stores) and
        the bindings (tw_meta, A, B, the chain's loads and stores)?"""
        nodes, members = self.nodes, {step.node, *step.nodes}
        if node.size != step.size or map_only(node) or halves(node, nodes):
            return False
        if any(storage(nodes, i).id in members and nodes[i].view is not None for i in node.inputs):
            return False
        members.add(node.id)
        stores = sum(self.stored(m, members, {}) for m in members)
        fits = 3 + len(self.chain_loads(step.node, [*step.nodes, node.id])) + stores <= self.max_bindings
        return fits and step.cost + node.op.cost <= min(self.budget, self.epilogue_budget)

    def chain_loads(self, product: int, chain: list[int]) -> list[int]:
        """What a product's chain reads from memory: its members' inputs other than the product and themselves."""
        return [i for i in self.loads(set(chain), {}) if i != product]

    # ------------------------------------------------------------ what a step holds, loads and stores

    def inside(self, c: int, members: set[int], aliases: dict[int, int]) -> bool:
        """Is consumer c part of the step: a member, or a resolved view that only members read?"""
        return c in members or (c in aliases and all(self.inside(x, members, aliases) for x in self.used[c]))

    def stored(self, m: int, members: set[int], aliases: dict[int, int]) -> bool:
        """Does member m go to memory: kept, a result, or needed outside its step?"""
        node, used = self.nodes[m], self.used[m]
        return node.keep or not used or not all(self.inside(c, members, aliases) for c in used)

    def loads(self, members: set[int], aliases: dict[int, int]) -> list[int]:
        """The inputs a step reads from memory: its members' inputs that are neither members nor resolved."""
        return list(
            dict.fromkeys(
                i for m in sorted(members) for i in self.nodes[m].inputs if i not in members and i not in aliases
            )
        )

    def bindings(self, step: MapStep | RowStep, extra: Node) -> int:
        """Storage bindings of `step` with `extra` joined: parameters, loads and stores."""
        members, aliases = set(step.nodes) | {extra.id}, {}
        if isinstance(step, RowStep):
            aliases = {**step.aliases, **self.aliases(step, extra)}
        return 1 + len(self.loads(members, aliases)) + sum(self.stored(m, members, aliases) for m in members)

    def counted(self, step: MapStep) -> list:
        """[step, members, loads, how many members are stored] of an open map step, kept as nodes join: a
        node joining a long chain costs the same as one joining a short one."""
        got = self.counts.get(id(step))
        if got is None or got[0] is not step:
            members = set(step.nodes)
            stored = sum(self.stored(m, members, {}) for m in members)
            got = self.counts[id(step)] = [step, members, set(self.loads(members, {})), stored]
        return got

    def join(self, step: MapStep, node: Node, commit: bool = False) -> int:
        """Storage bindings of map `step` with `node` joined (as `bindings`, from the counts); `commit`:
        it joins, update the counts."""
        _, members, loads, stored = self.counted(step)
        new = {i for i in node.inputs if i not in members and i not in loads}
        freed = 0  # members stored only for `node`, which joins them
        for i in {i for i in node.inputs if i in members}:
            n, used = self.nodes[i], self.used[i]
            freed += not n.keep and bool(used) and all(c in members or c == node.id for c in used)
        if commit:
            members.add(node.id)
            loads |= new
            self.counts[id(step)][3] = stored + 1 - freed
        return 2 + len(loads) + len(new) + stored - freed  # tw_meta, loads, stores (`node`'s own counted)

    def aliases(self, step: RowStep, node: Node) -> dict[int, int]:
        """The views `node` reads that a RowStep resolves to one of its members: a row value broadcast
        along rows (read by an element value), or the same data in another shape."""
        out = {}
        for i in node.inputs:
            view, base = self.nodes[i].view, self.nodes[i].inputs[0] if self.nodes[i].inputs else None
            if view is None or base not in step.nodes:
                continue
            computes_row_value = row_level(node, step) and not row_reduction(node)
            same_size = self.nodes[i].size == self.nodes[base].size
            if view.identity and same_size and (base in step.row_values) == computes_row_value:
                out[i] = base
            elif base in step.row_values and not computes_row_value and row_broadcast(view, step.cols):
                out[i] = base
        return out

    # ------------------------------------------------------------ joining an open step

    def reads(self, node: Node, step: MapStep | RowStep) -> bool:
        """Can `node` join `step`: is it of the step's size, and does it read the step's members
        directly or through views the step resolves (RowStep aliases)?"""
        nodes = self.nodes
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
            alias = self.aliases(step, node)
        members = self.counted(step)[1] if isinstance(step, MapStep) else set(step.nodes)
        if gathers(node) and (
            storage(nodes, node.inputs[0]).id in members or (isinstance(step, RowStep) and row_level(node, step))
        ):
            return False  # a gather reads its data whole from memory, as an element value
        if isinstance(step, RowStep) and halves(node, nodes):
            return False  # float16 storage: the map kernel's alone
        return ok and all(
            i in alias or storage(nodes, i).id not in members or nodes[i].view is None for i in node.inputs
        )

    def open_inputs(self, node: Node) -> list[MapStep | RowStep]:
        """The open steps that hold the storage of `node`'s inputs, each once, in input order."""
        found = []
        for i in node.inputs:
            step = self.open.get(storage(self.nodes, i).id)
            if step is not None and all(step is not f for f in found):
                found.append(step)
        return found

    def target(self, node: Node) -> MapStep | RowStep | None:
        """The open step `node` joins, with the same-size map groups it also reads merged in (a new step
        object replaces them), or None where there is none or the result would need too many bindings."""
        found = self.open_inputs(node)
        if not row_reduction(node):
            product = next((f for f in found if isinstance(f, MatmulStep) and self.epilogue(node, f)), None)
            if product is not None:
                return product
        step = next((f for f in found if isinstance(f, RowStep) and self.reads(node, f)), None)
        maps = [f for f in found if isinstance(f, MapStep) and self.reads(node, f)]
        if step is not None or row_reduction(node):  # a generator's group stays a map step (see generates)
            maps = [f for f in maps if not self.generates(f)]
        if step is None and maps and row_reduction(node):  # the chain becomes the reduction's input
            if not node.shape[0]:
                return None
            group = maps.pop(0)
            step = RowStep(node.shape[0], group.size // node.shape[0], list(group.nodes), cost=group.cost)
            if step.cols == 1:  # one column: the chain's values are row values too
                if self.gathering(group):
                    return None
                step.row_values |= set(group.nodes)
        elif step is None and maps:
            step = maps.pop(0)
            if not maps and not row_reduction(node):  # joined in place: counted without copies
                fits = step.cost + node.op.cost <= self.budget and self.join(step, node) <= self.max_bindings
                return step if fits else None
        if step is None:
            return None
        if isinstance(step, RowStep):  # a gather joins a row step as an element value only
            cells = step.rows * step.cols
            maps = [f for f in maps if not self.gathering(f) or (f.size == cells and step.cols > 1)]
        trial = merged(step, maps)
        if trial.cost + node.op.cost > self.budget or self.bindings(trial, node) > self.max_bindings:
            return None
        for m in trial.nodes:
            self.open[m] = trial
        return trial

    def generates(self, step: MapStep) -> bool:
        """Does a map group hold a generator (a tw.random draw) or a float16 conversion? A generator computes
        its values from the element index, and float16 storage is read and written two halves to a word,
        both of which only the map kernel does: such a group never becomes part of a row or reduce step
        (it runs as a map step first and they load its values)."""
        return any(self.nodes[m].op.generator or halves(self.nodes[m], self.nodes) for m in step.nodes)

    def gathering(self, step: MapStep) -> bool:
        """Does a map group hold a gather (take)? It joins a row step as element values only (the row kernel
        reads its data at the index it computes; kernels/rows.py), and no reduce step."""
        return any(gathers(self.nodes[m]) for m in step.nodes)

    # ------------------------------------------------------------ full reductions

    def chains(self, node: Node) -> tuple[set[int], list[MapStep], dict[int, int]]:
        """What full reduction `node` could absorb: its inputs' ancestors in open map groups, those groups,
        and the inputs that are same-size row-major views of such ancestors (view -> its base)."""
        nodes = self.nodes
        aliases = {
            i: nodes[i].inputs[0]
            for i in node.inputs
            if nodes[i].view is not None and nodes[i].view.identity and nodes[i].size == storage(nodes, i).size
        }
        chain: set[int] = set()
        groups: list[MapStep] = []
        for i in node.inputs:
            group = self.open.get(aliases.get(i, i))
            if not isinstance(group, MapStep):
                continue
            groups += [group] if all(group is not g for g in groups) else []
            members, stack = set(group.nodes), [aliases.get(i, i)]
            while stack:  # its ancestors in the group
                m = stack.pop()
                if m in members and m not in chain:
                    chain.add(m)
                    stack.extend(nodes[m].inputs)
        return chain, groups, {i: b for i, b in aliases.items() if b in chain}

    def absorb(self, node: Node) -> ReduceStep | None:
        """Full reduction `node` with the chains that compute its inputs taken out of their open map groups,
        or None: no input is such a chain value, a chain value is needed elsewhere, or too many bindings."""
        chain, groups, aliases = self.chains(node)
        inside = chain | set(aliases) | {node.id}
        if (
            not chain
            or any(map_only(self.nodes[m]) or halves(self.nodes[m], self.nodes) for m in chain)
            or any(self.nodes[m].keep or not all(c in inside for c in self.used[m]) for m in inside - {node.id})
        ):
            return None
        step = ReduceStep(self.nodes[node.inputs[0]].size, [], sorted(chain) + [node.id], [node.id], aliases)
        step.loads = self.loads(set(step.nodes), aliases)
        if 2 + len(step.loads) > self.max_bindings:  # the first pass binds tw_meta, the partials and the loads
            return None
        for group in groups:
            group.nodes = [m for m in group.nodes if m not in chain]
            self.counts.pop(id(group), None)
            group.cost = sum(self.nodes[m].op.cost for m in group.nodes)
        for m in chain:
            self.open.pop(m)
        self.fused_away |= chain
        return step
