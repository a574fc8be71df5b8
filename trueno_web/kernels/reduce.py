"""Reductions: all of an array (shaders/reduce.wgsl: partial folds per workgroup, then one workgroup folds
those), or each of its contiguous rows (shaders/reduce_rows.wgsl, the option rows=R)."""

from __future__ import annotations

from functools import lru_cache

from ..graph import Node, OpStep
from ..ops import Op
from .caps import Caps
from .source import WORKGROUP, Dispatch, fill, grid_for, pack_meta, shader


@lru_cache(maxsize=None)
def reduce_source(op: Op, subgroups: bool = False, enable: bool = True) -> str:
    """WGSL of one reduction: the op's load, fold and finish in the template, `unroll` loads in flight."""
    two = op.arity == 2
    text = fill(shader("reduce"), FOLD=shader("fold_subgroup" if subgroups else "fold_shared"),
                ENABLE="enable subgroups;" if subgroups and enable else "",
                SG_ARGS=", @builtin(subgroup_size) sg_size: u32" if subgroups else "",
                SG_PASS=", sg_size" if subgroups else "",
                B_DECL="@group(0) @binding(2) var<storage, read> b: array<vec4<f32>>;" if two else "",
                Y="b[i]" if two else "x")
    unroll = 4 if two else 8
    accs = [f"acc{u}" for u in range(unroll)]
    while len(accs) > 1:  # a balanced fold of the accumulators
        accs = [f"{{{{COMBINE}}}}({accs[j]}, {accs[j + 1]})" if j + 1 < len(accs) else accs[j]
                for j in range(0, len(accs), 2)]
    text = fill(text, UNROLL=unroll, UNROLL_M1=unroll - 1, ACC_FOLD=accs[0],
                ACC_DECL="\n".join(f"    var acc{u}: f32 = {{{{IDENTITY}}}};" for u in range(unroll)),
                UNROLLED="\n".join(f"        let v{u} = tw_load4(i + {u}u * stride, n);" for u in range(unroll))
                + "\n" + "\n".join(f"        acc{u} = {{{{COMBINE}}}}(acc{u}, v{u});" for u in range(unroll)))
    text = fill(text, LOAD=op.wgsl, COMBINE=op.combine, IDENTITY=op.identity, FINISH=op.finish)
    # `enable` must come before any declaration, so before the shared functions
    head, sep, rest = text.partition("enable subgroups;")
    return (sep + "\n" + shader("functions") + head + rest) if sep else shader("functions") + text


@lru_cache(maxsize=None)
def rows_source(op: Op) -> str:
    """WGSL of one reduction along contiguous rows (shaders/reduce_rows.wgsl)."""
    two = op.arity == 2
    return shader("functions") + fill(
        shader("reduce_rows"), B_DECL="@group(0) @binding(2) var<storage, read> b: array<f32>;" if two else "",
        Y="b[i]" if two else "0.0", LOAD=op.wgsl, COMBINE=op.combine, IDENTITY=op.identity, FINISH=op.finish)


def dispatches(step: OpStep, nodes: list[Node], caps: Caps) -> list[Dispatch]:
    node = nodes[step.node]
    op, ins = node.op, node.inputs
    if node.options.get("rows") is not None:
        rows = node.options["rows"]
        cols = nodes[ins[0]].size // rows if rows else 0
        tpr = 256 if cols >= 256 else 1 << max(cols - 1, 0).bit_length()
        binds = ((1, ins[0]),) + (((2, ins[1]),) if op.arity == 2 else ()) + ((4, node.id),)
        return [Dispatch(rows_source(op), "main", binds, grid_for(-(-rows // (256 // tpr)), caps.max_per_dim),
                         pack_meta([rows, cols, tpr]))]
    n = nodes[ins[0]].size
    nv = -(-n // 4)
    parts = min(max(-(-nv // (WORKGROUP * 4)), 1), caps.reduce_partials)
    meta = pack_meta([n, parts, nv])
    source = reduce_source(op, caps.subgroups, caps.enable_subgroups)
    binds = ((1, ins[0]),) + (((2, ins[1]),) if op.arity == 2 else ()) + ((3, "partials"),)
    return [
        Dispatch(source, "partial", binds, (parts, 1), meta, scratch=4 * parts),
        Dispatch(source, "finish", ((3, "partials"), (4, node.id)), (1, 1), meta, scratch=4 * parts),
    ]
