"""The matmul of software adapters (shaders/matmul_direct.wgsl): register blocks read straight from the
buffers (either operand stored transposed read in place), no workgroup memory, no barrier. On a CPU rasterizer (SwiftShader, lavapipe) the tiled kernel's
barriers and staging cost more than they save; docs/benchmarks.md has the figures. The per-thread block is
written out statement by statement here, as in kernels/matmul.py (WGSL has no unroll directive)."""

from __future__ import annotations

from typing import NamedTuple

from .caps import Caps
from .source import fill, functions, shader


class DirectTile(NamedTuple):
    """TM x TN outputs per thread, TX x TY threads per workgroup."""

    tm: int
    tn: int
    tx: int
    ty: int

    @property
    def bm(self) -> int:
        return self.tm * self.ty

    @property
    def bn(self) -> int:
        return self.tn * self.tx


TILE = DirectTile(8, 8, 8, 8)


def direct_fits(k: int, dims: int, caps: Caps) -> bool:
    """Does this product run the direct kernel: asked for by caps (a software adapter, no tiling forced) and
    its loops (K / 4 + 3, the batch's `dims`) within the loop budget."""
    return caps.matmul_direct and not caps.matmul and k // 4 + 3 + dims <= caps.loop_trips


def direct_source(
    tile: DirectTile,
    vec_a: bool,
    batched: bool,
    scalar: str = "f32",
    ta: bool = False,
    tb: bool = False,
    out: str = "",
) -> str:
    """The kernel for `vec_a` (K % 4 == 0 and A row-major: A's rows read as vec4s along K, else as scalars),
    `batched` (a batch of products, else one), `scalar`, the WGSL type of the elements (f32; i32 and u32
    multiply and add exactly, wrapping), and `ta` / `tb`: that operand stored transposed, read in place (A as
    (K, M): a thread's rows are columns M apart; B as (N, K): a column's K values are neighbours). `out`: an
    epilogue's WGSL (kernels/matmul.py `epilogue`), whose tw_out stores C, else C is binding 3."""
    tm, tn, tx = tile.tm, tile.tn, tile.tx
    vec_a = vec_a and not ta
    if ta:  # ra: the element of row i at k = 0; `ka` walks K by rows of M
        decl = [f"    let ra{i} = a_off + min(row + {i}u, m_total - 1u);" for i in range(tm)]
        decl += [f"    let m{q} = {q}u * m_total;" for q in (1, 2, 3)] + ["    var ka = 0u;"]
    else:
        decl = [
            f"    let ra{i} = (a_off + min(row + {i}u, m_total - 1u) * k_total){' / 4u' if vec_a else ''};"
            for i in range(tm)
        ]
    decl += [
        f"    let cb{j} = b_off + min(col + {j * tx}u, n_total - 1u){' * k_total' if tb else ''};" for j in range(tn)
    ]
    decl += [f"    var acc{i}_{j} = {scalar}();" for i in range(tm) for j in range(tn)]

    def a_at(i: int, q: int) -> str:  # A[row + i, k + q]
        return f"a[ka + ra{i}{f' + m{q}' if q else ''}]" if ta else f"a[ra{i} + k{f' + {q}u' if q else ''}]"

    def b_at(j: int, q: int) -> str:  # B[k + q, col + j * TX]
        return f"b[cb{j} + k{f' + {q}u' if q else ''}]" if tb else f"b[kb + cb{j}{f' + n{q}' if q else ''}]"

    step4 = [
        f"        let a{i} = a[ra{i} + k / 4u];"
        if vec_a
        else f"        let a{i} = vec4<{scalar}>(" + ", ".join(a_at(i, q) for q in range(4)) + ");"
        for i in range(tm)
    ]
    for q in range(4):
        step4 += [f"        let b{q}_{j} = {b_at(j, q)};" for j in range(tn)]
    step4 += [
        f"        acc{i}_{j} += a{i}.x * b0_{j} + a{i}.y * b1_{j} + a{i}.z * b2_{j} + a{i}.w * b3_{j};"
        for i in range(tm)
        for j in range(tn)
    ]
    step4 += ["        ka = ka + 4u * m_total;"] if ta else []

    # the last K % 4 steps: none where K % 4 == 0 (vec_a), so A is read by scalars there
    step1 = [f"        let a{i} = {a_at(i, 0)};" for i in range(tm)]
    step1 += [f"        let b0_{j} = {b_at(j, 0)};" for j in range(tn)]
    step1 += [f"        acc{i}_{j} += a{i} * b0_{j};" for i in range(tm) for j in range(tn)]
    step1 += ["        ka = ka + m_total;"] if ta else []

    store = []
    for i in range(tm):
        store.append(f"    if (row + {i}u < m_total) {{ let at = c_off + (row + {i}u) * n_total + col;")
        put = "tw_out(at + {0}u, acc{1}_{2});" if out else "c[at + {0}u] = acc{1}_{2};"
        store += [f"        if (col + {j * tx}u < n_total) {{ {put.format(j * tx, i, j)} }}" for j in range(tn)]
        store.append("    }")

    return fill(
        (functions() if out else "") + shader("matmul_direct"),
        OUT=out or f"@group(0) @binding(3) var<storage, read_write> c: array<{scalar}>;",
        A_TYPE=f"vec4<{scalar}>" if vec_a else scalar,
        S=scalar,
        BM=tile.bm,
        BN=tile.bn,
        TX=tx,
        TM=tm,
        THREADS=tx * tile.ty,
        SIZES=shader("matmul_sizes"),
        LOCATE=shader("matmul_batch" if batched else "matmul_one"),
        ORDER=shader("matmul_order_rows"),
        DECL="\n".join(decl),
        STEP4="\n".join(step4),
        STEP1="" if vec_a else "\n".join(step1),
        STORE="\n".join(store),
    )
