// Softmax / log-softmax along the last axis, fully on the GPU in one submit.
// One read for the statistics, one read and one write for the result: each thread keeps an online
// (max, sum of tw_exp(x - max)) state over its elements, the sum a compensated float32 pair (sum, error:
// tw_lane_add per element, tw_pair_add where states merge), states merge across threads and workgroups
// (a NaN-propagating max; a state at max m rescales by tw_exp(m_old - m) unless m_old == m, so that
// -inf and +inf behave as in the two-pass NumPy formula), then y = tw_exp(x - max) / sum, or
// (x - max) - tw_log(sum). kernels/softmax.py fills in the element type V (vec4 where cols % 4 == 0, else f32)
// and ELEMENT: tw_push and tw_out for it, from softmax_vec4.wgsl or softmax_f32.wgsl.
//   main:  TPR threads per row (a power of two up to 256), 256 / TPR rows per workgroup
//   stats: long rows split in chunks, grid (chunks, rows): each workgroup's state -> parts
//   write: grid (chunks, rows): fold the row's chunk states, write the chunk
// tw_meta: [0] rows, [1] cols, [2] log?, [3] vectors per chunk, [4] chunks, [5] vectors per row,
//          [6] threads per row (main), [7] 1.0 (tw_one).

@group(0) @binding(0) var<storage, read> tw_meta: array<u32>;
@group(0) @binding(1) var<storage, read> x: array<{{V}}>;
@group(0) @binding(2) var<storage, read_write> y: array<{{V}}>;
@group(0) @binding(3) var<storage, read_write> parts: array<vec3<f32>>;

var<workgroup> tw_shared: array<vec3<f32>, 256>;

// state (m, s, e): max m, sum s + e -> its sum pair rescaled to max m
fn tw_rescale(st: vec3<f32>, m: f32) -> vec2<f32> { return st.yz * select(tw_exp(st.x - m), 1.0, st.x == m); }
// element x as a state (x, 1) (+inf: (inf, NaN), as inf - inf is in NumPy) rescaled to max m
fn tw_term(v: f32, m: f32) -> f32 { return select(tw_exp(v - m), select(1.0, tw_nan(), v > TW_F32_MAX), v == m); }
fn tw_merge(p: vec3<f32>, q: vec3<f32>) -> vec3<f32> {
    let m = tw_max(p.x, q.x);
    return vec3<f32>(m, tw_pair_add(tw_rescale(p, m), tw_rescale(q, m)));
}
fn tw_empty() -> vec3<f32> { return vec3<f32>(tw_neg_inf(), 0.0, 0.0); }
// a merged state -> (max, sum rounded to float32)
fn tw_done(st: vec3<f32>) -> vec2<f32> { return vec2<f32>(st.x, tw_pair_value(st.yz)); }
fn tw_out1(v: f32, st: vec2<f32>, log_s: f32, is_log: bool) -> f32 {
    let shifted = v - st.x;
    return select(tw_exp(shifted) / st.y, shifted - log_s, is_log);
}

{{ELEMENT}}

// merge the states of each aligned group of `width` threads (a power of two); every thread gets its group's
fn tw_fold(lid: u32, width: u32, st: vec3<f32>) -> vec3<f32> {
    workgroupBarrier();
    tw_shared[lid] = st;
    workgroupBarrier();
    for (var stride = width >> 1u; stride > 0u; stride = stride >> 1u) {
        if ((lid & (width - 1u)) < stride) { tw_shared[lid] = tw_merge(tw_shared[lid], tw_shared[lid + stride]); }
        workgroupBarrier();
    }
    return tw_shared[lid & ~(width - 1u)];
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    tw_one = bitcast<f32>(tw_meta[7]);
    let rows = tw_meta[0];
    let cv = tw_meta[5];
    let tpr = tw_meta[6];
    let is_log = tw_meta[2] == 1u;
    let lane = lid & (tpr - 1u);
    let row = (wid.y * nwg.x + wid.x) * (256u / tpr) + lid / tpr;
    let live = row < rows;  // rows past the end still reach every barrier
    let base = row * cv;
    var st = tw_empty();
    if (live) {
        for (var j = lane; j < cv; j = j + tpr) { st = tw_push(st, x[base + j]); }
    }
    let sd = tw_done(tw_fold(lid, tpr, st));
    if (live) {
        let log_s = tw_log(sd.y);
        for (var j = lane; j < cv; j = j + tpr) { y[base + j] = tw_out(x[base + j], sd, log_s, is_log); }
    }
}

@compute @workgroup_size(256)
fn stats(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    tw_one = bitcast<f32>(tw_meta[7]);
    let cv = tw_meta[5];
    let per = tw_meta[3];
    let base = wid.y * cv;
    let end = min(wid.x * per + per, cv);
    var st = tw_empty();
    for (var j = wid.x * per + lid; j < end; j = j + 256u) { st = tw_push(st, x[base + j]); }
    st = tw_fold(lid, 256u, st);
    if (lid == 0u) { parts[wid.y * tw_meta[4] + wid.x] = st; }
}

@compute @workgroup_size(256)
fn write(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    tw_one = bitcast<f32>(tw_meta[7]);
    let cv = tw_meta[5];
    let per = tw_meta[3];
    let chunks = tw_meta[4];
    let is_log = tw_meta[2] == 1u;
    var st = tw_empty();
    for (var k = lid; k < chunks; k = k + 256u) { st = tw_merge(st, parts[wid.y * chunks + k]); }
    let sd = tw_done(tw_fold(lid, 256u, st));
    let log_s = tw_log(sd.y);
    let base = wid.y * cv;
    let end = min(wid.x * per + per, cv);
    for (var j = wid.x * per + lid; j < end; j = j + 256u) { y[base + j] = tw_out(x[base + j], sd, log_s, is_log); }
}
