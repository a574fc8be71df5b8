"""WGSL source for each plan step, from the shader set in `shaders/` and the op catalog.

A kernel's text depends only on the structure of its step (which functions, which operands), on the
alignment case (vec4 or scalar access) and on the adapter's capabilities (`Caps`), never on scalar
values or sizes: those travel in the `tw_meta` buffer. So the pipeline cache stays small and no user
value can make an invalid shader.

Memory layout the kernels rely on: every buffer the executor binds covers the array rounded up to 16
bytes (the buffer pool's buffers always have that room), so elementwise and reduction kernels read
and write whole vec4s; lanes past the element count touch only that padding (reductions fold the
identity for them).
"""

from __future__ import annotations

import array
import struct
import sys
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from .graph import MapStep, Node, OpStep

WORKGROUP = 256
REDUCE_MAX_PARTIALS = 1024
META_WORDS = 8  # u32 slots before the scalar parameters
TILE = 64  # smallest matmul tile edge (see MATMUL_CONFIGS)
DEFAULT_WG_STORAGE = 16384  # WebGPU's default maxComputeWorkgroupStorageSize


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


MATMUL_CONFIGS = {
    "128x128x8": MatmulConfig(128, 128, 8, 8, 8),
    "128x128x16": MatmulConfig(128, 128, 16, 8, 8),
    "128x64x8": MatmulConfig(128, 64, 8, 8, 4),
    "128x64x16": MatmulConfig(128, 64, 16, 8, 4),
    "64x64x8": MatmulConfig(64, 64, 8, 4, 4),
    "64x64x16": MatmulConfig(64, 64, 16, 4, 4),
}


@dataclass
class Caps:
    """What the kernels may use on this adapter, and the tuning picked for it."""

    max_per_dim: int = 65535
    binding_limit: int = 1 << 27  # max_storage_buffer_binding_size
    wg_storage: int = DEFAULT_WG_STORAGE  # max_compute_workgroup_storage_size
    subgroups: bool = False  # the adapter has the WebGPU "subgroups" feature and the device enabled it
    enable_subgroups: bool = True  # the WGSL compiler wants `enable subgroups;` (Tint does; naga refuses it)
    map_vpt: int = 2  # vec4s per thread in map kernels
    reduce_partials: int = REDUCE_MAX_PARTIALS  # workgroups of a reduction's first pass at most
    matmul: str = ""  # force a MATMUL_CONFIGS key ("" = pick by shape)
    matmul_min_groups: int = 256  # a larger tile only when it still gives this many workgroups

    @classmethod
    def for_driver(cls, driver) -> "Caps":
        limits = driver.limits
        return cls(
            max_per_dim=int(limits["max_compute_workgroups_per_dimension"]),
            binding_limit=int(limits["max_storage_buffer_binding_size"]),
            wg_storage=int(limits.get("max_compute_workgroup_storage_size", DEFAULT_WG_STORAGE)),
            subgroups="subgroups" in getattr(driver, "features", ()),
            enable_subgroups=getattr(driver, "wgsl_enable_subgroups", True),
        )

    def vec_ok(self, elements: int) -> bool:
        """Can `elements` floats be bound as vec4s (the byte size rounded up to 16 fits one binding)?"""
        return round16(elements * 4) <= self.binding_limit


