"""Fused attention (shaders/attention.wgsl): FlashAttention's algorithm, one workgroup of THREADS threads per
(batch element, tile of BQ = THREADS / SPLIT query rows), SPLIT threads per row each walking its own groups of
keys of every tile (their row states merged through workgroup memory at the end), keys and values in tiles
of BK staged in workgroup memory, an online softmax; the L x S scores never exist in memory.

The head dimensions are padded to a bucket of vec4s (`vecs`), so one pipeline serves each bucket; the
per-row dot product and the accumulator updates are unrolled over it (registers, not memory). `tiling` picks
the most threads per row whose merge and tiles fit the workgroup storage (over every key, one where that still
makes FULL_GROUPS workgroups: no merge; causal attention's rows grow along a tile, which more threads a row
balance), then the longest tiles. On software adapters (Caps.attention_direct) the kernel is `direct`: one
thread a row of DIRECT_THREADS reads the keys and values straight from the buffers, no workgroup memory and no
barrier (on SwiftShader the staged kernel's barriers took most of a transformer block's time: docs/benchmarks.md).
Head dims past MAX_HEAD (attention_kind.MAX_HEAD) never get here: the tensor layer computes those unfused
(tensor/linalg.py). On hardware adapters where head dims past 16 fit, causal or masked attention, and attention over
every key with too few rows for FULL_GROUPS one-row workgroups, run kernels/attention_tiled.py's kernel (TILED):
both products register-tiled, the row maxima by subgroup shuffles (faster on the H100 for causal attention; over
every key the one-row kernel stays faster there: docs/benchmarks.md). Tried on the H100 and not
kept, slower or no faster: dot products summed as a tree, a rescale only where the row max grows past a margin."""

from __future__ import annotations

import struct
from functools import cache, reduce

from ..attention_kind import batch_dims
from ..errors import LimitError
from ..graph import Node, OpStep
from ..layout import contiguous_strides
from . import attention_tiled
from .attention_loads import MASK_BINDING, MASK_CHECK, PROLOGUE, loads
from .caps import Caps
from .source import Dispatch, fill, grid_for, pack_meta, shader

THREADS = 256  # a workgroup's threads (WebGPU's default limit): BQ = THREADS // split query rows, split threads each
DIRECT_THREADS = 64  # a direct kernel's (software adapters): a CPU runs a workgroup's lanes, idle ones too
MAX_BK = 64  # keys per tile at most
GROUP = 4  # keys scored at a time (registers), the accumulator rescaled once per group
SPLITS = (4, 1)  # threads per query row to try, most first (more threads: the GPU fuller, a causal tile's
# growing rows balanced, a merge at the end)
FULL_SPLITS = (1,)  # attention over every key, where one thread a row makes FULL_GROUPS workgroups: no merge
FULL_GROUPS = 256  # (fewer workgroups leave the GPU idle: SPLITS then; docs/benchmarks.md)
TILED = True  # hardware adapters: the register-tiled kernel (kernels/attention_tiled.py) where the head dims fit
TILED_MIN_VECS = 8  # and are past 16 (vec4s of q's rows): at 16 the one-row kernels were faster (docs/benchmarks.md)
TILED_SHUFFLES = True  # its row maxima and sums by subgroup shuffles where the adapter has subgroups


