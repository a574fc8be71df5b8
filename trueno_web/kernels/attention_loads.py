"""The WGSL both attention kernels (kernels/attention.py, kernels/attention_tiled.py) read q, k, v and the mask
with: a batch element's offsets, rows of vec4s from a buffer bound as floats or as vec4s, a K or V tile's vec4s."""

from __future__ import annotations

MASK_BINDING = "@group(0) @binding(4) var<storage, read> mask: array<f32>;"
# a score of key j for query row i (both in range) masked where the mask is 0
MASK_CHECK = "if (!masked) { masked = mask[mo + i * tw_meta[9u] + j * tw_meta[10u]] == 0.0; }"

# the tw_meta words both kernels read, once `batch` (its batch element) is known: sizes, causal, the scale times
# log2(e) (the scores in log2 units, for tw_exp2_neg), where q, k, v and the mask start and their row strides
PROLOGUE = """    let n_q = tw_meta[0];
    let n_k = tw_meta[1];
    let e = tw_meta[2];
    let ev = tw_meta[3];
    let causal = tw_meta[6] != 0u;
    let scale = bitcast<f32>(tw_meta[8]) * 1.44269504;  // log2(e): the scores in log2 units, for tw_exp2_neg
    let starts = tw_offsets(batch);
    let qo = starts.x;
    let ko = starts.y;
    let vo = starts.z;
    let mo = starts.w;
    let q_row = tw_meta[12];
    let k_row = tw_meta[14];
    let v_row = tw_meta[16];"""
LOAD_F32 = """fn tw_{b}4(at: u32, c: u32, n: u32) -> vec4<f32> {{
    var r = vec4<f32>(0.0);
    for (var t = 0u; t < 4u; t = t + 1u) {{ if (4u * c + t < n) {{ r[t] = {b}[at + 4u * c + t]; }} }}
    return r;
}}"""
LOAD_VEC4 = """fn tw_{b}4(at: u32, c: u32, n: u32) -> vec4<f32> {{
    return select(vec4<f32>(0.0), {b}[at / 4u + c], 4u * c < n);
}}"""
SHARED_FNS = """// where a batch element's q, k, v and mask start: tw_meta's offsets, plus each batch dimension's index
// (outermost first) times its strides
fn tw_offsets(batch: u32) -> vec4<u32> {
    var at = vec4<u32>(tw_meta[11], tw_meta[13], tw_meta[15], 0u);
    var left = batch;
    for (var d = tw_meta[7]; d > 0u; d = d - 1u) {
        let w = 12u + 5u * d;  // 17 + 5 * (d - 1)
        let size = tw_meta[w];
        let idx = left % size;
        left = left / size;
        at = at + idx * vec4<u32>(tw_meta[w + 1u], tw_meta[w + 2u], tw_meta[w + 3u], tw_meta[w + 4u]);
    }
    return at;
}
// vec4 t of the tile of keys (values) from j0: zeros past the last key
fn tw_kt(t: u32, j0: u32, ko: u32, k_row: u32, n_k: u32, e: u32) -> vec4<f32> {
    let j = j0 + t / QV;
    if (j >= n_k) { return vec4<f32>(0.0); }
    return tw_k4(ko + j * k_row, t % QV, e);
}
fn tw_vt(t: u32, j0: u32, vo: u32, v_row: u32, n_k: u32, ev: u32) -> vec4<f32> {
    let j = j0 + t / VV;
    if (j >= n_k) { return vec4<f32>(0.0); }
    return tw_v4(vo + j * v_row, t % VV, ev);
}"""


def loads(vec: bool) -> str:
    """WGSL of the loads both kernels share: tw_q4, tw_k4, tw_v4 (the c-th vec4 of a row of n floats from `at`,
    zeros past n; one function per buffer, as WGSL passes none), tw_offsets (a batch element's starts) and tw_kt,
    tw_vt (a K or V tile's vec4 t)."""
    return "\n".join((LOAD_VEC4 if vec else LOAD_F32).format(b=b) for b in "qkv") + "\n" + SHARED_FNS
