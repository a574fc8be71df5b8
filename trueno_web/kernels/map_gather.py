"""A gather (take) as a member of the fused map kernel (kernels/map.py): its ref in the chain key with the
flags of its geometry (sizes stay in tw_meta, never in the WGSL text), its index helper tw_take{k}, and its
lines in the vec4 form. The vec4 form reads one index per output lane and the data element it names ("lanes";
an index or data that is a strided view is read through it per lane); where the inner size (elements after the
axis) is a multiple of 4 and the index is a view constant over each aligned run of 4 output elements (an
embedding's ids broadcast along its rows), one index and one aligned vec4 of data per vec4 of output ("row")."""

from __future__ import annotations

SINGLE = "single"  # one outer block: output element i // outer is always 0 (axis 0, or leading sizes 1)
UNIT = "unit"  # inner == 1: no `* inner`, no `% inner`
FLAT = "flat"  # the data is a plain 32-bit load: the vec4 form may read its elements, and aligned vec4s of them
VIEWED = "viewed"  # the data is an unmasked strided view of 32-bit words: the vec4 form reads it through the view


def take_refs(node, refs: tuple, views: list, nodes) -> tuple:
    """A gather's refs in a chain key: (("whole", data load, flags), index ref); an index load that is an
    unmasked strided view becomes ("row", load) where one index serves each vec4 of output (`row_view`), else
    ("lane", load): read through its view, per lane in the vec4 form."""
    (_, j), index = refs
    o, words = node.options, nodes[node.inputs[0]].dtype.wgsl in ("f32", "i32", "u32")
    data = (FLAT, views[j] is None and words), (VIEWED, views[j] is not None and views[j].mask is None and words)
    flags = geometry(node) + tuple(name for name, on in data if on)
    view = views[index[1]] if index[0] == "in" else None
    if (FLAT in flags or VIEWED in flags) and view is not None and view.mask is None:
        index = ("row" if FLAT in flags and o["inner"] % 4 == 0 and row_view(view) else "lane", index[1])
    return ("whole", j, flags), index


def geometry(node) -> tuple:
    """The flags of a gather's geometry (SINGLE, UNIT) that simplify tw_take's arithmetic."""
    o = node.options
    return tuple(name for name, on in ((SINGLE, o["outer"] == node.size), (UNIT, o["inner"] == 1)) if on)


def row_view(view) -> bool:
    """Is an unmasked view of an index the same over each aligned run of 4 elements: its last dimension a
    multiple of 4 long and of stride 0 (an index broadcast along the data's trailing axes)?"""
    return view.strides[-1] == 0 and view.shape[-1] % 4 == 0


def vec4_ok(key: tuple) -> bool:
    """May a chain key run in the vec4 form: every load plain, a strided one read a vec4 at a time (map.vec4_view)
    or only as a gather's "row" or "lane" index or its VIEWED data, and every gather's data 32-bit words, FLAT or
    VIEWED?"""
    loads, chain, quads = key[0], key[1], key[5]  # map.chain_key's
    gathers = [refs for _, refs, _ in chain if refs and refs[0][0] == "whole"]
    viewed = {refs[1][1] for refs in gathers if refs[1][0] in ("row", "lane")}
    viewed |= {refs[0][1] for refs in gathers if VIEWED in refs[0][2]}
    if any(FLAT not in refs[0][2] and VIEWED not in refs[0][2] for refs in gathers):
        return False
    if any(r[0] == "in" and r[1] in viewed for _, refs, _ in chain for r in refs):
        return False
    return all(view is None or j in viewed or quads[j] for j, view in enumerate(loads))


def take_fn(k: int, at: int, unsigned: bool, flags: tuple = ()) -> str:
    """WGSL helper of gather member k, its geometry (outer, n, inner) in tw_meta from `at`: tw_take{k}(i, index)
    -> u32, the element of its data that output element i reads; a negative index wraps once, then it is
    clamped into the axis (an out-of-range index reads the nearest end: the standard leaves it unspecified).
    `flags` (take_refs') drop the arithmetic a trivial geometry does not need."""
    index = "i32(min(v, 2147483647u))" if unsigned else "v"
    row = "u32(j)" if UNIT in flags else "u32(j) * inner + i % inner"
    block = "" if SINGLE in flags else f"(i / outer) * n{'' if UNIT in flags else ' * inner'} + "
    lines = [f"fn tw_take{k}(i: u32, v: {'u32' if unsigned else 'i32'}) -> u32 {{"]
    lines += [] if SINGLE in flags else [f"    let outer = tw_meta[{at}u];"]
    lines += [f"    let n = tw_meta[{at + 1}u];"]
    lines += [] if UNIT in flags else [f"    let inner = tw_meta[{at + 2}u];"]
    lines += [
        f"    var j = {index};",
        "    if (j < 0) { j = j + i32(n); }",
        "    j = clamp(j, 0, max(i32(n) - 1, 0));",
        f"    return {block}{row};",
        "}",
    ]
    return "\n".join(lines)


def vec4_take(k: int, refs: tuple, name) -> list[str]:
    """WGSL lines of gather member k on vec4 `i` (output elements 4i..4i+3): its lanes t{k}_x..t{k}_w. The data
    load is bound as vec4s: word e is component e & 3 of vec4 e >> 2 (a VIEWED data's element e is its view's
    word tw_at{j}(e)). `name(ref, lane)` is the map kernel's WGSL of a chain value's lane."""
    (_, j, flags), (kind, src) = refs
    if kind == "row":  # one index (read through its view at element 4i) and one aligned vec4 of data
        lines = [
            f"    let a{k} = tw_at{src}(i * 4u);",
            f"    let t{k}v = in{j}[tw_take{k}(i * 4u, in{src}[a{k} >> 2u][a{k} & 3u]) >> 2u];",
        ]
        return lines + [f"    let t{k}_{c} = t{k}v.{c};" for c in "xyzw"]
    lines = []
    for q, c in enumerate("xyzw"):
        if kind == "lane":  # element 4i+q of the index's view
            lines.append(f"    let a{k}_{c} = tw_at{src}(i * 4u + {q}u);")
        index = f"in{src}[a{k}_{c} >> 2u][a{k}_{c} & 3u]" if kind == "lane" else name(refs[1], "." + c)
        at = f"tw_take{k}(i * 4u + {q}u, {index})"
        lines.append(f"    let e{k}_{c} = {f'tw_at{j}({at})' if VIEWED in flags else at};")
    return lines + [f"    let t{k}_{c} = in{j}[e{k}_{c} >> 2u][e{k}_{c} & 3u];" for c in "xyzw"]
