"""Sort and argsort along the last axis (shaders/sort.wgsl), searchsorted (shaders/sort_search.wgsl).

A row padded to P (a power of two) of at most BLOCK pairs sorts in workgroup memory, BLOCK / P rows per
workgroup, in one dispatch: a bitonic network over (key, index) pairs. A longer row: kernels/sort_radix.py's
LSD radix sort, whose passes over memory do not grow with the row's length as a global merge's do."""

from __future__ import annotations

from functools import cache

from ..graph import Node, OpStep
from ..sort_kinds import key_kind
from . import sort_radix
from .caps import Caps
from .source import WORKGROUP, Dispatch, grid_for, pack_meta, shader

BLOCK = 2048  # pairs sorted in workgroup memory: 16 KiB, WebGPU's default workgroup storage


@cache
def sort_source() -> str:
    return shader("sort_key") + shader("sort")


@cache
def search_source() -> str:
    return shader("sort_key") + shader("sort_search")


def dispatches(step: OpStep, nodes: list[Node], caps: Caps) -> list[Dispatch]:
    node = nodes[step.node]
    src = node.inputs[0]
    n = node.shape[-1]
    rows, p = (node.size // n if node.size else 0), 1 << max(n - 1, 0).bit_length()
    flags = key_kind(nodes[src].dtype) | node.options["descending"] << 2 | (node.op.name == "argsort") << 3
    io = ((1, src), (2, node.id))
    if p <= BLOCK or not rows:  # (no rows: one workgroup that finds none, however long a row would be)
        per = max(BLOCK // p, 1)
        meta = pack_meta([rows, n, p, flags, 0, 0, 0, per])
        return [Dispatch(sort_source(), "sort_small", io, grid_for(-(-rows // per), caps.max_per_dim), meta)]
    return sort_radix.dispatches(src, node.id, rows, n, flags, caps)


def search_dispatches(step: OpStep, nodes: list[Node], caps: Caps) -> list[Dispatch]:
    node = nodes[step.node]
    x1, x2 = node.inputs
    meta = pack_meta([node.size, nodes[x1].size, key_kind(nodes[x1].dtype), int(node.options["side"] == "right")])
    binds = ((1, x1), (2, x2), (3, node.id))
    return [Dispatch(search_source(), "main", binds, grid_for(-(-node.size // WORKGROUP), caps.max_per_dim), meta)]
