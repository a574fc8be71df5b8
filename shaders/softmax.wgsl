// Softmax / log-softmax along the last axis, fully on the GPU in one submit.
// One read for the statistics, one read and one write for the result: each thread keeps an online
// (max, sum of tw_exp(x - max)) state over its elements, the sum a compensated float32 pair (sum, error:
// tw_lane_add per element, tw_pair_add where states merge), states merge across threads and workgroups
// (a NaN-propagating max; a state at max m rescales by tw_exp(m_old - m) unless m_old == m, so that
// -inf and +inf behave as in the two-pass NumPy formula), then y = tw_exp(x - max) / sum, or
// (x - max) - tw_log(sum). kernels/softmax.py fills in the element type V (vec4 where cols % 4 == 0, else f32)
// and ELEMENT: tw_push and tw_out for it, from softmax_vec4.wgsl or softmax_f32.wgsl.
// Each loop trip of a thread loads four vectors (STEP apart) before it uses them: four loads in flight.
//   main:  TPR threads per row (a power of two up to 256), 256 / TPR rows per workgroup (softmax_regs.wgsl's
//          main_regs where a thread's vectors of its row fit in registers)
//   stats: long rows split in chunks, grid (chunks, rows): each workgroup's state -> parts
//   write: grid (chunks, rows): fold the row's chunk states, write a chunk; the grid and each chunk are
//          walked backwards, so that the first reads find what the stats pass read last still in the cache
// tw_meta: [0] rows, [1] cols, [2] log?, [3] vectors per chunk, [4] chunks, [5] vectors per row,
//          [6] threads per row (main), [7] 1.0 (tw_one).

@group(0) @binding(0) var<storage, read> tw_meta: array<u32>;
@group(0) @binding(1) var<storage, read> x: array<{{V}}>;
@group(0) @binding(2) var<storage, read_write> y: array<{{V}}>;
@group(0) @binding(3) var<storage, read_write> parts: array<vec3<f32>>;

var<workgroup> tw_shared: array<vec3<f32>, 256>;

// state (m, s, e): max m, sum s + e -> its sum pair rescaled to max m (no tw_exp where the max stays)
fn tw_rescale(st: vec3<f32>, m: f32) -> vec2<f32> {
    if (st.x == m) { return st.yz; }
    return st.yz * tw_exp(st.x - m);
}
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

// the state of a thread's vectors k0, k0 + step, ... of the `len` vectors from `at`
fn tw_stats(at: u32, len: u32, k0: u32, step: u32) -> vec3<f32> {
    var st = tw_empty();
    for (var k = k0; k < len; k = k + 4u * step) {
        let last = len - 1u;
        let v0 = x[at + k];
        let v1 = x[at + min(k + step, last)];
        let v2 = x[at + min(k + 2u * step, last)];
        let v3 = x[at + min(k + 3u * step, last)];
        st = tw_push(st, v0);
        if (k + step < len) { st = tw_push(st, v1); }
        if (k + 2u * step < len) { st = tw_push(st, v2); }
        if (k + 3u * step < len) { st = tw_push(st, v3); }
    }
    return st;
}

// the k-th of the `len` vectors from `at`, counted from the end where `rev`
fn tw_pos(at: u32, len: u32, k: u32, rev: bool) -> u32 { return at + select(k, len - 1u - k, rev); }

// write a thread's vectors k0, k0 + step, ... of the `len` vectors from `at` (walked backwards where `rev`)
fn tw_write(at: u32, len: u32, k0: u32, step: u32, rev: bool, sd: vec2<f32>, is_log: bool) {
    let log_s = tw_log(sd.y);
    for (var k = k0; k < len; k = k + 4u * step) {
        let last = len - 1u;
        let p0 = tw_pos(at, len, k, rev);
        let p1 = tw_pos(at, len, min(k + step, last), rev);
        let p2 = tw_pos(at, len, min(k + 2u * step, last), rev);
        let p3 = tw_pos(at, len, min(k + 3u * step, last), rev);
        let v0 = x[p0];
        let v1 = x[p1];
        let v2 = x[p2];
        let v3 = x[p3];
        y[p0] = tw_out(v0, sd, log_s, is_log);
        if (k + step < len) { y[p1] = tw_out(v1, sd, log_s, is_log); }
        if (k + 2u * step < len) { y[p2] = tw_out(v2, sd, log_s, is_log); }
        if (k + 3u * step < len) { y[p3] = tw_out(v3, sd, log_s, is_log); }
    }
}

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
    let lane = lid & (tpr - 1u);
    let row = (wid.y * nwg.x + wid.x) * (256u / tpr) + lid / tpr;
    let live = row < rows;  // rows past the end still reach every barrier
    var st = tw_empty();
    if (live) { st = tw_stats(row * cv, cv, lane, tpr); }
    let sd = tw_done(tw_fold(lid, tpr, st));
    if (live) { tw_write(row * cv, cv, lane, tpr, false, sd, tw_meta[2] == 1u); }
}

// the vectors of chunk c of its row: (first, count)
fn tw_chunk(c: u32) -> vec2<u32> {
    let start = c * tw_meta[3];
    return vec2<u32>(start, min(start + tw_meta[3], tw_meta[5]) - start);
}

@compute @workgroup_size(256)
fn stats(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    tw_one = bitcast<f32>(tw_meta[7]);
    let span = tw_chunk(wid.x);
    let st = tw_fold(lid, 256u, tw_stats(wid.y * tw_meta[5] + span.x, span.y, lid, 256u));
    if (lid == 0u) { parts[wid.y * tw_meta[4] + wid.x] = st; }
}

@compute @workgroup_size(256)
fn write(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) lid: u32) {
    tw_one = bitcast<f32>(tw_meta[7]);
    let chunks = tw_meta[4];
    let row = nwg.y - 1u - wid.y;  // the grid backwards: the last chunks the stats pass read come first
    var st = tw_empty();
    for (var k = lid; k < chunks; k = k + 256u) { st = tw_merge(st, parts[row * chunks + k]); }
    let sd = tw_done(tw_fold(lid, 256u, st));
    let span = tw_chunk(chunks - 1u - wid.x);
    tw_write(row * tw_meta[5] + span.x, span.y, lid, 256u, true, sd, tw_meta[2] == 1u);
}
