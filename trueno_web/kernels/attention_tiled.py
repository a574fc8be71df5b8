"""Fused attention as two register-tiled products (shaders/attention_tiled.wgsl): a workgroup of 16 x 64 / KEYS
threads per (batch element, 64 query rows), tiles of 64 keys, a thread's 4 rows x KEYS scores and its 4 rows x
value vec4s in registers, each row's tile max across its threads by subgroup shuffles (or workgroup memory where
the subgroups are narrower or absent). kernels/attention.py picks it on hardware adapters where the head dims
fit (`fits`; 48 KiB of workgroup memory at head dims of 64) and fills its metadata; this module writes the
kernel's unrolled text. Measured on the H100 (docs/benchmarks.md): 4 keys a thread (256 threads) beat 8 (128,
half the workgroup-memory reads a multiply-add but more registers), staging the next tiles in registers lost."""

from __future__ import annotations

from functools import cache, reduce

from .attention_loads import MASK_BINDING, MASK_CHECK, PROLOGUE, loads
from .source import fill, shader

ROWS = 64  # query rows of a workgroup, and keys of a tile
KEYS = 4  # keys of a tile a thread scores for each of its 4 rows: 64 / KEYS threads a row, 16 x that a workgroup
MAX_VECS = 16  # vec4s of a q, k or v row at most (head dims up to 64)
PV_UNROLL = 8  # keys of a tile multiplied into the accumulator a loop trip


def storage(qv: int, vv: int) -> int:
    """Bytes of workgroup memory for head dims of qv and vv vec4s: the q tile, the K tile (or p^T), the V tile."""
    return 16 * (ROWS * qv + max(ROWS * qv, ROWS * 16) + ROWS * vv)


def fits(qv: int, vv: int, wg_storage: int) -> bool:
    return qv <= MAX_VECS and vv <= MAX_VECS and storage(qv, vv) <= wg_storage


