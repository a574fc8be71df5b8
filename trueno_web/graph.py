"""The recorded graph of a batch (its nodes) and the Plan it runs in (planner.py makes it): map steps
(fused elementwise chains), row steps (reductions along rows with the elementwise ops around them),
reduce steps (a full reduction with the chain that feeds it), matmul steps (a product with the chain that
reads it) and op steps (one kernel each)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .dtypes import DType, float32
from .kinds import Kind
from .layout import View, contiguous_strides
from .op_row import Op


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
    into: int | None = None  # an op whose result goes into node `into`'s storage (an argument donated to it: jit)
    dtype: DType = float32  # of its elements (a view's is its base's)

    @property
    def size(self) -> int:
        return math.prod(self.shape)


@dataclass
class MapStep:
    """A fused elementwise chain: load `loads`, compute `nodes` in order, store `stores`; `cost`: the
    members' op costs summed (the planner bounds it)."""

    size: int
    loads: list[int]
    nodes: list[int]
    stores: list[int]
    cost: int = field(default=0, compare=False, repr=False)


@dataclass
class RowStep:
    """Reductions along rows fused with the elementwise ops around them (kernels/rows.py): `nodes` in
    order are element values (rows x cols, row-major) and row values (`row_values`: the reductions
    and elementwise ops on their results, one per row); `aliases` maps a view that broadcasts a row
    value along its row to that value. Loads, stores and cost as in MapStep."""

    rows: int
    cols: int
    nodes: list[int]
    row_values: set[int] = field(default_factory=set)
    aliases: dict[int, int] = field(default_factory=dict)
    loads: list[int] = field(default_factory=list)
    stores: list[int] = field(default_factory=list)
    cost: int = field(default=0, compare=False, repr=False)


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


@dataclass
class MatmulStep:
    """A matrix product (`node`) with the elementwise chain that reads it (`nodes`, in order, each of the
    product's size, reading the product and each other plainly, no view): the chain is computed as the
    product's tile is stored (kernels/matmul.py), so the product need not go to memory. `loads`: the chain's
    other inputs; `stores`: what something needs afterwards, the product among them where it is read
    elsewhere; `cost` as in MapStep. A product that nothing joins is an OpStep."""

    node: int
    size: int
    nodes: list[int] = field(default_factory=list)
    loads: list[int] = field(default_factory=list)
    stores: list[int] = field(default_factory=list)
    cost: int = field(default=0, compare=False, repr=False)

    def chain(self) -> MapStep:
        """The chain alone as a map step reading the product as its first load (CPU executors run the
        product, then it; kernels/matmul.py generates the epilogue from it)."""
        return MapStep(self.size, [self.node, *self.loads], self.nodes, self.stores)


Step = MapStep | RowStep | ReduceStep | MatmulStep | OpStep


class Key(tuple):
    """A graph's structure as a tuple that hashes once: the plan cache and GpuExecutor's dispatch cache
    both look it up on every execute, and a graph's key holds every node."""

    def __new__(cls, items: tuple):
        key = super().__new__(cls, items)
        key.hash = tuple.__hash__(key)
        return key

    def __hash__(self) -> int:
        return self.hash


@dataclass(frozen=True, eq=False)
class Plan:
    """What planning gives an execute: `steps` in order; `fused_away`, the pending nodes whose values are
    never written to memory (the batch marks them); `key`, everything planning read of the graph (an
    equal key gets this plan again, and the GPU executor its kernels)."""

    steps: tuple[Step, ...]
    fused_away: frozenset[int]
    key: tuple


def storage(nodes: list[Node], i: int) -> Node:
    """The node whose buffer holds node i's data (its base, for a view)."""
    node = nodes[i]
    return nodes[node.inputs[0]] if node.view is not None else node


def function(node: Node, nodes: list[Node]) -> str:
    """The kernel function of an elementwise node for its dtypes (ops.Op.function): it computes in its last
    input's dtype (a where's values; a generator's its own, the first of its row's dtypes)."""
    return node.op.function(nodes[node.inputs[-1]].dtype if node.inputs else node.dtype, node.dtype)


def template(step: Step, nodes: list[Node]) -> str:
    """The kernel template a step runs on (the key of every backend's table)."""
    if isinstance(step, (OpStep, ReduceStep, MatmulStep)):
        return nodes[step.node].op.row.template
    return "map" if isinstance(step, MapStep) else "rows"


def computes(step: Step) -> list[int]:
    """The nodes a step computes, in order."""
    if isinstance(step, OpStep):
        return [step.node]
    return [step.node, *step.nodes] if isinstance(step, MatmulStep) else step.nodes


def reads(step: Step, nodes: list[Node]) -> list[int]:
    """The nodes a step reads from memory (views among them, as the step reads them)."""
    if isinstance(step, OpStep):
        return list(nodes[step.node].inputs)
    if isinstance(step, MatmulStep):
        return [*nodes[step.node].inputs, *step.loads]
    return step.loads


def row_reduction(node: Node) -> bool:
    """A reduction along rows (the option rows=R): it runs as a RowStep."""
    return node.op is not None and node.op.row.template == "reduce" and node.options.get("rows") is not None


def gathers(node: Node) -> bool:
    """A gather (take): it reads its first input whole, at indices it computes."""
    return node.op.kind == Kind.GATHER


def map_only(node: Node) -> bool:
    """A generator or a gather: only the map kernel computes it (from the element index)."""
    return node.op.generator or gathers(node)


def halves(node: Node, nodes: list[Node]) -> bool:
    """Does `node` read or write float16 storage (an astype from or to it)? Only the map kernel does."""
    return node.dtype.itemsize == 2 or any(nodes[i].dtype.itemsize == 2 for i in node.inputs)


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


def merged(step: MapStep | RowStep, maps: list[MapStep]) -> MapStep | RowStep:
    """A copy of open `step` with the map groups `maps` joined to it (those of its size, or for a row
    step of its rows (as row values) or of its cells)."""
    if isinstance(step, RowStep):
        trial = RowStep(step.rows, step.cols, list(step.nodes), set(step.row_values), dict(step.aliases))
    else:
        trial = MapStep(step.size, [], list(step.nodes), [])
    trial.cost = step.cost
    for other in maps:
        if isinstance(trial, MapStep) or other.size in (trial.rows, trial.rows * trial.cols):
            trial.nodes = sorted(set(trial.nodes) | set(other.nodes))
            trial.cost += other.cost
            if isinstance(trial, RowStep) and other.size == trial.rows:
                trial.row_values |= set(other.nodes)
    return trial
