"""Full reductions: all of an array (shaders/reduce.wgsl: partial folds per workgroup, then one workgroup
folds those). Reductions along rows run in the row kernel (kernels/rows.py)."""

from __future__ import annotations

from functools import lru_cache

from ..graph import Node, OpStep
from ..ops import Op
from .caps import Caps
from .source import ONE_BITS, WORKGROUP, Dispatch, accumulator, fill, pack_meta, shader


SUM_ACCUMULATORS = 2  # per thread in sums (their loop carries one add: few suffice); other folds one per load


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
    acc = accumulator(op.combine, op.identity)
    n_acc = SUM_ACCUMULATORS if acc["DONE"] else unroll
    accs = [f"{{{{DONE}}}}(acc{u})" for u in range(n_acc)]
    while len(accs) > 1:  # a balanced fold of the accumulators
        accs = [f"{{{{COMBINE}}}}({accs[j]}, {accs[j + 1]})" if j + 1 < len(accs) else accs[j]
                for j in range(0, len(accs), 2)]
    text = fill(text, UNROLL=unroll, UNROLL_M1=unroll - 1, ACC_FOLD=accs[0],
                ACC_DECL="\n".join(f"    var acc{u}: {{{{LANES}}}} = {{{{START}}}};" for u in range(n_acc)),
                UNROLLED="\n".join(f"        let v{u} = tw_load4(i + {u}u * stride, n);" for u in range(unroll))
                + "\n" + "\n".join(f"        acc{u % n_acc} = tw_add4(acc{u % n_acc}, v{u});" for u in range(unroll)))
    text = fill(text, LOAD=op.wgsl, IDENTITY=op.identity, FINISH=op.finish, **acc)
    # `enable` must come before any declaration, so before the shared functions
    head, sep, rest = text.partition("enable subgroups;")
    return (sep + "\n" + shader("functions") + head + rest) if sep else shader("functions") + text


def dispatches(step: OpStep, nodes: list[Node], caps: Caps) -> list[Dispatch]:
    node = nodes[step.node]
    op, ins = node.op, node.inputs
    n = nodes[ins[0]].size
    nv = -(-n // 4)
    parts = min(max(-(-nv // (WORKGROUP * 4)), 1), caps.reduce_partials)
    meta = pack_meta([n, parts, nv, 0, 0, 0, 0, ONE_BITS])
    source = reduce_source(op, caps.subgroups, caps.enable_subgroups)
    binds = ((1, ins[0]),) + (((2, ins[1]),) if op.arity == 2 else ()) + ((3, "partials"),)
    return [
        Dispatch(source, "partial", binds, (parts, 1), meta, scratch=8 * parts),
        Dispatch(source, "finish", ((3, "partials"), (4, node.id)), (1, 1), meta, scratch=8 * parts),
    ]
