"""Softmax and log-softmax along the last axis (shaders/softmax.wgsl): one pass per row, or long rows
split across workgroups (a statistics pass and a write pass) when there are too few rows to fill a GPU.

Memory traffic: the one-pass kernel reads a row twice from one workgroup (the second read from the cache) and
writes it once; the split kernel reads x twice from memory (its write pass walks backwards, so the start of
it reads what the stats pass left in the cache) and writes it once. Threads of the one-pass kernel get
about rows.PER_THREAD vectors of a row each (rows.threads_per_row); every loop trip has four loads in flight."""

from __future__ import annotations

from functools import cache

from ..graph import Node, OpStep
from .caps import Caps
from .rows import threads_per_row
from .source import ONE_BITS, Dispatch, fill, grid_for, pack_meta, shader

CHUNK_ROWS = 128  # fewer rows than this, and long: split each row across workgroups
CHUNK_VECS = 2048  # at least this many vectors per chunk
TARGET_GROUPS = 512  # workgroups of a split softmax (all rows), one wave on a large GPU


@cache
def softmax_source(vec: bool) -> str:
    element = shader("softmax_vec4" if vec else "softmax_f32")
    return shader("functions") + fill(shader("softmax"), V="vec4<f32>" if vec else "f32", ELEMENT=element)


def dispatches(step: OpStep, nodes: list[Node], caps: Caps) -> list[Dispatch]:
    node = nodes[step.node]
    src = node.inputs[0]
    cols = node.shape[-1] if node.shape else 1
    rows = node.size // cols if cols else 0
    vec = cols % 4 == 0 and caps.vec_ok(node.size)
    cv = cols // 4 if vec else cols
    is_log = int(node.op.name == "log_softmax")
    source = softmax_source(vec)
    if 0 < rows < CHUNK_ROWS and cv >= 2 * CHUNK_VECS and rows <= caps.max_per_dim:
        chunks = min(-(-cv // CHUNK_VECS), -(-TARGET_GROUPS // rows))
        per = -(-cv // chunks)
        chunks = -(-cv // per)
        meta = pack_meta([rows, cols, is_log, per, chunks, cv, 256, ONE_BITS])
        binds = ((1, src), (3, "partials"))
        scratch = 16 * rows * chunks  # a vec3 state per chunk (16-byte stride)
        return [
            Dispatch(source, "stats", binds, (chunks, rows), meta, scratch),
            Dispatch(source, "write", ((1, src), (2, node.id), (3, "partials")), (chunks, rows), meta, scratch),
        ]
    tpr = threads_per_row(cv)
    groups = -(-rows // (256 // tpr))
    meta = pack_meta([rows, cols, is_log, 0, 0, cv, tpr, ONE_BITS])
    return [Dispatch(source, "main", ((1, src), (2, node.id)), grid_for(groups, caps.max_per_dim), meta)]
