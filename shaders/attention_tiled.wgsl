// Fused attention as two register-tiled products (kernels/attention_tiled.py; FlashAttention-2's blocking): one
// workgroup of 16 x LANES threads per (batch element, tile of 64 query rows), the rows' q tile (times the scale)
// staged once in workgroup memory, then per tile of 64 keys: the K and V tiles staged, the 64 x 64 scores as a
// product of register tiles (a thread: rows ty*4.. x keys tx, tx + LANES, ...), the mask checked only on tiles at
// an end, the diagonal or under a mask; each row's tile max across its LANES threads (lanes of one subgroup: xor
// shuffles where the subgroups are that wide, else through workgroup memory); the online softmax (running max m,
// the sum l kept per thread and added up at the end, the accumulator rescaled by 2^(m_old - m)), p = 2^(s - m)
// (tw_exp2_neg: the scale times log2(e) folded into q, so the scores are in log2 units) with m taken as 0 while it
// is -inf (every key so far masked: p and the rescale 0, nothing accumulated yet), stored as p^T over the K tile;
// acc += p v as a second product (a thread: its 4 rows x value vec4s tx, tx + LANES, ...; on the diagonal tile only
// the keys up to its last row). NaN: a NaN score's p is NaN whatever the max (tw_exp2_neg passes NaN through), and
// so is its row's l and output, as in the two-pass formula; so the maxima are the builtin max (a +inf score: p =
// 2^(inf - inf), NaN, as there). A row whose max stays -inf (every key masked) is NaN. Workgroup memory rows are
// swizzled (vec4 c of row r at c ^ (r % QV)) so a warp's reads and writes hit distinct banks. Causal: a workgroup
// walks the keys up to its last row, the heaviest workgroups first. q, k and v are read in place as
// kernels/attention.py's layout describes (tw_meta as there, its words read by PROLOGUE: kernels/attention_loads.py).

@group(0) @binding(0) var<storage, read> tw_meta: array<u32>;
@group(0) @binding(1) var<storage, read> q: array<{{T}}>;
@group(0) @binding(2) var<storage, read> k: array<{{T}}>;
@group(0) @binding(3) var<storage, read> v: array<{{T}}>;
@group(0) @binding(5) var<storage, read_write> y: array<f32>;
{{MASK_BINDING}}

const QV: u32 = {{QV}}u;  // vec4s of a q or k row (a power of two up to 16)
const VV: u32 = {{VV}}u;  // vec4s of a v row (a power of two up to 16): value dims tx*4.. for tx < VV

var<workgroup> qs: array<vec4<f32>, {{QS}}>;  // the q tile: 64 rows of QV vec4s
var<workgroup> ks: array<vec4<f32>, {{KS}}>;  // the K tile (64 keys of QV vec4s), then p^T (64 keys of 16
// vec4s of rows), then (subgroups under 16 lanes) the rows' partial maxima and sums
var<workgroup> vs: array<vec4<f32>, {{VS}}>;  // the V tile: 64 keys of VV vec4s

{{LOADS}}

@compute @workgroup_size({{THREADS}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32{{SG_ARGS}}) {
    let group = wid.y * nwg.x + wid.x;
    let tiles = tw_meta[4];
    let batches = tw_meta[5];
    if (group >= tiles * batches) { return; }  // the same for the whole workgroup: before any barrier
    let batch = group % batches;
    let r0 = (tiles - 1u - group / batches) * 64u;  // the last row tiles (a causal row's most keys) first
{{PROLOGUE}}
    let tx = lid % {{LANES}}u;  // a row's threads: lanes of one subgroup, as drivers make them
    let ty = lid / {{LANES}}u;
{{WIDE}}
{{STAGE_Q}}
    let keys = select(n_k, min(n_k, r0 + 64u), causal);
{{DECLS}}
    for (var j0 = 0u; j0 < keys; j0 = j0 + 64u) {
        workgroupBarrier();  // the last tile's p^T and V read by every thread
{{STAGE_KV}}
        workgroupBarrier();
{{SCORES}}
        workgroupBarrier();  // the K tile read by every thread: p^T goes over it
{{ROW_MAX}}
{{SOFTMAX}}
        workgroupBarrier();
{{PV}}
    }
{{ROW_SUM}}
{{STORE_Y}}
}
