"""WGSL source for each plan step, from the shader set in `shaders/` and the op catalog.

A kernel's text depends only on the structure of its step (which functions, which operands), never on
scalar values or sizes: those travel in the `tw_meta` buffer. So the pipeline cache stays small and no
user value can make an invalid shader.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from .graph import MapStep, Node, OpStep

WORKGROUP = 256
REDUCE_MAX_PARTIALS = 1024
META_WORDS = 8  # u32 slots before the scalar parameters
TILE = 64  # matmul tile edge (shaders/matmul.wgsl)


@lru_cache(maxsize=None)
def shader(name: str) -> str:
    """Text of shaders/<name>.wgsl: from the installed wheel, or the source checkout."""
    packaged = resources.files("trueno_web").joinpath("shaders", f"{name}.wgsl")
    if packaged.is_file():
        return packaged.read_text()
    return (Path(__file__).resolve().parent.parent / "shaders" / f"{name}.wgsl").read_text()


@dataclass(frozen=True)
class Dispatch:
    """One compute dispatch, backend-neutral: bindings name node ids or the scratch buffers."""

    source: str
    entry: str
    bindings: tuple[tuple[int, object], ...]  # (binding index, node id | "partials")
    grid: tuple[int, int]
    meta: bytes


def pack_meta(words: list[int], params: tuple[float, ...] = ()) -> bytes:
    """Counts as u32, then scalar parameters as f32 bits (NaN and Inf travel as data)."""
    words = (words + [0] * META_WORDS)[:META_WORDS]
    return struct.pack(f"<{META_WORDS}I{len(params)}f", *words, *params)


def grid_for(groups: int, max_per_dim: int = 65535) -> tuple[int, int]:
    """A 2-D grid of at least `groups` workgroups (past 65535 in one dimension)."""
    groups = max(groups, 1)
    if groups <= max_per_dim:
        return (groups, 1)
    return (max_per_dim, -(-groups // max_per_dim))


def _map_source(step: MapStep, nodes: list[Node]) -> tuple[str, tuple[float, ...]]:
    names = {nid: f"in{j}" for j, nid in enumerate(step.loads)}
    decls = [f"@group(0) @binding({j + 1}) var<storage, read> in{j}: array<f32>;" for j in range(len(step.loads))]
    body = [f"    let v_{names[nid]} = {names[nid]}[i];" for nid in step.loads]
    values = {nid: f"v_{names[nid]}" for nid in step.loads}
    params: list[float] = []
    for k, nid in enumerate(step.nodes):
        node = nodes[nid]
        args = [values[i] for i in node.inputs]
        for value in node.params:
            args.append(f"tw_param({len(params)}u)")
            params.append(value)
        values[nid] = f"t{k}"
        body.append(f"    let t{k} = {node.op.wgsl}({', '.join(args)});")
    base = len(step.loads) + 1
    for j, nid in enumerate(step.stores):
        decls.append(f"@group(0) @binding({base + j}) var<storage, read_write> out{j}: array<f32>;")
        body.append(f"    out{j}[i] = {values[nid]};")
    text = shader("functions") + shader("map").replace("{{BINDINGS}}", "\n".join(decls)).replace(
        "{{BODY}}", "\n".join(body)
    )
    return text, tuple(params)


@lru_cache(maxsize=None)
def _reduce_source(op_name: str) -> str:
    from .ops import get

    op = get(op_name)
    template = shader("reduce").replace("{{LOAD}}", op.wgsl).replace("{{COMBINE}}", op.combine)
    template = template.replace("{{IDENTITY}}", op.identity).replace("{{FINISH}}", op.finish)
    return shader("functions") + template


def dispatches(step: MapStep | OpStep, nodes: list[Node], max_per_dim: int = 65535) -> list[Dispatch]:
    """The dispatches that compute one plan step."""
    if isinstance(step, MapStep):
        source, params = _map_source(step, nodes)
        binds = tuple(enumerate([*step.loads, *step.stores], start=1))
        groups = -(-step.size // WORKGROUP)
        return [Dispatch(source, "main", binds, grid_for(groups, max_per_dim), pack_meta([step.size], params))]
    node = nodes[step.node]
    op = node.op
    ins = node.inputs
    if op.kind == "reduce":
        n = nodes[ins[0]].size
        parts = min(max(-(-n // (WORKGROUP * 4)), 1), REDUCE_MAX_PARTIALS)
        meta = pack_meta([n, parts])
        source = _reduce_source(op.name)
        second = ins[1] if op.arity == 2 else ins[0]
        return [
            Dispatch(source, "partial", ((1, ins[0]), (2, second), (3, "partials")), (parts, 1), meta),
            Dispatch(source, "finish", ((3, "partials"), (4, node.id)), (1, 1), meta),
        ]
    if op.kind == "softmax":
        cols = node.shape[-1] if node.shape else 1
        rows = node.size // cols if cols else 0
        meta = pack_meta([rows, cols, int(op.name == "log_softmax")])
        return [Dispatch(shader("functions") + shader("softmax"), "main", ((1, ins[0]), (2, node.id)),
                         grid_for(rows, max_per_dim), meta)]
    if op.kind == "matmul":
        m, k, n = node.options["m"], node.options["k"], node.options["n"]
        grid = (-(-n // TILE), -(-m // TILE))
        return [Dispatch(shader("matmul"), "main", ((1, ins[0]), (2, ins[1]), (3, node.id)), grid, pack_meta([m, k, n]))]
    if op.kind == "conv2d":
        (h, w), (kh, kw) = nodes[ins[0]].shape, nodes[ins[1]].shape
        oh, ow = node.shape
        groups = -(-(oh * ow) // WORKGROUP)
        return [Dispatch(shader("conv2d"), "main", ((1, ins[0]), (2, ins[1]), (3, node.id)),
                         grid_for(groups, max_per_dim), pack_meta([h, w, kh, kw, oh, ow]))]
    raise NotImplementedError(f"no WGSL kernel for op kind {op.kind!r}")
