"""The fused elementwise kernel (shaders/map.wgsl): one chain of catalog functions per element."""

from __future__ import annotations

from functools import lru_cache

from ..graph import MapStep, Node
from .caps import Caps
from .source import WORKGROUP, Dispatch, fill, grid_for, pack_meta, shader


def chain_key(step: MapStep, nodes: list[Node]) -> tuple:
    """The structure of a fused chain: what the WGSL text depends on (never values or sizes)."""
    local = {nid: ("in", j) for j, nid in enumerate(step.loads)}
    chain = []
    for k, nid in enumerate(step.nodes):
        node = nodes[nid]
        chain.append((node.op.wgsl, tuple(local[i] for i in node.inputs), len(node.params)))
        local[nid] = ("t", k)
    return len(step.loads), tuple(chain), tuple(local[nid] for nid in step.stores)


@lru_cache(maxsize=512)
def map_source(key: tuple, vec: bool, vpt: int) -> str:
    """WGSL of one chain structure, on vec4s (each lane through the same scalar functions) or on f32."""
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
                 else name(ref, ""))
        body.append(f"    out{j}[i] = {value};")
    loop = "\n".join(f"    if (base + {j * WORKGROUP}u < count) {{ tw_chain(base + {j * WORKGROUP}u); }}"
                     for j in range(vpt))
    return shader("functions") + fill(shader("map"), BINDINGS="\n".join(decls), BODY="\n".join(body),
                                      VPT=vpt, LOOP=loop)


def dispatches(step: MapStep, nodes: list[Node], caps: Caps) -> list[Dispatch]:
    vec = caps.vec_ok(step.size)
    vpt = max(1, caps.map_vpt) if vec else 1
    source = map_source(chain_key(step, nodes), vec, vpt)
    params = tuple(v for nid in step.nodes for v in nodes[nid].params)
    binds = tuple(enumerate([*step.loads, *step.stores], start=1))
    count = -(-step.size // 4) if vec else step.size
    groups = -(-count // (WORKGROUP * vpt))
    return [Dispatch(source, "main", binds, grid_for(groups, caps.max_per_dim), pack_meta([count], params))]