def round16(nbytes: int) -> int:
    return max(16, -(-nbytes // 16) * 16)


@lru_cache(maxsize=None)
def shader(name: str) -> str:
    """Text of shaders/<name>.wgsl: from the installed wheel, or the source checkout."""
    packaged = resources.files("trueno_web").joinpath("shaders", f"{name}.wgsl")
    if packaged.is_file():
        return packaged.read_text()
    return (Path(__file__).resolve().parent.parent / "shaders" / f"{name}.wgsl").read_text()


def _fill(text: str, **parts) -> str:
    for key, value in parts.items():
        text = text.replace("{{" + key + "}}", str(value))
    return text


@dataclass(frozen=True)
class Dispatch:
    """One compute dispatch, backend-neutral: bindings name node ids or the scratch buffer."""

    source: str
    entry: str
    bindings: tuple[tuple[int, object], ...]  # (binding index, node id | "partials")
    grid: tuple[int, int]
    meta: bytes
    scratch: int = 0  # bytes of scratch ("partials") this dispatch needs


def pack_meta(words: list[int], params: tuple[float, ...] = ()) -> bytes:
    """Counts as u32, then scalar parameters as f32 bits (NaN and Inf travel as data)."""
    words = (words + [0] * META_WORDS)[:META_WORDS]
    scalars = array.array("f", params)  # rounds like float32 does: 1e39 -> inf (struct.pack would raise)
    if sys.byteorder == "big":
        scalars.byteswap()
    return struct.pack(f"<{META_WORDS}I", *words) + scalars.tobytes()


def grid_for(groups: int, max_per_dim: int = 65535) -> tuple[int, int]:
    """A 2-D grid of at least `groups` workgroups (past 65535 in one dimension)."""
    groups = max(groups, 1)
    if groups <= max_per_dim:
        return (groups, 1)
    return (max_per_dim, -(-groups // max_per_dim))


# ---------------------------------------------------------------- map (elementwise, fused)


def _map_key(step: MapStep, nodes: list[Node]) -> tuple:
    """The structure of a fused chain: what the WGSL text depends on (never values or sizes)."""
    local = {nid: ("in", j) for j, nid in enumerate(step.loads)}
    chain = []
    for k, nid in enumerate(step.nodes):
        node = nodes[nid]
        chain.append((node.op.wgsl, tuple(local[i] for i in node.inputs), len(node.params)))
        local[nid] = ("t", k)
    return len(step.loads), tuple(chain), tuple(local[nid] for nid in step.stores)


@lru_cache(maxsize=512)
def _map_text(key: tuple, vec: bool, vpt: int) -> str:
    n_loads, chain, stores = key
    elem = "vec4<f32>" if vec else "f32"
    decls = [f"@group(0) @binding({j + 1}) var<storage, read> in{j}: array<{elem}>;" for j in range(n_loads)]
    base = n_loads + 1
    decls += [f"@group(0) @binding({base + j}) var<storage, read_write> out{j}: array<{elem}>;"
              for j in range(len(stores))]
    n_params = sum(p for _, _, p in chain)
    body = [f"    let p{q} = tw_param({q}u);" for q in range(n_params)]
    body += [f"    let v_in{j} = in{j}[i];" for j in range(n_loads)]
    lanes = (".x", ".y", ".z", ".w") if vec else ("",)

    def name(ref, lane):
        kind, j = ref
        return f"v_in{j}{lane}" if kind == "in" else f"t{j}{'_' + lane[1:] if lane else ''}"

    q = 0
    for k, (fn, inputs, n_p) in enumerate(chain):
        params = [f"p{q + r}" for r in range(n_p)]
        q += n_p
        for lane in lanes:
            args = [name(ref, lane) for ref in inputs] + params
            body.append(f"    let t{k}{'_' + lane[1:] if lane else ''} = {fn}({', '.join(args)});")
    for j, ref in enumerate(stores):
        value = (f"vec4<f32>({', '.join(name(ref, lane) for lane in lanes)})" if vec and ref[0] == "t"
                 else name(ref, "") if ref[0] == "in" else name(ref, ""))
        body.append(f"    out{j}[i] = {value};")
    loop = "\n".join(f"    if (base + {j * WORKGROUP}u < count) {{ tw_chain(base + {j * WORKGROUP}u); }}"
                     for j in range(vpt))
    return shader("functions") + _fill(shader("map"), BINDINGS="\n".join(decls), BODY="\n".join(body),
                                       VPT=vpt, LOOP=loop)


def _map_source(step: MapStep, nodes: list[Node], vec: bool = False, vpt: int = 1) -> tuple[str, tuple[float, ...]]:
    params = tuple(v for nid in step.nodes for v in nodes[nid].params)
    return _map_text(_map_key(step, nodes), vec, vpt if vec else 1), params


# ---------------------------------------------------------------- reductions

_FOLD_SHARED = """
fn tw_fold(lid: u32, value: f32) -> f32 {
    tw_shared[lid] = value;
    workgroupBarrier();
    for (var stride = 128u; stride > 0u; stride = stride >> 1u) {
        if (lid < stride) { tw_shared[lid] = {{COMBINE}}(tw_shared[lid], tw_shared[lid + stride]); }
        workgroupBarrier();
    }
    return tw_shared[0];
}
"""

# butterfly within each subgroup, then one value per subgroup through workgroup memory (valid on lid 0)
_FOLD_SUBGROUP = """
fn tw_fold(lid: u32, value: f32, sg_size: u32) -> f32 {
    var v = value;
    for (var o = sg_size >> 1u; o > 0u; o = o >> 1u) { v = {{COMBINE}}(v, subgroupShuffleXor(v, o)); }
    if (lid % sg_size == 0u) { tw_shared[lid / sg_size] = v; }
    workgroupBarrier();
    var total: f32 = {{IDENTITY}};
    if (lid == 0u) {
        for (var j = 0u; j < 256u / sg_size; j = j + 1u) { total = {{COMBINE}}(total, tw_shared[j]); }
    }
    return total;
}
"""


@lru_cache(maxsize=None)
def _reduce_source(op_name: str, subgroups: bool = False, enable: bool = True) -> str:
    from .ops import get

    op = get(op_name)
    fold = _FOLD_SUBGROUP if subgroups else _FOLD_SHARED
    text = _fill(shader("reduce"), FOLD=fold,
                 ENABLE="enable subgroups;" if subgroups and enable else "",
                 SG_ARGS=", @builtin(subgroup_size) sg_size: u32" if subgroups else "",
                 SG_PASS=", sg_size" if subgroups else "",
                 B_DECL="@group(0) @binding(2) var<storage, read> b: array<vec4<f32>>;" if op.arity == 2 else "",
                 Y="b[i]" if op.arity == 2 else "x")
    unroll = 4 if op.arity == 2 else 8
    accs = [f"acc{u}" for u in range(unroll)]
    while len(accs) > 1:  # a balanced fold of the accumulators
        accs = [f"{{{{COMBINE}}}}({accs[j]}, {accs[j + 1]})" if j + 1 < len(accs) else accs[j]
                for j in range(0, len(accs), 2)]
    text = _fill(text, UNROLL=unroll, UNROLL_M1=unroll - 1, ACC_FOLD=accs[0],
                 ACC_DECL="\n".join(f"    var acc{u}: f32 = {{{{IDENTITY}}}};" for u in range(unroll)),
                 UNROLLED="\n".join(f"        let v{u} = tw_load4(i + {u}u * stride, n);" for u in range(unroll))
                 + "\n" + "\n".join(f"        acc{u} = {{{{COMBINE}}}}(acc{u}, v{u});" for u in range(unroll)))
    text = _fill(text, LOAD=op.wgsl, COMBINE=op.combine, IDENTITY=op.identity, FINISH=op.finish)
    # `enable` must come before any declaration, so before the shared functions
    head, sep, rest = text.partition("enable subgroups;")
    return (sep + "\n" + shader("functions") + head + rest) if sep else shader("functions") + text


# ---------------------------------------------------------------- softmax

_SM_PUSH = {
    "vec4<f32>": """    let m = tw_max(st.x, tw_max(tw_max(v.x, v.y), tw_max(v.z, v.w)));
    return vec2<f32>(m, tw_rescale(st, m) + ((tw_term(v.x, m) + tw_term(v.y, m)) + (tw_term(v.z, m) + tw_term(v.w, m))));""",
    "f32": """    let m = tw_max(st.x, v);
    return vec2<f32>(m, tw_rescale(st, m) + tw_term(v, m));""",
}
_SM_OUT = {
    "vec4<f32>": "    return vec4<f32>(tw_out1(v.x, st, log_s, is_log), tw_out1(v.y, st, log_s, is_log), "
                 "tw_out1(v.z, st, log_s, is_log), tw_out1(v.w, st, log_s, is_log));",
    "f32": "    return tw_out1(v, st, log_s, is_log);",
}


@lru_cache(maxsize=None)
def _softmax_source(vec: bool) -> str:
    v = "vec4<f32>" if vec else "f32"
    return shader("functions") + _fill(shader("softmax"), V=v, PUSH=_SM_PUSH[v], OUT=_SM_OUT[v])


# ---------------------------------------------------------------- matmul


def matmul_config(m: int, k: int, n: int, caps: Caps) -> tuple[MatmulConfig, bool]:
    """The tiling for an (m, k) @ (k, n) product here, and whether the A tile is padded."""
    names = [caps.matmul] if caps.matmul else ["128x128x8", "128x64x8", "64x64x8"]
    for i, name in enumerate(names):
        cfg = MATMUL_CONFIGS[name]
        groups = -(-m // cfg.bm) * -(-n // cfg.bn)
        last = i == len(names) - 1
        if not last and groups < caps.matmul_min_groups:
            continue
        for pad in (True, False):
            if cfg.storage(pad) <= caps.wg_storage:
                return cfg, pad
    return MATMUL_CONFIGS["64x64x8"], False  # 2 * 8 * 32 * 16 = 8 KiB: fits every adapter


@lru_cache(maxsize=None)
def _edge_load(arr: str, outer: str, outer_total: str, inner: str, inner_total: str, vec: bool) -> str:
    """WGSL body loading 4 consecutive floats of a row-major `arr` at (outer, inner), zero past its edges:
    one vec4 load where rows are whole vec4s, else 4 guarded scalar loads."""
    if vec:
        return (f"    if ({outer} < {outer_total} && {inner} < {inner_total}) "
                f"{{ return {arr}[({outer} * {inner_total} + {inner}) / 4u]; }}\n"
                "    return vec4<f32>(0.0);")
    xyzw = "xyzw"
    return (f"    var v = vec4<f32>(0.0);\n    if ({outer} < {outer_total}) {{\n        let base = {outer} * {inner_total};\n"
            + "".join(f"        if ({inner} + {q}u < {inner_total}) {{ v.{xyzw[q]} = {arr}[base + {inner} + {q}u]; }}\n"
                      for q in range(4))
            + "    }\n    return v;")


def matmul_source(cfg: MatmulConfig, pad: bool, vec_a: bool, vec_b: bool) -> str:
    """The register-blocked kernel of shaders/matmul.wgsl for one tiling and alignment case."""
    bm, bn, bk, tm, tn = cfg.bm, cfg.bn, cfg.bk, cfg.tm, cfg.tn
    tx, ty, threads = bn // tn, bm // tm, cfg.threads
    sa = bm // 4 + int(pad)
    a_vecs, b_vecs = bm * bk // 4, bk * bn // 4  # vec4 loads per slice
    la, lb = -(-a_vecs // threads), -(-b_vecs // threads)
    xyzw = "xyzw"

    acc = [f"    var acc_{i}_{r}_{j} = vec4<f32>(0.0);" for i in range(tm // 4) for r in range(4) for j in range(tn // 4)]
    acc += [f"    var pa{l}: vec4<f32>;" for l in range(la)] + [f"    var pb{l}: vec4<f32>;" for l in range(lb)]

    def fetch(indent):
        out = []
        for l in range(la):
            guard = "" if a_vecs % threads == 0 or l < la - 1 else f"if (lid + {l * threads}u < {a_vecs}u) "
            out.append(f"{indent}{guard}{{ let idx = lid + {l * threads}u; "
                       f"pa{l} = load_a(row0 + idx / {bk // 4}u, k0 + (idx % {bk // 4}u) * 4u, m_total, k_total); }}")
        for l in range(lb):
            guard = "" if b_vecs % threads == 0 or l < lb - 1 else f"if (lid + {l * threads}u < {b_vecs}u) "
            out.append(f"{indent}{guard}{{ let idx = lid + {l * threads}u; "
                       f"pb{l} = load_b(k0 + idx / {bn // 4}u, col0 + (idx % {bn // 4}u) * 4u, k_total, n_total); }}")
        return "\n".join(out)

    def stash(indent, stage):
        out = []
        for l in range(la):
            guard = "" if a_vecs % threads == 0 or l < la - 1 else f"if (lid + {l * threads}u < {a_vecs}u) "
            stores = " ".join(
                f"a_tile[{stage} * A_STAGE + ((idx % {bk // 4}u) * 4u + {c}u) * SA + r / 4u][r % 4u] = pa{l}.{xyzw[c]};"
                for c in range(4))
            out.append(f"{indent}{guard}{{ let idx = lid + {l * threads}u; let r = idx / {bk // 4}u; {stores} }}")
        for l in range(lb):
            guard = "" if b_vecs % threads == 0 or l < lb - 1 else f"if (lid + {l * threads}u < {b_vecs}u) "
            out.append(f"{indent}{guard}{{ let idx = lid + {l * threads}u; "
                       f"b_tile[{stage} * B_STAGE + idx] = pb{l}; }}")
        return "\n".join(out)

    compute = []
    for kk in range(bk):
        for i in range(tm // 4):
            compute.append(f"        let a{kk}_{i} = a_tile[a_base + {kk}u * SA + ty + {i * ty}u];")
        for j in range(tn // 4):
            compute.append(f"        let b{kk}_{j} = b_tile[b_base + {kk}u * SB + tx + {j * tx}u];")
        for i in range(tm // 4):
            for r in range(4):
                for j in range(tn // 4):
                    v = f"acc_{i}_{r}_{j}"
                    compute.append(f"        {v} = fma(vec4<f32>(a{kk}_{i}.{xyzw[r]}), b{kk}_{j}, {v});")

    store = []
    for i in range(tm // 4):
        for r in range(4):
            store.append(f"    {{ let row = row0 + (ty + {i * ty}u) * 4u + {r}u;")
            for j in range(tn // 4):
                v = f"acc_{i}_{r}_{j}"
                col = f"col0 + (tx + {j * tx}u) * 4u"
                if vec_b:
                    store.append(f"      {{ let col = {col}; if (row < m_total && col < n_total) "
                                 f"{{ c[(row * n_total + col) / 4u] = {v}; }} }}")
                else:
                    for q in range(4):
                        store.append(f"      {{ let col = {col} + {q}u; if (row < m_total && col < n_total) "
                                     f"{{ c[row * n_total + col] = {v}.{xyzw[q]}; }} }}")
            store.append("    }")

    load_a = _edge_load("a", "row", "m_total", "k", "k_total", vec_a)
    load_b = _edge_load("b", "k", "k_total", "col", "n_total", vec_b)

    return _fill(
        shader("matmul"),
        A_TYPE="vec4<f32>" if vec_a else "f32", B_TYPE="vec4<f32>" if vec_b else "f32",
        BM=bm, BN=bn, BK=bk, TX=tx, THREADS=threads, SA_PAD=int(pad),
        A_TILE=2 * bk * sa, B_TILE=2 * bk * (bn // 4),
        LOAD_A=load_a, LOAD_B=load_b, ACC_DECL="\n".join(acc),
        FETCH="    { let k0 = 0u;\n" + fetch("      ") + "\n    }",
        STASH=stash("    ", "0u"),
        FETCH_NEXT=fetch("            "), STASH_NEXT=stash("            ", "stage"),
        COMPUTE="\n".join(compute), STORE="\n".join(store),
    )


# ---------------------------------------------------------------- plan steps -> dispatches


def dispatches(step: MapStep | OpStep, nodes: list[Node], max_per_dim: int = 65535,
               caps: Caps | None = None) -> list[Dispatch]:
    """The dispatches that compute one plan step."""
    caps = caps or Caps(max_per_dim=max_per_dim)
    if isinstance(step, MapStep):
        vec = caps.vec_ok(step.size)
        vpt = max(1, caps.map_vpt) if vec else 1
        source, params = _map_source(step, nodes, vec, vpt)
        binds = tuple(enumerate([*step.loads, *step.stores], start=1))
        count = -(-step.size // 4) if vec else step.size
        groups = -(-count // (WORKGROUP * vpt))
        return [Dispatch(source, "main", binds, grid_for(groups, caps.max_per_dim), pack_meta([count], params))]
    node = nodes[step.node]
    op = node.op
    ins = node.inputs
    if op.kind == "reduce":
        n = nodes[ins[0]].size
        nv = -(-n // 4)
        parts = min(max(-(-nv // (WORKGROUP * 4)), 1), caps.reduce_partials)
        meta = pack_meta([n, parts, nv])
        source = _reduce_source(op.name, caps.subgroups, caps.enable_subgroups)
        binds = ((1, ins[0]),) + (((2, ins[1]),) if op.arity == 2 else ()) + ((3, "partials"),)
        return [
            Dispatch(source, "partial", binds, (parts, 1), meta, scratch=4 * parts),
            Dispatch(source, "finish", ((3, "partials"), (4, node.id)), (1, 1), meta, scratch=4 * parts),
        ]
    if op.kind == "softmax":
        return _softmax_dispatches(node, ins[0], caps)
    if op.kind == "matmul":
        m, k, n = node.options["m"], node.options["k"], node.options["n"]
        cfg, pad = matmul_config(m, k, n, caps)
        vec_a = k % 4 == 0 and caps.vec_ok(m * k)
        vec_b = n % 4 == 0 and caps.vec_ok(k * n) and caps.vec_ok(m * n)
        tiles_n, tiles_m = -(-n // cfg.bn), -(-m // cfg.bm)
        return [Dispatch(matmul_source(cfg, pad, vec_a, vec_b), "main", ((1, ins[0]), (2, ins[1]), (3, node.id)),
                         grid_for(tiles_m * tiles_n, caps.max_per_dim), pack_meta([m, k, n, tiles_n, tiles_m]))]
    if op.kind == "conv2d":
        (h, w), (kh, kw) = nodes[ins[0]].shape, nodes[ins[1]].shape
        oh, ow = node.shape
        groups = -(-(oh * ow) // WORKGROUP)
        return [Dispatch(shader("conv2d"), "main", ((1, ins[0]), (2, ins[1]), (3, node.id)),
                         grid_for(groups, caps.max_per_dim), pack_meta([h, w, kh, kw, oh, ow]))]
    raise NotImplementedError(f"no WGSL kernel for op kind {op.kind!r}")


SOFTMAX_CHUNK_ROWS = 128  # fewer rows than this, and long: split each row across workgroups
SOFTMAX_CHUNK_VECS = 2048  # at least this many vectors per chunk
SOFTMAX_TARGET_GROUPS = 512


def _softmax_dispatches(node: Node, src: int, caps: Caps) -> list[Dispatch]:
    cols = node.shape[-1] if node.shape else 1
    rows = node.size // cols if cols else 0
    vec = cols % 4 == 0 and caps.vec_ok(node.size)
    cv = cols // 4 if vec else cols
    is_log = int(node.op.name == "log_softmax")
    source = _softmax_source(vec)
    if 0 < rows < SOFTMAX_CHUNK_ROWS and cv >= 2 * SOFTMAX_CHUNK_VECS and rows <= caps.max_per_dim:
        chunks = min(-(-cv // SOFTMAX_CHUNK_VECS), -(-SOFTMAX_TARGET_GROUPS // rows))
        per = -(-cv // chunks)
        chunks = -(-cv // per)
        meta = pack_meta([rows, cols, is_log, per, chunks, cv, 256])
        binds = ((1, src), (3, "partials"))
        scratch = 8 * rows * chunks
        return [Dispatch(source, "stats", binds, (chunks, rows), meta, scratch),
                Dispatch(source, "write", ((1, src), (2, node.id), (3, "partials")), (chunks, rows), meta, scratch)]
    tpr = 256 if cv >= 256 else 1 << max(cv - 1, 0).bit_length()
    groups = -(-rows // (256 // tpr))
    meta = pack_meta([rows, cols, is_log, 0, 0, cv, tpr])
    return [Dispatch(source, "main", ((1, src), (2, node.id)), grid_for(groups, caps.max_per_dim), meta)]