def vecs(n: int) -> int:
    """vec4s a row of n floats is padded to: a power of two up to 8, then a multiple of 8."""
    v = -(-n // 4)
    return 1 << (v - 1).bit_length() if v <= 8 else -(-v // 8) * 8


def tiling(qv: int, vv: int, wg_storage: int, splits: tuple[int, ...]) -> tuple[int, int]:
    """(BK, SPLIT): keys per tile and threads per query row, the K and V tiles (and where SPLIT > 1 the
    merge's row states) within the workgroup storage: as many threads a row as fit (of `splits`), then the
    longest tiles."""
    for split in splits:
        merge = THREADS // split * (vv + 1) * 16 if split > 1 else 0
        bk = MAX_BK
        while bk > GROUP * split and bk * (qv + vv) * 16 + merge > wg_storage:
            bk //= 2
        if bk * (qv + vv) * 16 + merge <= wg_storage:
            return bk, split
    return GROUP, 1


def stage(tile: str, fn: str, count: int, args: str) -> str:
    """WGSL that loads a tile of `count` vec4s with the workgroup's THREADS threads: every load first (in flight
    together), then the stores into workgroup memory."""
    at = [(f"lid + {u * THREADS}u", u * THREADS + THREADS > count) for u in range(-(-count // THREADS))]
    loads = [f"        let {tile}{u} = {fn}(min({t}, {count - 1}u), {args});" for u, (t, _) in enumerate(at)]
    stores = [
        f"        {'if (' + t + f' < {count}u) ' if ragged else ''}{{ {tile}[{t}] = {tile}{u}; }}"
        for u, (t, ragged) in enumerate(at)
    ]
    return "\n".join(loads + stores)


def merge(vv: int) -> str:
    """WGSL that folds the row states (m, l, acc) of a row's threads into its first: one thread at a time
    writes its state to workgroup memory, the first rescales both to the larger max and adds."""
    put = " ".join(f"mg[at + {c + 1}u] = acc{c};" for c in range(vv))
    add = " ".join(f"acc{c} = acc{c} * a + mg[at + {c + 1}u] * b;" for c in range(vv))
    return f"""    for (var src = 1u; src < SPLIT; src = src + 1u) {{
        let at = r * {vv + 1}u;
        workgroupBarrier();
        if (part == src) {{ mg[at] = vec4<f32>(m, l, 0.0, 0.0); {put} }}
        workgroupBarrier();
        if (part == 0u) {{
            let o = mg[at];
            let mn = tw_max(m, o.x);
            let a = select(tw_exp2_neg(m - mn), 1.0, m == mn);
            let b = select(tw_exp2_neg(o.x - mn), 1.0, o.x == mn);
            l = l * a + o.y * b;
            {add}
            m = mn;
        }}
    }}"""


@cache
def attention_source(
    qv: int, vv: int, bk: int, masked: bool, vec: bool = False, split: int = 1, direct: bool = False
) -> str:
    """The kernel for head dims of qv and vv vec4s, tiles of bk keys, `split` threads a query row (their row
    states merged through workgroup memory at the end); `vec`: q, k and v bound as vec4 arrays (E and Ev
    multiples of 4); `direct` (split 1): keys and values read from k and v, not staged (no barrier)."""
    threads = DIRECT_THREADS if direct else THREADS
    bq = threads // split
    if direct:  # the key's (value's) vec4 c: its row clamped into the buffer (keys past S are masked)
        key, val = "tw_k4(ko + min(j, n_k - 1u) * k_row, {c}u, e)", "tw_v4(vo + min(j, n_k - 1u) * v_row, {c}u, ev)"
    else:
        key, val = "ks[b + {c}u]", "vs[b + {c}u]"
    dot = " + ".join(f"dot(qr{c}, {key.format(c=c)})" for c in range(qv))
    rescale = "\n                ".join(f"acc{c} = acc{c} * alpha;" for c in range(vv))
    check = MASK_CHECK if masked else ""
    scores = "\n".join(
        f"                var s{u}: f32;\n                {{ let j = j0 + j4 + {u}u; let b = (j4 + {u}u) * QV; "
        f"var masked = j >= n_k || (causal && j > i); {check} "
        f"s{u} = select(({dot}) * scale, tw_neg_inf(), masked); }}"
        for u in range(GROUP)
    )
    group_max = reduce(lambda x, y: f"tw_max({x}, {y})", [f"s{u}" for u in range(GROUP)])
    accumulate = "\n".join(
        f"                {{ let b = (j4 + {u}u) * VV; let j = j0 + j4 + {u}u; "
        f"let p = select(tw_exp2_neg(s{u} - mn), 0.0, s{u} == tw_neg_inf()); "
        f"l = l + p; " + " ".join(f"acc{c} = acc{c} + p * {val.format(c=c)};" for c in range(vv)) + " }"
        for u in range(GROUP)
    )
    body = fill(
        shader("attention"),
        BQ=bq,
        BK=bk,
        QV=qv,
        VV=vv,
        KS=1 if direct else bk * qv,
        VS=1 if direct else bk * vv,
        GROUP=GROUP,
        T="vec4<f32>" if vec else "f32",
        LOADS=loads(vec),
        PROLOGUE=PROLOGUE,
        STAGE=""
        if direct
        else "        workgroupBarrier();\n"
        + stage("ks", "tw_kt", bk * qv, "j0, ko, k_row, n_k, e")
        + "\n"
        + stage("vs", "tw_vt", bk * vv, "j0, vo, v_row, n_k, ev")
        + "\n        workgroupBarrier();",
        SPLIT=split,
        THREADS=threads,
        MERGE_DECL=f"var<workgroup> mg: array<vec4<f32>, {bq * (vv + 1)}>;" if split > 1 else "",
        MERGE=merge(vv) if split > 1 else "",
        DECLS="\n".join(
            [f"    var qr{c} = vec4<f32>(0.0);" for c in range(qv)]
            + [f"    var acc{c} = vec4<f32>(0.0);" for c in range(vv)]
        ),
        LOAD_Q="\n".join(f"        qr{c} = tw_q4(qo + i * q_row, {c}u, e);" for c in range(qv)),
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
    one_row = caps.attention_direct or not o["causal"] and -(-o["l"] // THREADS) * o["batch"] >= FULL_GROUPS
    tiled = TILED and not one_row and qv >= TILED_MIN_VECS and attention_tiled.fits(qv, vv, caps.wg_storage)
    if tiled:
        rows, trips = attention_tiled.ROWS, attention_tiled.trips(o["s"], qv)
    else:
        bk, split = tiling(qv, vv, caps.wg_storage, FULL_SPLITS if one_row else SPLITS)
        rows = (DIRECT_THREADS if caps.attention_direct else THREADS) // split
        trips = -(-o["s"] // bk) * (2 * bk + -(-bk * (qv + vv) // THREADS) + 8)
    trips += len(o["dims"]) + qv + vv
    if trips > caps.loop_trips:
        raise LimitError(
            f"attention over {o['s']} keys needs ~{trips} loop trips a thread, past this adapter's "
            f"{caps.loop_trips}; split the keys, or use the numpy or wasm-simd backend"
        )
    masked = len(node.inputs) == 4
    tiles = -(-o["l"] // rows)
    ml, ms = o["mask"] if masked else (0, 0)
    starts, dims = layout(node, nodes)
    words = [o["l"], o["s"], o["e"], o["ev"], tiles, o["batch"], int(o["causal"]), len(dims)]
    extra = [ml, ms, *starts, *(w for dim in dims for w in dim)]
    meta = pack_meta(words, (o["scale"],)) + struct.pack(f"<{len(extra)}I", *extra)
    q, k, v = node.inputs[:3]
    binds = ((1, q), (2, k), (3, v), (5, node.id)) + (((4, node.inputs[3]),) if masked else ())
    vec = all(w % 4 == 0 for w in (o["e"], o["ev"], *starts, *(st for dim in dims for st in dim[1:4])))
    if tiled:
        shuffles = TILED_SHUFFLES and caps.subgroups
        source = attention_tiled.source(qv, vv, masked, vec, shuffles, caps.enable_subgroups)
    else:
        source = attention_source(qv, vv, bk, masked, vec, split, caps.attention_direct)
    return [Dispatch(source, "main", binds, grid_for(tiles * o["batch"], caps.max_per_dim), meta, checked=False)]


def layout(node: Node, nodes: list[Node]) -> tuple[list[int], tuple]:
    """Where q, k and v are read in their storage (views read in place: tensor/linalg.py's attention): each
    one's offset and row stride, [q offset, q row, k offset, k row, v offset, v row], and the batch dimensions
    with each operand's own strides (attention_kind.batch_dims; the mask's row-major)."""
    batch = node.shape[:-2]
    starts, shapes, strides = [], [], []
    for i in node.inputs:
        n = nodes[i]
        if n.view is None or n.view.identity:
            own, offset = contiguous_strides(n.shape), 0
        else:
            own, offset = n.view.strides, n.view.offset
        lead = len(batch) - max(len(n.shape) - 2, 0)  # a mask may have fewer than two dimensions
        shapes.append((1,) * lead + tuple(n.shape[:-2]))
        strides.append((0,) * lead + tuple(own[:-2]))
        starts += [offset, own[-2] if len(n.shape) > 1 else 0]
    if len(node.inputs) == 3:  # no mask: its stride 0 in each dimension
        shapes.append((1,) * len(batch))
        strides.append((0,) * len(batch))
    return starts[:6], batch_dims(batch, shapes, strides)