def trips(keys: int, qv: int) -> int:
    """Loop trips a thread makes over `keys` keys (the loop budget, Caps.loop_trips)."""
    return -(-keys // ROWS) * (qv + ROWS // PV_UNROLL + 2)


def max_of(values: list[str]) -> str:
    return reduce(lambda a, b: f"max({a}, {b})", values)


def staged(count: int, threads: int) -> list[tuple[int, str, str]]:
    """(u, index, guard) of the vec4s t = lid + threads u < count a thread moves of a tile of `count` vec4s: the
    guard an `if` where the last of them passes the tile's end, else empty."""
    return [
        (u, f"lid + {threads * u}u", f"if (lid + {threads * u}u < {count}u) " if threads * (u + 1) > count else "")
        for u in range(-(-count // threads))
    ]


def across_row(var: str, combine: str, lanes: int, indent: str) -> str:
    """WGSL that folds `var0..var3` (a thread's values for its 4 rows) across a row's `lanes` threads through
    workgroup memory, where `wide` (uniform) is false: two barriers."""
    per = lanes // 4  # vec4s of a row's partials
    put = " ".join(f"ks[(ty * 4u + {m}u) * {per}u + tx / 4u][tx % 4u] = {var}{m};" for m in range(4))
    get = []
    for m in range(4):
        parts = [f"ks[(ty * 4u + {m}u) * {per}u + {c}u].{t}" for c in range(per) for t in "xyzw"]
        get.append(f"{var}{m} = {max_of(parts) if combine == 'max' else ' + '.join(parts)};")
    body = f"\n{indent}    ".join([put, "workgroupBarrier();", *get, "workgroupBarrier();"])
    return f"{indent}if (!wide) {{\n{indent}    {body}\n{indent}}}"


def shuffled(var: str, combine: str, lanes: int, indent: str) -> str:
    """WGSL that folds `var0..var3` across a row's `lanes` threads (lanes tx of one subgroup) by xor shuffles."""
    steps = []
    for m in range(4):
        for o in (1 << b for b in range(lanes.bit_length() - 1)):
            x = f"subgroupShuffleXor({var}{m}, {o}u)"
            steps.append(f"{var}{m} = max({var}{m}, {x});" if combine == "max" else f"{var}{m} += {x};")
    return f"{indent}if (wide) {{\n{indent}    " + f"\n{indent}    ".join(steps) + f"\n{indent}}}"


@cache
def source(qv: int, vv: int, masked: bool, vec: bool, shuffles: bool, enable: bool) -> str:
    """The kernel for head dims of qv and vv vec4s; `vec`: q, k and v bound as vec4 arrays; `shuffles`: the
    adapter has subgroups (a workgroup still checks their width at run time); `enable`: the WGSL compiler
    wants `enable subgroups;`."""
    lanes = ROWS // KEYS  # a row's threads
    threads = 16 * lanes
    dv = 16 // lanes  # value vec4s a thread accumulates: tx + lanes d
    i4, i8 = " " * 4, " " * 8
    q_at = k_at = staged(ROWS * qv, threads)  # the q tile and a K tile: 64 rows of QV vec4s
    v_at = staged(ROWS * vv, threads)
    stage_q = [
        f"{i4}{guard}{{ let t = {t}; let row = t / QV; "
        "let c = t % QV; let i = r0 + row; var x = vec4<f32>(0.0); "
        "if (i < n_q) { x = tw_q4(qo + i * q_row, c, e) * scale; } qs[row * QV + (c ^ ((row >> 2u) % QV))] = x; }"
        for _, t, guard in q_at
    ]
    decls = (
        [f"{i4}var m{m} = tw_neg_inf();\n{i4}var l{m} = 0.0;" for m in range(4)]
        + [f"{i4}var acc{m}_{d} = vec4<f32>(0.0);" for m in range(4) for d in range(dv)]
        + [
            f"{i4}let kb{n} = (tx + {lanes * n}u) * QV;\n{i4}let ksw{n} = (tx + {lanes * n}u) % QV;"
            for n in range(KEYS)
        ]
        + [f"{i4}let qb{m} = (ty * 4u + {m}u) * QV;" for m in range(4)]
        + [f"{i4}let qsw = ty % QV;"]
        + [f"{i4}let vt{d} = min(tx + {lanes * d}u, VV - 1u);" for d in range(dv)]
    )

    stage_kv = (  # the tile's K and V: every load in flight into registers, then the stores
        [f"{i8}let kr{u} = tw_kt(min({t}, {ROWS * qv - 1}u), j0, ko, k_row, n_k, e);" for u, t, _ in k_at]
        + [f"{i8}let vr{u} = tw_vt(min({t}, {ROWS * vv - 1}u), j0, vo, v_row, n_k, ev);" for u, t, _ in v_at]
        + [
            f"{i8}{guard}{{ let t = {t}; let key = t / QV; ks[key * QV + ((t % QV) ^ (key % QV))] = kr{u}; }}"
            for u, t, guard in k_at
        ]
        + [f"{i8}{guard}{{ vs[{t}] = vr{u}; }}" for u, t, guard in v_at]
    )
    edge = "true" if masked else f"j0 + {ROWS}u > n_k || r0 + {ROWS}u > n_q || (causal && j0 + {ROWS - 1}u > r0)"
    scores = (
        [f"{i8}var s{m}{n} = 0.0;" for m in range(4) for n in range(KEYS)]
        + [f"{i8}for (var c = 0u; c < QV; c = c + 1u) {{"]
        + [f"{i8}    let q{m} = qs[qb{m} + (c ^ qsw)];" for m in range(4)]
        + [  # a key's vec4, then its 4 dot products (fewer registers live than every load first)
            line
            for n in range(KEYS)
            for line in [f"{i8}    let k{n} = ks[kb{n} + (c ^ ksw{n})];"]
            + [f"{i8}    s{m}{n} = s{m}{n} + dot(q{m}, k{n});" for m in range(4)]
        ]
        + [f"{i8}}}", f"{i8}if ({edge}) {{"]
        + [
            f"{i8}    {{ let i = r0 + ty * 4u + {m}u; let j = j0 + tx + {lanes * n}u; "
            f"var masked = j >= n_k || i >= n_q || (causal && j > i); {MASK_CHECK if masked else ''} "
            f"s{m}{n} = select(s{m}{n}, tw_neg_inf(), masked); }}"
            for m in range(4)
            for n in range(KEYS)
        ]
        + [f"{i8}}}"]
        + [f"{i8}var mx{m} = {max_of([f's{m}{n}' for n in range(KEYS)])};" for m in range(4)]
    )
    row_max = ([shuffled("mx", "max", lanes, i8)] if shuffles else []) + [across_row("mx", "max", lanes, i8)]
    softmax = []
    for m in range(4):  # the max made finite (0 while every key so far is masked: p and alpha then 0)
        softmax += [
            f"{i8}let mn{m} = max(m{m}, mx{m});",
            f"{i8}let ms{m} = select(mn{m}, 0.0, mn{m} == tw_neg_inf());",
            f"{i8}let al{m} = tw_exp2_neg(m{m} - ms{m});",
        ]
        softmax += [f"{i8}let p{m}{n} = tw_exp2_neg(s{m}{n} - ms{m});" for n in range(KEYS)]
        softmax += [f"{i8}l{m} = l{m} * al{m} + ({' + '.join(f'p{m}{n}' for n in range(KEYS))});"]
        softmax += [f"{i8}acc{m}_{d} = acc{m}_{d} * al{m};" for d in range(dv)] + [f"{i8}m{m} = mn{m};"]
    softmax += [
        f"{i8}{{ let key = tx + {lanes * n}u; ks[key * 16u + (ty ^ (key & 15u))] = vec4<f32>(p0{n}, p1{n}, p2{n}, p3{n}); }}"
        for n in range(KEYS)
    ]
    # causal: on the diagonal tile a thread's rows (ty * 4..) take no key past ty * 4 + 3
    diagonal = f"select({ROWS}u, ty * 4u + 4u, causal && j0 == r0)"
    pv = [f"{i8}let pv_end = {diagonal};", f"{i8}for (var j = 0u; j < pv_end; j = j + {PV_UNROLL}u) {{"]
    for u in range(PV_UNROLL):
        pv.append(f"{i8}    {{ let jj = j + {u}u; let pj = ks[jj * 16u + (ty ^ (jj & 15u))];")
        for d in range(dv):
            pv.append(
                f"{i8}      {{ let vj = vs[jj * VV + vt{d}]; "
                + " ".join(f"acc{m}_{d} = acc{m}_{d} + pj.{'xyzw'[m]} * vj;" for m in range(4))
                + " }"
            )
        pv.append(f"{i8}    }}")
    pv.append(f"{i8}}}")
    row_sum = [f"{i4}var ls{m} = l{m};" for m in range(4)]
    row_sum += ([shuffled("ls", "add", lanes, i4)] if shuffles else []) + [
        f"{i4}workgroupBarrier();  // the last tile's p^T read by every thread",
        across_row("ls", "add", lanes, i4),
    ]
    store = []
    for m in range(4):
        store.append(f"{i4}{{ let i = r0 + ty * 4u + {m}u; let dead = m{m} == tw_neg_inf();")
        for d in range(dv):
            store.append(f"{i4}  {{ let c = 4u * (tx + {lanes * d}u); let yo = (batch * n_q + i) * ev + c;")
            store += [
                f"{i4}    if (i < n_q && c + {t}u < ev) {{ y[yo + {t}u] = select(acc{m}_{d}.{'xyzw'[t]} / ls{m}, "
                f"tw_nan(), dead); }}"
                for t in range(4)
            ]
            store.append(f"{i4}  }}")
        store.append(f"{i4}}}")
    wide = (
        f"{i4}if (lid == 0u) {{ ks[0] = vec4<f32>(f32(sg)); }}\n"
        f"{i4}let wide = workgroupUniformLoad(&ks[0]).x >= {lanes}.0;  // the subgroups' width, uniform"
        if shuffles
        else f"{i4}let wide = false;"
    )
    body = fill(
        shader("attention_tiled"),
        T="vec4<f32>" if vec else "f32",
        MASK_BINDING=MASK_BINDING if masked else "",
        QV=qv,
        VV=vv,
        LANES=lanes,
        THREADS=threads,
        QS=ROWS * qv,
        KS=max(ROWS * qv, ROWS * 16),
        VS=ROWS * vv,
        LOADS=loads(vec),
        PROLOGUE=PROLOGUE,
        SG_ARGS=", @builtin(subgroup_size) sg: u32" if shuffles else "",
        WIDE=wide,
        STAGE_Q="\n".join(stage_q),
        DECLS="\n".join(decls),
        STAGE_KV="\n".join(stage_kv),
        SCORES="\n".join(scores),
        ROW_MAX="\n".join(row_max),
        SOFTMAX="\n".join(softmax),
        PV="\n".join(pv),
        ROW_SUM="\n".join(row_sum),
        STORE_Y="\n".join(store),
    )
    head = "enable subgroups;\n" if shuffles and enable else ""
    return head + shader("functions") + body
