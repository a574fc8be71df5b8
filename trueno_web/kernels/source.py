"""Shader text from shaders/, filling templates, and the backend-neutral Dispatch a generator returns."""

from __future__ import annotations

import array
import struct
import sys
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

WORKGROUP = 256
META_WORDS = 8  # u32 slots before the scalar parameters
ONE_BITS = 0x3F800000  # 1.0: tw_meta[7] of the reduction kernels (tw_one in shaders/functions.wgsl)


@cache
def shader(name: str) -> str:
    """Text of shaders/<name>.wgsl: from the installed wheel, or the source checkout."""
    packaged = resources.files("trueno_web").joinpath("shaders", f"{name}.wgsl")
    if packaged.is_file():
        return packaged.read_text()
    return (Path(__file__).resolve().parents[2] / "shaders" / f"{name}.wgsl").read_text()


def functions() -> str:
    """The per-op functions of every dtype (shaders/functions.wgsl, functions_int.wgsl and the float16
    conversions of functions_half.wgsl): what the kernels that run elementwise chains (map, rows, reduce) call."""
    return shader("functions") + shader("functions_int") + shader("functions_half")


def fill(text: str, **parts) -> str:
    """Replace each {{KEY}} of a template by its part."""
    for key, value in parts.items():
        text = text.replace("{{" + key + "}}", str(value))
    return text


# a reduction's identity in an integer dtype, by the catalog's combine (max: the dtype's smallest value)
INT_IDENTITY = {
    "i32": {"tw_add": "0i", "tw_mul": "1i", "tw_max": "i32(-2147483648)", "tw_min": "2147483647i"},
    "u32": {"tw_add": "0u", "tw_mul": "1u", "tw_max": "0u", "tw_min": "4294967295u"},
    "bool": {"tw_max": "0u", "tw_min": "1u"},
}


def fold(op, dtype) -> tuple[str, str, str, str, str]:
    """(load, combine, identity, finish, T) of reduction `op` computing in `dtype` (T its WGSL scalar): the
    catalog's own for float32; an integer's or bool's combine is the dtype's function (tw_add_i32,
    shaders/functions_int.wgsl) and its identity the dtype's (INT_IDENTITY)."""
    if dtype.kind == "float":
        return op.wgsl, op.combine, op.identity, op.finish, "f32"
    key = "bool" if dtype.kind == "bool" else dtype.wgsl
    return op.wgsl, op.combine + dtype.suffix, INT_IDENTITY[key][op.combine], op.finish, dtype.wgsl


def accumulator(combine: str, identity: str, scalar: str = "f32") -> dict[str, str]:
    """How a reduction's kernels accumulate with `combine` (source.fold's) in the WGSL scalar type `scalar`
    (T). Folds across threads: ACC (the type), LIFT (T -> ACC), COMBINE, VALUE (ACC -> T). A thread's own elements: ADD1 (ACC and f32 ->
    ACC, the row kernel); in the reduce kernel one lane per vec4 component, branch-free: LANES (the type;
    DECL declares it where it is a struct), START, ADD4 (an expression of `acc` and the vec4 `v`) and DONE
    (statements: LANES -> ACC). Sums keep (sum, error) float32 pairs (shaders/functions.wgsl: tw_lane_add);
    max and min a select on the order per lane and the largest |bits| apart (past 0x7f800000: a NaN),
    folded with `combine` once done; other folds (and every integer one: exact, no compensation) `combine`
    per lane."""
    if combine == "tw_add":
        return dict(
            ACC="vec2<f32>",
            LIFT="tw_pair",
            COMBINE="tw_pair_add",
            VALUE="tw_pair_value",
            ADD1="tw_lane_add",
            DECL="",
            LANES="mat4x2<f32>",
            START="mat4x2<f32>()",
            ADD4="tw_lanes_add(acc, v)",
            DONE="return tw_lanes_pair(acc);",
            T="f32",
        )
    c = combine
    acc = dict(
        ACC=scalar,
        LIFT="",
        COMBINE=c,
        VALUE="",
        ADD1=c,
        DECL="",
        LANES=f"vec4<{scalar}>",
        START=f"vec4<{scalar}>({identity})",
        ADD4=f"vec4<{scalar}>({c}(acc.x, v.x), {c}(acc.y, v.y), {c}(acc.z, v.z), {c}(acc.w, v.w))",
        DONE=f"return {c}({c}(acc.x, acc.y), {c}(acc.z, acc.w));",
        T=scalar,
    )
    order = {"tw_max": ">", "tw_min": "<"}.get(c)
    if order:
        acc.update(
            DECL="struct TwOrder { v: vec4<f32>, bits: vec4<u32> }",
            LANES="TwOrder",
            START=f"TwOrder(vec4<f32>({identity}), vec4<u32>())",
            ADD4=f"TwOrder(select(acc.v, v, v {order} acc.v), "
            "max(acc.bits, bitcast<vec4<u32>>(v) & vec4<u32>(0x7fffffffu)))",
            DONE="let b = max(max(acc.bits.x, acc.bits.y), max(acc.bits.z, acc.bits.w));\n    let w = acc.v;\n"
            f"    return select({c}({c}(w.x, w.y), {c}(w.z, w.w)), bitcast<f32>(b), b > 0x7f800000u);",
        )
    return acc


@dataclass(frozen=True)
class Dispatch:
    """One compute dispatch, backend-neutral: bindings name node ids or the scratch buffer."""

    source: str
    entry: str
    bindings: tuple[tuple[int, object], ...]  # (binding index, node id | "partials")
    grid: tuple[int, int]
    meta: bytes
    scratch: int = 0  # bytes of scratch ("partials") this dispatch needs
    checked: bool = True  # False: its indices in range and its loops bounded by construction (Driver.compile)


def pack_meta(words: list[int], params: tuple[float, ...] = ()) -> bytes:
    """Counts as u32, then scalar parameters as f32 bits (NaN and Inf travel as data)."""
    words = (words + [0] * META_WORDS)[:META_WORDS]
    return struct.pack(f"<{META_WORDS}I", *words) + scalar_bytes(params)


def scalar_bytes(params: tuple[float, ...]) -> bytes:
    """Scalar parameters as little-endian f32 bits."""
    scalars = array.array("f", params)  # rounds like float32 does: 1e39 -> inf (struct.pack would raise)
    if sys.byteorder == "big":
        scalars.byteswap()
    return scalars.tobytes()


def grid_for(groups: int, max_per_dim: int = 65535) -> tuple[int, int]:
    """A 2-D grid of at least `groups` workgroups (past 65535 in one dimension)."""
    groups = max(groups, 1)
    if groups <= max_per_dim:
        return (groups, 1)
    return (max_per_dim, -(-groups // max_per_dim))
