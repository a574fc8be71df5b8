"""Scans along rows (shaders/scan.wgsl): cumulative_sum and cumulative_prod of `rows` contiguous rows, in the
dtype the node computes in. Rows of up to BLOCK elements go several to a workgroup (a segmented scan: one
`scan` pass); a longer row three passes (each block's total, the row's prefixes of those, each block's scan
from its prefix): the input is read twice and the output written once, 3 words per element to a copy's 2."""

from __future__ import annotations

from functools import lru_cache

from ..graph import Node, OpStep, storage
from .caps import Caps
from .source import ONE_BITS, Dispatch, fill, fold, functions, grid_for, pack_meta, shader

BLOCK = 2048  # elements per workgroup (scan.wgsl's BLOCK: 256 threads x PER)


@lru_cache(maxsize=32)
def scan_source(combine: str, identity: str, scalar: str) -> str:
    """WGSL of one scan: its fold function, identity and scalar type (source.fold)."""
    return functions() + fill(shader("scan"), T=scalar, COMBINE=combine, IDENTITY=f"{scalar}({identity})")


def dispatches(step: OpStep, nodes: list[Node], caps: Caps) -> list[Dispatch]:
    """`scan` alone where rows fit a block (K of them to a workgroup; no elements: one workgroup that returns at
    once), else `reduce`, `carry` and `scan`. The input is read flat (the tensor layer gives a scan row-major
    input)."""
    node = nodes[step.node]
    rows = node.options.get("rows") or 1
    cols = node.size // rows if node.size else 0
    _, combine, identity, _, scalar = fold(node.op, node.dtype)
    source = scan_source(combine, identity, scalar)
    nb = max(-(-cols // BLOCK), 1)
    k = max(BLOCK // cols, 1) if cols else 1  # rows per block
    meta = pack_meta([rows if cols else 0, cols, nb, k, 0, 0, 0, ONE_BITS])
    src = storage(nodes, node.inputs[0]).id
    blocks = grid_for(-(-rows // k) * nb, caps.max_per_dim)
    scratch = 4 * max(rows * nb, 1)
    scan = Dispatch(source, "scan", ((1, "partials"), (2, src), (3, node.id)), blocks, meta, scratch)
    if nb == 1:
        return [scan]
    return [
        Dispatch(source, "reduce", ((1, "partials"), (2, src)), blocks, meta, scratch),
        Dispatch(source, "carry", ((1, "partials"),), grid_for(rows, caps.max_per_dim), meta, scratch),
        scan,
    ]
