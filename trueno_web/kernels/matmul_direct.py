"""The matmul of software adapters (shaders/matmul_direct.wgsl): register blocks read straight from the
buffers, no workgroup memory, no barrier. On a CPU rasterizer (SwiftShader, lavapipe) the tiled kernel's
barriers and staging cost more than they save; docs/benchmarks.md has the figures. The per-thread block is
written out statement by statement here, as in kernels/matmul.py (WGSL has no unroll directive)."""

from __future__ import annotations

from typing import NamedTuple

from .caps import Caps
from .source import fill, shader


class DirectTile(NamedTuple):
    """TM x TN outputs per thread (TN a multiple of 4), TX x TY threads per workgroup."""

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


TILE = DirectTile(4, 4, 8, 8)
XYZW = "xyzw"


def direct_fits(k: int, dims: int, ta: bool, tb: bool, caps: Caps) -> bool:
    """Does this product run the direct kernel: asked for by caps (a software adapter, no tiling forced),
    both operands row-major, and its loops (K / 4 + 3, the batch's `dims`) within the loop budget."""
    return caps.matmul_direct and not caps.matmul and not (ta or tb) and k // 4 + 3 + dims <= caps.loop_trips


def direct_source(tile: DirectTile, vec_a: bool, vec_b: bool, vec_c: bool, batched: bool) -> str:
    """The kernel for one alignment case: `vec_a` (K % 4 == 0: A's rows as vec4s along K), `vec_b`, `vec_c`
    (N % 4 == 0: B's and C's rows as vec4s along N); `batched`: a batch of products (else one)."""
    tm, tnv = tile.tm, tile.tn // 4
    decl = [f"    let ra{i} = a_off + min(row + {i}u, m_total - 1u) * k_total;" for i in range(tm)]
    if vec_b:  # a column of vec4s past N reads the last one (N >= 4 where N % 4 == 0)
        decl += [f"    let cb{j} = b_off + min(col + {4 * j}u, n_total - 4u);" for j in range(tnv)]
    else:
        decl += [
            f"    let cb{j}{XYZW[q]} = b_off + min(col + {4 * j + q}u, n_total - 1u);"
            for j in range(tnv)
            for q in range(4)
        ]
    decl += [f"    var acc{i}_{j} = vec4<f32>(0.0);" for i in range(tm) for j in range(tnv)]

    def b_row(kk: str, name: str) -> list[str]:
        if vec_b:
            return [f"        let {name}_{j} = b[(cb{j} + ({kk}) * n_total) / 4u];" for j in range(tnv)]
        return [
            f"        let {name}_{j} = vec4<f32>("
            + ", ".join(f"b[cb{j}{XYZW[q]} + ({kk}) * n_total]" for q in range(4))
            + ");"
            for j in range(tnv)
        ]

    step4 = []
    for i in range(tm):
        if vec_a:
            step4.append(f"        let a{i} = a[(ra{i} + k) / 4u];")
        else:
            step4.append(f"        let a{i} = vec4<f32>(" + ", ".join(f"a[ra{i} + k + {q}u]" for q in range(4)) + ");")
    for q in range(4):
        step4 += b_row(f"k + {q}u", f"b{q}")
    for q in range(4):
        for i in range(tm):
            for j in range(tnv):
                step4.append(f"        acc{i}_{j} = fma(vec4<f32>(a{i}.{XYZW[q]}), b{q}_{j}, acc{i}_{j});")

    # the last K % 4 steps: none where K % 4 == 0 (vec_a), so A is read by scalars there
    step1 = [f"        let a{i} = a[ra{i} + k];" for i in range(tm)] + b_row("k", "b0")
    step1 += [f"        acc{i}_{j} = fma(vec4<f32>(a{i}), b0_{j}, acc{i}_{j});" for i in range(tm) for j in range(tnv)]

    store = []
    for i in range(tm):
        store.append(f"    if (row + {i}u < m_total) {{ let at = c_off + (row + {i}u) * n_total + col;")
        for j in range(tnv):
            if vec_c:
                store.append(f"        if (col + {4 * j}u < n_total) {{ c[(at + {4 * j}u) / 4u] = acc{i}_{j}; }}")
            else:
                store += [
                    f"        if (col + {4 * j + q}u < n_total) {{ c[at + {4 * j + q}u] = acc{i}_{j}.{XYZW[q]}; }}"
                    for q in range(4)
                ]
        store.append("    }")

    return fill(
        shader("matmul_direct"),
        A_TYPE="vec4<f32>" if vec_a else "f32",
        B_TYPE="vec4<f32>" if vec_b else "f32",
        C_TYPE="vec4<f32>" if vec_c else "f32",
        BM=tile.bm,
        BN=tile.bn,
        TX=tile.tx,
        TM=tile.tm,
        TN=tile.tn,
        THREADS=tile.tx * tile.ty,
        LOCATE=shader("matmul_batch" if batched else "matmul_one"),
        ORDER=shader("matmul_order_rows"),
        DECL="\n".join(decl),
        STEP4="\n".join(step4),
        STEP1="" if vec_a else "\n".join(step1),
        STORE="\n".join(store),
    )
