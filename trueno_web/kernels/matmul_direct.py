"""The matmul of software adapters (shaders/matmul_direct.wgsl): register blocks read straight from the
buffers, no workgroup memory, no barrier. On a CPU rasterizer (SwiftShader, lavapipe) the tiled kernel's
barriers and staging cost more than they save; docs/benchmarks.md has the figures. The per-thread block is
written out statement by statement here, as in kernels/matmul.py (WGSL has no unroll directive)."""

from __future__ import annotations

from typing import NamedTuple

from .caps import Caps
from .source import fill, shader


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


def direct_fits(k: int, dims: int, ta: bool, tb: bool, caps: Caps) -> bool:
    """Does this product run the direct kernel: asked for by caps (a software adapter, no tiling forced),
    both operands row-major, and its loops (K / 4 + 3, the batch's `dims`) within the loop budget."""
    return caps.matmul_direct and not caps.matmul and not (ta or tb) and k // 4 + 3 + dims <= caps.loop_trips


def direct_source(tile: DirectTile, vec_a: bool, batched: bool, scalar: str = "f32") -> str:
    """The kernel for `vec_a` (K % 4 == 0: A's rows read as vec4s along K, else as scalars), `batched`
    (a batch of products, else one) and `scalar`, the WGSL type of the elements (f32; i32 and u32 multiply
    and add exactly, wrapping)."""
    tm, tn, tx = tile.tm, tile.tn, tile.tx
    decl = [
        f"    let ra{i} = (a_off + min(row + {i}u, m_total - 1u) * k_total){' / 4u' if vec_a else ''};"
        for i in range(tm)
    ]
    decl += [f"    let cb{j} = b_off + min(col + {j * tx}u, n_total - 1u);" for j in range(tn)]
    decl += [f"    var acc{i}_{j} = {scalar}();" for i in range(tm) for j in range(tn)]

    step4 = [
        f"        let a{i} = a[ra{i} + k / 4u];"
        if vec_a
        else f"        let a{i} = vec4<{scalar}>(" + ", ".join(f"a[ra{i} + k + {q}u]" for q in range(4)) + ");"
        for i in range(tm)
    ]
    for q in range(4):
        step4 += [f"        let b{q}_{j} = b[kb + cb{j}{f' + n{q}' if q else ''}];" for j in range(tn)]
    step4 += [
        f"        acc{i}_{j} += a{i}.x * b0_{j} + a{i}.y * b1_{j} + a{i}.z * b2_{j} + a{i}.w * b3_{j};"
        for i in range(tm)
        for j in range(tn)
    ]

    # the last K % 4 steps: none where K % 4 == 0 (vec_a), so A is read by scalars there
    step1 = [f"        let a{i} = a[ra{i} + k];" for i in range(tm)]
    step1 += [f"        let b0_{j} = b[kb + cb{j}];" for j in range(tn)]
    step1 += [f"        acc{i}_{j} += a{i} * b0_{j};" for i in range(tm) for j in range(tn)]

    store = []
    for i in range(tm):
        store.append(f"    if (row + {i}u < m_total) {{ let at = c_off + (row + {i}u) * n_total + col;")
        store += [f"        if (col + {j * tx}u < n_total) {{ c[at + {j * tx}u] = acc{i}_{j}; }}" for j in range(tn)]
        store.append("    }")

    return fill(
        shader("matmul_direct"),
        A_TYPE=f"vec4<{scalar}>" if vec_a else scalar,
        S=scalar,
        BM=tile.bm,
        BN=tile.bn,
        TX=tx,
        TM=tm,
        THREADS=tx * tile.ty,
        LOCATE=shader("matmul_batch" if batched else "matmul_one"),
        ORDER=shader("matmul_order_rows"),
        DECL="\n".join(decl),
        STEP4="\n".join(step4),
        STEP1="" if vec_a else "\n".join(step1),
        STORE="\n".join(store),
    )
