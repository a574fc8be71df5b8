"""The recorded graph of a batch and its plan: elementwise chains fused into map steps.

Planning (per `execute()`, over the nodes queued since the last one): nodes run in the order they
were queued. An elementwise node joins the open map group of any elementwise input of the same size;
a group closes when a non-elementwise op consumes one of its values, when an op reads one of its values
through a view (views are not computed: a kernel reads its base's storage through index arithmetic),
or when one more node would need more storage bindings than the device has. A group writes to memory only the values something needs
afterwards: values consumed outside it, values nothing consumes (results) and values marked `keep`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .ops import Op


@dataclass(frozen=True)
class View:
    """How a view node reads its base's flat storage: element (i0, i1, ...) of `shape` is at
    offset + i0 * strides[0] + i1 * strides[1] + ... (in elements; a stride may be 0 or negative).

    `mask` (padding, concatenation): per dim a valid range [lo, hi); an element outside any of them
    reads as 0.0 and its address means nothing (it may lie outside the storage). None: all valid (a
    mask that covers the whole shape is dropped, so equal views compare equal)."""

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int = 0
    mask: tuple[tuple[int, int], ...] | None = None

    def __post_init__(self):
        if self.mask is not None:
            mask = tuple((max(0, int(lo)), min(d, int(hi))) for (lo, hi), d in zip(self.mask, self.shape))
            if len(mask) != len(self.shape):
                raise ValueError(f"a view mask needs one (lo, hi) per dimension of {self.shape}; got {self.mask}")
            if any(lo >= hi for lo, hi in mask):  # nothing valid: one canonical form
                mask = tuple((0, 0) for _ in mask)
            full = all(lo == 0 and hi == d for (lo, hi), d in zip(mask, self.shape))
            object.__setattr__(self, "mask", None if full else mask)

    @property
    def identity(self) -> bool:
        """Row-major from the start of the storage: a kernel reads it as a plain flat array."""
        return self.mask is None and self.offset == 0 and self.strides == contiguous_strides(self.shape, self.strides)

    def reach(self) -> tuple[int, int] | None:
        """(lowest, highest) storage element a valid element reads; None where none is valid."""
        bounds = self.mask or tuple((0, d) for d in self.shape)
        if any(lo >= hi for lo, hi in bounds):
            return None
        lo = self.offset + sum(s * (h - 1 if s < 0 else l) for (l, h), s in zip(bounds, self.strides))
        hi = self.offset + sum(s * (h - 1 if s > 0 else l) for (l, h), s in zip(bounds, self.strides))
        return lo, hi


def contiguous_strides(shape: tuple[int, ...], like: tuple[int, ...] | None = None) -> tuple[int, ...]:
    """Row-major strides of `shape`; where `like` is given, dims of size 1 keep its stride (any is valid)."""
    out, step = [], 1
    for j in range(len(shape) - 1, -1, -1):
        out.append(like[j] if like is not None and shape[j] == 1 else step)
        step *= shape[j]
    return tuple(reversed(out))


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
class OpStep:
    """A reduction, softmax, matmul or convolution: one node, its own kernel."""

    node: int


def storage(nodes: list[Node], i: int) -> Node:
    """The node whose buffer holds node i's data (its base, for a view)."""
    node = nodes[i]
    return nodes[node.inputs[0]] if node.view is not None else node


def template(step: MapStep | OpStep, nodes: list[Node]) -> str:
    """The kernel template a step runs on (the key of every backend's table)."""
    return "map" if isinstance(step, MapStep) else nodes[step.node].op.row.template


def consumers(nodes: list[Node]) -> dict[int, list[int]]:
    """node id -> ids of the nodes that read it."""
    used: dict[int, list[int]] = {n.id: [] for n in nodes}
    for n in nodes:
        for i in n.inputs:
            used[i].append(n.id)
    return used


def plan(nodes: list[Node], pending: list[int], fuse: bool, max_bindings: int) -> list[MapStep | OpStep]:
    """Steps that compute the pending op nodes; see the module docstring for the rules."""
    used = consumers(nodes)
    steps: list[MapStep | OpStep] = []
    open_groups: dict[int, MapStep] = {}  # member node id -> its open group

    def stored(m: int, members: set[int]) -> bool:
        """Does member m of a group go to memory: kept, a result, or needed outside the group?"""
        return nodes[m].keep or not used[m] or any(c not in members for c in used[m])

    def loads(members: set[int]) -> list[int]:
        return list(dict.fromkeys(i for m in sorted(members) for i in nodes[m].inputs if i not in members))

    def close(group: MapStep) -> None:
        members = set(group.nodes)
        group.stores = [m for m in group.nodes if stored(m, members)]
        group.loads = loads(members)
        for m in members:
            nodes[m].fused_away = m not in group.stores
            open_groups.pop(m, None)
        steps.append(group)

    def bindings(group: MapStep, extra: Node) -> int:
        members = set(group.nodes) | {extra.id}
        return 1 + len(loads(members)) + sum(stored(m, members) for m in members)

    for nid in pending:
        node = nodes[nid]
        if node.op is None:
            continue
        for v in [i for i in node.inputs if nodes[i].view is not None and nodes[i].inputs[0] in open_groups]:
            close(open_groups[nodes[v].inputs[0]])  # a view reads its base from memory, written by then
        if not node.op.elementwise:
            for g in {id(open_groups[i]): open_groups[i] for i in node.inputs if i in open_groups}.values():
                close(g)
            steps.append(OpStep(nid))
            continue
        joinable = [] if not fuse else [
            open_groups[i] for i in node.inputs if i in open_groups and open_groups[i].size == node.size
        ]
        group = joinable[0] if joinable else None
        for other in joinable[1:]:
            if other is not group:
                group.nodes = sorted(set(group.nodes) | set(other.nodes))
                for m in other.nodes:
                    open_groups[m] = group
        if group is not None and bindings(group, node) > max_bindings:
            close(group)
            group = None
        if group is None:
            group = MapStep(node.size, [], [], [])
        group.nodes.append(nid)
        open_groups[nid] = group
        if not fuse:
            close(group)
    for g in {id(g): g for g in open_groups.values()}.values():
        close(g)
    return steps
