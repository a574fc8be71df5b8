"""Fused attention (shaders/attention.wgsl): FlashAttention's algorithm, one workgroup per (batch element,
BQ query rows), one thread per row, keys and values in tiles of BK staged in workgroup memory, an online
softmax; the L x S scores never exist in memory.

The head dimensions are padded to a bucket of vec4s (`vecs`), so one pipeline serves each bucket; the
per-row dot product and the accumulator updates are unrolled over it (registers, not memory). BK is the
largest power of two whose K and V tiles fit the workgroup storage (at most BQ). Head dims past MAX_HEAD
(attention_kind.MAX_HEAD) never get here: the tensor layer computes those unfused (tensor/linalg.py)."""

from __future__ import annotations

import struct
from functools import cache

from ..errors import LimitError
from ..graph import Node, OpStep
from .caps import Caps
from .source import Dispatch, fill, grid_for, pack_meta, shader

BQ = 64  # query rows (threads) per workgroup
MAX_BK = 64  # keys per tile at most

MASK_BINDING = "@group(0) @binding(4) var<storage, read> mask: array<f32>;"
MASK_CHECK = "if (!masked) { masked = mask[mo + i * tw_meta[9u] + j * tw_meta[10u]] == 0.0; }"


def vecs(n: int) -> int:
    """vec4s a row of n floats is padded to: a power of two up to 8, then a multiple of 8."""
    v = -(-n // 4)
    return 1 << (v - 1).bit_length() if v <= 8 else -(-v // 8) * 8


def tile_keys(qv: int, vv: int, wg_storage: int) -> int:
    """BK: keys per tile, the K and V tiles within the workgroup storage."""
    bk = MAX_BK
    while bk > 1 and bk * (qv + vv) * 16 > wg_storage:
        bk //= 2
    return bk


@cache
def attention_source(qv: int, vv: int, bk: int, masked: bool) -> str:
    dot = " + ".join(f"dot(qr[{c}], ks[b + {c}u])" for c in range(qv))
    rescale = "\n            ".join(f"acc[{c}] = acc[{c}] * alpha;" for c in range(vv))
    accumulate = "\n                ".join(f"acc[{c}] = acc[{c}] + p * vs[b + {c}u];" for c in range(vv))
    body = fill(
        shader("attention"),
        BQ=BQ,
        BK=bk,
        QV=qv,
        VV=vv,
        KS=bk * qv,
        VS=bk * vv,
        DOT=dot,
        RESCALE=rescale,
        ACCUMULATE=accumulate,
        MASK_BINDING=MASK_BINDING if masked else "",
        MASK_CHECK=MASK_CHECK if masked else "",
    )
    return shader("functions") + body


def dispatches(step: OpStep, nodes: list[Node], caps: Caps) -> list[Dispatch]:
    node = nodes[step.node]
    o = node.options
    if not node.size:
        return []
    qv, vv = vecs(o["e"]), vecs(o["ev"])
    bk = tile_keys(qv, vv, caps.wg_storage)
    trips = -(-o["s"] // bk) * (2 * bk + -(-bk * (qv + vv) // BQ) + 8) + len(o["dims"]) + qv + vv
    if trips > caps.loop_trips:
        raise LimitError(
            f"attention over {o['s']} keys needs ~{trips} loop trips a thread, past this adapter's "
            f"{caps.loop_trips}; split the keys, or use the numpy or wasm-simd backend"
        )
    masked = len(node.inputs) == 4
    tiles = -(-o["l"] // BQ)
    ml, ms = o["mask"] if masked else (0, 0)
    words = [o["l"], o["s"], o["e"], o["ev"], tiles, o["batch"], int(o["causal"]), len(o["dims"])]
    extra = [ml, ms, *(w for dim in o["dims"] for w in dim)]
    meta = pack_meta(words, (o["scale"],)) + struct.pack(f"<{len(extra)}I", *extra)
    q, k, v = node.inputs[:3]
    binds = ((1, q), (2, k), (3, v), (5, node.id)) + (((4, node.inputs[3]),) if masked else ())
    source = attention_source(qv, vv, bk, masked)
    return [Dispatch(source, "main", binds, grid_for(tiles * o["batch"], caps.max_per_dim), meta)]
