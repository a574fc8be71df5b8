"""Matrix product (shaders/matmul.wgsl): register-blocked tiles, double-buffered in workgroup memory.

The template's per-thread register block (loads of the next slice, the stash into workgroup memory, the
multiply-adds and the masked store) is written out here statement by statement for one tiling: WGSL
has no unroll directive, and the compilers keep the accumulators in registers only when unrolled.
matmul_config picks the tiling, the split of K over workgroups and the tile order per adapter and shape.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import NamedTuple

from ..graph import MatmulStep, Node, OpStep, storage
from .caps import Caps, round16
from .map import chain_key, chain_wgsl, inplace, strided, view_meta
from .map_gather import vec4_ok
from .matmul_direct import TILE, direct_fits, direct_source
from .matmul_tuned import tuned_choice
from .source import WORKGROUP, Dispatch, fill, functions, grid_for, pack_meta, scalar_bytes, shader


@dataclass(frozen=True)
class MatmulConfig:
    """A matmul tiling: BM x BN outputs per workgroup, BK-deep slices, TM x TN outputs per thread."""

    bm: int
    bn: int
    bk: int
    tm: int
    tn: int

    @property
    def threads(self) -> int:
        return (self.bm // self.tm) * (self.bn // self.tn)

    def storage(self, pad: bool) -> int:
        """Workgroup memory in bytes: two stages of the A and B slices."""
        return 2 * self.bk * ((self.bm // 4 + int(pad)) + self.bn // 4) * 16


CONFIGS = {
    "256x128x8": MatmulConfig(256, 128, 8, 16, 8),
    "128x256x8": MatmulConfig(128, 256, 8, 8, 16),
    "256x128x16": MatmulConfig(256, 128, 16, 16, 8),
    "128x256x16": MatmulConfig(128, 256, 16, 8, 16),
    "128x128x8": MatmulConfig(128, 128, 8, 8, 8),
    "128x128x16": MatmulConfig(128, 128, 16, 8, 8),
    "128x64x8": MatmulConfig(128, 64, 8, 8, 4),
    "128x64x16": MatmulConfig(128, 64, 16, 8, 4),
    "64x64x8": MatmulConfig(64, 64, 8, 4, 4),
    "64x64x16": MatmulConfig(64, 64, 16, 4, 4),
}
# where the adapter has no measured choice: largest first (the 16-deep tiles where workgroup memory has room)
PICK_ORDER = ("128x128x16", "128x128x8", "128x64x8", "64x64x16", "64x64x8")
MAX_WASTE = 1.25  # a tile whose grid covers more than this times the output only as the last resort
MIN_SPLIT_SLICES = 16  # a split of K gets this many BK-slices at least
MAX_SPLITS = 16


class MatmulChoice(NamedTuple):
    """How one matmul runs: the tiling, whether the A tile is padded, the splits of K over workgroups
    (partials added by a second dispatch where > 1), the rows of tiles per group of the tile order, and
    whether the operands' rows that are whole vec4s load as vec4s (`vec`) and C's store so (`vec_c`); else
    as scalars, like odd shapes."""

    cfg: MatmulConfig
    pad: bool
    splits: int
    group: int
    vec: bool = True
    vec_c: bool = True


def matmul_config(m: int, k: int, n: int, caps: Caps, batch: int = 1) -> MatmulChoice:
    """The tiling, split, tile order and load and store widths for `batch` (m, k) @ (k, n) products here: what
    caps forces, else the adapter's measured choice for this shape (kernels/matmul_tuned.py), else the largest
    tile of PICK_ORDER that fits, wastes little on the edges, and (split over K where K is long enough) gives
    caps.matmul_min_groups workgroups, with vec4 loads and stores."""
    tuned = tuned_choice(caps.adapter, m, k, n, batch)
    if tuned and CONFIGS[tuned[0]].storage(False) > caps.wg_storage:
        tuned = None  # measured with more workgroup memory than this device has
    vec = (tuned[3] if tuned else True) if caps.matmul_vec is None else caps.matmul_vec
    vec_c = (tuned[4] if tuned else vec) if caps.matmul_vec_c is None else caps.matmul_vec_c
    names = [caps.matmul] if caps.matmul else [tuned[0]] if tuned else list(PICK_ORDER)
    for i, name in enumerate(names):
        cfg = CONFIGS[name]
        pad = next((p for p in (True, False) if cfg.storage(p) <= caps.wg_storage), None)
        if pad is None:
            continue
        tiles_m, tiles_n = -(-m // cfg.bm), -(-n // cfg.bn)
        groups = tiles_m * tiles_n * batch
        last = i == len(names) - 1
        if not last and tiles_m * cfg.bm * tiles_n * cfg.bn > MAX_WASTE * m * n:
            continue
        chosen = caps.matmul_splits or (tuned[1] if tuned else 0)  # forced or measured: as many as K has
        splits = fit_splits(
            chosen or -(-caps.matmul_min_groups // max(groups, 1)), bool(chosen), -(-k // cfg.bk), batch * m * n, caps
        )
        if last or groups * splits >= caps.matmul_min_groups:
            group = caps.matmul_group or (tuned[2] if tuned else 1)
            return MatmulChoice(cfg, pad, splits, group, vec, vec_c)
    return MatmulChoice(CONFIGS["64x64x8"], False, 1, 1, vec, vec_c)  # 2 * 8 * 32 * 16 = 8 KiB: fits every adapter


def fit_splits(want: int, chosen: bool, slices: int, size: int, caps: Caps) -> int:
    """Splits of `slices` BK-slices, at most `want`, each nonempty and, unless `chosen` (forced or
    measured), at most MAX_SPLITS of MIN_SPLIT_SLICES at least; the partials (`size` floats each) must
    fit one binding."""
    most = slices if chosen else min(slices // MIN_SPLIT_SLICES, MAX_SPLITS)
    splits = max(min(want, most, caps.binding_limit // max(round16(4 * size), 1)), 1)
    return -(-slices // -(-slices // splits)) if slices else 1  # no empty split


def edge_load(
    arr: str, base: str, outer: str, outer_total: str, inner: str, inner_total: str, vec: bool, scalar: str = "f32"
) -> str:
    """WGSL body loading 4 consecutive elements (of WGSL type `scalar`) at (outer, inner) of the row-major
    matrix at element `base` of `arr`, zero past its edges: one vec4 load where rows are whole vec4s, else 4
    guarded scalar loads."""
    return fill(
        shader("edge_load_vec4" if vec else "edge_load_f32"),
        S=scalar,
        ARR=arr,
        BASE=base,
        OUTER=outer,
        OUTER_TOTAL=outer_total,
        INNER=inner,
        INNER_TOTAL=inner_total,
    )


def matmul_source(
    cfg: MatmulConfig,
    pad: bool,
    vec_a: bool,
    vec_b: bool,
    batched: bool,
    slices: int,
    split: bool = False,
    grouped: bool = False,
    resumed: bool = False,
    ta: bool = False,
    tb: bool = False,
    vec_c: bool | None = None,
    scalar: str = "f32",
    out: str = "",
) -> str:
    """The register-blocked kernel of shaders/matmul.wgsl for one tiling and alignment case, for a batch
    of products or (`batched` False) one, running at most `slices` BK-slices of K per dispatch; with
    `split`, K split over workgroups; with `grouped`, tiles in groups of rows; with `resumed`, a split
    longer than `slices` (later dispatches add to what earlier ones stored). `ta` / `tb`: that operand's
    storage is its transpose, read in place (A^T's rows are A's columns: vec4s along M, stored into the
    A tile as they are; B^T's rows give vec4s along K, spread over four rows of the B tile). `vec_a`,
    `vec_b`: the operands' storage rows are whole vec4s; `vec_c` (default `vec_b`): C's. `scalar`: the WGSL
    type of the elements (f32; i32 and u32 multiply and add exactly, wrapping). `out`: an epilogue's WGSL
    (`epilogue`), whose tw_out stores C (one dispatch: not split, not resumed), else C is binding 3."""
    vec_c = vec_b if vec_c is None else vec_c
    bm, bn, bk, tm, tn = cfg.bm, cfg.bn, cfg.bk, cfg.tm, cfg.tn
    tx, ty, threads = bn // tn, bm // tm, cfg.threads
    sa = bm // 4 + int(pad)
    # an unpadded A tile's k rows are a multiple of 32 banks apart: its vec4 columns are swizzled instead, column
    # c of k row k at c ^ (k / 4 * 32 / BK), so that a warp's four scalar stores of a vec4 along K hit 32 banks;
    # not where a thread reads 4 of its vec4s a k (TM 16), whose reads' extra XORs cost more (docs/benchmarks.md)
    turn = 0 if pad or tm > 8 else 32 // bk
    a_vecs, b_vecs = bm * bk // 4, bk * bn // 4  # vec4 loads per slice
    la, lb = -(-a_vecs // threads), -(-b_vecs // threads)
    xyzw = "xyzw"

    acc = [
        f"    var acc_{i}_{r}_{j} = vec4<{scalar}>();" for i in range(tm // 4) for r in range(4) for j in range(tn // 4)
    ]
    acc += [f"    var pa{l}: vec4<{scalar}>;" for l in range(la)] + [
        f"    var pb{l}: vec4<{scalar}>;" for l in range(lb)
    ]

    at_a = (  # (row, k) of the vec4 that load idx of the A tile reads: along K, or along M where A^T is given
        f"row0 + (idx % {bm // 4}u) * 4u, k0 + idx / {bm // 4}u"
        if ta
        else f"row0 + idx / {bk // 4}u, k0 + (idx % {bk // 4}u) * 4u"
    )
    at_b = (  # (k, col) of the vec4 that load idx of the B tile reads: along N, or along K where B^T is given
        f"k0 + (idx % {bk // 4}u) * 4u, col0 + idx / {bk // 4}u"
        if tb
        else f"k0 + idx / {bn // 4}u, col0 + (idx % {bn // 4}u) * 4u"
    )

    def fetch(indent):
        out = []
        for l in range(la):
            guard = "" if a_vecs % threads == 0 or l < la - 1 else f"if (lid + {l * threads}u < {a_vecs}u) "
            out.append(
                f"{indent}{guard}{{ let idx = lid + {l * threads}u; pa{l} = load_a(a_off, {at_a}, m_total, k_total); }}"
            )
        for l in range(lb):
            guard = "" if b_vecs % threads == 0 or l < lb - 1 else f"if (lid + {l * threads}u < {b_vecs}u) "
            out.append(
                f"{indent}{guard}{{ let idx = lid + {l * threads}u; pb{l} = load_b(b_off, {at_b}, k_total, n_total); }}"
            )
        return "\n".join(out)

    def stash(indent, stage):
        out = []
        for l in range(la):
            guard = "" if a_vecs % threads == 0 or l < la - 1 else f"if (lid + {l * threads}u < {a_vecs}u) "
            if ta:  # a vec4 along M at k = idx / (BM / 4): as it is
                col = f"idx % {bm // 4}u" + (f" ^ (idx / {bm}u * {turn}u)" if turn else "")
                stores = f"a_tile[{stage} * A_STAGE + (idx / {bm // 4}u) * SA + ({col})] = pa{l};"
            else:  # a vec4 along K at row r: one element into each of four k rows
                col = f"(r / 4u) ^ (idx % {bk // 4}u * {turn}u)" if turn else "r / 4u"
                stores = f"let r = idx / {bk // 4}u; " + " ".join(
                    f"a_tile[{stage} * A_STAGE + ((idx % {bk // 4}u) * 4u + {c}u) * SA + ({col})][r % 4u] = pa{l}.{xyzw[c]};"
                    for c in range(4)
                )
            out.append(f"{indent}{guard}{{ let idx = lid + {l * threads}u; {stores} }}")
        for l in range(lb):
            guard = "" if b_vecs % threads == 0 or l < lb - 1 else f"if (lid + {l * threads}u < {b_vecs}u) "
            if tb:  # a vec4 along K at column n: one element into each of four k rows
                stores = f"let n = idx / {bk // 4}u; " + " ".join(
                    f"b_tile[{stage} * B_STAGE + ((idx % {bk // 4}u) * 4u + {c}u) * SB + n / 4u][n % 4u] = pb{l}.{xyzw[c]};"
                    for c in range(4)
                )
            else:
                stores = f"b_tile[{stage} * B_STAGE + idx] = pb{l};"
            out.append(f"{indent}{guard}{{ let idx = lid + {l * threads}u; {stores} }}")
        return "\n".join(out)

    compute = []
    for kk in range(bk):
        for i in range(tm // 4):
            col = f"((ty + {i * ty}u) ^ {kk // 4 * turn}u)" if turn and kk >= 4 else f"ty + {i * ty}u"
            compute.append(f"        let a{kk}_{i} = a_tile[a_base + {kk}u * SA + {col}];")
        for j in range(tn // 4):
            compute.append(f"        let b{kk}_{j} = b_tile[b_base + {kk}u * SB + tx + {j * tx}u];")
        for i in range(tm // 4):
            for r in range(4):
                for j in range(tn // 4):
                    v = f"acc_{i}_{r}_{j}"
                    a = f"vec4<{scalar}>(a{kk}_{i}.{xyzw[r]})"
                    compute.append(
                        f"        {v} = fma({a}, b{kk}_{j}, {v});"
                        if scalar == "f32"
                        else f"        {v} = {v} + {a} * b{kk}_{j};"  # integers: no fma, exact
                    )

    store = []
    for i in range(tm // 4):
        for r in range(4):
            store.append(f"    {{ let row = row0 + (ty + {i * ty}u) * 4u + {r}u;")
            for j in range(tn // 4):
                v = f"acc_{i}_{r}_{j}"
                col = f"col0 + (tx + {j * tx}u) * 4u"
                if vec_c:
                    at = "(c_off + row * n_total + col) / 4u"
                    put = f"tw_out({at}, {v});" if out else f"if (first > 0u) {{ {v} = c[{at}] + {v}; }} c[{at}] = {v};"
                    store.append(f"      {{ let col = {col}; if (row < m_total && col < n_total) {{ {put} }} }}")
                else:
                    for q in range(4):
                        at, lane = "c_off + row * n_total + col", f"{v}.{xyzw[q]}"
                        put = (
                            f"tw_out({at}, {lane});"
                            if out
                            else f"if (first > 0u) {{ {lane} = c[{at}] + {lane}; }} c[{at}] = {lane};"
                        )
                        store.append(
                            f"      {{ let col = {col} + {q}u; if (row < m_total && col < n_total) {{ {put} }} }}"
                        )
            store.append("    }")

    load_a = (
        edge_load("a", "off", "k", "k_total", "row", "m_total", vec_a, scalar)
        if ta
        else edge_load("a", "off", "row", "m_total", "k", "k_total", vec_a, scalar)
    )
    load_b = (
        edge_load("b", "off", "col", "n_total", "k", "k_total", vec_b, scalar)
        if tb
        else edge_load("b", "off", "k", "k_total", "col", "n_total", vec_b, scalar)
    )

    return fill(
        (functions() if out else "") + shader("matmul"),
        OUT=out
        or f"@group(0) @binding(3) var<storage, read_write> c: array<{'vec4<' + scalar + '>' if vec_c else scalar}>;",
        A_TYPE=f"vec4<{scalar}>" if vec_a else scalar,
        B_TYPE=f"vec4<{scalar}>" if vec_b else scalar,
        S=scalar,
        BM=bm,
        BN=bn,
        BK=bk,
        SLICES=slices,
        TX=tx,
        THREADS=threads,
        SA_PAD=int(pad),
        PLACE=place(tx, ty),
        A_TILE=2 * bk * sa,
        B_TILE=2 * bk * (bn // 4),
        LOAD_A=load_a,
        LOAD_B=load_b,
        ACC_DECL="\n".join(acc),
        FETCH="    { let k0 = lo * BK;\n" + fetch("      ") + "\n    }",
        STASH=stash("    ", "0u"),
        FETCH_NEXT=fetch("            "),
        STASH_NEXT=stash("            ", "stage"),
        COMPUTE="\n".join(compute),
        STORE="\n".join(store),
        SIZES=shader("matmul_sizes"),
        LOCATE=shader("matmul_batch" if batched else "matmul_one"),
        SPLIT=shader("matmul_k_split" if split else "matmul_k_whole"),
        FIRST="tw_meta[7]" if resumed else "0u",
        ORDER=shader("matmul_order_groups" if grouped else "matmul_order_rows"),
    )


WARP = 32  # threads a warp (NVIDIA; AMD's wave64 is two of them)
WARP_N = 8  # a warp's threads along N (the rest along M): 0 lays threads out row by row of TX


def place(tx: int, ty: int) -> str:
    """WGSL placing thread `lid` at (tx, ty) of the TX x TY threads: where the grid divides, each warp takes a
    WARP_N x (WARP / WARP_N) block of threads, so that its reads of the B tile are WARP_N vec4s and of the A tile
    WARP / WARP_N (a row of 16 threads reads 16 vec4s of B a step, twice the workgroup memory's width)."""
    if WARP_N and tx % WARP_N == 0 and ty % (WARP // WARP_N) == 0:
        across = tx // WARP_N
        return (
            f"    let tx = (lid / {WARP}u) % {across}u * {WARP_N}u + lid % {WARP_N}u;\n"
            f"    let ty = lid / {WARP * across}u * {WARP // WARP_N}u + lid % {WARP}u / {WARP_N}u;"
        )
    return "    let tx = lid % TX;\n    let ty = lid / TX;"


def matmul_meta(options: dict, tiles_n: int, tiles_m: int, first: int, splits: int, span: int, group: int) -> bytes:
    """The tw_meta words of shaders/matmul.wgsl: sizes, tile counts, the first slice of K, the splits of K
    and their length in slices, the tile order's group, then the batch dimensions."""
    o = options
    dims = [w for dim in o["dims"] for w in dim]
    words = [splits, span, group, *dims]
    return pack_meta([o["m"], o["k"], o["n"], tiles_n, tiles_m, o["batch"], len(o["dims"]), first]) + struct.pack(
        f"<{len(words)}I", *words
    )


def epilogue(
    step: MatmulStep, nodes: list[Node], key: tuple, vec: bool, first: int, words_at: str
) -> tuple[str, tuple, bytes]:
    """(WGSL, bindings, tw_meta bytes) of a matmul step's chain computed where C is stored (kernels/map.py's
    chain, its load 0 the product given as `v`): `tw_out(i, v)` computes it at element i of C (vec4 i where
    `vec`) and stores what the step stores; bindings from number `first`; its words at tw_meta[`words_at`]
    (a WGSL expression), to go after the kernel's own. `key`: the chain's chain_key."""
    chain = step.chain()
    decls, body = chain_wgsl(key, vec, first, 0, "tw_e() + ", given=True)
    scalar = nodes[step.node].dtype.wgsl
    text = "\n".join(
        [
            *decls,
            f"fn tw_e() -> u32 {{ return {words_at}; }}",
            "fn tw_param(i: u32) -> f32 { return bitcast<f32>(tw_meta[tw_e() + i]); }",
            f"fn tw_out(i: u32, v: {f'vec4<{scalar}>' if vec else scalar}) {{",
            *body,
            "}",
        ]
    )
    views = strided(chain, nodes)
    loads = [storage(nodes, i).id for i in chain.loads[1:]]
    stores = [nid for nid, t in zip(chain.stores, inplace(chain, nodes, views)) if t is None]
    words = view_meta(views)
    params = tuple(v for nid in chain.nodes for v in nodes[nid].params)
    return (
        text,
        tuple(enumerate([*loads, *stores], start=first)),
        scalar_bytes(params) + struct.pack(f"<{len(words)}I", *words),
    )


EPILOGUE_AT = "11u + 3u * tw_meta[6]"  # after matmul_meta's words: 8, splits, span, group, 3 a batch dimension


def dispatches(step: OpStep | MatmulStep, nodes: list[Node], caps: Caps) -> list[Dispatch]:
    """One dispatch for the whole batch, tiles_m * tiles_n workgroups per product and split of K; a split
    longer than the loop budget allows (caps.loop_trips slices, less the batch loop's trips) runs over
    several dispatches. Split K (splits > 1): the partials go to scratch, and shaders/matmul_sum.wgsl adds
    them into C. A matmul step's chain (`epilogue`) runs where C is stored: in the one dispatch, or where the
    product takes several (split or resumed), in the sum of the partials (of one, where not split)."""
    node = nodes[step.node]
    ins = node.inputs
    o = node.options
    m, k, n, batch = o["m"], o["k"], o["n"], o["batch"]
    size_a, size_b = (storage(nodes, i).size for i in ins)
    cfg, pad, splits, group, vec, vec_c = matmul_config(m, k, n, caps, batch)
    scalar = node.dtype.wgsl  # f32, or an integer's i32 / u32
    chained = isinstance(step, MatmulStep)
    # batch strides are multiples of M*K (of K*N), so a product's A (B, C) starts on a vec4 where rows do
    ta, tb = bool(o.get("ta")), bool(o.get("tb"))
    vec_a = vec and (m if ta else k) % 4 == 0 and caps.vec_ok(size_a)
    vec_b = vec and (k if tb else n) % 4 == 0 and caps.vec_ok(size_b)
    # C as vec4s where its rows are and the choice says so; a chain's (the epilogue's) where its loads allow
    key = chain_key(step.chain(), nodes) if chained else None
    vec_c = n % 4 == 0 and caps.vec_ok(node.size) and (vec4_ok(key) if chained else vec_c)
    if direct_fits(k, len(o["dims"]), caps):  # a software adapter: no workgroup memory, no barrier
        tiles_n, tiles_m = -(-n // TILE.bn), -(-m // TILE.bm)
        out, binds, words = epilogue(step, nodes, key, False, 3, EPILOGUE_AT) if chained else ("", ((3, node.id),), b"")
        source = direct_source(TILE, vec_a and not ta, bool(o["dims"]), scalar, ta, tb, out)
        grid, meta = grid_for(tiles_m * tiles_n * batch, caps.max_per_dim), matmul_meta(o, tiles_n, tiles_m, 0, 1, 0, 1)
        return [Dispatch(source, "main", ((1, ins[0]), (2, ins[1]), *binds), grid, meta + words, checked=False)]
    tiles_n, tiles_m = -(-n // cfg.bn), -(-m // cfg.bm)
    span = -(-max(-(-k // cfg.bk), 1) // splits)
    per = caps.loop_trips - len(o["dims"])
    partial = splits > 1 or (chained and span > per)  # C through scratch and the sum's dispatch
    out, binds, words = ("", ((3, "partials"),), b"") if partial else ("", ((3, node.id),), b"")
    if chained and not partial:
        out, binds, words = epilogue(step, nodes, key, vec_c, 3, EPILOGUE_AT)
    # no batch dimensions: one product (or a batch folded into M)
    source = matmul_source(
        cfg, pad, vec_a, vec_b, bool(o["dims"]), per, splits > 1, group > 1, span > per, ta, tb, vec_c, scalar, out
    )
    grid = grid_for(tiles_m * tiles_n * batch * splits, caps.max_per_dim)
    scratch = 4 * splits * node.size if partial else 0
    runs = [
        Dispatch(
            source,
            "main",
            ((1, ins[0]), (2, ins[1]), *binds),
            grid,
            matmul_meta(o, tiles_n, tiles_m, first, splits, span, group) + words,
            scratch,
            checked=False,
        )
        for first in range(0, span, per)
    ]
    if partial:
        count = node.size // 4 if vec_c else node.size
        t = f"vec4<{scalar}>" if vec_c else scalar
        out, binds, words = (
            epilogue(step, nodes, key, vec_c, 2, "8u")
            if chained
            else (f"@group(0) @binding(2) var<storage, read_write> c: array<{t}>;", ((2, node.id),), b"")
        )
        runs.append(
            Dispatch(
                (functions() if chained else "")
                + fill(shader("matmul_sum"), T=t, OUT=out, STORE="tw_out(i, s);" if chained else "c[i] = s;"),
                "main",
                ((1, "partials"), *binds),
                grid_for(-(-count // WORKGROUP), caps.max_per_dim),
                pack_meta([count, splits]) + words,
                scratch,
                checked=False,
            )
        )
    return runs
