// Fused attention (kernels/attention.py): y = softmax(q k^T * scale, masked) v without the scores in memory. One
// workgroup per (batch element, tile of BQ query rows), SPLIT threads per query row (`part`), each walking its own
// groups of GROUP keys of every tile: its q row and its accumulator in registers (QV and VV vec4s, E and Ev
// zero-padded; one variable per vec4 in the generated text: arrays would be placed in memory); the keys and values
// in tiles of BK staged in workgroup memory by all threads (STAGE: every load in flight first). Online softmax per
// group: the group's scores in registers, the running max m (NaN-propagating), the sum l and the accumulator
// rescaled by 2^(m_old - m) (1 where m stays, so -inf and +inf rows behave as the two-pass formula), then l += p,
// acc += p v with p = 2^(s - m) (0 for a score of -inf: masked, or -inf itself; tw_exp2_neg, the scale times
// log2(e): the scores in log2 units). At the end MERGE folds a row's SPLIT states into its first thread through
// workgroup memory (mg). A row whose max stays -inf (every key masked) is NaN, as the softmax of all -inf. Causal:
// a workgroup walks only the keys up to its last row; a row skips the tiles wholly above its diagonal, and within
// its diagonal tile the groups past its own key. kernels/attention.py fills the constants, LOADS and PROLOGUE
// (kernels/attention_loads.py: what both attention kernels share), STAGE, SCORES, RESCALE, ACCUMULATE, MERGE and
// the mask's binding and check for the masked row. DIRECT (software adapters: a CPU rasterizer, where a barrier
// switches every group of lanes and workgroup memory is the same cache as the buffers): one thread a row reads its
// keys and values straight from k and v, no STAGE, no barrier, no workgroup memory.
// q, k and v may be views of their storage (read in place, kernels/attention.py's layout): each at its offset,
// its rows its row stride apart, a row's elements adjacent.
// tw_meta: [0] L, [1] S, [2] E, [3] Ev, [4] row tiles per batch element, [5] batch elements, [6] causal?,
//          [7] batch dimensions, [8] scale (f32 bits), [9] mask row stride, [10] mask key stride, [11] q offset,
//          [12] q row stride, [13] k offset, [14] k row stride, [15] v offset, [16] v row stride, then per
//          batch dimension (outermost first): size, q, k, v and mask strides.

@group(0) @binding(0) var<storage, read> tw_meta: array<u32>;
@group(0) @binding(1) var<storage, read> q: array<{{T}}>;
@group(0) @binding(2) var<storage, read> k: array<{{T}}>;
@group(0) @binding(3) var<storage, read> v: array<{{T}}>;
@group(0) @binding(5) var<storage, read_write> y: array<f32>;
{{MASK_BINDING}}

const BQ: u32 = {{BQ}}u;
const BK: u32 = {{BK}}u;
const QV: u32 = {{QV}}u;
const VV: u32 = {{VV}}u;
const GROUP: u32 = {{GROUP}}u;
const SPLIT: u32 = {{SPLIT}}u;  // threads per query row, each over its own keys of every tile

var<workgroup> ks: array<vec4<f32>, {{KS}}>;
var<workgroup> vs: array<vec4<f32>, {{VS}}>;
{{MERGE_DECL}}

{{LOADS}}

@compute @workgroup_size({{THREADS}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let group = wid.y * nwg.x + wid.x;
    let tiles = tw_meta[4];
    if (group >= tiles * tw_meta[5]) { return; }  // the same for the whole workgroup: before any barrier
    let batch = group / tiles;
    let r0 = (group - batch * tiles) * BQ;
{{PROLOGUE}}
    let r = lid % BQ;  // the query row; threads of a warp share `part`, so they read the same key together
    let part = lid / BQ;
    let i = r0 + r;
    let live = i < n_q;
{{DECLS}}
    if (live) {
{{LOAD_Q}}
    }
    var m = tw_neg_inf();
    var l = 0.0;
    let keys = select(n_k, min(n_k, r0 + BQ), causal);
    for (var j0 = 0u; j0 < keys; j0 = j0 + BK) {
{{STAGE}}
        if (live && (!causal || j0 <= i)) {
            // GROUP keys at a time, their scores in registers; this thread's groups: every SPLIT-th, causal ones
            // up to the row's own key (the group holding it masks the keys past it)
            let end = select(BK, min(BK, i + 1u - j0), causal);
            for (var j4 = part * GROUP; j4 < end; j4 = j4 + GROUP * SPLIT) {
{{SCORES}}
                let mn = tw_max(m, {{GROUP_MAX}});
                let alpha = select(tw_exp2_neg(m - mn), 1.0, m == mn);
                l = l * alpha;
                {{RESCALE}}
{{ACCUMULATE}}
                m = mn;
            }
        }
    }
{{MERGE}}
    if (live && part == 0u) {
        let dead = m == tw_neg_inf();
        let yo = (batch * n_q + i) * ev;
{{STORE_Y}}
    }
}
