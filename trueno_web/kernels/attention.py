"""Fused attention (shaders/attention.wgsl): FlashAttention's algorithm, one workgroup per (batch element,
BQ query rows), one thread per row, keys and values in tiles of BK staged in workgroup memory, an online
softmax; the L x S scores never exist in memory.

The head dimensions are padded to a bucket of vec4s (`vecs`), so one pipeline serves each bucket; the
per-row dot product and the accumulator updates are unrolled over it (registers, not memory). BK is the
largest power of two whose K and V tiles fit the workgroup storage (at most BQ). Head dims past MAX_HEAD
(attention_kind.MAX_HEAD) never get here: the tensor layer computes those unfused (tensor/linalg.py)."""

from __future__ import annotations

import functools
import struct
from functools import cache

from ..errors import LimitError
from ..graph import Node, OpStep
from .caps import Caps
from .source import Dispatch, fill, grid_for, pack_meta, shader

BQ = 64  # query rows (threads) per workgroup
MAX_BK = 64  # keys per tile at most
GROUP = 4  # keys scored at a time (registers), the accumulator rescaled once per group

MASK_BINDING = "@group(0) @binding(4) var<storage, read> mask: array<f32>;"
MASK_CHECK = "if (!masked) { masked = mask[mo + i * tw_meta[9u] + j * tw_meta[10u]] == 0.0; }"


def vecs(n: int) -> int:
    """vec4s a row of n floats is padded to: a power of two up to 8, then a multiple of 8."""
    v = -(-n // 4)
    return 1 << (v - 1).bit_length() if v <= 8 else -(-v // 8) * 8


def tile_keys(qv: int, vv: int, wg_storage: int) -> int:
    """BK: keys per tile, the K and V tiles within the workgroup storage."""
    bk = MAX_BK
    while bk > GROUP and bk * (qv + vv) * 16 > wg_storage:
        bk //= 2
    return bk


LOAD_F32 = """fn tw_{b}4(at: u32, c: u32, n: u32) -> vec4<f32> {{
    var r = vec4<f32>(0.0);
    for (var t = 0u; t < 4u; t = t + 1u) {{ if (4u * c + t < n) {{ r[t] = {b}[at + 4u * c + t]; }} }}
    return r;
}}"""
LOAD_VEC4 = """fn tw_{b}4(at: u32, c: u32, n: u32) -> vec4<f32> {{
    return select(vec4<f32>(0.0), {b}[at / 4u + c], 4u * c < n);
}}"""


def stage(tile: str, fn: str, count: int, args: str) -> str:
    """WGSL that loads a tile of `count` vec4s with BQ threads: every load first (in flight together), then the
    stores into workgroup memory."""
    at = [(f"lid + {u * BQ}u", u * BQ + BQ > count) for u in range(-(-count // BQ))]
    loads = [f"        let {tile}{u} = {fn}(min({t}, {count - 1}u), {args});" for u, (t, _) in enumerate(at)]
    stores = [
        f"        {'if (' + t + f' < {count}u) ' if ragged else ''}{{ {tile}[{t}] = {tile}{u}; }}"
        for u, (t, ragged) in enumerate(at)
    ]
    return "\n".join(loads + stores)


@cache
def attention_source(qv: int, vv: int, bk: int, masked: bool, vec: bool = False) -> str:
    """The kernel for head dims of qv and vv vec4s, tiles of bk keys; `vec`: q, k and v bound as vec4 arrays
    (E and Ev multiples of 4)."""
    dot = " + ".join(f"dot(qr{c}, ks[b + {c}u])" for c in range(qv))
    rescale = "\n                ".join(f"acc{c} = acc{c} * alpha;" for c in range(vv))
    check = MASK_CHECK if masked else ""
    scores = "\n".join(
        f"                var s{u}: f32;\n                {{ let j = j0 + j4 + {u}u; let b = (j4 + {u}u) * QV; "
        f"var masked = j >= n_k || (causal && j > i); {check} "
        f"s{u} = select(({dot}) * scale, tw_neg_inf(), masked); }}"
        for u in range(GROUP)
    )
    group_max = functools.reduce(lambda x, y: f"tw_max({x}, {y})", [f"s{u}" for u in range(GROUP)])
    accumulate = "\n".join(
        f"                {{ let b = (j4 + {u}u) * VV; let p = select(tw_exp(s{u} - mn), 0.0, s{u} == tw_neg_inf()); "
        f"l = l + p; " + " ".join(f"acc{c} = acc{c} + p * vs[b + {c}u];" for c in range(vv)) + " }"
        for u in range(GROUP)
    )
    body = fill(
        shader("attention"),
        BQ=BQ,
        BK=bk,
        QV=qv,
        VV=vv,
        KS=bk * qv,
        VS=bk * vv,
        GROUP=GROUP,
        T="vec4<f32>" if vec else "f32",
        LOADS="\n".join((LOAD_VEC4 if vec else LOAD_F32).format(b=b) for b in "qkv"),
        STAGE=stage("ks", "tw_kt", bk * qv, "j0, ko, n_k, e") + "\n" + stage("vs", "tw_vt", bk * vv, "j0, vo, n_k, ev"),
        DECLS="\n".join(
            [f"    var qr{c} = vec4<f32>(0.0);" for c in range(qv)]
            + [f"    var acc{c} = vec4<f32>(0.0);" for c in range(vv)]
        ),
        LOAD_Q="\n".join(f"        qr{c} = tw_q4(qo + i * e, {c}u, e);" for c in range(qv)),
        STORE_Y="\n".join(
            f"        if ({4 * c + t}u < ev) {{ y[yo + {4 * c + t}u] = select(acc{c}[{t}] / l, tw_nan(), dead); }}"
            for c in range(vv)
            for t in range(4)
        ),
        SCORES=scores,
        GROUP_MAX=group_max,
        RESCALE=rescale,
        ACCUMULATE=accumulate,
        MASK_BINDING=MASK_BINDING if masked else "",
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
    source = attention_source(qv, vv, bk, masked, o["e"] % 4 == 0 and o["ev"] % 4 == 0)
    return [Dispatch(source, "main", binds, grid_for(tiles * o["batch"], caps.max_per_dim), meta)]
