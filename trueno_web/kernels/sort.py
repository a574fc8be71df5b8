"""Sort and argsort along the last axis (shaders/sort.wgsl), searchsorted (shaders/sort_search.wgsl).

A row padded to P (a power of two) of at most BLOCK pairs sorts in workgroup memory, BLOCK / P rows per
workgroup, in one dispatch. A longer row: its blocks sorted in workgroup memory, then for each size
k = 2 BLOCK ... P the network's steps of distance >= BLOCK across the row, two a dispatch (`sort_across2`,
four pairs a thread; `sort_across` where one is left), and those below BLOCK in workgroup memory
(`sort_merge`; `sort_last` for k = P writes the result): a multi-pass global bitonic merge of (key, index)
pairs in the scratch buffer, 8 P bytes a row. Rows run in chunks that keep the scratch within one binding."""

from __future__ import annotations

from functools import cache

from ..errors import LimitError
from ..graph import Node, OpStep
from ..sort_kinds import key_kind
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
    if 8 * p > caps.binding_limit:
        raise LimitError(
            f"sort: a row of {n} elements needs {8 * p} bytes of scratch, past this GPU's binding limit of "
            f"{caps.binding_limit}; sort shorter rows (reshape) or use the numpy or wasm-simd backend"
        )
    chunk = min(rows, caps.binding_limit // (8 * p))
    out = []
    for row0 in range(0, rows, chunk):
        count = min(chunk, rows - row0)
        blocks = grid_for(count * (p // BLOCK), caps.max_per_dim)
        pairs = grid_for(-(-count * (p // 2) // WORKGROUP), caps.max_per_dim)
        quads = grid_for(-(-count * (p // 4) // WORKGROUP), caps.max_per_dim)

        def meta(k: int = 0, d: int = 0) -> bytes:
            return pack_meta([count, n, p, flags, k, d, row0, 0])

        scratch = 8 * p * count
        out.append(Dispatch(sort_source(), "sort_first", ((1, src), (3, "partials")), blocks, meta(), scratch))
        k = 2 * BLOCK
        while k <= p:
            d = 0  # the flip, then half-cleaners of distance k/4 ... BLOCK: two a pass where both reach BLOCK
            while d == 0 or d >= BLOCK:
                after = k // 4 if d == 0 else d // 2  # the distance of the step after d's
                if after >= BLOCK:
                    out.append(Dispatch(sort_source(), "sort_across2", ((3, "partials"),), quads, meta(k, d), scratch))
                    d = after // 2
                else:
                    out.append(Dispatch(sort_source(), "sort_across", ((3, "partials"),), pairs, meta(k, d), scratch))
                    d = after
            entry = "sort_last" if k == p else "sort_merge"
            binds = (*io, (3, "partials")) if k == p else ((3, "partials"),)
            out.append(Dispatch(sort_source(), entry, binds, blocks, meta(k), scratch))
            k *= 2
    return out


def search_dispatches(step: OpStep, nodes: list[Node], caps: Caps) -> list[Dispatch]:
    node = nodes[step.node]
    x1, x2 = node.inputs
    meta = pack_meta([node.size, nodes[x1].size, key_kind(nodes[x1].dtype), int(node.options["side"] == "right")])
    binds = ((1, x1), (2, x2), (3, node.id))
    return [Dispatch(search_source(), "main", binds, grid_for(-(-node.size // WORKGROUP), caps.max_per_dim), meta)]
